import {
  INVALID_REPOSITORY_MESSAGE,
  type PublishAccepted,
  PublishRequestSchema,
  type PublishResult,
  type PublishRun,
  RepositorySchema,
  type WebhookResponse,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  bindScope,
  createPublishRun,
  decideScope,
  findPublishRun,
  finishPublishRun,
  type PublishRunRow,
  sanitizeScope,
} from '@pkgreg/indexer';
import type { Logger } from '@pkgreg/server-kit';
import type { RuntimeQueue } from '@pkgreg/tasks';
import { z } from 'zod';
import { badRequest, conflict, forbidden, notFound, unauthorized, unavailable } from '../http/api-error.js';
import type { ProofVerifier, ProvenIdentity } from './proof.js';
import {
  findGitHubSource,
  findGitSourceOfRepo,
  findWebhook,
  saveWebhookSalt,
  updateWebhookLocator,
} from './publishing.repository.js';
import { newSalt, signatureMatches, webhookSecret } from './webhook-secrets.js';

// Publishing (docs/publishing.md): a proven publish or a signed push becomes a publish run and an
// indexing job on the runtime worker. Everything a refused request could write comes after its proof:
// a refusal leaves no run, no scope binding, no webhook and no source behind.

export interface PublishingDeps {
  db: Db;
  logger: Logger;
  proofs: ProofVerifier;
  /** The queue the indexing jobs go to (created on first use). */
  queue: () => RuntimeQueue;
  /** The registry's public URL (OIDC audience, webhook URL base). */
  publicUrl: string;
  /** Key the webhook secrets are derived from. */
  webhookKey: string;
}

export const WEBHOOK_PATH = '/api/hooks/github';
const RUN_PATH = '/api/publish';

function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  throw badRequest(`${field}${issue?.message ?? 'invalid body'}`);
}

/** The scope the proven owner publishes into (a renamed account keeps its first one). */
async function scopeFor(db: Db, identity: ProvenIdentity): Promise<{ scope: string; named: string }> {
  const named = sanitizeScope(identity.ownerLogin);
  if (!named) throw badRequest(`The owner "${identity.ownerLogin}" cannot be made a registry scope`);
  const decision = await decideScope(db, {
    scope: named,
    ownerId: identity.ownerId,
    login: identity.ownerLogin,
  });
  if (!decision.ok) throw forbidden(`Refused: ${decision.message}`);
  return { scope: decision.scope, named };
}

export function toPublishRun(row: PublishRunRow): PublishRun {
  return {
    runId: row.id,
    repository: row.repository,
    scope: row.scope,
    ref: row.ref,
    proof: row.proof,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    startedAt: row.started_at?.toISOString() ?? null,
    finishedAt: row.finished_at?.toISOString() ?? null,
    error: row.error,
    result: row.status === 'succeeded' ? (row.result as unknown as PublishResult) : null,
  };
}

/** Enqueues the run's job; a queue that cannot take it fails the run and answers 503. */
async function enqueue(
  deps: PublishingDeps,
  run: PublishRunRow,
  job: { ref?: string | null; proof: 'oidc' | 'token' | 'webhook'; ownerId: number },
): Promise<void> {
  try {
    await deps.queue().enqueue(
      'registry.index',
      {
        kind: 'github',
        locator: run.locator,
        ...(job.ref !== undefined ? { ref: job.ref } : {}),
        proof: job.proof,
        ownerId: job.ownerId,
        publishRunId: run.id,
      },
      { jobId: `publish-${run.id}` },
    );
  } catch (error) {
    await finishPublishRun(deps.db, run.id, {
      status: 'failed',
      error: 'The indexing job could not be queued',
      indexingRunId: null,
    }).catch(() => {});
    throw unavailable('The indexing queue is unavailable; try again later', error);
  }
}

