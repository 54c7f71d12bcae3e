import type { Database, Db } from '@pkgreg/db';
import { type Kysely, sql } from 'kysely';
import { sha256Hex } from '../versions/versioning.js';
import { gitBlobSha } from './git-blob-sha.js';

// Content-addressed bytes: every file of every version and every version's archive, once per SHA-256
// (docs/versions.md, "Storage"). The interface is what an object store would sit behind.

/** A stored blob's identities. */
export interface StoredBlob {
  sha256: string;
  gitSha1: string;
  size: number;
}

export interface ContentStore {
  /** Which of these git blob ids are stored (so the source need not be asked for their bytes). */
  findByGitSha(gitShas: string[]): Promise<Map<string, StoredBlob>>;
  /** Stores the bytes (a no-op for those already stored) and returns their identities, in order. */
  put(blobs: Buffer[]): Promise<StoredBlob[]>;
  /** Bytes by SHA-256; absent keys are not stored. */
  get(sha256s: string[]): Promise<Map<string, Buffer>>;
}

/** Keys per lookup statement (Postgres takes at most 65,535 parameters). */
const LOOKUP_CHUNK = 5000;
/** Rows per insert statement are bounded by bytes too: one statement carries at most this much. */
const MAX_STATEMENT_BYTES = 16 * 1024 * 1024;

export function identify(bytes: Buffer): StoredBlob {
  return { sha256: sha256Hex(bytes), gitSha1: gitBlobSha(bytes), size: bytes.length };
}

/** The default store: `content_blobs` in PostgreSQL (bytea, TOAST-compressed where it helps). */
export function createPgContentStore(db: Db | Kysely<Database>): ContentStore {
  return {
    async findByGitSha(gitShas) {
      const wanted = [...new Set(gitShas)];
      const found = new Map<string, StoredBlob>();
      for (let at = 0; at < wanted.length; at += LOOKUP_CHUNK) {
        const rows = await db
          .selectFrom('content_blobs')
          .select(['sha256', 'git_sha1', 'size'])
          .where('git_sha1', 'in', wanted.slice(at, at + LOOKUP_CHUNK))
          .execute();
        for (const row of rows)
          found.set(row.git_sha1, { sha256: row.sha256, gitSha1: row.git_sha1, size: row.size });
      }
      return found;
    },

    async put(blobs) {
      const identities = blobs.map(identify);
      const seen = new Set<string>();
      let batch: Array<{ sha256: string; git_sha1: string; size: number; bytes: Buffer }> = [];
      let batchBytes = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        // Content-addressed: a concurrent writer of the same bytes stores the same row.
        await db
          .insertInto('content_blobs')
          .values(batch)
          .onConflict((oc) => oc.doNothing())
          .execute();
        batch = [];
        batchBytes = 0;
      };
      for (const [i, bytes] of blobs.entries()) {
        const id = identities[i] as StoredBlob;
        if (seen.has(id.sha256)) continue;
        seen.add(id.sha256);
        if (batchBytes + bytes.length > MAX_STATEMENT_BYTES) await flush();
        batch.push({ sha256: id.sha256, git_sha1: id.gitSha1, size: id.size, bytes });
        batchBytes += bytes.length;
      }
      await flush();
      return identities;
    },

    async get(sha256s) {
      const wanted = [...new Set(sha256s)];
      const found = new Map<string, Buffer>();
      if (wanted.length === 0) return found;
      for (let at = 0; at < wanted.length; at += LOOKUP_CHUNK) {
        const rows = await db
          .selectFrom('content_blobs')
          .select(['sha256', 'bytes'])
          .where('sha256', 'in', wanted.slice(at, at + LOOKUP_CHUNK))
          .execute();
        for (const row of rows) found.set(row.sha256, row.bytes);
      }
      return found;
    },
  };
}

// Collecting blobs no version references any more (what a failed run stored, or a deleted package's).
// Why it is safe against a version being written at the same moment: every indexing run holds
// BLOB_WRITERS_LOCK shared on its connection from before its first lookup in the store until after its
// versions commit (indexSource), and the collector deletes only while holding it exclusively, in
// statements that begin after the lock was granted. Under READ COMMITTED each statement sees every
// commit made before it began, so a blob a run found or stored is either deleted before that run looked
// (it reads the bytes from its source again) or referenced by committed rows the delete sees and keeps.
const BLOB_WRITERS_LOCK = sql`hashtextextended('pkgreg:content-blobs', 0)`;

/** Taken by an indexing run on its connection: the collector waits until it is released. */
export async function holdBlobWriters(conn: Db | Kysely<Database>): Promise<void> {
  await sql`select pg_advisory_lock_shared(${BLOB_WRITERS_LOCK})`.execute(conn);
}

/**
 * The same hold for a writer whose lookups, stores and versions are all in one transaction (an upload):
 * released by its commit or rollback.
 */
export async function holdBlobWritersInTransaction(trx: Db | Kysely<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock_shared(${BLOB_WRITERS_LOCK})`.execute(trx);
}

export async function releaseBlobWriters(conn: Db | Kysely<Database>): Promise<void> {
  await sql`select pg_advisory_unlock_shared(${BLOB_WRITERS_LOCK})`.execute(conn);
}

export interface BlobCollection {
  /** Blobs deleted, and their bytes. */
  blobs: number;
  bytes: number;
  /** An indexing run held the store: nothing (more) was collected; try again later. */
  busy: boolean;
}

export interface CollectBlobsOptions {
  /** Wait for running indexing runs to end (new ones wait meanwhile) instead of giving up. */
  wait?: boolean;
  /** Blobs deleted per transaction (default 1000). */
  batchSize?: number;
}

/** Deletes the blobs neither a version's files nor its archive reference, a batch per transaction. */
export async function collectUnreferencedBlobs(
  db: Db,
  options: CollectBlobsOptions = {},
): Promise<BlobCollection> {
  const batchSize = options.batchSize ?? 1000;
  const result: BlobCollection = { blobs: 0, bytes: 0, busy: false };
  for (;;) {
    const deleted = await db.transaction().execute(async (trx) => {
      if (options.wait) await sql`select pg_advisory_xact_lock(${BLOB_WRITERS_LOCK})`.execute(trx);
      else {
        const lock = await sql<{ ok: boolean }>`
          select pg_try_advisory_xact_lock(${BLOB_WRITERS_LOCK}) as ok`.execute(trx);
        if (!lock.rows[0]?.ok) return undefined;
      }
      const rows = await sql<{ size: string }>`
        delete from content_blobs b
        where b.sha256 in (
          select c.sha256 from content_blobs c
          where not exists (select 1 from package_version_files f where f.sha256 = c.sha256)
            and not exists (select 1 from package_versions v where v.archive_sha256 = c.sha256)
          limit ${batchSize})
        returning b.size`.execute(trx);
      return rows.rows;
    });
    if (deleted === undefined) return { ...result, busy: true };
    result.blobs += deleted.length;
    result.bytes += deleted.reduce((sum, r) => sum + Number(r.size), 0);
    if (deleted.length < batchSize) return result;
  }
}
