import { TOOL_NAMES } from '@pkgreg/contracts';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { describe, expect, it } from 'vitest';
import {
  assertNotQuarantined,
  deleteEntry,
  getEntry,
  getQuarantineState,
  insertEntries,
  listQuarantined,
  purgeNamespace,
  putEntry,
  quarantineNamespace,
  releaseNamespace,
  searchEntries,
  supersedeMany,
  withIdempotency,
} from '../src/index.js';
import { expectReject, ns, putArgs } from './helpers.js';

const t = useTestDatabase();

describe('quarantine (mcp-edge.md: source_quarantined for durable mutation paths; decisions.md)', () => {
  it('a namespace with no record is not quarantined', async () => {
    const namespace = ns();
    expect(await getQuarantineState(t.db, namespace)).toBeNull();
    await expect(assertNotQuarantined(t.db, namespace)).resolves.toBeUndefined();
  });

  it('refuses writes, deletes and compaction writes; reads stay allowed', async () => {
    const namespace = ns();
    const entry = (await putEntry(t.db, namespace, putArgs(namespace, { content: 'kept for reading' })))
      .entry;
    const record = await quarantineNamespace(t.db, namespace, 'abuse report');
    expect(record).toMatchObject({ namespace, state: 'quarantined', reason: 'abuse report' });
    expect(await getQuarantineState(t.db, namespace)).toMatchObject({ state: 'quarantined' });

    await expectReject(assertNotQuarantined(t.db, namespace), 'source_quarantined');
    await expectReject(
      putEntry(t.db, namespace, putArgs(namespace, { content: 'new' })),
      'source_quarantined',
    );
    await expectReject(
      putEntry(
        t.db,
        namespace,
        putArgs(namespace, { content: 'v2', mode: 'supersede', supersedesEntryId: entry.entryId }),
      ),
      'source_quarantined',
    );
    await expectReject(deleteEntry(t.db, namespace, { entryId: entry.entryId }), 'source_quarantined');
    await expectReject(insertEntries(t.db, namespace, 'ltm', [{ content: 'fact' }]), 'source_quarantined');
    await expectReject(
      supersedeMany(t.db, namespace, [entry.entryId], { tier: 'stm', content: 'summary' }),
      'source_quarantined',
    );

    expect((await getEntry(t.db, namespace, { entryId: entry.entryId })).entry.status).toBe('active');
    const found = await searchEntries(t.db, namespace, { query: 'reading', tiers: ['stm'] });
    expect(found.total).toBe(1);
    const count = await t.db
      .selectFrom('memory_entries')
      .select('entry_id')
      .where('namespace', '=', namespace)
      .execute();
    expect(count).toHaveLength(1);
  });

  it('only the quarantined namespace is affected', async () => {
    const bad = ns();
    const good = ns();
    await quarantineNamespace(t.db, bad, null);
    await expect(putEntry(t.db, good, putArgs(good, { content: 'fine' }))).resolves.toBeDefined();
  });

  it('release lets writes through again', async () => {
    const namespace = ns();
    await quarantineNamespace(t.db, namespace, 'temporary');
    expect(await releaseNamespace(t.db, namespace)).toBe(true);
    expect(await releaseNamespace(t.db, namespace)).toBe(false);
    expect(await getQuarantineState(t.db, namespace)).toBeNull();
    await expect(putEntry(t.db, namespace, putArgs(namespace, { content: 'back' }))).resolves.toBeDefined();
  });

  it('purge marks the namespace purged and soft-deletes all its memory in one go (decisions.md)', async () => {
    const namespace = ns();
    const other = ns();
    const a = (await putEntry(t.db, namespace, putArgs(namespace, { content: 'a' }))).entry;
    const b = (
      await putEntry(
        t.db,
        namespace,
        putArgs(namespace, { content: 'b', mode: 'supersede', supersedesEntryId: a.entryId }),
      )
    ).entry;
    const c = (await putEntry(t.db, namespace, putArgs(namespace, { tier: 'ltm', content: 'c' }))).entry;
    const keep = (await putEntry(t.db, other, putArgs(other, { content: 'other' }))).entry;
    await withIdempotency(
      t.db,
      { namespace, toolName: TOOL_NAMES.memoryPut, key: 'k', args: {} },
      async () => ({
        cached: 'content',
      }),
    );

    const result = await purgeNamespace(t.db, namespace, 'gdpr');
    expect(result.record).toMatchObject({ namespace, state: 'purged', reason: 'gdpr' });
    expect(result.deletedEntries).toBe(3);
    for (const id of [a.entryId, b.entryId, c.entryId]) {
      const entry = (await getEntry(t.db, namespace, { entryId: id })).entry;
      expect(entry.status).toBe('deleted');
      expect(entry.deletedAt).not.toBeNull();
    }
    // Soft: the rows are still there.
    const rows = await t.db
      .selectFrom('memory_entries')
      .select('entry_id')
      .where('namespace', '=', namespace)
      .execute();
    expect(rows).toHaveLength(3);
    expect((await searchEntries(t.db, namespace, { query: '', tiers: ['stm', 'ltm'] })).total).toBe(0);
    expect((await getEntry(t.db, other, { entryId: keep.entryId })).entry.status).toBe('active');
    const cached = await t.db
      .selectFrom('idempotency_records')
      .select('idempotency_key')
      .where('subject_namespace', '=', namespace)
      .execute();
    expect(cached).toHaveLength(0);
    await expectReject(
      putEntry(t.db, namespace, putArgs(namespace, { content: 'again' })),
      'source_quarantined',
    );
  });

  it('quarantining a purged namespace leaves it purged', async () => {
    const namespace = ns();
    await purgeNamespace(t.db, namespace, 'first');
    expect(await quarantineNamespace(t.db, namespace, 'second')).toMatchObject({
      state: 'purged',
      reason: 'first',
    });
  });

  it('a purge racing concurrent writes leaves no active entry behind (namespace lock)', async () => {
    for (let round = 0; round < 5; round++) {
      const namespace = ns();
      const writes = Array.from({ length: 20 }, (_, i) =>
        putEntry(t.db, namespace, putArgs(namespace, { content: `w${i}` })).catch((e: unknown) => e),
      );
      const purge = purgeNamespace(t.db, namespace, 'race');
      const settled = await Promise.all([...writes, purge]);
      for (const w of settled.slice(0, 20)) {
        if (w instanceof Error) expect((w as { reason?: string }).reason).toBe('source_quarantined');
      }
      const active = await t.db
        .selectFrom('memory_entries')
        .select('entry_id')
        .where('namespace', '=', namespace)
        .where('status', '=', 'active')
        .execute();
      expect(active).toHaveLength(0);
    }
  });

  it('listQuarantined lists quarantined and purged namespaces', async () => {
    const q = ns();
    const p = ns();
    await quarantineNamespace(t.db, q, 'q');
    await purgeNamespace(t.db, p, 'p');
    const list = await listQuarantined(t.db);
    expect(list.find((r) => r.namespace === q)?.state).toBe('quarantined');
    expect(list.find((r) => r.namespace === p)?.state).toBe('purged');
  });
});
