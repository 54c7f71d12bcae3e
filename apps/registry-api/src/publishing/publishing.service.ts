import {
  type PublishAccepted,
  PublishRequestSchema,
  type PublishResult,
  type PublishRun,
  type WebhookResponse,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  bindScope,
  createPublishRun,
  decideScope,
  findPublishRun,
  findScopeOfOwner,
  finishPublishRun,
  type PublishRunRow,
  sanitizeScope,
} from '@pkgreg/registry';
import type { Logger } from '@pkgreg/server-kit';
import type { RuntimeQueue } from '@pkgreg/tasks';
import { z } from 'zod';
import {
  ApiError,
  badRequest,
  conflict,
  forbidden,
  notFound,
  unauthorized,
  unavailable,
} from '../http/api-error.js';
import type { WindowLimiter } from '../http/window-limiter.js';
import type { ProofVerifier, ProvenIdentity } from './proof.js';
import {
  deleteWebhook,
  findGitHubSource,
  findGitSourceOfRepo,
  findWebhook,
  saveWebhookSalt,
  updateWebhook,
} from './publishing.repository.js';
import type { ReplayGuard } from './replay-guard.js';
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
  /** Webhook deliveries seen (and OIDC tokens used): each is taken once. */
  replay: ReplayGuard;
  limits: {
    /** POST /api/publish and the owner actions, per client address. */
    publish: WindowLimiter;
    /** Webhook deliveries per client address, before their signature is read. */
    webhookAddress: WindowLimiter;
    /** Signed webhook deliveries per repository id. */
    webhookRepository: WindowLimiter;
  };
}

/** A 429 in the API's error shape, with Retry-After. */
export function tooManyRequests(message: string, retryAfterSeconds: number): ApiError {
  return new ApiError('too_many_requests', `${message}; try again in ${retryAfterSeconds} s`, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}

/** Counts a request against `limiter`; throws the 429 past its limit. */
export async function takeLimit(limiter: WindowLimiter, key: string, message: string): Promise<void> {
  const limit = await limiter.take(key);
  if (!limit.allowed) throw tooManyRequests(message, limit.retryAfterSeconds);
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
  job: { ref?: string | null; proof: 'oidc' | 'token' | 'webhook'; ownerId: number; repositoryId: number },
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
        repositoryId: job.repositoryId,
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
      ...(identity.ci ? { oidc: identity.ci } : {}),
    });
    // The secret is created at the first publish with a user token (or a rotation) and shown then only.
    // It proves the repository for the account it was issued to: once the repository has changed
    // hands, the old secret stops working (a user token gets a new one; an OIDC publish, which may not
    // show one, drops it).
    const existing = await findWebhook(trx, identity.repositoryId);
    const changedHands =
      existing !== undefined && existing.owner_id !== null && existing.owner_id !== identity.ownerId;
    let shown: string | null = null;
    if (identity.proof === 'token' && (!existing || request.rotateWebhookSecret || changedHands)) {
      const salt = newSalt();
      await saveWebhookSalt(trx, {
        repositoryId: identity.repositoryId,
        locator,
        ownerId: identity.ownerId,
        salt,
        rotated: existing !== undefined,
      });
      shown = webhookSecret(deps.webhookKey, salt);
    } else if (changedHands) {
      await deleteWebhook(trx, identity.repositoryId);
    } else if (existing) {
      await updateWebhook(trx, identity.repositoryId, { locator, ownerId: identity.ownerId });
    }
    return { run: created, secret: shown };
  });
  await enqueue(deps, run, {
    ref: request.ref ?? null,
    proof: identity.proof,
    ownerId: identity.ownerId,
    repositoryId: identity.repositoryId,
  });
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

/**
 * The fields of a GitHub delivery the registry reads. Only the repository id chooses anything (the
 * secret, and so the repository): names in the payload are the sender's word and are never used.
 */
const HookPayloadSchema = z.object({
  ref: z.string().optional(),
  deleted: z.boolean().optional(),
  repository: z.object({
    id: z.number().int().positive(),
    default_branch: z.string().optional(),
    owner: z.object({ id: z.number().int().positive() }),
  }),
});

export interface WebhookDelivery {
  event: string | undefined;
  signature: string | undefined;
  contentType: string | undefined;
  /** `X-GitHub-Delivery`: GitHub's GUID of the delivery (a redelivery keeps it). */
  deliveryId: string | undefined;
  rawBody: Buffer;
}

