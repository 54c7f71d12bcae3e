import { extractFacts, summarizeWindow } from '@pkgreg/agents';
import type { MemoryCompactResult } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { insertEntries, quarantineNamespace } from '@pkgreg/memory';
import {
  createRuntimeQueue,
  createTaskEvents,
  getTaskResult,
  type RuntimeQueue,
  submitCompact,
  type TaskEvents,
} from '@pkgreg/tasks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeWorker } from '../src/worker.js';
import { createTestWorker } from './helpers.js';

// mcp-edge.md, pkgreg.memory.v1.compact: `summarize` condenses the stm window into one entry that
// supersedes it; `extract_facts` derives durable ltm facts and stays inside the namespace.

const prefix = testKeyPrefix('compact');
const tdb = useTestDatabase();
let worker: RuntimeWorker;
let queue: RuntimeQueue;
let events: TaskEvents;
let nsCounter = 0;
const freshNamespace = () => `app:${(++nsCounter).toString(16).padStart(64, 'c')}`;

beforeAll(async () => {
  worker = createTestWorker(tdb.db, prefix);
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix });
  events = await createTaskEvents({ connection: TEST_REDIS_URL, prefix });
});

afterAll(async () => {
  await worker?.close(5000);
  await events?.close();
  await queue?.close();
});

async function compact(
  namespace: string,
  strategy: 'summarize' | 'extract_facts',
  maxEntries: number,
): Promise<Extract<MemoryCompactResult, { mode: 'completed' }>> {
  const result = await submitCompact(
    { db: tdb.db, queue, events, syncThresholdMs: 15_000 },
    {
      namespace,
      clientId: 'c',
      args: { namespace, sourceTier: 'stm', strategy, maxEntries, executionMode: 'sync' },
    },
  );
  if (result.mode !== 'completed') throw new Error(`expected completion: ${JSON.stringify(result)}`);
  return result;
}

const STANDUP = [
  'The checkout service times out when the payment provider is slow. We saw three timeouts in the checkout service yesterday.',
  'Lunch was pizza today.',
  'The payment provider retries double-charge some customers. Retries in the checkout service need idempotency keys.',
  'Alice is on holiday next week.',
  'We agreed to add idempotency keys to every payment request in the checkout service.',
];

describe('summarize (extractive)', () => {
  it('picks the sentences carrying the most shared content words, in original order', () => {
    const summary = summarizeWindow(STANDUP.map((content, i) => ({ entryId: String(i), content })));
    // Repeated words: checkout/service (4 sentences), payment (3), provider, retries, idempotency, keys (2).
    // The retries sentence covers the most of them; the provider sentence adds payment + provider; the
    // rest adds nothing new, and the one-off chatter (lunch, holiday) never makes it.
    expect(summary).toEqual([
      'The payment provider retries double-charge some customers.',
      'Retries in the checkout service need idempotency keys.',
    ]);
  });

  it('one stm summary supersedes the window (oldest first, maxEntries), later entries stay active', async () => {
    const ns = freshNamespace();
    const entries = [];
    for (const content of [...STANDUP, 'Newest note: the release is on Friday.']) {
      // One insert per entry so created_at orders them like separate puts.
      entries.push(...(await insertEntries(tdb.db, ns, 'stm', [{ content }])));
    }
    const result = await compact(ns, 'summarize', 5);
    expect(result.strategy).toBe('summarize');
    expect(result.sourceEntryIds).toEqual(entries.slice(0, 5).map((e) => e.entryId));
    expect(result.createdEntries).toHaveLength(1);
    const summary = result.createdEntries[0];
    expect(summary?.tier).toBe('stm');
    expect(summary?.content).toBe(
      'The payment provider retries double-charge some customers. Retries in the checkout service need idempotency keys.',
    );
    expect(summary?.metadata).toMatchObject({
      compaction: 'summarize',
      runId: result.runId,
      sourceEntries: '5',
    });

    const rows = await tdb.db.selectFrom('memory_entries').selectAll().where('namespace', '=', ns).execute();
    const byId = new Map(rows.map((r) => [r.entry_id, r]));
    for (const e of entries.slice(0, 5)) {
      expect(byId.get(e.entryId)?.status).toBe('superseded');
      expect(byId.get(e.entryId)?.superseded_by_entry_id).toBe(summary?.entryId);
    }
    expect(byId.get(entries[5]?.entryId ?? '')?.status).toBe('active');
    expect(rows.filter((r) => r.status === 'active').map((r) => r.content)).toHaveLength(2);

    // tasks/result carries the same outcome.
    const task = await tdb.db
      .selectFrom('tasks')
      .select('task_id')
      .where('canonical_run_id', '=', result.runId)
      .executeTakeFirstOrThrow();
    expect(await getTaskResult(tdb.db, ns, task.task_id)).toMatchObject({
      status: 'completed',
      result: {
        runId: result.runId,
        strategy: 'summarize',
        outputs: [{ type: 'text', text: summary?.content }],
      },
    });
  });

  it('a window of fewer than two entries is left alone', async () => {
    const ns = freshNamespace();
    await insertEntries(tdb.db, ns, 'stm', [{ content: 'Only one note.' }]);
    const result = await compact(ns, 'summarize', 10);
    expect(result.createdEntries).toEqual([]);
    expect(result.sourceEntryIds).toHaveLength(1);
  });
});

