import { QUEUES } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { RuntimeQueue } from '@pkgreg/tasks';
import type request from 'supertest';
import { expect } from 'vitest';

// What the publishing tests count around a refusal: every row a publish, an owner action or a webhook
// could write, and every job it could queue (docs/publishing.md: a refusal leaves nothing behind).

async function count(db: Db, table: 'publish_runs' | 'scope_owners' | 'source_webhooks' | 'indexed_sources') {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Everything a publish could leave behind: rows and queued jobs. */
export async function publishingFootprint(db: Db, queue: RuntimeQueue) {
  const jobs = await queue
    .queue(QUEUES.indexing)
    .getJobCounts('waiting', 'delayed', 'active', 'completed', 'failed');
  return {
    runs: await count(db, 'publish_runs'),
    scopes: await count(db, 'scope_owners'),
    webhooks: await count(db, 'source_webhooks'),
    sources: await count(db, 'indexed_sources'),
    jobs: Object.values(jobs).reduce((a, b) => a + b, 0),
  };
}

/** Asserts a refusal: its status, its `{error}` message, and that nothing was written or queued. */
export async function expectRefused(
  footprint: () => Promise<unknown>,
  call: () => PromiseLike<request.Response>,
  status: number,
  message: RegExp,
): Promise<request.Response> {
  const before = await footprint();
  const res = await call();
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error: expect.stringMatching(message) });
  expect(await footprint()).toEqual(before);
  return res;
}