/** POST /api/publish: verify the proof, bind the scope, record the run, enqueue the job. */
export async function publish(deps: PublishingDeps, token: string, body: unknown): Promise<PublishAccepted> {
  const request = parseBody(PublishRequestSchema, body);
  const identity = await deps.proofs.verify(token, {
    repository: request.repository,
    ...(request.ref !== undefined ? { ref: request.ref } : {}),
  });
  // A CI log may be public: a secret shown there is a secret published.
  if (request.rotateWebhookSecret && identity.proof === 'oidc') {
    throw badRequest(
      'rotateWebhookSecret needs a user token, not an OIDC token: a CI log is no place for a secret',
    );
  }
  const { scope, named } = await scopeFor(deps.db, identity);
  const locator = identity.repository.toLowerCase();
  const local = await findGitSourceOfRepo(deps.db, locator);
  if (local) {
    throw conflict(
      `${identity.repository} is indexed from a local clone by the registry operator (${local.locator}); it cannot be published from GitHub as well`,
    );
  }
  const { run, secret } = await deps.db.transaction().execute(async (trx) => {
    await bindScope(trx, { scope: named, ownerId: identity.ownerId, login: identity.ownerLogin }, 'publish');
    const created = await createPublishRun(trx, {
      repository: identity.repository,
      locator,
      scope,
      ref: request.ref ?? null,
      proof: identity.proof,
    });
    // The secret is created at the first publish with a user token (or a rotation) and shown then only.
    const existing = await findWebhook(trx, identity.repositoryId);
    let shown: string | null = null;
    if (identity.proof === 'token' && (!existing || request.rotateWebhookSecret)) {
      const salt = newSalt();
      await saveWebhookSalt(trx, {
        repositoryId: identity.repositoryId,
        locator,
        salt,
        rotated: existing !== undefined,
      });
      shown = webhookSecret(deps.webhookKey, salt);
    } else if (existing) {
      await updateWebhookLocator(trx, identity.repositoryId, locator);
    }
    return { run: created, secret: shown };
  });
  await enqueue(deps, run, { ref: request.ref ?? null, proof: identity.proof, ownerId: identity.ownerId });
  deps.logger.info(
    {
      runId: run.id,
      repository: identity.repository,
      scope,
      proof: identity.proof,
      ownerId: identity.ownerId,
    },
    'publish queued',
  );
  return {
    runId: run.id,
    status: 'queued',
    repository: identity.repository,
    scope,
    ref: run.ref,
    proof: identity.proof,
    statusUrl: `${RUN_PATH}/${run.id}`,
    webhook:
      secret === null
        ? null
        : {
            url: `${deps.publicUrl}${WEBHOOK_PATH}`,
            secret,
            contentType: 'application/json',
            events: ['push'],
          },
  };
}

const RunIdSchema = z.uuid({ error: 'runId must be a UUID' });

/** GET /api/publish/{runId}. The id is the capability: it is random and only its publisher was told it. */
export async function getPublishRun(db: Db, runId: string): Promise<PublishRun> {
  if (!RunIdSchema.safeParse(runId).success) throw badRequest('runId must be a UUID');
  const row = await findPublishRun(db, runId);
  if (!row) throw notFound('Publish run not found');
  return toPublishRun(row);
}

/** The fields of a GitHub delivery the registry reads. */
const HookPayloadSchema = z.object({
  ref: z.string().optional(),
  deleted: z.boolean().optional(),
  repository: z.object({
    id: z.number().int().positive(),
    full_name: z.string(),
    default_branch: z.string().optional(),
    owner: z.object({
      id: z.number().int().positive(),
      login: z.string().optional(),
      name: z.string().optional(),
    }),
  }),
});

export interface WebhookDelivery {
  event: string | undefined;
  signature: string | undefined;
  contentType: string | undefined;
  rawBody: Buffer;
}

