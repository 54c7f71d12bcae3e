import type { Database, Db } from '@pkgreg/db';
import { type Kysely, sql } from 'kysely';
import { signCheckpoint } from './checkpoint-note.js';
import { logEntryText } from './log-entry.js';
import {
  appendToRange,
  type CompactRange,
  leafHash,
  type NodeReader,
  proveConsistency,
  proveInclusion,
  subtreesOf,
  treeHash,
} from './merkle.js';
import type { RegistrySigner } from './signer.js';

// The transparency log (issue 30; docs/provenance.md, "Transparency log"): every public version's name,
// version and archive integrity is a leaf of an append-only RFC 6962 Merkle tree (merkle.ts), stored in
// log_leaves and log_nodes (every complete subtree's hash) and signed as checkpoints (checkpoint-note.ts)
// in log_checkpoints. Appends run in a transaction under the log's advisory lock, so a crash leaves no
// half-written leaf and two appenders never take the same index; the tables refuse UPDATE and DELETE.
//
// Private packages are left out, as Go's checksum database leaves out private modules: the log is
// public, and a private package must look like a missing one to outsiders (docs/accounts.md). A package
// made public has its versions logged at the next pass; one made private keeps the entries it had.

type Conn = Kysely<Database>;

/** The log's advisory lock: appends and checkpoints, one at a time. */
const LOG_LOCK_KEY = 0x706b_6c67; // "pklg"

// The entry's text and the log's name are pure (the CLI bundles them): log-entry.ts.
export { logEntryText, logOrigin } from './log-entry.js';

async function lockLog(trx: Conn): Promise<void> {
  await sql`select pg_advisory_xact_lock(${LOG_LOCK_KEY})`.execute(trx);
}

/** The stored hashes of complete subtrees, as merkle.ts reads them: one query per call. */
function nodeReader(db: Conn): NodeReader {
  return async (nodes) => {
    const rows = await sql<{ level: number; idx: number; hash: Buffer }>`
      select n.level, n.idx, n.hash
      from unnest(${nodes.map((n) => n.level)}::int[], ${nodes.map((n) => n.index)}::bigint[]) as w(level, idx)
      join log_nodes n on n.level = w.level and n.idx = w.idx`.execute(db);
    const found = new Map(rows.rows.map((r) => [`${r.level}/${r.idx}`, r.hash]));
    return nodes.map((n) => {
      const hash = found.get(`${n.level}/${n.index}`);
      if (!hash) throw new Error(`the log has no stored hash for subtree ${n.level}/${n.index}`);
      return hash;
    });
  };
}

/** How many leaves the log holds (indexes are 0 … n-1 with no gap, so the highest index + 1). */
export async function logSize(db: Conn): Promise<number> {
  const row = await db
    .selectFrom('log_leaves')
    .select((eb) => eb.fn.max('idx').as('last'))
    .executeTakeFirst();
  return row?.last == null ? 0 : Number(row.last) + 1;
}

/** What a leaf logs: the version and its entry text (logEntryText). */
export interface LogAppend {
  versionId: string;
  entry: string;
}

/**
 * Appends entries to the log, in order, inside the caller's transaction (which commits them with its
 * own writes, or rolls them back: nothing is half-written); their indexes. Takes the log's lock until
 * the transaction ends.
 */
export async function appendToLog(trx: Conn, entries: readonly LogAppend[]): Promise<number[]> {
  if (!trx.isTransaction) throw new Error('appendToLog runs inside a transaction');
  if (entries.length === 0) return [];
  await lockLog(trx);
  const size = await logSize(trx);
  const edge = subtreesOf(0, size);
  const range: CompactRange = { size, hashes: edge.length ? await nodeReader(trx)(edge) : [] };
  const leaves = entries.map(({ versionId, entry }) => {
    const idx = range.size;
    const hash = leafHash(entry);
    return { idx, version_id: versionId, entry, leaf_hash: hash, nodes: appendToRange(range, hash) };
  });
  const BATCH = 1000;
  for (let i = 0; i < leaves.length; i += BATCH) {
    const batch = leaves.slice(i, i + BATCH);
    await trx
      .insertInto('log_leaves')
      .values(batch.map(({ idx, version_id, entry, leaf_hash }) => ({ idx, version_id, entry, leaf_hash })))
      .execute();
    await trx
      .insertInto('log_nodes')
      .values(
        batch.flatMap((leaf) => leaf.nodes.map((n) => ({ level: n.level, idx: n.index, hash: n.hash }))),
      )
      .execute();
  }
  return leaves.map((leaf) => leaf.idx);
}

/**
 * Appends every version of a public package that is not in the log yet, oldest first (by `seq`), up to
 * `limit`; how many it appended. What the API runs periodically (with checkpoint) and
 * `pnpm registry log:append` runs by hand. A version committed late (a long indexing transaction) is
 * picked up by a later pass: the pass looks for what is missing, not for what is newer.
 */
export async function logPendingVersions(db: Db, options: { limit?: number } = {}): Promise<number> {
  const limit = options.limit ?? 1000;
  return db.transaction().execute(async (trx) => {
    // Read under the lock, so a concurrent pass that committed first is seen and nothing is logged twice.
    await lockLog(trx);
    const pending = await trx
      .selectFrom('package_versions as v')
      .innerJoin('packages as p', 'p.id', 'v.package_id')
      .leftJoin('log_leaves as l', 'l.version_id', 'v.id')
      .select(['v.id', 'p.scope', 'p.name', 'v.version', 'v.integrity'])
      .where('l.idx', 'is', null)
      .where('p.private', '=', false)
      .orderBy('v.seq')
      .limit(limit)
      .execute();
    const indexes = await appendToLog(
      trx,
      pending.map((v) => ({ versionId: v.id, entry: logEntryText(v.scope, v.name, v.version, v.integrity) })),
    );
    return indexes.length;
  });
}

