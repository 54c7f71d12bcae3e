import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createHttpPackageFinder, createHttpSkillSource, type WorkflowPlan } from '@pkgreg/agents';
import {
  type AgentDelegation,
  type AgentInput,
  deriveDelegatedNamespace,
  deriveNamespace,
  QUEUES,
  SCOPES,
} from '@pkgreg/contracts';
import {
  insertAccounts,
  insertDelegation,
  insertOrganisation,
  TEST_REDIS_URL,
  testKeyPrefix,
} from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { removeDir, tempDir } from '@pkgreg/indexer/testing';
import { createLogger } from '@pkgreg/server-kit';
import {
  createRuntimeQueue,
  createTaskEvents,
  getTaskResult,
  type RuntimeQueue,
  submitInvoke,
  type TaskEvents,
  waitForTask,
} from '@pkgreg/tasks';
import { captureLogs, type RegistryProcess, startRegistry } from '@pkgreg/testing';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDelegatedReads } from '../src/jobs/delegated-reads.js';
import type { RuntimeWorker } from '../src/worker.js';
import { createTestWorker, indexRepo, REGISTRY_ENTRY, redisValues, until } from './helpers.js';
import {
  type ModelProtocolServer,
  resultJson,
  type Script,
  type SeenModelRequest,
  startModelProtocolServer,
} from './model-protocols.js';

// Issue 32, private skills for callers allowed to read them (docs/agent.md, "Privacy"). The edge puts the
// person its delegation assertions would read as in the agent.invoke job (an identity, never a token);
// the worker signs its own assertion for them with the edge's active key from the shared database, and
// the real registry-api decides, as for the edge's own reads: a member of the private scope's
// organisation gets the skill into the plan; an outsider, a client acting for itself, a person who
// revoked the app after the run was asked for, or a job whose task is not the person's, get
// "not available". Jobs are submitted as the edge's local runtime submits them (submitInvoke).

const EDGE_BASE = 'http://edge.test';
const ISSUER = `${EDGE_BASE}/mcp`;
const APP = 'https://agent.example/oauth/client.json';
const RUNBOOK_LINE = 'Rotate the vault keys before every deploy.';
const RUNBOOK = `---\nname: runbook\ndescription: Deploy the vault service step by step\n---\n${RUNBOOK_LINE}\n`;
const NOT_AVAILABLE = '@vault/runbook is not available';
/** A compact JWS (an assertion, an access token): nothing of the kind may sit in Redis. */
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/;

const tdb = useTestDatabase();
const logs = captureLogs();
const root = tempDir('agent-delegated');
const prefix = testKeyPrefix('agent-delegated');
let registry: RegistryProcess;
let model: ModelProtocolServer;
let worker: RuntimeWorker;
let queue: RuntimeQueue;
let events: TaskEvents;

/**
 * The edge's delegation key, as its ensureActiveKey(db, 'delegation') writes one (the worker only reads it);
 * or, with `table`, a key of the edge's access tokens.
 */
async function edgeDelegationKey(
  table: 'edge_delegation_keys' | 'oauth_signing_keys' = 'edge_delegation_keys',
): Promise<void> {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = randomUUID();
  const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' };
  const privateJwk = { ...privateKey.export({ format: 'jwk' }), kid, alg: 'ES256' };
  await tdb.db
    .insertInto(table)
    .values({
      kid,
      alg: 'ES256',
      public_jwk: JSON.stringify(publicJwk),
      private_jwk: JSON.stringify(privateJwk),
      status: 'active',
    })
    .execute();
}

