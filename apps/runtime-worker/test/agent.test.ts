import { randomUUID } from 'node:crypto';
import { createHttpPackageFinder, planWorkflow, type WorkflowPlan } from '@pkgreg/agents';
import type { AgentInput, MemoryBinding } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { insertEntries } from '@pkgreg/memory';
import {
  createRuntimeQueue,
  createTaskEvents,
  getTaskResult,
  type RuntimeQueue,
  submitInvoke,
  type TaskEvents,
} from '@pkgreg/tasks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeWorker } from '../src/worker.js';
import {
  type ChildHandle,
  createTestWorker,
  REGISTRY_FIXTURE,
  seedPackages,
  startModelServer,
  startRegistryApi,
  until,
} from './helpers.js';

// decisions.md, Agent engineering.workflow: ordered steps with dependencies, the registry's packages
// for each step (found with the registry's own search: the real registry-api process), ltm facts read
// with the ltm read binding, one stm record with the stm write binding, a model only as a refinement.

const NS = `app:${'1'.repeat(64)}`;
const OTHER_NS = `app:${'2'.repeat(64)}`;
const prefix = testKeyPrefix('agent');

const tdb = useTestDatabase();
let registry: ChildHandle & { url: string };
let worker: RuntimeWorker;
let queue: RuntimeQueue;
let events: TaskEvents;

beforeAll(async () => {
  await seedPackages(tdb.db, REGISTRY_FIXTURE);
  registry = await startRegistryApi(tdb.url);
  // The registry indexes rows it did not write on its refresher's ticks: plans are only comparable once
  // every fixture package is searchable, each found by its own name (a loaded machine answered the first
  // plans without some of them).
  await until(async () => {
    const found = await Promise.all(
      REGISTRY_FIXTURE.map(async (p) => {
        const res = await fetch(`${registry.url}/api/search?q=${encodeURIComponent(p.name)}`);
        const body = (await res.json()) as { results: Array<{ scope: string; name: string }> };
        return body.results.some((r) => r.scope === p.scope && r.name === p.name);
      }),
    );
    return found.every(Boolean);
  }, 'the registry to search every fixture package');
  // A step whose search fails gets no packages (the agent goes on without them), so the test's finder
  // waits longer than the 3 s default: a loaded CI machine answered a cold search later than that.
  worker = createTestWorker(tdb.db, prefix, { finder: createHttpPackageFinder(registry.url, 20_000) });
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix });
  events = await createTaskEvents({ connection: TEST_REDIS_URL, prefix });
});

afterAll(async () => {
  await worker?.close(5000);
  await events?.close();
  await queue?.close();
  await registry?.stop();
});

async function invoke(
  input: AgentInput,
  memory?: MemoryBinding,
): Promise<{ plan: WorkflowPlan; summary: string; runId: string }> {
  const result = await submitInvoke(
    { db: tdb.db, queue, events, syncThresholdMs: 20_000 },
    {
      namespace: NS,
      clientId: 'client-1',
      args: { agentId: 'engineering.workflow', input, executionMode: 'sync', ...(memory ? { memory } : {}) },
    },
  );
  if (result.mode !== 'completed') throw new Error(`expected completion, got ${JSON.stringify(result)}`);
  expect(result.outputs).toHaveLength(2);
  const [summary, json] = result.outputs;
  return {
    plan: JSON.parse(json?.text ?? '{}') as WorkflowPlan,
    summary: summary?.text ?? '',
    runId: result.runId,
  };
}

const titles = (plan: WorkflowPlan) => plan.steps.map((s) => s.title);
const phases = (plan: WorkflowPlan) => plan.steps.map((s) => s.phase);
const deps = (plan: WorkflowPlan) => plan.steps.map((s) => s.dependsOn);
const pkgs = (plan: WorkflowPlan, i: number) => plan.steps[i]?.packages.map((p) => p.package) ?? [];

