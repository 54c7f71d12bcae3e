import type { Server, ServerResponse } from 'node:http';
import type { Db } from '@pkgreg/db';
import { checkReadiness, closeServer, listen } from '@pkgreg/server-kit';
import type { Worker } from 'bullmq';
import { Redis } from 'ioredis';

// The worker serves no requests, so an orchestrator's probes need a port of their own: `/healthz` says
// the process still consumes its queues, `/readyz` that PostgreSQL and Redis answer (as the apps' do).

export interface HealthServerOptions {
  port: number;
  host: string;
  db: Db;
  redisUrl: string;
  /** The BullMQ consumers; the process is unhealthy once any of them stopped running. */
  workers: Worker[];
}

export interface HealthServer {
  server: Server;
  close(): Promise<void>;
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  // Fails a ping at once while Redis is down instead of queueing it, so readiness answers promptly.
  const redis = new Redis(options.redisUrl, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
  redis.on('error', () => {});
  // A first connection that fails is retried in the background; readiness says so meanwhile.
  await redis.connect().catch(() => {});

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const server = await listen(
    (req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return send(res, 405, { error: { code: 'method_not_allowed', message: 'Only GET is allowed' } });
      if (path === '/healthz') {
        const running = options.workers.every((w) => w.isRunning());
        return send(res, running ? 200 : 503, { status: running ? 'ok' : 'stopped' });
      }
      if (path === '/readyz') {
        void checkReadiness({ db: options.db, redis }).then(({ ok, checks }) =>
          send(res, ok ? 200 : 503, { status: ok ? 'ready' : 'unavailable', checks }),
        );
        return;
      }
      send(res, 404, { error: { code: 'not_found', message: 'Only /healthz and /readyz are served here' } });
    },
    options.port,
    options.host,
  );
  return {
    server,
    async close() {
      await closeServer(server);
      redis.disconnect();
    },
  };
}
