import type { MemoryEmbedJob } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { type Embedder, EmbeddingError, embedEntries, embedRecentEntries } from '@pkgreg/memory';
import type { Logger } from '@pkgreg/server-kit';
import type { RuntimeQueue } from '@pkgreg/tasks';
import { UnrecoverableError } from 'bullmq';

// memory.embed: embeddings computed on write (docs/decisions.md, Memory search). A put enqueues its entry;
// a compaction or an agent's stm record enqueues its namespace (its newest entries without one).

export interface EmbedDeps {
  db: Db;
  logger: Logger;
  queue: RuntimeQueue;
  /** Null without EMBEDDING_BASE_URL: jobs are acknowledged and do nothing. */
  embedder?: Embedder | null;
}

export async function runMemoryEmbed(deps: EmbedDeps, payload: MemoryEmbedJob) {
  const { embedder } = deps;
  if (!embedder) return { skipped: 'no embedding endpoint configured' };
  try {
    return payload.entryIds
      ? await embedEntries(deps.db, embedder, payload.namespace, payload.entryIds)
      : await embedRecentEntries(deps.db, embedder, payload.namespace);
  } catch (error) {
    // A refused request (bad key, unknown model, input too long) fails the same way on every attempt.
    if (error instanceof EmbeddingError && error.permanent) throw new UnrecoverableError(error.message);
    throw error;
  }
}

/** After a run that wrote memory without naming its entries: embed what it wrote. Best effort. */
export async function embedAfterWrite(deps: EmbedDeps, namespace: string, wrote: boolean): Promise<void> {
  if (!deps.embedder || !wrote) return;
  await deps.queue.enqueue('memory.embed', { namespace }).catch((err: unknown) => {
    deps.logger.warn({ err, job: 'memory.embed' }, 'could not enqueue embeddings; entries stay without them');
  });
}
