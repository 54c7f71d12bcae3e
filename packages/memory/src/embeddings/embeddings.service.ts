import { MAX_EMBED_JOB_ENTRIES } from '@pkgreg/contracts';
import { type DbOrTx, inTransaction } from '../db.js';
import { lockNamespaceShared } from '../quarantine/quarantine.repository.js';
import { decodeVector, type Embedder, type EmbedFailure, encodeVector } from './embedding-client.js';
import {
  findEmbeddings,
  findRecentUnembedded,
  findUnembeddedEntries,
  upsertEmbeddings,
} from './embeddings.repository.js';

// Embeddings of memory entries (optional semantic search): computed on write by the runtime worker's
// `memory.embed` job, stored beside the entry in memory_embeddings, read by search for its candidates.

/** The embedding endpoint failed; `permanent` when retrying the same request cannot help. */
export class EmbeddingError extends Error {
  constructor(
    readonly reason: EmbedFailure,
    readonly permanent: boolean,
    readonly status?: number,
  ) {
    super(`embedding endpoint: ${reason}${status ? ` (HTTP ${status})` : ''}`);
    this.name = 'EmbeddingError';
  }
}

/** A 4xx other than 408 and 429 (a refused request, key or model) fails the same way again. */
function isPermanent(reason: EmbedFailure, status?: number): boolean {
  if (reason === 'bad_answer') return true;
  return (
    reason === 'http_error' &&
    status !== undefined &&
    status >= 400 &&
    status < 500 &&
    status !== 408 &&
    status !== 429
  );
}

export interface EmbedEntriesResult {
  /** Entries embedded by this call. */
  embedded: number;
  /** Entries that already had an embedding of this model, or are no longer active. */
  skipped: number;
}

/**
 * Embeds the active entries of `entryIds` (of `namespace`) that have no embedding of the embedder's
 * model (and length) yet, in one request, and stores them. Idempotent: a redelivered job finds them stored. Throws
 * EmbeddingError when the endpoint fails.
 */
export async function embedEntries(
  db: DbOrTx,
  embedder: Embedder,
  namespace: string,
  entryIds: string[],
): Promise<EmbedEntriesResult> {
  const ids = [...new Set(entryIds)];
  if (ids.length === 0) return { embedded: 0, skipped: 0 };
  const pending = await findUnembeddedEntries(db, namespace, ids, embedder.model, embedder.dimensions);
  if (pending.length === 0) return { embedded: 0, skipped: ids.length };
  const outcome = await embedder.embed(pending.map((row) => row.content));
  if (!outcome.ok)
    throw new EmbeddingError(outcome.reason, isPermanent(outcome.reason, outcome.status), outcome.status);
  const rows = pending.map((row, i) => {
    const vector = outcome.vectors[i] as Float32Array;
    return {
      entry_id: row.entry_id,
      model: embedder.model,
      dimensions: vector.length,
      embedding: encodeVector(vector),
    };
  });
  // Under the namespace lock, only for entries still active: a purge (exclusive lock) either comes first
  // and leaves nothing to store, or after and deletes what this stored.
  await inTransaction(db, async (trx) => {
    await lockNamespaceShared(trx, namespace);
    await upsertEmbeddings(trx, rows);
  });
  return { embedded: rows.length, skipped: ids.length - rows.length };
}

/**
 * Embeds the namespace's newest active entries that have no embedding yet (up to 64 of its newest 256):
 * what a compaction or an agent's run record wrote, without their ids.
 */
export async function embedRecentEntries(
  db: DbOrTx,
  embedder: Embedder,
  namespace: string,
  scan = 256,
): Promise<EmbedEntriesResult> {
  const ids = await findRecentUnembedded(
    db,
    namespace,
    embedder.model,
    embedder.dimensions,
    scan,
    MAX_EMBED_JOB_ENTRIES,
  );
  return embedEntries(db, embedder, namespace, ids);
}

/** The stored embeddings of `entryIds` made by `model` with `dimensions` values. */
export async function readEmbeddings(
  db: DbOrTx,
  entryIds: string[],
  model: string,
  dimensions: number,
): Promise<Map<string, Float32Array>> {
  if (entryIds.length === 0) return new Map();
  const rows = await findEmbeddings(db, entryIds, model, dimensions);
  return new Map(rows.map((row) => [row.entry_id, decodeVector(row.embedding)]));
}