const DELIVERY_ID = /^[A-Za-z0-9-]{1,128}$/;

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
 * POST /api/hooks/github. The signature is checked (HMAC-SHA256 of the raw body with the secret of the
 * repository id the payload names, compared in constant time) before anything is written; a bad or
 * missing one is a 401 that changes nothing. The secret proves that repository and nothing else: the
 * run and its job name the repository by the id the secret belongs to (the worker reads it by that id),
 * never by the payload's names. A delivery seen before (its id or its signed body, within a day) is
 * answered `duplicate` and changes nothing. A push to the branch the registry indexes re-indexes it.
 */
export async function receiveWebhook(
  deps: PublishingDeps,
  delivery: WebhookDelivery,
): Promise<{ status: 200 | 202; body: WebhookResponse }> {
  if (!delivery.event) throw badRequest('X-GitHub-Event is required: send GitHub webhook deliveries here');
  if (!delivery.deliveryId || !DELIVERY_ID.test(delivery.deliveryId)) {
    throw badRequest('X-GitHub-Delivery is required: the GUID GitHub gives each delivery');
  }
  if (!delivery.signature) {
    throw unauthorized('X-Hub-Signature-256 is required: set the webhook secret pkgreg gave at publish');
  }
  const parsed = HookPayloadSchema.safeParse(payloadOf(delivery));
  if (!parsed.success) throw badRequest('The webhook payload names no repository');
  const payload = parsed.data;
  const hook = await findWebhook(deps.db, payload.repository.id);
  // Without a secret the signature cannot be checked: the same answer as a wrong one.
  const secret = hook ? webhookSecret(deps.webhookKey, hook.secret_salt) : null;
  if (!hook || secret === null || !signatureMatches(secret, delivery.rawBody, delivery.signature)) {
    throw unauthorized(
      'X-Hub-Signature-256 does not match: the webhook secret differs from the one pkgreg gave at publish',
    );
  }
  const event = delivery.event;
  const claim = await deps.replay.claimDelivery({
    repositoryId: hook.repository_id,
    deliveryId: delivery.deliveryId,
    body: delivery.rawBody,
  });
  if (!claim) {
    return {
      status: 200,
      body: {
        event,
        action: 'duplicate',
        runId: null,
        reason: 'this delivery was received before (its X-GitHub-Delivery or its body); nothing was done',
      },
    };
  }
  try {
    return await acceptDelivery(deps, hook, payload, event);
  } catch (error) {
    // Refused here: GitHub's redelivery of it must not be taken for a replay.
    await claim.release().catch(() => {});
    throw error;
  }
}

type Hook = NonNullable<Awaited<ReturnType<typeof findWebhook>>>;

async function acceptDelivery(
  deps: PublishingDeps,
  hook: Hook,
  payload: z.infer<typeof HookPayloadSchema>,
  event: string,
): Promise<{ status: 200 | 202; body: WebhookResponse }> {
  await takeLimit(
    deps.limits.webhookRepository,
    String(hook.repository_id),
    'Too many webhook deliveries for this repository',
  );
  // The secret was issued to the account that owned the repository then; a repository transferred
  // since is refused until its new owner publishes it (docs/publishing.md, Webhooks).
  if (hook.owner_id === null || payload.repository.owner.id !== hook.owner_id) {
    throw forbidden(
      `This webhook's secret was issued to the repository's owner account ${hook.owner_id ?? '(unknown)'}, and the delivery names account ${payload.repository.owner.id}: publish the repository again (pkgreg publish) to get a secret for its owner now`,
    );
  }
  if (event === 'ping') return { status: 200, body: { event, action: 'pong', runId: null, reason: null } };
  if (event !== 'push')
    return { status: 200, body: ignored(event, `the ${event} event is not used; send push`) };
  if (payload.deleted) return { status: 200, body: ignored(event, 'the push deleted the branch') };
  const source = await findGitHubSource(deps.db, hook.repository_id, hook.locator);
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
  // What the registry knows of the repository, never what the payload says: its source (renames are
  // followed by the worker, which reads the repository by id), else the name it was published under.
  const locator = source?.locator ?? hook.locator;
  const repository = source?.source_repo ?? hook.locator;
  const scope =
    (await findScopeOfOwner(deps.db, hook.owner_id))?.scope ?? sanitizeScope(locator.split('/')[0] ?? '');
  if (!scope) throw forbidden(`The owner of ${repository} cannot be made a registry scope`);
  const run = await createPublishRun(deps.db, {
    repository,
    locator,
    scope,
    ref: source?.ref ?? null,
    proof: 'webhook',
  });
  // The branch stays what the source remembers (undefined keeps it).
  await enqueue(deps, run, { proof: 'webhook', ownerId: hook.owner_id, repositoryId: hook.repository_id });
  deps.logger.info({ runId: run.id, repository, scope }, 'webhook push queued');
  return { status: 202, body: { event, action: 'queued', runId: run.id, reason: null } };
}
