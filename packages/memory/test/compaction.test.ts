import { randomUUID } from 'node:crypto';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { describe, expect, it } from 'vitest';
import {
  deleteEntry,
  findActiveByContent,
  getEntry,
  insertEntries,
  listActiveWindow,
  putEntry,
  supersedeMany,
} from '../src/index.js';
import { expectReject, ns, putArgs } from './helpers.js';

const t = useTestDatabase();

describe('compaction helpers (mcp-edge.md: pkgreg.memory.v1.compact summarize / extract_facts)', () => {
  it('insertEntries writes a batch in input order; listActiveWindow returns the oldest active first', async () => {
    const namespace = ns();
    const contents = Array.from({ length: 8 }, (_, i) => `step ${i}`);
    const inserted = await insertEntries(
      t.db,
      namespace,
      'stm',
      contents.map((content, i) => ({ content, tags: ['run'], metadata: { i: String(i) } })),
    );
    expect(inserted.map((e) => e.content)).toEqual(contents);
    expect(inserted[3]).toMatchObject({ tier: 'stm', tags: ['run'], metadata: { i: '3' }, status: 'active' });
    await deleteEntry(t.db, namespace, { entryId: inserted[1]?.entryId as string });
    await insertEntries(t.db, namespace, 'ltm', [{ content: 'other tier' }]);
    const window = await listActiveWindow(t.db, namespace, 'stm', 3);
    expect(window.map((e) => e.content)).toEqual(['step 0', 'step 2', 'step 3']);
    expect(await listActiveWindow(t.db, namespace, 'stm', 0)).toEqual([]);
    expect(await insertEntries(t.db, namespace, 'stm', [])).toEqual([]);
  });

  it('supersedeMany: one summary supersedes a window; links both ways (docs/decisions.md)', async () => {
    const namespace = ns();
    const window = await insertEntries(t.db, namespace, 'stm', [
      { content: 'a' },
      { content: 'b' },
      { content: 'c' },
    ]);
    const ids = window.map((e) => e.entryId);
    const { entry, superseded } = await supersedeMany(t.db, namespace, ids, {
      tier: 'stm',
      content: 'summary of a, b, c',
      tags: ['summary'],
    });
    expect(entry).toMatchObject({ status: 'active', supersedesEntryId: ids[0], tags: ['summary'] });
    expect(superseded.map((e) => e.entryId)).toEqual(ids);
    for (const id of ids) {
      const e = (await getEntry(t.db, namespace, { entryId: id })).entry;
      expect(e).toMatchObject({ status: 'superseded', supersededByEntryId: entry.entryId });
    }
    expect((await listActiveWindow(t.db, namespace, 'stm', 10)).map((e) => e.entryId)).toEqual([
      entry.entryId,
    ]);
  });

  it('supersedeMany refuses when any predecessor is not active or not ours, and writes nothing', async () => {
    const namespace = ns();
    const other = ns();
    const [a, b] = await insertEntries(t.db, namespace, 'stm', [{ content: 'a' }, { content: 'b' }]);
    const foreign = (await putEntry(t.db, other, putArgs(other, { content: 'foreign' }))).entry;
    await deleteEntry(t.db, namespace, { entryId: b?.entryId as string });
    await expectReject(
      supersedeMany(t.db, namespace, [a?.entryId as string, b?.entryId as string], {
        tier: 'stm',
        content: 's',
      }),
      'request_schema_invalid',
      /deleted entry/,
    );
    await expectReject(
      supersedeMany(t.db, namespace, [a?.entryId as string, foreign.entryId], { tier: 'stm', content: 's' }),
      'request_schema_invalid',
      /does not name an entry of this namespace/,
    );
    await expectReject(
      supersedeMany(t.db, namespace, [randomUUID()], { tier: 'stm', content: 's' }),
      'request_schema_invalid',
    );
    await expectReject(
      supersedeMany(t.db, namespace, [], { tier: 'stm', content: 's' }),
      'request_schema_invalid',
    );
    expect((await getEntry(t.db, namespace, { entryId: a?.entryId as string })).entry.status).toBe('active');
    expect((await getEntry(t.db, other, { entryId: foreign.entryId })).entry.status).toBe('active');
    const rows = await t.db
      .selectFrom('memory_entries')
      .select('content')
      .where('namespace', '=', namespace)
      .execute();
    expect(rows.map((r) => r.content).sort()).toEqual(['a', 'b']);
  });

  it('two concurrent compactions of one window: exactly one wins', async () => {
    const namespace = ns();
    const window = await insertEntries(t.db, namespace, 'stm', [{ content: 'x' }, { content: 'y' }]);
    const ids = window.map((e) => e.entryId);
    const results = await Promise.allSettled([
      supersedeMany(t.db, namespace, ids, { tier: 'stm', content: 'summary 1' }),
      supersedeMany(t.db, namespace, [...ids].reverse(), { tier: 'stm', content: 'summary 2' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const active = await listActiveWindow(t.db, namespace, 'stm', 10);
    expect(active).toHaveLength(1);
  });

  it('findActiveByContent finds existing facts ignoring case and whitespace, per tier, active only', async () => {
    const namespace = ns();
    const [fact, gone] = await insertEntries(t.db, namespace, 'ltm', [
      { content: 'User prefers Postgres' },
      { content: 'Deploys on Friday' },
    ]);
    await deleteEntry(t.db, namespace, { entryId: gone?.entryId as string });
    await insertEntries(t.db, namespace, 'stm', [{ content: 'Only in stm' }]);
    const found = await findActiveByContent(t.db, namespace, 'ltm', [
      '  user   prefers\npostgres ',
      'Deploys on Friday',
      'Only in stm',
      'Something new',
    ]);
    expect([...found.keys()]).toEqual(['  user   prefers\npostgres ']);
    expect(found.get('  user   prefers\npostgres ')?.entryId).toBe(fact?.entryId);
    expect((await findActiveByContent(t.db, ns(), 'ltm', ['User prefers Postgres'])).size).toBe(0);
    expect((await findActiveByContent(t.db, namespace, 'ltm', [])).size).toBe(0);
  });
});