const NOTES = [
  'Deploy target: Fly.io\nPrimary database = PostgreSQL 16\nThe API is written in TypeScript.',
  'Should we move to Kubernetes? Maybe next quarter.\nDeploy the hotfix tonight.',
  'The on-call rotation changes every Monday. Payments use Stripe.\nhttps://example.com/runbook',
  'deploy target:   Fly.io\nThe API is written in TypeScript.',
];

describe('extract_facts', () => {
  it('keeps key: value lines and declarative sentences; drops questions, hedges, imperatives, duplicates', () => {
    const facts = extractFacts(NOTES.map((content, i) => ({ entryId: `e${i}`, content })));
    expect(facts.map((f) => f.content)).toEqual([
      'deploy target: Fly.io',
      'primary database: PostgreSQL 16',
      'The API is written in TypeScript.',
      'The on-call rotation changes every Monday.',
      'Payments use Stripe.',
    ]);
    expect(facts[0]?.sourceEntryId).toBe('e0');
  });

  it('writes new ltm facts once; repeating the compaction adds nothing; other namespaces untouched', async () => {
    const ns = freshNamespace();
    const other = freshNamespace();
    for (const content of NOTES) await insertEntries(tdb.db, ns, 'stm', [{ content }]);
    await insertEntries(tdb.db, other, 'stm', [{ content: 'The other team uses Go.' }]);
    // A fact the namespace already holds is not written again.
    await insertEntries(tdb.db, ns, 'ltm', [{ content: 'Payments use Stripe.' }]);

    const first = await compact(ns, 'extract_facts', 50);
    expect(first.sourceEntryIds).toHaveLength(4);
    expect(first.createdEntries.map((e) => e.content)).toEqual([
      'deploy target: Fly.io',
      'primary database: PostgreSQL 16',
      'The API is written in TypeScript.',
      'The on-call rotation changes every Monday.',
    ]);
    expect(first.createdEntries.every((e) => e.tier === 'ltm' && e.namespace === ns)).toBe(true);
    expect(first.createdEntries[0]?.metadata).toMatchObject({
      compaction: 'extract_facts',
      runId: first.runId,
    });

    const second = await compact(ns, 'extract_facts', 50);
    expect(second.createdEntries).toEqual([]);

    const ltm = await tdb.db
      .selectFrom('memory_entries')
      .select(['content', 'namespace'])
      .where('tier', '=', 'ltm')
      .where('namespace', 'in', [ns, other])
      .execute();
    expect(ltm.filter((r) => r.namespace === ns)).toHaveLength(5);
    expect(ltm.filter((r) => r.namespace === other)).toHaveLength(0);
    // The stm window stays: facts are derived, not a replacement.
    const stm = await tdb.db
      .selectFrom('memory_entries')
      .select('status')
      .where('namespace', '=', ns)
      .where('tier', '=', 'stm')
      .execute();
    expect(stm.every((r) => r.status === 'active')).toBe(true);
  });

  it('a quarantined namespace refuses compaction: the task fails with source_quarantined', async () => {
    const ns = freshNamespace();
    await insertEntries(tdb.db, ns, 'stm', [
      { content: 'The API is written in Rust.' },
      { content: 'Builds run on CI.' },
    ]);
    await quarantineNamespace(tdb.db, ns, 'test');
    const result = await submitCompact(
      { db: tdb.db, queue, events, syncThresholdMs: 15_000 },
      {
        namespace: ns,
        clientId: 'c',
        args: {
          namespace: ns,
          sourceTier: 'stm',
          strategy: 'extract_facts',
          maxEntries: 10,
          executionMode: 'sync',
        },
      },
    );
    if (result.mode !== 'task') throw new Error('expected a failed task');
    expect(await getTaskResult(tdb.db, ns, result.task.taskId)).toMatchObject({
      status: 'failed',
      error: { reason: 'source_quarantined' },
    });
  });
});