describe('engineering.workflow on realistic requests (text, packet, json)', () => {
  it('text with first/then/finally: explicit order, chained dependencies, packages per step', async () => {
    const { plan, summary } = await invoke({
      type: 'text',
      text:
        'I want to build a URL shortener in Go. First design the database schema, then implement the REST API ' +
        'with rate limiting, then write integration tests and finally deploy it to Fly.io.',
    });
    expect(plan.goal).toBe('I want to build a URL shortener in Go');
    expect(plan.ordering).toBe('explicit');
    expect(titles(plan)).toEqual([
      'Design the database schema',
      'Implement the REST API with rate limiting',
      'Write integration tests',
      'Deploy it to Fly.io',
    ]);
    expect(phases(plan)).toEqual(['design', 'implement', 'test', 'release']);
    expect(deps(plan)).toEqual([[], ['s1'], ['s2'], ['s3']]);
    expect(pkgs(plan, 0)).toContain('@dbtools/postgres-schema-designer');
    expect(pkgs(plan, 1)[0]).toBe('@apitools/rest-api-builder');
    expect(pkgs(plan, 2)[0]).toBe('@qa/integration-tests');
    expect(pkgs(plan, 3)).toContain('@deploy/fly-deployer');
    expect(summary).toContain('1. [design] Design the database schema');
    expect(summary).toContain('packages: @apitools/rest-api-builder');
    expect(plan.registryReachable).toBe(true);
    expect(plan.refinedBy).toBe('rules');
  });

  it('a one-sentence text request is expanded into design, implement and test', async () => {
    const { plan } = await invoke({ type: 'text', text: 'Add OAuth login to our Express app.' });
    expect(phases(plan)).toEqual(['design', 'implement', 'test']);
    expect(plan.steps[1]?.title).toBe('Add OAuth login to our Express app');
    expect(deps(plan)).toEqual([[], ['s1'], ['s2']]);
    expect(pkgs(plan, 1)[0]).toBe('@auth/oauth-express');
  });

  it('an unordered bullet list is ordered by phase, same-phase steps share dependencies', async () => {
    const { plan } = await invoke({
      type: 'text',
      text:
        'Release checklist:\n- Publish the package to npm\n- Write the changelog\n- Run the end-to-end tests\n' +
        '- Review the pull request\n- Generate the README documentation',
    });
    expect(plan.goal).toBe('Release checklist');
    expect(plan.ordering).toBe('phase');
    expect(titles(plan)).toEqual([
      'Run the end-to-end tests',
      'Write the changelog',
      'Generate the README documentation',
      'Review the pull request',
      'Publish the package to npm',
    ]);
    expect(phases(plan)).toEqual(['test', 'document', 'document', 'review', 'release']);
    // Both documentation steps wait for the tests only; the review waits for both of them.
    expect(deps(plan)).toEqual([[], ['s1'], ['s1'], ['s2', 's3'], ['s4']]);
    expect(pkgs(plan, 0)).toContain('@qa/playwright-e2e');
    expect(pkgs(plan, 1)[0]).toBe('@docs/changelog-writer');
    expect(pkgs(plan, 2)[0]).toBe('@docs/readme-generator');
    expect(pkgs(plan, 3)[0]).toBe('@review/pr-reviewer');
    expect(pkgs(plan, 4)[0]).toBe('@release/npm-publish');
  });

  it('a numbered list keeps its order', async () => {
    const { plan } = await invoke({
      type: 'text',
      text:
        'Steps for the payments service:\n1. Set up GitHub Actions CI\n2. Containerize the service with Docker\n' +
        '3. Deploy to Kubernetes with Helm\n4. Add Prometheus monitoring and alerts',
    });
    expect(plan.ordering).toBe('explicit');
    expect(phases(plan)).toEqual(['setup', 'setup', 'release', 'operate']);
    expect(deps(plan)).toEqual([[], ['s1'], ['s2'], ['s3']]);
    expect(pkgs(plan, 0)[0]).toBe('@ci/github-actions-ci');
    expect(pkgs(plan, 1)[0]).toBe('@ci/docker-containerize');
    expect(pkgs(plan, 2)[0]).toBe('@deploy/kubernetes-helm');
    expect(pkgs(plan, 3)[0]).toBe('@ops/prometheus-monitoring');
  });

  it('"first" and "finally" place steps regardless of where they are written', async () => {
    const { plan } = await invoke({
      type: 'text',
      text:
        'Finally deploy the service to Kubernetes with Helm. First set up GitHub Actions CI, then containerize ' +
        'the service with Docker.',
    });
    expect(titles(plan)).toEqual([
      'Set up GitHub Actions CI',
      'Containerize the service with Docker',
      'Deploy the service to Kubernetes with Helm',
    ]);
  });

  it('unordered sentences with a goal statement: goal kept apart, steps ordered by phase', async () => {
    const { plan } = await invoke({
      type: 'text',
      text:
        'We need a PDF invoice generator. Write unit tests for the tax rules. Deploy it on AWS Lambda. ' +
        'Design the invoice template layout and implement the PDF renderer.',
    });
    expect(plan.goal).toBe('We need a PDF invoice generator');
    expect(titles(plan)).toEqual([
      'Design the invoice template layout',
      'Implement the PDF renderer',
      'Write unit tests for the tax rules',
      'Deploy it on AWS Lambda',
    ]);
    expect(deps(plan)).toEqual([[], ['s1'], ['s2'], ['s3']]);
    expect(pkgs(plan, 1)).toContain('@docs/pdf-invoice');
    expect(pkgs(plan, 2)[0]).toBe('@qa/unit-test-writer');
    expect(pkgs(plan, 3)[0]).toBe('@cloud/aws-lambda-deploy');
  });

  it('packet: goal expanded, constraints and context kept', async () => {
    const { plan, summary } = await invoke({
      type: 'packet',
      packet: {
        goal: 'Migrate the billing service from MySQL to PostgreSQL',
        constraints: ['zero downtime', 'keep the public API unchanged'],
        context: 'The service runs on Node.js 24.',
      },
    });
    expect(plan.inputType).toBe('packet');
    expect(phases(plan)).toEqual(['design', 'implement', 'test']);
    expect(plan.steps[1]?.title).toBe('Migrate the billing service from MySQL to PostgreSQL');
    expect(pkgs(plan, 1)[0]).toBe('@dbtools/mysql-to-postgres');
    expect(plan.constraints).toEqual(['zero downtime', 'keep the public API unchanged']);
    expect(plan.context).toBe('The service runs on Node.js 24.');
    expect(summary).toContain('Constraints: zero downtime; keep the public API unchanged');
  });

  it('packet: a list in the context supplies the steps when the goal is one line', async () => {
    const { plan } = await invoke({
      type: 'packet',
      packet: {
        goal: 'Launch the new docs site',
        context: '- Deploy the site to Vercel\n- Write the README\n- Generate API documentation',
      },
    });
    expect(plan.goal).toBe('Launch the new docs site');
    expect(titles(plan)).toEqual([
      'Write the README',
      'Generate API documentation',
      'Deploy the site to Vercel',
    ]);
    expect(deps(plan)).toEqual([[], [], ['s1', 's2']]);
    expect(pkgs(plan, 2)[0]).toBe('@deploy/vercel-deploy');
  });

  it('json object with a steps array (strings and objects) keeps the array order', async () => {
    const { plan } = await invoke({
      type: 'json',
      json: {
        goal: 'Ship a React dashboard',
        steps: [
          'Design wireframes',
          'Implement the React chart components',
          { title: 'Write Playwright tests' },
          'Deploy to Vercel',
        ],
        constraints: ['accessible colours'],
      },
    });
    expect(plan.inputType).toBe('json');
    expect(plan.goal).toBe('Ship a React dashboard');
    expect(phases(plan)).toEqual(['design', 'implement', 'test', 'release']);
    expect(pkgs(plan, 0)[0]).toBe('@design/wireframe-kit');
    expect(pkgs(plan, 1)[0]).toBe('@frontend/react-charts');
    expect(pkgs(plan, 2)[0]).toBe('@qa/playwright-e2e');
    expect(pkgs(plan, 3)[0]).toBe('@deploy/vercel-deploy');
    expect(plan.constraints).toEqual(['accessible colours']);
  });

  it('json array of strings is an ordered list', async () => {
    const { plan } = await invoke({
      type: 'json',
      json: [
        'Audit dependencies for security issues',
        'Fix the vulnerable packages',
        'Run the unit tests',
        'Publish a patch release to npm',
      ],
    });
    expect(plan.ordering).toBe('explicit');
    expect(phases(plan)).toEqual(['research', 'implement', 'test', 'release']);
    expect(pkgs(plan, 0)[0]).toBe('@security/security-audit');
    expect(pkgs(plan, 2)).toContain('@qa/unit-test-writer');
    expect(pkgs(plan, 3)[0]).toBe('@release/npm-publish');
  });

  it('json string: actions joined by "and" become separate steps', async () => {
    const { plan } = await invoke({
      type: 'json',
      json: 'Write a CSV to JSON converter and add unit tests for it',
    });
    expect(titles(plan)).toEqual(['Write a CSV to JSON converter', 'Add unit tests for it']);
    expect(phases(plan)).toEqual(['implement', 'test']);
    expect(pkgs(plan, 0)[0]).toBe('@data/csv-to-json');
  });
});

