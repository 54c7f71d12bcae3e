// How many PostgreSQL statements the edge runs per system.info request under load: pg_stat_database's
// transaction count of the edge's own database over a measured run (`node bench/query-rate.mjs [s]`).
import { randomBytes } from 'node:crypto';

const SECONDS = Number(process.argv[2] ?? 6);
const { createTestDatabase } = await import('@pkgreg/db/testing');
const { createClient } = await import('../dist/oauth/clients.service.js');
const { ensureActiveKey } = await import('../dist/oauth/signing-keys.service.js');
const { openSession } = await import('./session.mjs');
const { load, startServer, stopServers } = await import('./procs.mjs');
const { sql } = await import('kysely');

const t = await createTestDatabase();
try {
  await ensureActiveKey(t.db);
  const client = await createClient(t.db, { name: 'rate', scopes: ['pkgreg.system.read'] });
  const env = {
    PKGREG_PUBLIC_BASE_URL: 'http://localhost:4100',
    DATABASE_URL: t.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    EDGE_QUEUE_PREFIX: `pkgreg-rate:${randomBytes(4).toString('hex')}`,
    EDGE_RATE_LIMIT_PER_MINUTE: '1000000000',
    LOG_LEVEL: 'silent',
  };
  const edge = await startServer('edge', {
    env,
    redisPrefix: `pkgreg-rate:${randomBytes(4).toString('hex')}:`,
  });
  const url = `http://127.0.0.1:${edge.port}/mcp`;
  const { headers, call } = await openSession(url, client);
  const body = call('pkgreg.system.v1.info', {});
  await load({ url, headers, body, connections: 32, duration: 2 });
  const count = async () =>
    Number(
      (
        await sql`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`.execute(
          t.db,
        )
      ).rows[0].n,
    );
  const before = await count();
  const measured = await load({ url, headers, body, connections: 32, duration: SECONDS });
  // pg_stat_database is updated when a backend reports; give it a moment.
  await new Promise((r) => setTimeout(r, 1500));
  const statements = (await count()) - before;
  console.log(
    `${measured.total} requests at ${measured.rps.toFixed(0)}/s; ${statements} transactions: ${(statements / SECONDS).toFixed(0)}/s, ${(statements / measured.total).toFixed(3)} per request`,
  );
} finally {
  stopServers();
  await t.destroy();
}
