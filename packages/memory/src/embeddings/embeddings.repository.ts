import { sql } from 'kysely';
import type { DbOrTx } from '../db.js';

// memory_embeddings: one embedding per entry, float32 little-endian, unit length.

export interface EmbeddingRow {
  entry_id: string;
  model: string;
  dimensions: number;
  embedding: Buffer;
}

/**
 * The active entries of `ids` (of `namespace`) without an embedding of `model` (and of `dimensions`
 * values, when given), with their content.
 */
export function findUnembeddedEntries(
  db: DbOrTx,
  namespace: string,
  ids: string[],
  model: string,
  dimensions?: number,
) {
  return db
    .selectFrom('memory_entries as e')
    .leftJoin('memory_embeddings as m', (join) => {
      const same = join.onRef('m.entry_id', '=', 'e.entry_id').on('m.model', '=', model);
      return dimensions === undefined ? same : same.on('m.dimensions', '=', dimensions);
    })
    .select(['e.entry_id', 'e.content'])
    .where('e.entry_id', 'in', ids)
    .where('e.namespace', '=', namespace)
    .where('e.status', '=', 'active')
    .where('m.entry_id', 'is', null)
    .orderBy('e.entry_id')
    .execute();
}

/** Of the namespace's newest `scan` active entries, up to `limit` without an embedding of `model`. */
export async function findRecentUnembedded(
  db: DbOrTx,
  namespace: string,
  model: string,
  dimensions: number | undefined,
  scan: number,
  limit: number,
): Promise<string[]> {
  const sameLength = dimensions === undefined ? sql`` : sql`and m.dimensions = ${dimensions}`;
  const { rows } = await sql<{ entry_id: string }>`
    select r.entry_id from (
      select entry_id from memory_entries
      where namespace = ${namespace} and status = 'active'
      order by created_at desc, seq desc limit ${scan}) r
    where not exists (
      select 1 from memory_embeddings m where m.entry_id = r.entry_id and m.model = ${model} ${sameLength})
    limit ${limit}`.execute(db);
  return rows.map((r) => r.entry_id);
}

/**
 * Stores embeddings; an entry's embedding of another model (the configuration changed) is replaced.
 * Rows whose entry is no longer active are skipped.
 */
export async function upsertEmbeddings(db: DbOrTx, rows: EmbeddingRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    insert into memory_embeddings (entry_id, model, dimensions, embedding)
    select r.entry_id, r.model, r.dimensions, r.embedding
    from unnest(${rows.map((r) => r.entry_id)}::uuid[], ${rows.map((r) => r.model)}::text[],
      ${rows.map((r) => r.dimensions)}::int[], ${rows.map((r) => r.embedding)}::bytea[])
      as r(entry_id, model, dimensions, embedding)
    where exists (select 1 from memory_entries e where e.entry_id = r.entry_id and e.status = 'active')
    on conflict (entry_id) do update set model = excluded.model, dimensions = excluded.dimensions,
      embedding = excluded.embedding, created_at = now()`.execute(db);
}

export function findEmbeddings(db: DbOrTx, entryIds: string[], model: string, dimensions: number) {
  return db
    .selectFrom('memory_embeddings')
    .select(['entry_id', 'embedding'])
    .where('entry_id', 'in', entryIds)
    .where('model', '=', model)
    .where('dimensions', '=', dimensions)
    .execute();
}

/** Drops the embeddings of a namespace's entries; returns how many. */
export async function deleteNamespaceEmbeddings(db: DbOrTx, namespace: string): Promise<number> {
  const result = await sql`
    delete from memory_embeddings m using memory_entries e
    where e.entry_id = m.entry_id and e.namespace = ${namespace}`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
