import type { MemoryTier } from '@pkgreg/contracts';
import { type MemoryEntriesTable, queryNamed } from '@pkgreg/db';
import { type Selectable, sql } from 'kysely';
import type { DbOrTx } from '../db.js';

export type MemoryEntryRow = Omit<
  Selectable<MemoryEntriesTable>,
  'search_vector' | 'seq' | 'content_fingerprint'
>;

export interface NewEntryRow {
  namespace: string;
  tier: MemoryTier;
  content: string;
  tags: string[];
  metadata: Record<string, string>;
  supersedes_entry_id?: string | null;
}

// Never select search_vector (large, internal) or the bookkeeping columns.
export const ENTRY_COLUMNS = [
  'entry_id',
  'namespace',
  'tier',
  'content',
  'tags',
  'metadata',
  'status',
  'supersedes_entry_id',
  'superseded_by_entry_id',
  'created_at',
  'updated_at',
  'deleted_at',
] as const;

// A non-UUID id would make Postgres raise (a 5xx); it names no entry, so it is simply not found.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function isUuid(id: string): boolean {
  return UUID.test(id);
}

function toInsert(row: NewEntryRow) {
  return {
    namespace: row.namespace,
    tier: row.tier,
    content: row.content,
    tags: row.tags,
    metadata: JSON.stringify(row.metadata),
    supersedes_entry_id: row.supersedes_entry_id ?? null,
  };
}

export function insertEntryRows(db: DbOrTx, rows: NewEntryRow[]): Promise<MemoryEntryRow[]> {
  if (rows.length === 0) return Promise.resolve([]);
  // RETURNING follows VALUES order for a plain multi-row insert; the caller relies on it.
  return db.insertInto('memory_entries').values(rows.map(toInsert)).returning(ENTRY_COLUMNS).execute();
}

export async function findEntryRow(db: DbOrTx, namespace: string, entryId: string) {
  if (!isUuid(entryId)) return undefined;
  return db
    .selectFrom('memory_entries')
    .select(ENTRY_COLUMNS)
    .where('entry_id', '=', entryId)
    .where('namespace', '=', namespace)
    .executeTakeFirst();
}

/** Reads entries by namespace + id; `createEntryReader` coalesces concurrent reads into one query. */
export interface EntryReader {
  find(namespace: string, entryId: string): Promise<MemoryEntryRow | undefined>;
}

// The batch lookup of createEntryReader: exact (namespace, id) pairs, one statement for the whole batch.
const READ_BATCH_SQL = `
  select ${ENTRY_COLUMNS.map((c) => `e.${c}`).join(', ')}
  from unnest($1::text[], $2::uuid[]) as k(namespace, entry_id)
  join memory_entries e on e.entry_id = k.entry_id and e.namespace = k.namespace`;

/**
 * A reader that sends the lookups made in one event-loop turn as ONE query (memory.get under load:
 * otherwise every concurrent get is a round trip of its own, a write and a read on a pg connection and
 * a backend wake-up). Each lookup still sees every commit made before it was asked: the query starts
 * after it. On a Db made by createDb the query is a named statement, parsed and planned once per
 * connection (unnamed, planning the join is most of a batch's cost to Postgres); inside a transaction
 * it is the same statement, unnamed.
 */