/** The JSON of a delivery: sent as application/json, or form-encoded in a `payload` field. */
function payloadOf(delivery: WebhookDelivery): unknown {
  const text = delivery.rawBody.toString('utf8');
  try {
    if (delivery.contentType?.startsWith('application/x-www-form-urlencoded')) {
      const payload = new URLSearchParams(text).get('payload');
      if (payload === null) throw new Error('no payload field');
      return JSON.parse(payload);
    }
    return JSON.parse(text);
  } catch {
    throw badRequest('The webhook body is not a GitHub delivery (JSON, or a form with a payload field)');
  }
}

const ignored = (event: string, reason: string): WebhookResponse => ({
  event,
  action: 'ignored',
  runId: null,
  reason,
});

/**
 * POST /api/hooks/github. The signature is checked (HMAC-SHA256 of the raw body with the repository's
 * secret, compared in constant time) before anything is written; a bad or missing one is a 401 that
 * changes nothing. A push to the branch the registry indexes re-indexes the repository.
 */
export async function receiveWebhook(
  deps: PublishingDeps,
  delivery: WebhookDelivery,
): Promise<{ status: 200 | 202; body: WebhookResponse }> {
  if (!delivery.event) throw badRequest('X-GitHub-Event is required: send GitHub webhook deliveries here');
  if (!delivery.signature) {
    throw unauthorized('X-Hub-Signature-256 is required: set the webhook secret pkgreg gave at publish');
  }
  const parsed = HookPayloadSchema.safeParse(payloadOf(delivery));
  if (!parsed.success) throw badRequest('The webhook payload names no repository');
  const payload = parsed.data;
  const hook = await findWebhook(deps.db, payload.repository.id);
  // Without a secret the signature cannot be checked: the same answer as a wrong one.
  const secret = hook ? webhookSecret(deps.webhookKey, hook.secret_salt) : null;
  if (secret === null || !signatureMatches(secret, delivery.rawBody, delivery.signature)) {
    throw unauthorized(
      'X-Hub-Signature-256 does not match: the webhook secret differs from the one pkgreg gave at publish',
    );
  }
  const event = delivery.event;
  if (event === 'ping') return { status: 200, body: { event, action: 'pong', runId: null, reason: null } };
  if (event !== 'push')
    return { status: 200, body: ignored(event, `the ${event} event is not used; send push`) };
  const repositoryName = payload.repository.full_name;
  if (!RepositorySchema.safeParse(repositoryName).success) throw badRequest(INVALID_REPOSITORY_MESSAGE);
  const locator = repositoryName.toLowerCase();
  if (payload.deleted) return { status: 200, body: ignored(event, 'the push deleted the branch') };
  const source = await findGitHubSource(deps.db, payload.repository.id, locator);
  const branch = source?.ref ?? source?.default_branch ?? payload.repository.default_branch ?? null;
  if (branch === null || payload.ref !== `refs/heads/${branch}`) {
    return {
      status: 200,
      body: ignored(
        event,
        `the push is to ${payload.ref ?? 'no ref'}; the registry indexes refs/heads/${branch}`,
      ),
    };
  }
  const ownerLogin =
    payload.repository.owner.login ?? payload.repository.owner.name ?? locator.split('/')[0] ?? '';
  const identity: ProvenIdentity = {
    proof: 'token',
    repository: repositoryName,
    ownerLogin,
    ownerId: payload.repository.owner.id,
    repositoryId: payload.repository.id,
  };
  const { scope } = await scopeFor(deps.db, identity);
  const run = await deps.db.transaction().execute(async (trx) => {
    await updateWebhookLocator(trx, payload.repository.id, locator);
    return createPublishRun(trx, {
      repository: repositoryName,
      locator,
      scope,
      ref: source?.ref ?? null,
      proof: 'webhook',
    });
  });
  // The branch stays what the source remembers (undefined keeps it).
  await enqueue(deps, run, { proof: 'webhook', ownerId: identity.ownerId });
  deps.logger.info({ runId: run.id, repository: repositoryName, scope }, 'webhook push queued');
  return { status: 202, body: { event, action: 'queued', runId: run.id, reason: null } };
}