beforeAll(async () => {
  await indexRepo(tdb.db, root, 'acme', {
    'pg-schema/SKILL.md': '---\nname: pg-schema\ndescription: Design a PostgreSQL schema\n---\n# Schema\n',
    // Public, and found by the scripted search too: what anyone gets.
    'vault-notes/SKILL.md':
      '---\nname: vault-notes\ndescription: Notes on using a vault\n---\n# Vault notes\n',
  });
  await indexRepo(tdb.db, root, 'vault', { 'runbook/SKILL.md': RUNBOOK });
  // `vault` is the private scope of an organisation `member` and `revoking` belong to; `outsider` to none.
  // Each allowed the app (edge_delegations), as the consent page records it.
  const people = ['member', 'revoking', 'outsider'];
  await insertAccounts(tdb.db, people);
  await insertOrganisation(tdb.db, {
    id: 'org-vault',
    name: 'Vault',
    slug: 'vault',
    members: { member: 'reader', revoking: 'reader' },
    scopes: { vault: 'private' },
  });
  for (const accountId of people)
    await insertDelegation(tdb.db, { accountId, clientId: APP, scopes: [SCOPES.registryRead] });
  await edgeDelegationKey();
  registry = await startRegistry({
    entry: REGISTRY_ENTRY,
    databaseUrl: tdb.url,
    redisUrl: TEST_REDIS_URL,
    // The edge whose assertions it trusts (their issuer is `<it>/mcp`).
    env: { DETAIL_CACHE_TTL_MS: '0', DERIVED_REFRESH_INTERVAL_MS: '100', EDGE_PUBLIC_BASE_URL: EDGE_BASE },
  });
  await until(async () => {
    const res = await fetch(`${registry.url}/api/search?q=schema`);
    return ((await res.json()) as { results: unknown[] }).results.length > 0;
  }, 'the registry to search the indexed skills');
  model = await startModelProtocolServer();
  const logger = createLogger('runtime-worker-test', 'debug', logs.destination);
  worker = createTestWorker(tdb.db, prefix, {
    logger,
    finder: createHttpPackageFinder(registry.url, 20_000),
    skills: createHttpSkillSource(registry.url, 20_000),
    assertionsFor: createDelegatedReads(tdb.db, { issuer: ISSUER, audience: registry.url }, logger),
    model: { provider: 'openai', baseUrl: model.openaiUrl, model: 'stand-in-1', timeoutMs: 2000 },
    limits: {
      maxSteps: 4,
      maxInputTokens: 50_000,
      maxOutputTokens: 4_000,
      maxWallMs: 15_000,
      maxSkillBytes: 16 * 1024,
      maxRetries: 1,
    },
  });
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix });
  events = await createTaskEvents({ connection: TEST_REDIS_URL, prefix });
}, 120_000);

afterAll(async () => {
  await worker?.close(5000);
  await events?.close();
  await queue?.close();
  await model?.close();
  await registry?.stop();
  removeDir(root);
});

/** Searches the vault, reads its runbook, and plans with it at the version read (if it was). */
function vaultRun(): Script {
  let version = 'unread';
  return (request, index) => {
    for (const r of request.toolResults) {
      const json = resultJson(r.content);
      if (json?.package === '@vault/runbook' && typeof json.version === 'string') version = json.version;
    }
    if (index === 0) return { calls: [{ name: 'search_skills', arguments: { query: 'vault' } }] };
    if (index === 1) return { calls: [{ name: 'read_skill', arguments: { package: '@vault/runbook' } }] };
    return {
      calls: [
        {
          name: 'submit_plan',
          arguments: {
            steps: [
              {
                id: 'deploy',
                title: 'Deploy the vault service',
                phase: 'release',
                skills: [{ package: '@vault/runbook', version }],
              },
            ],
          },
        },
      ],
    };
  };
}

const REQUEST: AgentInput = { type: 'text', text: 'Deploy the vault service.' };

/** Who calls: the namespace the edge derives for the token, and the person the job names (if any). */
interface As {
  namespace: string;
  delegation?: AgentDelegation;
}

/** The app acting for `person` through a delegated token of the edge's issuer. */
const personsApp = (person: string): As => ({
  namespace: deriveDelegatedNamespace(ISSUER, APP, person),
  delegation: { subject: person, clientId: APP },
});

interface Run {
  plan: WorkflowPlan;
  taskId: string;
  requests: SeenModelRequest[];
}

async function invoke(as: As, options: { beforeRun?: () => Promise<void> } = {}): Promise<Run> {
  const before = model.requests.length;
  model.script(vaultRun());
  const runtime = worker.workers[0];
  // "Between enqueue and run": the job waits in the queue while the test changes the world.
  if (options.beforeRun) await runtime?.pause();
  const submitted = await submitInvoke(
    { db: tdb.db, queue, events, syncThresholdMs: 20_000 },
    {
      namespace: as.namespace,
      clientId: APP,
      args: { agentId: 'engineering.workflow', input: REQUEST, executionMode: 'async' },
      ...(as.delegation ? { delegation: as.delegation } : {}),
    },
  );
  if (submitted.mode !== 'task') throw new Error('expected a task');
  const { taskId } = submitted.task;
  if (options.beforeRun) {
    await options.beforeRun();
    runtime?.resume();
  }
  const row = await waitForTask({ db: tdb.db, events }, taskId, 20_000);
  expect(row?.status).toBe('completed');
  const result = await getTaskResult(tdb.db, as.namespace, taskId);
  if (result.status !== 'completed') throw new Error('expected a completed task');
  const json = result.result.outputs[1];
  return {
    plan: JSON.parse(json?.type === 'text' ? json.text : '{}') as WorkflowPlan,
    taskId,
    requests: model.requests.slice(before),
  };
}

/** What the run's tools answered: the search's packages, and read_skill's text. */
function answers(run: Run) {
  const search = resultJson(run.requests[1]?.toolResults[0]?.content ?? '') as {
    results: Array<{ package: string }>;
  } | null;
  return {
    found: search?.results.map((r) => r.package) ?? [],
    readSkill: run.requests[2]?.toolResults[0]?.content ?? '',
  };
}