/** A signed tree head as stored. */
export interface StoredCheckpoint {
  size: number;
  rootHash: Buffer;
  /** The signed note, as served at GET /api/log/checkpoint. */
  note: string;
  createdAt: Date;
}

/** The newest checkpoint; undefined while the log has none. */
export async function latestCheckpoint(db: Conn): Promise<StoredCheckpoint | undefined> {
  const row = await db
    .selectFrom('log_checkpoints')
    .select(['size', 'root_hash', 'note', 'created_at'])
    .orderBy('size', 'desc')
    .limit(1)
    .executeTakeFirst();
  return (
    row && { size: Number(row.size), rootHash: row.root_hash, note: row.note, createdAt: row.created_at }
  );
}

/**
 * Signs and stores a checkpoint of the whole log when it grew since the last one; the newest checkpoint
 * (undefined while the log is empty). `origin` names the log (logOrigin). Before signing, the stored
 * tree must still hash to the previous checkpoint's root: a signer never signs a rewritten history.
 */
export async function checkpoint(
  db: Db,
  signer: RegistrySigner,
  origin: string,
): Promise<StoredCheckpoint | undefined> {
  return db.transaction().execute(async (trx) => {
    await lockLog(trx);
    const [size, latest] = await Promise.all([logSize(trx), latestCheckpoint(trx)]);
    if (size === 0 || (latest && latest.size >= size)) return latest;
    const read = nodeReader(trx);
    if (latest && !(await treeHash(latest.size, read)).equals(latest.rootHash))
      throw new Error(
        `the stored log no longer hashes to the checkpoint of size ${latest.size}: refusing to sign it`,
      );
    const rootHash = await treeHash(size, read);
    const note = await signCheckpoint({ origin, size, rootHash }, signer);
    const row = await trx
      .insertInto('log_checkpoints')
      .values({ size, root_hash: rootHash, note })
      .returning('created_at')
      .executeTakeFirstOrThrow();
    return { size, rootHash, note, createdAt: row.created_at };
  });
}

function assertWithin(size: number, logged: number): void {
  if (size > logged) throw new RangeError(`the log holds ${logged} entries, not ${size}`);
}

/** The root hash of the log's first `size` leaves. */
export async function logRoot(db: Conn, size: number): Promise<Buffer> {
  assertWithin(size, await logSize(db));
  return treeHash(size, nodeReader(db));
}

/** The inclusion proof of leaf `index` in the log's first `size` leaves (RFC 9162 §2.1.3). */
export async function inclusionProof(db: Conn, index: number, size: number): Promise<Buffer[]> {
  assertWithin(size, await logSize(db));
  return proveInclusion(index, size, nodeReader(db));
}

/** The consistency proof from the log's first `from` leaves to its first `to` (RFC 9162 §2.1.4). */
export async function consistencyProof(db: Conn, from: number, to: number): Promise<Buffer[]> {
  assertWithin(to, await logSize(db));
  return proveConsistency(from, to, nodeReader(db));
}

/** A leaf as witnesses replay it. */
export interface LogEntry {
  index: number;
  entry: string;
}

/** Leaves from `start`, at most `limit` of them and none at or past `size`. */
export async function logEntries(db: Conn, start: number, limit: number, size: number): Promise<LogEntry[]> {
  const end = Math.min(start + limit, size);
  if (start >= end) return [];
  const rows = await db
    .selectFrom('log_leaves')
    .select(['idx', 'entry'])
    .where('idx', '>=', start)
    .where('idx', '<', end)
    .orderBy('idx')
    .execute();
  return rows.map((r) => ({ index: Number(r.idx), entry: r.entry }));
}

/** A public version the log does not show as it should. */
export interface UnloggedVersion {
  scope: string;
  name: string;
  version: string;
  createdAt: Date;
  /** Not in the log; logged after the checkpoint checked; logged with another entry text. */
  problem: 'missing' | 'after-checkpoint' | 'altered';
}

/**
 * The versions of public packages created before `createdBefore` that the log's first `size` leaves do
 * not hold with their entry text: the witness's `--db` check (a version missing from the log). How many,
 * and the first few by creation.
 */
export async function unloggedVersions(
  db: Conn,
  options: { size: number; createdBefore: Date; sample?: number },
): Promise<{ count: number; sample: UnloggedVersion[] }> {
  // The expected entry is logEntryText's, computed in SQL so that every version is compared in place.
  const rows = await sql<{
    scope: string;
    name: string;
    version: string;
    created_at: Date;
    idx: number | null;
    total: number;
  }>`
    select p.scope, p.name, v.version, v.created_at, l.idx, count(*) over () as total
    from package_versions v
    join packages p on p.id = v.package_id
    left join log_leaves l on l.version_id = v.id
    where not p.private and v.created_at < ${options.createdBefore}
      and (l.idx is null or l.idx >= ${options.size}
        or l.entry is distinct from '@' || p.scope || '/' || p.name || '@' || v.version || ' ' || v.integrity)
    order by v.seq
    limit ${options.sample ?? 5}`.execute(db);
  return {
    count: Number(rows.rows[0]?.total ?? 0),
    sample: rows.rows.map((r) => ({
      scope: r.scope,
      name: r.name,
      version: r.version,
      createdAt: r.created_at,
      problem: r.idx === null ? 'missing' : Number(r.idx) >= options.size ? 'after-checkpoint' : 'altered',
    })),
  };
}

/** The version's leaf index in the log; undefined while it is not logged (or never: a private one). */
export async function logIndexOf(db: Conn, versionId: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('log_leaves')
    .select('idx')
    .where('version_id', '=', versionId)
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.idx);
}