describe('engineering.workflow memory binding (ltm read, stm write)', () => {
  it('reads matching ltm facts of its own namespace and records the run in stm once', async () => {
    const [deployFact, dbFact] = await insertEntries(tdb.db, NS, 'ltm', [
      { content: 'Deploy target: Kubernetes with Helm' },
      { content: 'The team uses PostgreSQL 16 for every service.' },
      { content: 'Lunch is served at noon.' },
    ]);
    await insertEntries(tdb.db, OTHER_NS, 'ltm', [{ content: 'Deploy target: Kubernetes on bare metal' }]);
    const { plan, summary, runId } = await invoke(
      { type: 'text', text: 'Design the PostgreSQL schema, then deploy the service to Kubernetes.' },
      { namespace: NS, readTiers: ['ltm'], writeTiers: ['stm'] },
    );
    const used = plan.factsUsed.map((f) => f.entryId);
    expect(used).toEqual(expect.arrayContaining([deployFact?.entryId, dbFact?.entryId]));
    expect(plan.factsUsed.map((f) => f.content)).not.toContain('Lunch is served at noon.');
    expect(plan.factsUsed.map((f) => f.content)).not.toContain('Deploy target: Kubernetes on bare metal');
    expect(plan.steps[0]?.factIds).toContain(dbFact?.entryId);
    expect(plan.steps[1]?.factIds).toContain(deployFact?.entryId);
    expect(summary).toContain('- The team uses PostgreSQL 16 for every service.');

    const stm = await tdb.db
      .selectFrom('memory_entries')
      .selectAll()
      .where('namespace', '=', NS)
      .where('tier', '=', 'stm')
      .where(({ ref, val, eb }) => eb(ref('metadata', '->>').key('runId'), '=', val(runId)))
      .execute();
    expect(stm).toHaveLength(1);
    expect(stm[0]?.content).toContain('1. Design the PostgreSQL schema');
    expect(stm[0]?.metadata).toMatchObject({ agentId: 'engineering.workflow', runId, steps: '2' });
  });

  it('without a binding it reads no facts and writes nothing', async () => {
    const before = await tdb.db
      .selectFrom('memory_entries')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const { plan } = await invoke({ type: 'text', text: 'Deploy the service to Kubernetes with Helm.' });
    expect(plan.factsUsed).toEqual([]);
    const after = await tdb.db
      .selectFrom('memory_entries')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('a binding the agent does not allow fails the task (memory_binding_forbidden)', async () => {
    const result = await submitInvoke(
      { db: tdb.db, queue, events, syncThresholdMs: 10_000 },
      {
        namespace: NS,
        clientId: 'client-1',
        args: {
          agentId: 'engineering.workflow',
          input: { type: 'text', text: 'Write tests' },
          executionMode: 'sync',
          memory: { namespace: NS, readTiers: [], writeTiers: ['ltm'] },
        },
      },
    );
    expect(result.mode).toBe('task');
    if (result.mode !== 'task') return;
    expect(await getTaskResult(tdb.db, NS, result.task.taskId)).toMatchObject({
      status: 'failed',
      error: { reason: 'memory_binding_forbidden' },
    });
  });

  it('an unknown agent fails the task with agent_not_available', async () => {
    const result = await submitInvoke(
      { db: tdb.db, queue, events, syncThresholdMs: 10_000 },
      {
        namespace: NS,
        clientId: 'client-1',
        args: { agentId: 'nope.agent', input: { type: 'text', text: 'x' }, executionMode: 'sync' },
      },
    );
    if (result.mode !== 'task') throw new Error('expected a task');
    expect(await getTaskResult(tdb.db, NS, result.task.taskId)).toMatchObject({
      status: 'failed',
      error: { reason: 'agent_not_available' },
    });
  });
});

describe('optional model refinement (OpenAI-compatible endpoint on a local server)', () => {
  const input: AgentInput = {
    type: 'text',
    text: 'First design the database schema, then write integration tests.',
  };
  const run = () => ({ taskId: randomUUID(), runId: randomUUID(), namespace: NS, input });

  it('a good answer rewords the titles and keeps order, phases and packages', async () => {
    const model = await startModelServer('ok');
    try {
      const plan = await planWorkflow(
        {
          db: tdb.db,
          finder: createHttpPackageFinder(registry.url),
          model: { baseUrl: model.url, model: 'm', apiKey: 'k-123', timeoutMs: 2000 },
        },
        run(),
      );
      expect(plan.refinedBy).toBe('model');
      expect(titles(plan)).toEqual([
        'Refined: Design the database schema',
        'Refined: Write integration tests',
      ]);
      expect(phases(plan)).toEqual(['design', 'test']);
      expect(pkgs(plan, 1)[0]).toBe('@qa/integration-tests');
      expect(model.requests[0]?.authorization).toBe('Bearer k-123');
    } finally {
      await model.close();
    }
  });

  it.each([
    ['slow (timeout)', 'slow'],
    ['garbage', 'garbage'],
    ['HTTP 500', 'error'],
  ] as const)('a %s answer falls back to the model-free plan', async (_label, behaviour) => {
    // A slow answer would come long after the test's own timeout: only the refiner's 400 ms timeout
    // can give this plan, so no clock needs reading.
    const model = await startModelServer(behaviour, 60_000);
    try {
      const plan = await planWorkflow(
        {
          db: tdb.db,
          finder: createHttpPackageFinder(registry.url),
          model: { baseUrl: model.url, model: 'm', timeoutMs: 400 },
        },
        run(),
      );
      expect(model.requests).toHaveLength(1);
      expect(plan.refinedBy).toBe('rules');
      expect(titles(plan)).toEqual(['Design the database schema', 'Write integration tests']);
    } finally {
      await model.close();
    }
  });

  it('an unreachable registry still yields a plan, with no packages', async () => {
    const plan = await planWorkflow(
      { db: tdb.db, finder: createHttpPackageFinder('http://127.0.0.1:9', 500), model: null },
      run(),
    );
    expect(plan.registryReachable).toBe(false);
    expect(plan.steps).toHaveLength(2);
    expect(plan.steps.every((s) => s.packages.length === 0)).toBe(true);
  });
});
