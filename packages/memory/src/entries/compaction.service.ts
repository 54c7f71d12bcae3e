import { type MemoryEntry, type MemoryTier, RejectError } from '@pkgreg/contracts';
import { type DbOrTx, inTransaction } from '../db.js';
import {
  findActiveRowsByFingerprint,
  insertEntryRows,
  listActiveRows,
  lockEntryRows,
  type MemoryEntryRow,
  markSuperseded,
} from './entries.repository.js';
import { beginNamespaceWrite, predecessorProblem } from './entries.service.js';
import { toMemoryEntry } from './entry.mapper.js';

// Building blocks for pkgreg.memory.v1.compact (runtime worker). Every write path checks quarantine
// (decisions.md: compactions of a quarantined source are refused) under the namespace lock.

export interface NewMemoryEntry {
  content: string;
  tags?: string[];
  metadata?: Record<string, string>;
}

export interface SupersedeManyResult {
  entry: MemoryEntry;
  /** The predecessors as they are now: superseded, `supersededByEntryId` = entry.entryId. */
  superseded: MemoryEntry[];
}

/** The compaction window: up to `maxEntries` active entries of the tier, oldest first. */
export async function listActiveWindow(
  db: DbOrTx,
  namespace: string,
  tier: MemoryTier,
  maxEntries: number,
): Promise<MemoryEntry[]> {
  if (!Number.isInteger(maxEntries) || maxEntries < 1) return [];
  return (await listActiveRows(db, namespace, tier, maxEntries)).map(toMemoryEntry);
}

/** Appends several entries to one tier in one transaction; returned in input order. */
export function insertEntries(
  db: DbOrTx,
  namespace: string,
  tier: MemoryTier,
  entries: NewMemoryEntry[],
): Promise<MemoryEntry[]> {
  return inTransaction(db, async (trx) => {
    await beginNamespaceWrite(trx, namespace);
    const rows = await insertEntryRows(
      trx,
      entries.map((e) => ({
        namespace,
        tier,
        content: e.content,
        tags: e.tags ?? [],
        metadata: e.metadata ?? {},
      })),
    );
    return rows.map(toMemoryEntry);
  });
}

/**
 * One replacement supersedes several active entries of the namespace (a summary of a window). Each
 * predecessor becomes `superseded` with `supersededByEntryId` = the replacement; the replacement's
 * `supersedesEntryId` is the first predecessor given (docs/decisions.md), which also lets the unique
 * index refuse a second compaction of the same window. Predecessors may be of any tier (a summary may
 * land in another tier than its sources); all must be active, else request_schema_invalid and nothing
 * is written.
 */
export async function supersedeMany(
  db: DbOrTx,
  namespace: string,
  predecessorIds: string[],
  replacement: NewMemoryEntry & { tier: MemoryTier },
): Promise<SupersedeManyResult> {
  const ids = [...new Set(predecessorIds)];
  const first = ids[0];
  if (first === undefined) {
    throw new RejectError('request_schema_invalid', 'no entries to supersede');
  }
  return inTransaction(db, async (trx) => {
    await beginNamespaceWrite(trx, namespace);
    const locked = new Map((await lockEntryRows(trx, namespace, ids)).map((r) => [r.entry_id, r]));
    for (const id of ids) {
      const problem = predecessorProblem(locked.get(id), null);
      if (problem) throw new RejectError('request_schema_invalid', `${problem} (${id})`);
    }
    const [row] = await insertEntryRows(trx, [
      {
        namespace,
        tier: replacement.tier,
        content: replacement.content,
        tags: replacement.tags ?? [],
        metadata: replacement.metadata ?? {},
        supersedes_entry_id: first,
      },
    ]);
    const entry = row as MemoryEntryRow;
    const superseded = await markSuperseded(trx, namespace, ids, entry.entry_id);
    const byId = new Map(superseded.map((r) => [r.entry_id, r]));
    return {
      entry: toMemoryEntry(entry),
      superseded: ids.map((id) => toMemoryEntry(byId.get(id) as MemoryEntryRow)),
    };
  });
}

/**
 * Fact dedup: for each of `contents` that an active entry of the tier already says (compared by
 * fingerprint: lowercased, whitespace collapsed), that entry (the oldest when several).
 */
export async function findActiveByContent(
  db: DbOrTx,
  namespace: string,
  tier: MemoryTier,
  contents: string[],
): Promise<Map<string, MemoryEntry>> {
  const found = new Map<string, MemoryEntry>();
  for (const row of await findActiveRowsByFingerprint(db, namespace, tier, contents)) {
    if (!found.has(row.input)) found.set(row.input, toMemoryEntry(row));
  }
  return found;
}
