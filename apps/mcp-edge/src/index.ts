import { closeServer, listen, redisKeyOptions, serverTimeouts, startService } from '@pkgreg/server-kit';
import { createEdge } from './app.js';
import { loadEnv } from './env.js';
import { rpcClientErrorBody } from './mcp/transport.js';
import { createEdgeMetrics } from './metrics.js';
import { ensureActiveKey } from './oauth/signing-keys.service.js';

const env = loadEnv();
// Logger, traces, outage watch, metrics registry; pools and Redis opened through it close on shutdown.
const service = await startService('mcp-edge', env);
const { logger } = service;
const db = service.openDb(env.DATABASE_URL, { applicationName: 'pkgreg-mcp-edge' });
// Auto-pipelining sends the rate-limit scripts of concurrent requests in one write (one round trip
// each still, far fewer syscalls).
const redis = service.openRedis(env.REDIS_URL, { enableAutoPipelining: true, ...redisKeyOptions(env) });

// The access tokens' key and the delegation assertions' key: the runtime worker only ever reads the latter.
await ensureActiveKey(db);
await ensureActiveKey(db, 'delegation');
const metrics = createEdgeMetrics(service.metrics);
const edge = createEdge({ db, redis, logger, env, metrics });
const server = await listen(
  edge.handler,
  env.EDGE_PORT,
  env.EDGE_HOST,
  serverTimeouts(env),
  rpcClientErrorBody,
);
server.on('upgrade', edge.upgrade);
logger.info({ url: `http://${env.EDGE_HOST}:${env.EDGE_PORT}` }, 'mcp-edge listening');
// A parent that started this process with an IPC channel (a process manager's wait_ready, the tests'
// harness) learns that this process, not another one, holds the port.
process.send?.('ready');
metrics.http.observe(server);
await service.serveMetrics();

// The grace outlasts a sync invoke's wait (env.ts), so requests open at SIGTERM are still answered.
service.onShutdown(async () => {
  await Promise.all([closeServer(server), edge.closeTunnels()]);
  await edge.shutdown();
}, env.SHUTDOWN_GRACE_MS);
