import {
  type MemoryDeleteResult,
  type MemoryGetResult,
  type MemoryPutArgs,
  type MemoryPutResult,
  type MemoryTier,
  memoryScope,
  RejectError,
} from '@pkgreg/contracts';
import { type DbOrTx, inTransaction, isUniqueViolation } from '../db.js';
import { lockNamespaceShared } from '../quarantine/quarantine.repository.js';
import { assertNotQuarantined } from '../quarantine/quarantine.service.js';
import {
  type EntryReader,
  findEntryRow,
  insertEntryRows,
  lockEntryRows,
  type MemoryEntryRow,
  markDeleted,
  markSuperseded,
} from './entries.repository.js';
import { toMemoryEntry } from './entry.mapper.js';

/**
 * docs/decisions.md: a missing entry and another namespace's entry give the same answer, with the one
 * reason the seed has for bad tool arguments, so a caller can never probe other namespaces.
 */
export const ENTRY_NOT_FOUND_MESSAGE = 'entry not found';
export const SUPERSEDES_KEY = 'memory_entries_supersedes_key';

function entryNotFound(): RejectError {
  return new RejectError('request_schema_invalid', ENTRY_NOT_FOUND_MESSAGE);
}

/** The caller checked args.namespace against the subject; a mismatch here is a caller bug, refused safely. */
function assertSameNamespace(namespace: string, argsNamespace: string): void {
  if (namespace !== argsNamespace) throw new RejectError('namespace_unauthorized');
}

/**
 * Opens the write path of a namespace inside `trx`: shared namespace lock (a concurrent purge waits for
 * us, or we for it), then the quarantine check (mcp-edge.md: `source_quarantined` on durable mutations).
 */
export async function beginNamespaceWrite(trx: DbOrTx, namespace: string): Promise<void> {
  await lockNamespaceShared(trx, namespace);
  await assertNotQuarantined(trx, namespace);
}

/**
 * Why a locked row may not be superseded by an entry of `tier`, or null when it may. A missing row and
 * another namespace's row read alike.
 */
export function predecessorProblem(row: MemoryEntryRow | undefined, tier: MemoryTier | null): string | null {
  if (!row) return 'supersedesEntryId does not name an entry of this namespace';
  if (tier !== null && row.tier !== tier) {
    return `supersedesEntryId names a ${row.tier} entry; an entry can only be superseded within its tier`;
  }
  if (row.status !== 'active') {
    return `supersedesEntryId names a ${row.status} entry; only an active entry can be superseded`;
  }
  return null;
}

/**
 * pkgreg.memory.v1.put: appends an entry, or supersedes an active entry of the same namespace and tier
 * (mcp-edge.md, States: predecessor marked superseded). The predecessor is row-locked, so of two
 * concurrent supersedes of one entry exactly one wins; the other sees it superseded and is refused.
 */
export async function putEntry(db: DbOrTx, namespace: string, args: MemoryPutArgs): Promise<MemoryPutResult> {
  assertSameNamespace(namespace, args.namespace);
  return inTransaction(db, async (trx) => {
    await beginNamespaceWrite(trx, namespace);
    const fields = {
      namespace,
      tier: args.tier,
      content: args.content,
      tags: args.tags ?? [],
      metadata: args.metadata ?? {},
    };
    if (args.mode !== 'supersede' || args.supersedesEntryId === undefined) {
      const [row] = await insertEntryRows(trx, [fields]);
      return { entry: toMemoryEntry(row as MemoryEntryRow), supersededEntryId: null };
    }

    const predecessorId = args.supersedesEntryId;
    const [predecessor] = await lockEntryRows(trx, namespace, [predecessorId]);
    const problem = predecessorProblem(predecessor, args.tier);
    if (problem) throw new RejectError('request_schema_invalid', problem);
    let inserted: MemoryEntryRow[];
    try {
      inserted = await insertEntryRows(trx, [{ ...fields, supersedes_entry_id: predecessorId }]);
    } catch (error) {
      // The unique index is the backstop should two writers ever get past the row lock together.
      if (isUniqueViolation(error, SUPERSEDES_KEY)) {
        throw new RejectError('request_schema_invalid', 'supersedesEntryId was already superseded');
      }
      throw error;
    }
    const entry = inserted[0] as MemoryEntryRow;
    await markSuperseded(trx, namespace, [predecessorId], entry.entry_id);
    return { entry: toMemoryEntry(entry), supersededEntryId: predecessorId };
  });
}

export interface EntryAccessOptions {
  /**
   * The tiers the caller holds the scope for (read for get, delete for delete). The edge cannot know an
   * entry's tier before fetching it; an entry of another tier is refused with scope_insufficient
   * (`details.requiredScopes`) before anything changes. Omitted: every tier.
   */
  tiers?: MemoryTier[];
}

function assertTierAllowed(
  row: MemoryEntryRow,
  action: 'read' | 'delete',
  options: EntryAccessOptions,
): void {
  if (options.tiers === undefined || options.tiers.includes(row.tier)) return;
  const scope = memoryScope(row.tier, action);
  throw new RejectError('scope_insufficient', `This entry needs scope ${scope}`, { requiredScopes: [scope] });
}

/** pkgreg.memory.v1.get: one entry of the namespace in any status (a soft-deleted one reads `deleted`). */
export async function getEntry(
  db: DbOrTx,
  namespace: string,
  args: { entryId: string; namespace?: string },
  options: EntryAccessOptions & {
    /** Shares one query with the other gets of the moment (createEntryReader); else one query of its own. */
    reader?: EntryReader;
  } = {},
): Promise<MemoryGetResult> {
  if (args.namespace !== undefined) assertSameNamespace(namespace, args.namespace);
  const row = options.reader
    ? await options.reader.find(namespace, args.entryId)
    : await findEntryRow(db, namespace, args.entryId);
  if (!row) throw entryNotFound();
  assertTierAllowed(row, 'read', options);
  return { entry: toMemoryEntry(row) };
}

/** pkgreg.memory.v1.delete: soft delete (mcp-edge.md: not physically removed); deleting twice is a no-op. */
export async function deleteEntry(
  db: DbOrTx,
  namespace: string,
  args: { entryId: string; namespace?: string },
  options: EntryAccessOptions = {},
): Promise<MemoryDeleteResult> {
  if (args.namespace !== undefined) assertSameNamespace(namespace, args.namespace);
  return inTransaction(db, async (trx) => {
    await beginNamespaceWrite(trx, namespace);
    const [row] = await lockEntryRows(trx, namespace, [args.entryId]);
    if (!row) throw entryNotFound();
    assertTierAllowed(row, 'delete', options);
    if (row.status === 'deleted') return { entry: toMemoryEntry(row) };
    const deleted = await markDeleted(trx, namespace, args.entryId);
    return { entry: toMemoryEntry(deleted ?? row) };
  });
}
