import type { AgentInput, AgentInvokeJob, MemoryBinding } from '@pkgreg/contracts';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { insertEntries } from '@pkgreg/memory';
import {
  getTaskRecord,
  getTaskResult,
  PermanentJobError,
  type SubmitDeps,
  submitCompact,
  submitInvoke,
  toTaskError,
} from '@pkgreg/tasks';
import { freePort } from '@pkgreg/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createHttpPackageFinder,
  type RunDeps,
  runAgentInvoke,
  runMemoryCompact,
  type WorkflowPlan,
} from '../src/index.js';
import { heldJobs } from './helpers.js';

// The two task jobs (runs.ts) as a worker or a local runtime runs them: each starts its task, writes
// its effects with the task's completion in one transaction, and does nothing when delivered again.
// Package search is not what these tests are about: the registry is a closed port here, so plans name
// no packages (package-finder.test.ts runs the real registry).

const NS = `app:${'a'.repeat(64)}`;
const OTHER_NS = `app:${'b'.repeat(64)}`;
const tdb = useTestDatabase();
const jobs = heldJobs();
let deps: RunDeps;
let submit: SubmitDeps;

beforeAll(async () => {
  deps = {
    db: tdb.db,
    finder: createHttpPackageFinder(`http://127.0.0.1:${await freePort()}`, 2_000),
    model: null,
    pollWindowSeconds: 300,
  };
  submit = { db: tdb.db, queue: jobs.queue };
});

/** Submits an async invoke as the edge does; returns the job payload the queue received. */
async function invokeJob(input: AgentInput, memory?: MemoryBinding, agentId = 'engineering.workflow') {
  await submitInvoke(submit, {
    namespace: NS,
    clientId: 'client-1',
    args: { agentId, input, executionMode: 'async', ...(memory ? { memory } : {}) },
  });
  return jobs.last('agent.invoke');
}

async function compactJob(namespace: string, strategy: 'summarize' | 'extract_facts', maxEntries = 10) {
  await submitCompact(submit, {
    namespace,
    clientId: 'client-1',
    args: { namespace, sourceTier: 'stm', strategy, maxEntries, executionMode: 'async' },
  });
  return jobs.last('memory.compact');
}

/** The result of a task that must have completed. */
async function completed(namespace: string, taskId: string) {
  const record = await getTaskResult(tdb.db, namespace, taskId);
  if (record.status !== 'completed') throw new Error(`task ${taskId} is ${record.status}`);
  return record.result;
}

const entries = (namespace: string, tier: 'stm' | 'ltm') =>
  tdb.db
    .selectFrom('memory_entries')
    .selectAll()
    .where('namespace', '=', namespace)
    .where('tier', '=', tier)
    .orderBy('created_at')
    .execute();

describe('agent.invoke (runAgentInvoke)', () => {
  it('completes the task with the plan; a redelivery finds it ended and writes nothing', async () => {
    const payload = await invokeJob(
      { type: 'text', text: 'First design the database schema, then deploy the service.' },
      { namespace: NS, readTiers: [], writeTiers: ['stm'] },
    );
    expect(await getTaskRecord(tdb.db, NS, payload.taskId)).toMatchObject({ status: 'queued' });
    expect(await runAgentInvoke(deps, payload)).toEqual({ applied: true });
    const outputs = await completed(NS, payload.taskId);
    expect(outputs.runId).toBe(payload.runId);
    const plan = JSON.parse(outputs.outputs[1]?.text ?? '{}') as WorkflowPlan;
    expect(plan.steps.map((s) => s.title)).toEqual(['Design the database schema', 'Deploy the service']);
    expect(plan).toMatchObject({ ordering: 'explicit', refinedBy: 'rules', registryReachable: false });
    expect(outputs.outputs[0]?.text).toContain('1. [design] Design the database schema');

    // The stm record of the run, written with the completion: once, however often the job arrives.
    const recorded = (await entries(NS, 'stm')).filter((e) => e.metadata?.runId === payload.runId);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.metadata).toMatchObject({ taskId: payload.taskId, steps: '2' });
    expect(await runAgentInvoke(deps, payload)).toEqual({ skipped: 'finished' });
    expect((await entries(NS, 'stm')).filter((e) => e.metadata?.runId === payload.runId)).toHaveLength(1);
  });

  it('a job whose task is gone (purged) is skipped', async () => {
    const payload = await invokeJob({ type: 'text', text: 'Write tests.' });
    await tdb.db.deleteFrom('tasks').where('task_id', '=', payload.taskId).execute();
    expect(await runAgentInvoke(deps, payload)).toEqual({ skipped: 'missing' });
  });

  it('reads ltm facts of its own namespace only, with the ltm read binding', async () => {
    const [fact] = await insertEntries(tdb.db, NS, 'ltm', [
      { content: 'Every service deploys to Kubernetes with Helm charts.' },
    ]);
    await insertEntries(tdb.db, OTHER_NS, 'ltm', [
      { content: 'Services deploy to Kubernetes on bare metal.' },
    ]);
    const bound = await invokeJob(
      { type: 'text', text: 'Deploy the service to Kubernetes.' },
      { namespace: NS, readTiers: ['ltm'], writeTiers: [] },
    );
    await runAgentInvoke(deps, bound);
    const planOf = async (taskId: string) =>
      JSON.parse((await completed(NS, taskId)).outputs[1]?.text ?? '{}') as WorkflowPlan;
    const plan = await planOf(bound.taskId);
    expect(plan.factsUsed).toEqual([{ entryId: fact?.entryId, content: fact?.content }]);
    expect(plan.steps[0]?.factIds).toEqual([fact?.entryId]);

    // Without the binding, the same request reads nothing.
    const unbound = await invokeJob({ type: 'text', text: 'Deploy the service to Kubernetes.' });
    await runAgentInvoke(deps, unbound);
    expect((await planOf(unbound.taskId)).factsUsed).toEqual([]);
    expect((await entries(NS, 'stm')).filter((e) => e.metadata?.taskId === unbound.taskId)).toEqual([]);
  });

  const refused: Array<[string, Partial<AgentInvokeJob>, string]> = [
    ['an unknown agent', { agentId: 'nope.agent' }, 'agent_not_available'],
    [
      'a binding of another namespace',
      { memory: { namespace: OTHER_NS, readTiers: ['ltm'], writeTiers: [] } },
      'namespace_unauthorized',
    ],
    [
      'a binding the agent does not allow (ltm write)',
      { memory: { namespace: NS, readTiers: [], writeTiers: ['ltm'] } },
      'memory_binding_forbidden',
    ],
    [
      'a binding the agent does not allow (stm read)',
      { memory: { namespace: NS, readTiers: ['stm'], writeTiers: [] } },
      'memory_binding_forbidden',
    ],
  ];
  it.each(refused)(
    '%s: a permanent failure (never retried), nothing written',
    async (_label, job, reason) => {
      // The edge refuses these at admission; the job refuses them again rather than trust its payload.
      const payload = { ...(await invokeJob({ type: 'text', text: 'Write tests.' })), ...job };
      const before = (await entries(NS, 'stm')).length;
      const error = await runAgentInvoke(deps, payload).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(PermanentJobError);
      expect(toTaskError(error).reason).toBe(reason);
      expect((await entries(NS, 'stm')).length).toBe(before);
    },
  );
});

