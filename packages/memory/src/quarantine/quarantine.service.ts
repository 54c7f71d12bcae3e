import { RejectError } from '@pkgreg/contracts';
import type { QuarantinedSourcesTable } from '@pkgreg/db';
import type { Selectable } from 'kysely';
import { type DbOrTx, inTransaction } from '../db.js';
import { deleteNamespaceEmbeddings } from '../embeddings/embeddings.repository.js';
import { markAllDeleted } from '../entries/entries.repository.js';
import { deleteIdempotencyRecordsOf } from '../idempotency/idempotency.repository.js';
import {
  deleteQuarantineRow,
  findQuarantineRow,
  listQuarantineRows,
  lockNamespaceExclusive,
  upsertQuarantineRow,
} from './quarantine.repository.js';

export type QuarantineState = 'quarantined' | 'purged';

export interface QuarantineRecord {
  namespace: string;
  state: QuarantineState;
  /** Operator's note; never shown to the quarantined client. */
  reason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface PurgeResult {
  record: QuarantineRecord;
  /** Entries soft-deleted by this purge (entries already deleted are not counted). */
  deletedEntries: number;
}

function toRecord(row: Selectable<QuarantinedSourcesTable>): QuarantineRecord {
  return {
    namespace: row.namespace,
    state: row.state,
    reason: row.reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The namespace's quarantine record, or null when it is not quarantined. */
export async function getQuarantineState(db: DbOrTx, namespace: string): Promise<QuarantineRecord | null> {
  const row = await findQuarantineRow(db, namespace);
  return row ? toRecord(row) : null;
}

/**
 * Refuses durable mutations of a quarantined or purged namespace (mcp-edge.md: `source_quarantined`;
 * decisions.md: memory writes, deletes, compactions and invokes with a write binding). Reads stay allowed.
 */
export async function assertNotQuarantined(db: DbOrTx, namespace: string): Promise<void> {
  const row = await findQuarantineRow(db, namespace);
  if (row) {
    throw new RejectError(
      'source_quarantined',
      row.state === 'purged' ? 'Source is purged' : 'Source is quarantined',
    );
  }
}

/** Quarantines the namespace. A purged namespace stays purged (purge is the stronger state). */
export function quarantineNamespace(
  db: DbOrTx,
  namespace: string,
  reason: string | null = null,
): Promise<QuarantineRecord> {
  return inTransaction(db, async (trx) => {
    await lockNamespaceExclusive(trx, namespace);
    const existing = await findQuarantineRow(trx, namespace);
    if (existing?.state === 'purged') return toRecord(existing);
    return toRecord(await upsertQuarantineRow(trx, namespace, 'quarantined', reason));
  });
}

/** Lifts a quarantine or purge; returns false when the namespace was not quarantined. Purged memory stays deleted. */
export function releaseNamespace(db: DbOrTx, namespace: string): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    await lockNamespaceExclusive(trx, namespace);
    return (await deleteQuarantineRow(trx, namespace)) !== undefined;
  });
}

/**
 * Marks the namespace purged and soft-deletes all of its memory in one transaction (decisions.md:
 * "purge also soft-deletes its memory"). Stored idempotent replies and the entries' embeddings go too:
 * they hold, or are derived from, memory content.
 */
export function purgeNamespace(
  db: DbOrTx,
  namespace: string,
  reason: string | null = null,
): Promise<PurgeResult> {
  return inTransaction(db, async (trx) => {
    // Exclusive: waits for writes already past their quarantine check, blocks new ones until commit.
    await lockNamespaceExclusive(trx, namespace);
    const row = await upsertQuarantineRow(trx, namespace, 'purged', reason);
    const deletedEntries = await markAllDeleted(trx, namespace);
    await deleteIdempotencyRecordsOf(trx, namespace);
    await deleteNamespaceEmbeddings(trx, namespace);
    return { record: toRecord(row), deletedEntries };
  });
}

/** Every quarantined or purged namespace, most recently changed first. */
export async function listQuarantined(db: DbOrTx): Promise<QuarantineRecord[]> {
  return (await listQuarantineRows(db)).map(toRecord);
}
