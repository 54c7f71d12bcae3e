import { randomUUID } from 'node:crypto';
import { MemoryEntrySchema } from '@pkgreg/contracts';
import { createDb, type Database, requirePool } from '@pkgreg/db';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createEntryReader, deleteEntry, ENTRY_NOT_FOUND_MESSAGE, getEntry, putEntry } from '../src/index.js';
import { expectReject, ns, putArgs } from './helpers.js';

const t = useTestDatabase();

describe('putEntry append (mcp-edge.md: pkgreg.memory.v1.put)', () => {
  it('stores an active entry and returns it in the contract shape (decisions.md: Memory entry)', async () => {
    const namespace = ns();
    const { entry, supersededEntryId } = await putEntry(
      t.db,
      namespace,
      putArgs(namespace, {
        tier: 'ltm',
        content: 'User prefers Postgres',
        tags: ['pref'],
        metadata: { k: 'v' },
      }),
    );
    expect(supersededEntryId).toBeNull();
    expect(MemoryEntrySchema.parse(entry)).toEqual(entry);
    expect(entry).toMatchObject({
      namespace,
      tier: 'ltm',
      content: 'User prefers Postgres',
      tags: ['pref'],
      metadata: { k: 'v' },
      status: 'active',
      supersedesEntryId: null,
      supersededByEntryId: null,
      deletedAt: null,
    });
    const row = await t.db
      .selectFrom('memory_entries')
      .selectAll()
      .where('entry_id', '=', entry.entryId)
      .executeTakeFirstOrThrow();
    expect(row.namespace).toBe(namespace);
    expect(row.content).toBe('User prefers Postgres');
  });

  it('refuses args whose namespace differs from the subject namespace (namespace_unauthorized)', async () => {
    const namespace = ns();
    await expectReject(putEntry(t.db, namespace, putArgs(ns(), { content: 'x' })), 'namespace_unauthorized');
  });
});

