import { type Router as ExpressRouter, Router } from 'express';
import type { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';

export interface ReadinessDeps {
  db: Kysely<any>;
  redis: Redis;
  /** A second pool the app reads from (a replica, DATABASE_READ_URL): checked as `postgresRead`. */
  readDb?: Kysely<any>;
  /** How long one dependency check may take before it counts as down. */
  timeoutMs?: number;
}

async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Postgres and Redis reachability, each as ok or the reason it is not. */
export async function checkReadiness(
  deps: ReadinessDeps,
): Promise<{ ok: boolean; checks: Record<string, string> }> {
  const ms = deps.timeoutMs ?? 1000;
  const [postgres, redis, postgresRead] = await Promise.allSettled([
    within(sql`select 1`.execute(deps.db), ms),
    within(deps.redis.ping(), ms),
    deps.readDb ? within(sql`select 1`.execute(deps.readDb), ms) : undefined,
  ]);
  const describe = (r: PromiseSettledResult<unknown>) =>
    r.status === 'fulfilled' ? 'ok' : String((r.reason as Error)?.message ?? r.reason);
  const checks: Record<string, string> = { postgres: describe(postgres), redis: describe(redis) };
  if (deps.readDb) checks.postgresRead = describe(postgresRead);
  return { ok: Object.values(checks).every((check) => check === 'ok'), checks };
}

/** `/healthz`: the process is alive. `/readyz`: Postgres and Redis answer (503 otherwise). */
export function healthRoutes(deps: ReadinessDeps): ExpressRouter {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const { ok, checks } = await checkReadiness(deps);
    res.status(ok ? 200 : 503).json({ status: ok ? 'ready' : 'unavailable', checks });
  });
  return router;
}
