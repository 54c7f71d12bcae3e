import type { MemoryEntry } from '@pkgreg/contracts';
import type { MemoryEntryRow } from './entries.repository.js';

function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** Row -> the contract's memory entry (decisions.md: MCP edge / Memory entry), timestamps as ISO 8601. */
export function toMemoryEntry(row: MemoryEntryRow): MemoryEntry {
  return {
    entryId: row.entry_id,
    namespace: row.namespace,
    tier: row.tier,
    content: row.content,
    tags: row.tags,
    metadata: row.metadata,
    status: row.status,
    supersedesEntryId: row.supersedes_entry_id,
    supersededByEntryId: row.superseded_by_entry_id,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    deletedAt: row.deleted_at === null ? null : iso(row.deleted_at),
  };
}
