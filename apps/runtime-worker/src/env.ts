import { commonEnvShape, parseEnv } from '@pkgreg/server-kit';
import { z } from 'zod';

// The only place runtime-worker reads process.env (STYLE.md §5).
export const EnvSchema = z.object({
  ...commonEnvShape,
  /** Jobs one worker process runs at once on the runtime queue. */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(10),
  /** Jobs one worker process runs at once on the indexing queue. */
  INDEXING_CONCURRENCY: z.coerce.number().int().min(1).max(50).default(2),
  /** Key prefix of the BullMQ queues (hosted tenants get their own). */
  QUEUE_PREFIX: z.string().default('pkgreg'),
});
export type Env = z.infer<typeof EnvSchema>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}