function expectNotAvailable(run: Run): void {
  const { found, readSkill } = answers(run);
  expect(found).not.toContain('@vault/runbook');
  // What anyone gets, still: the public skill the same search finds.
  expect(found).toContain('@acme/vault-notes');
  // The same words as for a package that does not exist.
  expect(readSkill).toBe(NOT_AVAILABLE);
  expect(JSON.stringify(run.requests.map((r) => r.body))).not.toContain(RUNBOOK_LINE);
  expect(run.plan.steps[0]?.packages).toEqual([]);
  expect(run.plan.agentRun?.skillsLoaded).toEqual([]);
}

describe("a member's app reads the private skill through the loop", () => {
  it('finds it, reads it, and the plan uses it at the version read', async () => {
    const run = await invoke(personsApp('member'));
    const { found, readSkill } = answers(run);
    expect(found).toContain('@vault/runbook');
    const read = resultJson(readSkill);
    expect(read?.skillMd).toContain(RUNBOOK_LINE);
    const version = String(read?.version);
    expect(run.plan.planner).toBe('model');
    expect(run.plan.steps[0]?.packages.map((p) => [p.package, p.version])).toEqual([
      ['@vault/runbook', version],
    ]);
    expect(run.plan.agentRun?.skillsLoaded).toEqual([{ package: '@vault/runbook', version }]);
  });
});

describe('everyone else gets "not available"', () => {
  it("an outsider's app (delegated, not in the organisation)", async () => {
    expectNotAvailable(await invoke(personsApp('outsider')));
  });

  it('a client acting for itself: the edge names no person in its job', async () => {
    expectNotAvailable(await invoke({ namespace: deriveNamespace(ISSUER, APP) }));
  });

  it('a person who revoked the app between the enqueue and the run', async () => {
    const run = await invoke(personsApp('revoking'), {
      beforeRun: async () => {
        await sql`update edge_delegations set revoked_at = now()
          where account_id = 'revoking' and client_id = ${APP}`.execute(tdb.db);
      },
    });
    expectNotAvailable(run);
  });

  it("a job naming the member for another caller's task is not read as the member", async () => {
    // As if someone who can write to Redis copied the member's identity into a job of their own task:
    // the task row (the edge's) is another namespace's, so the worker signs nothing for the member.
    const run = await invoke({
      namespace: deriveNamespace(ISSUER, 'pkc_someone'),
      delegation: { subject: 'member', clientId: APP },
    });
    expectNotAvailable(run);
    expect(
      logs.records.some(
        (r) => r.taskId === run.taskId && String(r.msg).includes('reads the registry anonymously'),
      ),
    ).toBe(true);
  });
});

describe('the worker signs with the edge\'s delegation key only (docs/decisions.md, "Delegation keys")', () => {
  it("no delegation key, only the access tokens' key: the member's run is never read with it", async () => {
    await edgeDelegationKey('oauth_signing_keys');
    try {
      const run = await invoke(personsApp('member'), {
        beforeRun: async () => {
          await sql`update edge_delegation_keys set status = 'retired'`.execute(tdb.db);
        },
      });
      // The registry reads fail (nothing to sign with), and nothing private reaches the model or the plan.
      const { found, readSkill } = answers(run);
      expect(found).not.toContain('@vault/runbook');
      expect(readSkill).not.toContain(RUNBOOK_LINE);
      expect(JSON.stringify(run.requests.map((r) => r.body))).not.toContain(RUNBOOK_LINE);
      expect(run.plan.agentRun?.skillsLoaded).toEqual([]);
      const told = logs.records.filter((r) => r.taskId === run.taskId && r.level === 50);
      expect(told.map((r) => [r.msg, (r.err as { message?: string } | undefined)?.message])).toEqual([
        ['could not sign a delegation assertion', 'the edge has no active delegation key'],
      ]);
    } finally {
      await sql`update edge_delegation_keys set status = 'active'`.execute(tdb.db);
    }
  });
});

describe('job data', () => {
  it('names the person by id only: no assertion, token or key in Redis or the logs', async () => {
    const jobs = await queue.queue(QUEUES.runtime).getJobs(['completed'], 0, 50);
    const delegated = jobs.filter((j) => (j.data as { delegation?: unknown }).delegation);
    expect(delegated.length).toBeGreaterThanOrEqual(3);
    for (const job of delegated)
      expect(Object.keys((job.data as { delegation: object }).delegation).sort()).toEqual([
        'clientId',
        'subject',
      ]);
    const values = await redisValues(prefix);
    expect(values.length).toBeGreaterThan(0);
    for (const { key, value } of values) expect(value, key).not.toMatch(JWT);
    expect(logs.lines.filter((line) => JWT.test(line))).toEqual([]);
  });
});