describe('putEntry supersede (mcp-edge.md, States: predecessor marked superseded)', () => {
  it('marks the predecessor superseded and links both ways, atomically', async () => {
    const namespace = ns();
    const first = (await putEntry(t.db, namespace, putArgs(namespace, { content: 'v1' }))).entry;
    const result = await putEntry(
      t.db,
      namespace,
      putArgs(namespace, { content: 'v2', mode: 'supersede', supersedesEntryId: first.entryId }),
    );
    expect(result.supersededEntryId).toBe(first.entryId);
    expect(result.entry).toMatchObject({ status: 'active', supersedesEntryId: first.entryId, content: 'v2' });
    const old = (await getEntry(t.db, namespace, { entryId: first.entryId })).entry;
    expect(old).toMatchObject({ status: 'superseded', supersededByEntryId: result.entry.entryId });
    expect(Date.parse(old.updatedAt)).toBeGreaterThanOrEqual(Date.parse(first.updatedAt));
  });

  it('a superseded predecessor cannot be superseded again', async () => {
    const namespace = ns();
    const first = (await putEntry(t.db, namespace, putArgs(namespace, { content: 'v1' }))).entry;
    const args = putArgs(namespace, { content: 'v2', mode: 'supersede', supersedesEntryId: first.entryId });
    await putEntry(t.db, namespace, args);
    await expectReject(
      putEntry(t.db, namespace, { ...args, content: 'v3' }),
      'request_schema_invalid',
      /superseded entry; only an active entry/,
    );
  });

  it('a deleted predecessor cannot be superseded', async () => {
    const namespace = ns();
    const first = (await putEntry(t.db, namespace, putArgs(namespace, { content: 'v1' }))).entry;
    await deleteEntry(t.db, namespace, { entryId: first.entryId });
    await expectReject(
      putEntry(
        t.db,
        namespace,
        putArgs(namespace, { content: 'v2', mode: 'supersede', supersedesEntryId: first.entryId }),
      ),
      'request_schema_invalid',
      /deleted entry/,
    );
  });

  it('concurrent double supersede of one predecessor: exactly one wins, no fork', async () => {
    const namespace = ns();
    for (let round = 0; round < 5; round++) {
      const first = (await putEntry(t.db, namespace, putArgs(namespace, { content: `base ${round}` }))).entry;
      const attempts = await Promise.allSettled(
        ['a', 'b', 'c'].map((c) =>
          putEntry(
            t.db,
            namespace,
            putArgs(namespace, { content: c, mode: 'supersede', supersedesEntryId: first.entryId }),
          ),
        ),
      );
      const won = attempts.filter((a) => a.status === 'fulfilled');
      const lost = attempts.filter((a) => a.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(2);
      for (const l of lost) expect((l as PromiseRejectedResult).reason.reason).toBe('request_schema_invalid');
      const successors = await t.db
        .selectFrom('memory_entries')
        .select('entry_id')
        .where('supersedes_entry_id', '=', first.entryId)
        .execute();
      expect(successors).toHaveLength(1);
      const old = (await getEntry(t.db, namespace, { entryId: first.entryId })).entry;
      expect(old.supersededByEntryId).toBe(successors[0]?.entry_id);
    }
  });

  it('the unique index backstop (memory_entries_supersedes_key) surfaces as request_schema_invalid, not a 5xx', async () => {
    const namespace = ns();
    const first = (await putEntry(t.db, namespace, putArgs(namespace, { content: 'v1' }))).entry;
    // A successor that claims the predecessor while the predecessor still reads active (as if two
    // writers had slipped past the row lock together).
    await t.db
      .insertInto('memory_entries')
      .values({
        namespace,
        tier: 'stm',
        content: 'ghost',
        metadata: '{}',
        supersedes_entry_id: first.entryId,
      })
      .execute();
    await expectReject(
      putEntry(
        t.db,
        namespace,
        putArgs(namespace, { content: 'v2', mode: 'supersede', supersedesEntryId: first.entryId }),
      ),
      'request_schema_invalid',
      /already superseded/,
    );
    expect((await getEntry(t.db, namespace, { entryId: first.entryId })).entry.status).toBe('active');
  });

  it('refuses a predecessor of another namespace with the same message as a missing one', async () => {
    const mine = ns();
    const theirs = ns();
    const foreign = (await putEntry(t.db, theirs, putArgs(theirs, { content: 'theirs' }))).entry;
    const a = await expectReject(
      putEntry(
        t.db,
        mine,
        putArgs(mine, { content: 'x', mode: 'supersede', supersedesEntryId: foreign.entryId }),
      ),
      'request_schema_invalid',
    );
    const b = await expectReject(
      putEntry(
        t.db,
        mine,
        putArgs(mine, { content: 'x', mode: 'supersede', supersedesEntryId: randomUUID() }),
      ),
      'request_schema_invalid',
    );
    expect(a.message).toBe(b.message);
    expect((await getEntry(t.db, theirs, { entryId: foreign.entryId })).entry.status).toBe('active');
    const count = await t.db
      .selectFrom('memory_entries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('namespace', '=', mine)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });

  it('refuses a predecessor of another tier and writes nothing', async () => {
    const namespace = ns();
    const stm = (await putEntry(t.db, namespace, putArgs(namespace, { tier: 'stm', content: 'short' })))
      .entry;
    await expectReject(
      putEntry(
        t.db,
        namespace,
        putArgs(namespace, {
          tier: 'ltm',
          content: 'long',
          mode: 'supersede',
          supersedesEntryId: stm.entryId,
        }),
      ),
      'request_schema_invalid',
      /within its tier/,
    );
    expect((await getEntry(t.db, namespace, { entryId: stm.entryId })).entry.status).toBe('active');
    const ltm = await t.db
      .selectFrom('memory_entries')
      .select('entry_id')
      .where('namespace', '=', namespace)
      .where('tier', '=', 'ltm')
      .execute();
    expect(ltm).toHaveLength(0);
  });
});

describe('getEntry (decisions.md: get {namespace, entryId})', () => {
  it('returns an entry in every status: active, superseded, deleted', async () => {
    const namespace = ns();
    const a = (await putEntry(t.db, namespace, putArgs(namespace, { content: 'a' }))).entry;
    const b = (
      await putEntry(
        t.db,
        namespace,
        putArgs(namespace, { content: 'b', mode: 'supersede', supersedesEntryId: a.entryId }),
      )
    ).entry;
    const c = (await putEntry(t.db, namespace, putArgs(namespace, { content: 'c' }))).entry;
    await deleteEntry(t.db, namespace, { entryId: c.entryId });
    expect((await getEntry(t.db, namespace, { entryId: a.entryId })).entry.status).toBe('superseded');
    expect((await getEntry(t.db, namespace, { entryId: b.entryId })).entry.status).toBe('active');
    const deleted = (await getEntry(t.db, namespace, { entryId: c.entryId })).entry;
    expect(deleted.status).toBe('deleted');
    expect(deleted.deletedAt).not.toBeNull();
    expect(deleted.content).toBe('c');
  });

  it('another namespace’s entry and a missing entry give the same request_schema_invalid (docs/decisions.md)', async () => {
    const mine = ns();
    const theirs = ns();
    const foreign = (await putEntry(t.db, theirs, putArgs(theirs, { content: 'secret' }))).entry;
    const a = await expectReject(
      getEntry(t.db, mine, { entryId: foreign.entryId }),
      'request_schema_invalid',
    );
    const b = await expectReject(getEntry(t.db, mine, { entryId: randomUUID() }), 'request_schema_invalid');
    expect(a.message).toBe(ENTRY_NOT_FOUND_MESSAGE);
    expect(b.message).toBe(ENTRY_NOT_FOUND_MESSAGE);
    expect(a.details).toEqual(b.details);
  });

  it('tiers option: an entry of a tier the caller cannot read is scope_insufficient (decisions.md: memory scopes)', async () => {
    const namespace = ns();
    const ltm = (await putEntry(t.db, namespace, putArgs(namespace, { tier: 'ltm', content: 'long' }))).entry;
    const err = await expectReject(
      getEntry(t.db, namespace, { entryId: ltm.entryId }, { tiers: ['stm'] }),
      'scope_insufficient',
    );
    expect(err.details).toEqual({ requiredScopes: ['pkgreg.memory.ltm.read'] });
    expect(
      (await getEntry(t.db, namespace, { entryId: ltm.entryId }, { tiers: ['ltm'] })).entry.entryId,
    ).toBe(ltm.entryId);
    // Not found stays not found, whatever the tiers.
    await expectReject(
      getEntry(t.db, namespace, { entryId: randomUUID() }, { tiers: [] }),
      'request_schema_invalid',
    );
  });

  it('refuses get args naming another namespace than the subject (namespace_unauthorized)', async () => {
    const namespace = ns();
    const entry = (await putEntry(t.db, namespace, putArgs(namespace, { content: 'x' }))).entry;
    await expectReject(
      getEntry(t.db, namespace, { namespace: ns(), entryId: entry.entryId }),
      'namespace_unauthorized',
    );
  });

  it('an id that is not a UUID (a caller that skipped the schema) is not found, never a database error', async () => {
    const namespace = ns();
    await expectReject(
      getEntry(t.db, namespace, { entryId: "x' or 1=1" }),
      'request_schema_invalid',
      ENTRY_NOT_FOUND_MESSAGE,
    );
    await expectReject(
      deleteEntry(t.db, namespace, { entryId: 'nope' }),
      'request_schema_invalid',
      ENTRY_NOT_FOUND_MESSAGE,
    );
    await expectReject(
      putEntry(t.db, namespace, {
        ...putArgs(namespace, { content: 'x' }),
        mode: 'supersede',
        supersedesEntryId: 'nope',
      }),
      'request_schema_invalid',
    );
  });
});

describe('createEntryReader: gets of one moment share one query (docs/decisions.md: memory.get)', () => {
  it('answers each lookup with its own entry, as getEntry alone would', async () => {
    const a = ns();
    const b = ns();
    const [e1, e2, e3] = await Promise.all([
      putEntry(t.db, a, putArgs(a, { content: 'first' })),
      putEntry(t.db, a, putArgs(a, { content: 'second', tier: 'ltm' })),
      putEntry(t.db, b, putArgs(b, { content: 'third' })),
    ]);
    const reader = createEntryReader(t.db);
    const ids = [e1.entry.entryId, e2.entry.entryId, e3.entry.entryId];
    const [r1, r2, r3, again, upper] = await Promise.all([
      getEntry(t.db, a, { entryId: ids[0] as string }, { reader }),
      getEntry(t.db, a, { entryId: ids[1] as string }, { reader }),
      getEntry(t.db, b, { entryId: ids[2] as string }, { reader }),
      getEntry(t.db, a, { entryId: ids[0] as string }, { reader }),
      getEntry(t.db, a, { entryId: (ids[0] as string).toUpperCase() }, { reader }),
    ]);
    expect([r1, r2, r3, again, upper].map((r) => r.entry.content)).toEqual([
      'first',
      'second',
      'third',
      'first',
      'first',
    ]);
    expect(r1).toEqual(await getEntry(t.db, a, { entryId: ids[0] as string }));
  });

  it('in the same batch: another namespace, an unknown id and a malformed id are each not found', async () => {
    const a = ns();
    const b = ns();
    const { entry } = await putEntry(t.db, a, putArgs(a, { content: 'mine' }));
    const reader = createEntryReader(t.db);
    const results = await Promise.allSettled([
      getEntry(t.db, b, { entryId: entry.entryId }, { reader }),
      getEntry(t.db, a, { entryId: randomUUID() }, { reader }),
      getEntry(t.db, a, { entryId: 'not-a-uuid' }, { reader }),
      getEntry(t.db, a, { entryId: entry.entryId }, { reader }),
    ]);
    for (const r of results.slice(0, 3)) {
      expect(r.status).toBe('rejected');
      if (r.status === 'rejected') expect((r.reason as Error).message).toBe(ENTRY_NOT_FOUND_MESSAGE);
    }
    expect(results[3]?.status).toBe('fulfilled');
  });

  it('runs as one named statement on a Db made by createDb, and unnamed inside a transaction', async () => {
    const a = ns();
    const { entry } = await putEntry(t.db, a, putArgs(a, { content: 'prepared' }));
    const single = createDb(t.url, { max: 1 }); // one connection: its prepared statements are visible
    try {
      const reader = createEntryReader(single);
      const [first, second] = await Promise.all([
        getEntry(single, a, { entryId: entry.entryId }, { reader }),
        getEntry(single, a, { entryId: randomUUID() }, { reader }).catch((e: Error) => e.message),
      ]);
      expect(first.entry).toEqual(entry);
      expect(second).toBe(ENTRY_NOT_FOUND_MESSAGE);
      const again = await getEntry(single, a, { entryId: entry.entryId }, { reader });
      expect(again.entry).toEqual(entry);
      const prepared = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(single);
      expect(prepared.rows.map((r) => r.name)).toEqual(['pkgreg_memory_read_batch']);

      const inTx = await single.transaction().execute(async (trx) => {
        const { entry: mine } = await putEntry(trx, a, putArgs(a, { content: 'uncommitted' }));
        const txReader = createEntryReader(trx);
        return Promise.all([
          getEntry(trx, a, { entryId: mine.entryId }, { reader: txReader }),
          getEntry(trx, a, { entryId: entry.entryId }, { reader: txReader }),
        ]);
      });
      expect(inTx.map((r) => r.entry.content)).toEqual(['uncommitted', 'prepared']);
    } finally {
      await single.destroy();
    }
  });

  it('asks Postgres for each (namespace, id) once, however many lookups of the moment name it', async () => {
    const a = ns();
    const { entry: hot } = await putEntry(t.db, a, putArgs(a, { content: 'hot' }));
    const { entry: cold } = await putEntry(t.db, a, putArgs(a, { content: 'cold' }));
    const pooled = createDb(t.url, { max: 1 });
    // A Db of no createDb pool: the reader's statement goes through Kysely, which logs its parameters.
    const sent: unknown[][] = [];
    const logged = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: requirePool(pooled, 'this test') }),
      log: (event) => {
        if (event.level === 'query') sent.push([...event.query.parameters]);
      },
    });
    try {
      const reader = createEntryReader(logged);
      const results = await Promise.all([
        ...Array.from({ length: 5 }, () => getEntry(logged, a, { entryId: hot.entryId }, { reader })),
        getEntry(logged, a, { entryId: hot.entryId.toUpperCase() }, { reader }),
        getEntry(logged, a, { entryId: cold.entryId }, { reader }),
      ]);
      expect(results.map((r) => r.entry.content)).toEqual(['hot', 'hot', 'hot', 'hot', 'hot', 'hot', 'cold']);
      expect(sent).toEqual([
        [
          [a, a],
          [hot.entryId, cold.entryId],
        ],
      ]);
    } finally {
      await pooled.destroy();
    }
  });

  it('a lookup made after a write sees it (the query starts after the lookup is asked)', async () => {
    const a = ns();
    const reader = createEntryReader(t.db);
    const { entry } = await putEntry(t.db, a, putArgs(a, { content: 'v1' }));
    const { entry: next } = await putEntry(
      t.db,
      a,
      putArgs(a, { content: 'v2', mode: 'supersede', supersedesEntryId: entry.entryId }),
    );
    const old = await getEntry(t.db, a, { entryId: entry.entryId }, { reader });
    expect(old.entry.status).toBe('superseded');
    expect(old.entry.supersededByEntryId).toBe(next.entryId);
  });
});
