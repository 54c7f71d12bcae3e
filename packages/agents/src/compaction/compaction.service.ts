import { MEMORY_LIMITS, type MemoryCompactJob, type MemoryEntry } from '@pkgreg/contracts';
import type { Database } from '@pkgreg/db';
import { findActiveByContent, insertEntries, listActiveWindow, supersedeMany } from '@pkgreg/memory';
import { sql, type Transaction } from 'kysely';
import { truncateBytes } from '../text/sentences.js';
import { extractFacts, summarizeWindow } from './compaction-text.js';

// pkgreg.memory.v1.compact in the worker. Runs inside the task's completion transaction, so the window
// read, the writes and the task's completion commit together or not at all. Everything stays inside the
// job's namespace (mcp-edge.md: "stays within the source-local public-memory boundary").

// A type alias (not an interface) so it fits the task result's index signature.
export type CompactionResult = {
  runId: string;
  outputs: { type: 'text'; text: string }[];
  strategy: MemoryCompactJob['strategy'];
  sourceEntryIds: string[];
  createdEntries: MemoryEntry[];
};

export async function runCompaction(
  trx: Transaction<Database>,
  job: MemoryCompactJob,
): Promise<CompactionResult> {
  // Two compactions of one namespace take turns, so they never pick overlapping windows.
  await sql`select pg_advisory_xact_lock(hashtext(${`pkgreg:compact:${job.namespace}`}))`.execute(trx);
  const window = await listActiveWindow(trx, job.namespace, job.sourceTier, job.maxEntries);
  const sourceEntryIds = window.map((e) => e.entryId);
  const base = { runId: job.runId, strategy: job.strategy, sourceEntryIds };

  if (job.strategy === 'summarize') {
    if (window.length < 2) {
      return {
        ...base,
        outputs: [{ type: 'text', text: `Nothing to summarize: the window holds ${window.length} entry.` }],
        createdEntries: [],
      };
    }
    const sentences = summarizeWindow(window);
    const content = truncateBytes(sentences.join(' '), MEMORY_LIMITS.maxContentBytes);
    const { entry } = await supersedeMany(trx, job.namespace, sourceEntryIds, {
      tier: 'stm',
      content,
      tags: ['summary'],
      metadata: { compaction: 'summarize', runId: job.runId, sourceEntries: String(window.length) },
    });
    return { ...base, outputs: [{ type: 'text', text: content }], createdEntries: [entry] };
  }

  const facts = extractFacts(window);
  const known = await findActiveByContent(
    trx,
    job.namespace,
    'ltm',
    facts.map((f) => f.content),
  );
  const fresh = facts.filter((f) => !known.has(f.content));
  const created =
    fresh.length === 0
      ? []
      : await insertEntries(
          trx,
          job.namespace,
          'ltm',
          fresh.map((f) => ({
            content: truncateBytes(f.content, MEMORY_LIMITS.maxContentBytes),
            tags: ['fact'],
            metadata: { compaction: 'extract_facts', runId: job.runId, sourceEntryId: f.sourceEntryId },
          })),
        );
  const text = [
    `Extracted ${facts.length} facts from ${window.length} stm entries: ${created.length} new, ${facts.length - created.length} already known.`,
    ...created.map((e) => `- ${e.content}`),
  ].join('\n');
  return { ...base, outputs: [{ type: 'text', text }], createdEntries: created };
}
