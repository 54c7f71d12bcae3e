import { randomUUID } from 'node:crypto';
import { MemoryDeleteResultSchema } from '@pkgreg/contracts';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { describe, expect, it } from 'vitest';
import { deleteEntry, ENTRY_NOT_FOUND_MESSAGE, getEntry, putEntry, searchEntries } from '../src/index.js';
import { expectReject, ns, putArgs } from './helpers.js';

const t = useTestDatabase();

describe('deleteEntry (mcp-edge.md, States: soft-deleted, not physically removed)', () => {
  it('marks the entry deleted, keeps the row, and hides it from search', async () => {
    const namespace = ns();
    const entry = (await putEntry(t.db, namespace, putArgs(namespace, { content: 'forget this soon' })))
      .entry;
    const result = await deleteEntry(t.db, namespace, { entryId: entry.entryId });
    expect(MemoryDeleteResultSchema.parse(result)).toEqual(result);
    expect(result.entry).toMatchObject({
      entryId: entry.entryId,
      status: 'deleted',
      content: 'forget this soon',
    });
    expect(result.entry.deletedAt).not.toBeNull();
    const row = await t.db
      .selectFrom('memory_entries')
      .select(['status', 'deleted_at'])
      .where('entry_id', '=', entry.entryId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('deleted');
    expect(row.deleted_at).toBeInstanceOf(Date);
    expect((await searchEntries(t.db, namespace, { query: 'forget', tiers: ['stm'] })).total).toBe(0);
  });

  it('deleting an already deleted entry returns it unchanged (idempotent)', async () => {
    const namespace = ns();
    const entry = (await putEntry(t.db, namespace, putArgs(namespace, { content: 'twice' }))).entry;
    const first = await deleteEntry(t.db, namespace, { entryId: entry.entryId });
    const second = await deleteEntry(t.db, namespace, { entryId: entry.entryId });
    expect(second).toEqual(first);
  });

  it('a superseded entry can be deleted; its successor stays active', async () => {
    const namespace = ns();
    const a = (await putEntry(t.db, namespace, putArgs(namespace, { content: 'a' }))).entry;
    const b = (
      await putEntry(
        t.db,
        namespace,
        putArgs(namespace, { content: 'b', mode: 'supersede', supersedesEntryId: a.entryId }),
      )
    ).entry;
    const deleted = (await deleteEntry(t.db, namespace, { entryId: a.entryId })).entry;
    expect(deleted).toMatchObject({ status: 'deleted', supersededByEntryId: b.entryId });
    expect((await getEntry(t.db, namespace, { entryId: b.entryId })).entry.status).toBe('active');
  });

  it('tiers option: deleting an entry of a tier the caller may not delete is scope_insufficient and changes nothing', async () => {
    const namespace = ns();
    const ltm = (await putEntry(t.db, namespace, putArgs(namespace, { tier: 'ltm', content: 'keep' }))).entry;
    const err = await expectReject(
      deleteEntry(t.db, namespace, { entryId: ltm.entryId }, { tiers: ['stm'] }),
      'scope_insufficient',
    );
    expect(err.details).toEqual({ requiredScopes: ['pkgreg.memory.ltm.delete'] });
    expect((await getEntry(t.db, namespace, { entryId: ltm.entryId })).entry.status).toBe('active');
    expect(
      (await deleteEntry(t.db, namespace, { entryId: ltm.entryId }, { tiers: ['ltm'] })).entry.status,
    ).toBe('deleted');
  });

  it('another namespace’s entry reads as not found and is left alone (docs/decisions.md)', async () => {
    const mine = ns();
    const theirs = ns();
    const foreign = (await putEntry(t.db, theirs, putArgs(theirs, { content: 'theirs' }))).entry;
    await expectReject(
      deleteEntry(t.db, mine, { entryId: foreign.entryId }),
      'request_schema_invalid',
      ENTRY_NOT_FOUND_MESSAGE,
    );
    await expectReject(
      deleteEntry(t.db, mine, { entryId: randomUUID() }),
      'request_schema_invalid',
      ENTRY_NOT_FOUND_MESSAGE,
    );
    expect((await getEntry(t.db, theirs, { entryId: foreign.entryId })).entry.status).toBe('active');
  });
});