describe('memory.compact (runMemoryCompact)', () => {
  const STANDUP = [
    'The checkout service times out when the payment provider is slow.',
    'Lunch was pizza today.',
    'The payment provider retries double-charge some customers. Retries in the checkout service need idempotency keys.',
    'We agreed to add idempotency keys to every payment request in the checkout service.',
  ];

  it('summarize: one stm summary supersedes the window, written with the completion, once', async () => {
    const ns = `app:${'c'.repeat(64)}`;
    const window = await insertEntries(
      tdb.db,
      ns,
      'stm',
      STANDUP.map((content) => ({ content })),
    );
    const payload = await compactJob(ns, 'summarize', 3);
    expect(await runMemoryCompact(deps, payload)).toEqual({ applied: true });
    const active = (await entries(ns, 'stm')).filter((e) => e.superseded_by_entry_id === null);
    // The three oldest are superseded by the summary; the fourth stays active beside it.
    expect(active.map((e) => e.content)).toEqual([STANDUP[3], expect.any(String)]);
    const summary = active[1];
    expect(summary?.tags).toEqual(['summary']);
    expect(summary?.metadata).toMatchObject({
      compaction: 'summarize',
      runId: payload.runId,
      sourceEntries: '3',
    });
    expect(await completed(ns, payload.taskId)).toMatchObject({
      strategy: 'summarize',
      sourceEntryIds: window.slice(0, 3).map((e) => e.entryId),
      createdEntries: [{ entryId: summary?.entry_id, content: summary?.content }],
    });

    expect(await runMemoryCompact(deps, payload)).toEqual({ skipped: 'finished' });
    expect((await entries(ns, 'stm')).length).toBe(STANDUP.length + 1);
  });

  it('extract_facts: new ltm facts once, known ones not again, other namespaces untouched', async () => {
    const ns = `app:${'d'.repeat(64)}`;
    await insertEntries(tdb.db, ns, 'stm', [
      { content: 'Deploy target: Kubernetes\nIs the cache warm?' },
      { content: 'The API runs on Node 24. Maybe we should try Bun.' },
    ]);
    const first = await compactJob(ns, 'extract_facts');
    await runMemoryCompact(deps, first);
    const facts = (await entries(ns, 'ltm')).map((e) => e.content);
    // A key: value line and a declarative sentence are facts; a question and a hedge are not.
    expect(facts).toEqual(['deploy target: Kubernetes', 'The API runs on Node 24.']);
    // The stm window stays active: facts are derived, not a replacement.
    expect((await entries(ns, 'stm')).every((e) => e.superseded_by_entry_id === null)).toBe(true);

    const second = await compactJob(ns, 'extract_facts');
    await runMemoryCompact(deps, second);
    expect((await entries(ns, 'ltm')).map((e) => e.content)).toEqual(facts);
    expect(await entries(OTHER_NS, 'ltm')).toHaveLength(1); // only the fact the invoke test wrote
  });

  it('summarize leaves a window of one entry alone and says so', async () => {
    const ns = `app:${'e'.repeat(64)}`;
    await insertEntries(tdb.db, ns, 'stm', [{ content: 'A lone note.' }]);
    const payload = await compactJob(ns, 'summarize');
    await runMemoryCompact(deps, payload);
    expect(await completed(ns, payload.taskId)).toMatchObject({
      outputs: [{ type: 'text', text: 'Nothing to summarize: the window holds 1 entry.' }],
      createdEntries: [],
    });
    expect(await entries(ns, 'stm')).toHaveLength(1);
  });
});
