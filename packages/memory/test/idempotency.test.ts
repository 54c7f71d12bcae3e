import { setTimeout as sleep } from 'node:timers/promises';
import { TOOL_NAMES } from '@pkgreg/contracts';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  IDEMPOTENCY_IN_PROGRESS_MESSAGE,
  IDEMPOTENCY_REUSED_MESSAGE,
  putEntry,
  requestHash,
  withIdempotency,
} from '../src/index.js';
import { expectReject, ns, putArgs } from './helpers.js';

const t = useTestDatabase();

const toolName = TOOL_NAMES.memoryPut;

function counter<R extends object>(make: (n: number) => R, delayMs = 0) {
  const state = { runs: 0 };
  const run = async () => {
    state.runs += 1;
    const n = state.runs;
    if (delayMs) await sleep(delayMs);
    return make(n);
  };
  return { state, run };
}

describe('canonical request hash', () => {
  it('ignores key order at every depth but not values', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    expect(requestHash({ a: 1, b: 2 })).toBe(requestHash({ b: 2, a: 1 }));
    expect(requestHash({ a: 1 })).not.toBe(requestHash({ a: 2 }));
    expect(requestHash({ a: [1, 2] })).not.toBe(requestHash({ a: [2, 1] }));
  });
});

describe('withIdempotency (decisions.md: MCP edge / Idempotency)', () => {
  it('same key, same subject and tool: replays the first result and runs once', async () => {
    const namespace = ns();
    const { state, run } = counter((n) => ({ run: n }));
    const req = { namespace, toolName, key: 'k1', args: { content: 'x', tags: ['a'] } };
    const first = await withIdempotency(t.db, req, run);
    const second = await withIdempotency(t.db, { ...req, args: { tags: ['a'], content: 'x' } }, run);
    expect(first).toEqual({ run: 1 });
    expect(second).toEqual({ run: 1 });
    expect(state.runs).toBe(1);
  });

  it('a put retried with its key writes one entry and returns the same entry', async () => {
    const namespace = ns();
    const args = putArgs(namespace, { content: 'remember me', idempotencyKey: 'put-1' });
    const call = () =>
      withIdempotency(t.db, { namespace, toolName, key: args.idempotencyKey, args }, () =>
        putEntry(t.db, namespace, args),
      );
    const a = await call();
    const b = await call();
    expect(b).toEqual(a);
    // The replay is the first reply as sent, key order included (it ends up in MCP's text content).
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    const rows = await t.db
      .selectFrom('memory_entries')
      .select('entry_id')
      .where('namespace', '=', namespace)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('same key with different arguments is request_schema_invalid and does not run', async () => {
    const namespace = ns();
    const { state, run } = counter(() => ({ ok: true }));
    await withIdempotency(t.db, { namespace, toolName, key: 'k', args: { content: 'one' } }, run);
    await expectReject(
      withIdempotency(t.db, { namespace, toolName, key: 'k', args: { content: 'two' } }, run),
      'request_schema_invalid',
      IDEMPOTENCY_REUSED_MESSAGE,
    );
    expect(state.runs).toBe(1);
  });

  it('keys are per subject and per tool', async () => {
    const a = ns();
    const b = ns();
    const { state, run } = counter((n) => ({ n }));
    const args = { x: 1 };
    expect(await withIdempotency(t.db, { namespace: a, toolName, key: 'k', args }, run)).toEqual({ n: 1 });
    expect(await withIdempotency(t.db, { namespace: b, toolName, key: 'k', args }, run)).toEqual({ n: 2 });
    expect(
      await withIdempotency(t.db, { namespace: a, toolName: TOOL_NAMES.memoryDelete, key: 'k', args }, run),
    ).toEqual({ n: 3 });
    expect(state.runs).toBe(3);
  });

  it('without a key it simply runs every time', async () => {
    const { state, run } = counter((n) => ({ n }));
    await withIdempotency(t.db, { namespace: ns(), toolName, key: undefined, args: {} }, run);
    await withIdempotency(t.db, { namespace: ns(), toolName, key: undefined, args: {} }, run);
    expect(state.runs).toBe(2);
  });

  it('concurrent first calls with one key: exactly one runs, all get its result', async () => {
    const namespace = ns();
    const { state, run } = counter((n) => ({ n }), 150);
    const req = { namespace, toolName, key: 'race', args: { a: 1 } };
    const results = await Promise.all(Array.from({ length: 6 }, () => withIdempotency(t.db, req, run)));
    expect(state.runs).toBe(1);
    for (const r of results) expect(r).toEqual({ n: 1 });
  });

  it('a waiter past waitMs gets a retryable rate_limited, and the first call still completes', async () => {
    const namespace = ns();
    const { state, run } = counter((n) => ({ n }), 400);
    const req = { namespace, toolName, key: 'slow', args: {} };
    const first = withIdempotency(t.db, req, run);
    await sleep(50);
    const err = await expectReject(
      withIdempotency(t.db, req, run, { waitMs: 100 }),
      'rate_limited',
      IDEMPOTENCY_IN_PROGRESS_MESSAGE,
    );
    expect(err.details).toEqual({ retryAfterSeconds: 1 });
    expect(await first).toEqual({ n: 1 });
    expect(await withIdempotency(t.db, req, run)).toEqual({ n: 1 });
    expect(state.runs).toBe(1);
  });

  it('a failing run releases the key, so a retry runs again', async () => {
    const namespace = ns();
    const req = { namespace, toolName, key: 'fails-once', args: {} };
    let runs = 0;
    const run = async () => {
      runs += 1;
      if (runs === 1) throw new Error('boom');
      return { ok: runs };
    };
    await expect(withIdempotency(t.db, req, run)).rejects.toThrow('boom');
    const left = await t.db
      .selectFrom('idempotency_records')
      .selectAll()
      .where('subject_namespace', '=', namespace)
      .execute();
    expect(left).toHaveLength(0);
    expect(await withIdempotency(t.db, req, run)).toEqual({ ok: 2 });
    expect(runs).toBe(2);
  });

  it('after 24 h the record is ignored and replaced (decisions.md: within 24 h)', async () => {
    const namespace = ns();
    const { state, run } = counter((n) => ({ n }));
    const req = { namespace, toolName, key: 'old', args: { v: 1 } };
    await withIdempotency(t.db, req, run);
    const row = await t.db
      .selectFrom('idempotency_records')
      .select(sql<number>`extract(epoch from expires_at - created_at)`.as('ttl'))
      .where('subject_namespace', '=', namespace)
      .executeTakeFirstOrThrow();
    expect(Number(row.ttl)).toBe(24 * 60 * 60);
    await t.db
      .updateTable('idempotency_records')
      .set({
        expires_at: sql<Date>`now() - interval '1 second'`,
        created_at: sql<Date>`now() - interval '25 hours'`,
      })
      .where('subject_namespace', '=', namespace)
      .execute();
    // Expired: even different arguments are accepted, and the work runs again.
    expect(await withIdempotency(t.db, { ...req, args: { v: 2 } }, run)).toEqual({ n: 2 });
    expect(await withIdempotency(t.db, { ...req, args: { v: 2 } }, run)).toEqual({ n: 2 });
    expect(state.runs).toBe(2);
  });

  it('a placeholder abandoned by a crashed process is taken over after staleAfterMs', async () => {
    const namespace = ns();
    const args = { v: 1 };
    await t.db
      .insertInto('idempotency_records')
      .values({
        subject_namespace: namespace,
        tool_name: toolName,
        idempotency_key: 'crashed',
        request_hash: requestHash(args),
        result: null,
        created_at: sql<Date>`now() - interval '10 minutes'`,
        expires_at: sql<Date>`now() + interval '1 hour'`,
      })
      .execute();
    const { state, run } = counter((n) => ({ n }));
    expect(await withIdempotency(t.db, { namespace, toolName, key: 'crashed', args }, run)).toEqual({ n: 1 });
    expect(state.runs).toBe(1);
  });
});