export function createEntryReader(db: DbOrTx): EntryReader {
  interface Lookup {
    namespace: string;
    entryId: string;
    /** `namespace/entryId` with the id as Postgres prints a uuid (lowercase). */
    key: string;
    resolve(row: MemoryEntryRow | undefined): void;
    reject(error: unknown): void;
  }
  let pending: Lookup[] = [];
  const query = (values: [string[], string[]]) =>
    queryNamed<MemoryEntryRow>(db, 'pkgreg_memory_read_batch', READ_BATCH_SQL, values);

  const flush = async () => {
    const batch = pending;
    pending = [];
    // Each (namespace, id) once: concurrent gets of one hot entry are one row to find, send and parse.
    const namespaces: string[] = [];
    const ids: string[] = [];
    const keys = new Set<string>();
    for (const lookup of batch) {
      if (keys.has(lookup.key)) continue;
      keys.add(lookup.key);
      namespaces.push(lookup.namespace);
      ids.push(lookup.entryId);
    }
    try {
      const rows = await query([namespaces, ids]);
      const byKey = new Map(rows.map((row) => [`${row.namespace}/${row.entry_id}`, row]));
      for (const lookup of batch) lookup.resolve(byKey.get(lookup.key));
    } catch (error) {
      for (const lookup of batch) lookup.reject(error);
    }
  };

  return {
    find(namespace, entryId) {
      if (!isUuid(entryId)) return Promise.resolve(undefined);
      return new Promise((resolve, reject) => {
        if (pending.length === 0) setImmediate(() => void flush());
        pending.push({ namespace, entryId, key: `${namespace}/${entryId.toLowerCase()}`, resolve, reject });
      });
    },
  };
}

/** Row-locks the entries (in id order, so two lockers never deadlock) and returns them. */
export async function lockEntryRows(db: DbOrTx, namespace: string, entryIds: string[]) {
  const ids = entryIds.filter(isUuid);
  if (ids.length === 0) return [];
  return db
    .selectFrom('memory_entries')
    .select(ENTRY_COLUMNS)
    .where('entry_id', 'in', ids)
    .where('namespace', '=', namespace)
    .orderBy('entry_id')
    .forUpdate()
    .execute();
}

export function markSuperseded(db: DbOrTx, namespace: string, entryIds: string[], supersededBy: string) {
  return db
    .updateTable('memory_entries')
    .set({ status: 'superseded', superseded_by_entry_id: supersededBy, updated_at: sql<Date>`now()` })
    .where('entry_id', 'in', entryIds)
    .where('namespace', '=', namespace)
    .where('status', '=', 'active')
    .returning(ENTRY_COLUMNS)
    .execute();
}

export function markDeleted(db: DbOrTx, namespace: string, entryId: string) {
  return db
    .updateTable('memory_entries')
    .set({ status: 'deleted', deleted_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('entry_id', '=', entryId)
    .where('namespace', '=', namespace)
    .where('status', '<>', 'deleted')
    .returning(ENTRY_COLUMNS)
    .executeTakeFirst();
}

/** Soft-deletes every entry of the namespace not yet deleted; returns how many. */
export async function markAllDeleted(db: DbOrTx, namespace: string): Promise<number> {
  const result = await db
    .updateTable('memory_entries')
    .set({ status: 'deleted', deleted_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('namespace', '=', namespace)
    .where('status', '<>', 'deleted')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export function listActiveRows(db: DbOrTx, namespace: string, tier: MemoryTier, limit: number) {
  return db
    .selectFrom('memory_entries')
    .select(ENTRY_COLUMNS)
    .where('namespace', '=', namespace)
    .where('tier', '=', tier)
    .where('status', '=', 'active')
    .orderBy('created_at')
    .orderBy('seq')
    .limit(limit)
    .execute();
}

/**
 * Active entries whose fingerprint (lowercased, whitespace-collapsed content) equals that of one of
 * `contents`, each with the input it matched. Both sides are fingerprinted by the same SQL function.
 */
export async function findActiveRowsByFingerprint(
  db: DbOrTx,
  namespace: string,
  tier: MemoryTier,
  contents: string[],
): Promise<(MemoryEntryRow & { input: string })[]> {
  if (contents.length === 0) return [];
  const columns = sql.join(ENTRY_COLUMNS.map((c) => sql.ref(`e.${c}`)));
  const { rows } = await sql<MemoryEntryRow & { input: string }>`
    select i.input, ${columns}
    from (select distinct c as input from unnest(${contents}::text[]) as c) i
    join memory_entries e on e.content_fingerprint = pkgreg_content_fingerprint(i.input)
    where e.namespace = ${namespace} and e.tier = ${tier} and e.status = 'active'
    order by e.created_at, e.seq`.execute(db);
  return rows;
}
