import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Db } from '@pkgreg/db';
import { memorySettings } from '@pkgreg/memory';
import { createLocalRuntime, type RuntimeSettings } from '@pkgreg/runtime';
import {
  healthRoutes,
  type Logger,
  OUTAGE_RETRY_AFTER_SECONDS,
  outageMonitorOf,
  registerRoutes,
  traceRequests,
  tracingEnabled,
} from '@pkgreg/server-kit';
import { openQueueJobs } from '@pkgreg/tasks';
import express, { type ErrorRequestHandler, type Express } from 'express';
import type { Redis } from 'ioredis';
import { type Access, createAccess } from './admission/access.js';
import { type BackendResolver, createBackendResolver } from './admission/backends.js';
import { createLimiter, type Limiter } from './admission/limits.js';
import { createOriginPolicy } from './admission/origin.js';
import { createAuditWriter } from './audit/audit-writer.js';
import { createCatalog } from './catalog/catalog.js';
import { createDelegationAssertions } from './catalog/delegation-assertions.js';
import { createRegistryClient } from './catalog/registry-client.js';
import type { Env } from './env.js';
import { createMcpHandler } from './mcp/mcp.handler.js';
import { createEdgeMetrics, type EdgeMetrics } from './metrics.js';
import { type OAuthUrls, oauthRoutes, oauthUrls } from './oauth/oauth.routes.js';
import { createEdgeAuthorization, type EdgeAuthorization } from './oauth/provider/edge-authorization.js';
import { createKeyStore, type KeyStore } from './oauth/signing-keys.service.js';
import { createTokenVerifier } from './oauth/verify-token.js';
import { EDGE_ROUTES, type EdgeHandlers, edgeRouteOf } from './routes/route-table.js';
import { serverCardRoutes } from './routes/server-card.js';
import { createTenantProvisioner } from './runtime/tenant-provisioner.js';
import { createTunnelHub } from './tunnel/tunnel-hub.js';
import { createTunnelRuntime } from './tunnel/tunnel-runtime.js';

export interface AppDeps {
  db: Db;
  redis: Redis;
  logger: Logger;
  env: Env;
  /** Prometheus metrics (index.ts serves them on METRICS_PORT); a registry of its own when not given. */
  metrics?: EdgeMetrics;
  /** How clients' metadata documents are fetched (tests trust their own certificate authority). */
  metadataDocumentFetch?: Parameters<typeof createEdgeAuthorization>[0]['fetch'];
}

export interface Edge {
  app: Express;
  /**
   * Node request listener: POST /mcp goes straight to the MCP handler (the hot path skips Express's
   * router); everything else is `app`. Both reach the same handler, so tests may drive either.
   */
  handler(req: IncomingMessage, res: ServerResponse): void;
  /** Node `upgrade` listener: tunnel sessions' local runtimes dial in here (tunnel-hub.ts). */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  keyStore: KeyStore;
  /** The authorization code flow's server (its provider, for tests and operator commands). */
  authorization: EdgeAuthorization;
  /** The edge's metrics; index.ts wraps `handler` with `metrics.http.instrument`. */
  metrics: EdgeMetrics;
  /** Closes the tunnels' connections: upgraded sockets would otherwise hold the server's close open. */
  closeTunnels(): Promise<void>;
  /**
   * Closes the tunnels, flushes the audit buffer and closes queues and tenant pools (not `db`/`redis`: the
   * caller owns them).
   */
  shutdown(): Promise<void>;
}

/** Builds the edge; never listens (tests drive `app` with supertest). */
export function createEdge(deps: AppDeps): Edge {
  const { env, db, logger } = deps;
  const metrics = deps.metrics ?? createEdgeMetrics();
  metrics.watchConnections(db, deps.redis);
  const urls = oauthUrls(env.PKGREG_PUBLIC_BASE_URL);
  const keyStore = createKeyStore(db);
  const settings: RuntimeSettings = {
    syncThresholdMs: env.EDGE_SYNC_THRESHOLD_MS,
    pollWindowSeconds: env.EDGE_MAX_TASK_POLL_WINDOW_SECONDS,
    memory: memorySettings(env),
  };
  const queuePrefix = env.EDGE_QUEUE_PREFIX;
  const development = createLocalRuntime({
    ...settings,
    db,
    jobs: () => openQueueJobs({ connection: env.REDIS_URL, prefix: queuePrefix }),
  });
  const tenants = createTenantProvisioner({
    db,
    databaseUrl: env.DATABASE_URL,
    redisUrl: env.REDIS_URL,
    queuePrefix,
    settings,
  });
  const hub = createTunnelHub({
    sessions: env.PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON,
    redis: deps.redis,
    logger,
    heartbeatMs: env.EDGE_TUNNEL_HEARTBEAT_MS,
  });
  const resolver = createBackendResolver(env, {
    development,
    hosted: (tenant) => tenants.runtimeFor(tenant),
    tunnel: (session) => createTunnelRuntime(session, { hub, timeoutMs: env.EDGE_TUNNEL_TIMEOUT_MS }),
  });
  const access = createAccess({
    db,
    issuer: urls.issuer,
    hosted: env.PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON,
    tunnels: env.PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON,
    tokenTtlSeconds: env.EDGE_TOKEN_TTL_SECONDS,
    maxAgeMs: env.EDGE_ACCESS_MAX_AGE_MS,
  });
  const audit = createAuditWriter(db, logger, {
    flushMs: env.EDGE_AUDIT_FLUSH_MS,
    batchSize: env.EDGE_AUDIT_BATCH_SIZE,
  });
  const limiter = createLimiter(deps.redis, {
    ratePerMinute: env.EDGE_RATE_LIMIT_PER_MINUTE,
    rateOverrides: {
      'oauth.token': env.EDGE_TOKEN_REQUESTS_PER_MINUTE,
      'oauth.register': env.EDGE_REGISTER_REQUESTS_PER_MINUTE,
      'oauth.authorize': env.EDGE_AUTHORIZE_REQUESTS_PER_MINUTE,
      ...env.EDGE_RATE_LIMITS_JSON,
    },
    invokePerMinute: env.EDGE_INVOKE_PER_MINUTE,
    compactPerMinute: env.EDGE_COMPACT_PER_MINUTE,
  });
  const catalog = createCatalog({
    registry: createRegistryClient({ url: env.REGISTRY_URL, timeoutMs: env.REGISTRY_TIMEOUT_MS, logger }),
    logger,
    ttlMs: env.EDGE_CATALOG_TTL_MS,
    cacheBytes: env.EDGE_CATALOG_CACHE_MB * 1024 * 1024,
    pageSize: env.EDGE_RESOURCES_PAGE_SIZE,
  });
  const handleMcp = createMcpHandler({
    env,
    logger,
    resolver,
    access,
    origins: createOriginPolicy(env),
    verifier: createTokenVerifier({
      keyStore,
      issuer: urls.issuer,
      resource: urls.resource,
      trustedIssuers: env.EDGE_TRUSTED_ISSUERS_JSON,
      cacheSize: env.EDGE_TOKEN_CACHE_SIZE,
      onCacheLookup: metrics.tokenCacheLookup,
    }),
    limiter,
    audit,
    catalog,
    assertions: createDelegationAssertions({
      // Keys of their own (docs/decisions.md, "Delegation keys"): what signs an assertion never signs a token.
      keyStore: createKeyStore(db, { purpose: 'delegation' }),
      issuer: urls.issuer,
      audience: env.REGISTRY_PUBLIC_URL,
    }),
    resourceMetadataUrl: urls.resourceMetadata,
    metrics,
  });

  const authorization = createEdgeAuthorization({
    db,
    keyStore,
    logger,
    limiter,
    urls,
    resolver,
    servedHosts: new Set(
      [...env.PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON, ...env.PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON].flatMap(
        (b) => (b.host ? [b.host] : []),
      ),
    ),
    base: env.PKGREG_PUBLIC_BASE_URL,
    registryPublicUrl: env.REGISTRY_PUBLIC_URL,
    accessTokenTtlSeconds: env.EDGE_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: env.EDGE_REFRESH_TOKEN_TTL_SECONDS,
    // Without configured keys (never in production, env.ts) a key of this process: a sign-in in
    // progress does not survive a restart, nothing else depends on it.
    cookieKeys: env.EDGE_COOKIE_KEYS.length > 0 ? env.EDGE_COOKIE_KEYS : [randomBytes(32).toString('hex')],
    dynamicClientUnusedDays: env.EDGE_DCR_UNUSED_DAYS,
    ...(deps.metadataDocumentFetch ? { fetch: deps.metadataDocumentFetch } : {}),
  });
  const app = createExpressApp({
    deps,
    keyStore,
    urls,
    limiter,
    resolver,
    access,
    handleMcp,
    authorization,
  });
  // The fast path's server span (tracing.ts); `handleMcp` itself stays untouched when tracing is off.
  const mcpPath = edgeRouteOf('mcp').path;
  const tracedMcp = traceRequests(
    (req: IncomingMessage, res: ServerResponse) => void handleMcp(req, res),
    mcpPath,
  );

  return {
    app,
    handler(req, res) {
      if (req.method === 'POST' && (req.url === mcpPath || req.url?.startsWith(`${mcpPath}?`)))
        tracedMcp(req, res);
      else app(req, res);
    },
    upgrade(req, socket, head) {
      if (!hub.handleUpgrade(req, socket, head)) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      }
    },
    keyStore,
    authorization,
    metrics,
    closeTunnels: () => hub.close(),
    async shutdown() {
      await hub.close();
      await audit.close();
      await Promise.allSettled([
        development.close(),
        tenants.close(),
        catalog.close(),
        authorization.close(),
      ]);
    },
  };
}

/**
 * The Express app for everything but the POST /mcp fast path: /mcp (POST and the 405 for the rest), the
 * OAuth endpoints, health, and the error handler for what the body parsers refuse.
 */
function createExpressApp(parts: {
  deps: AppDeps;
  keyStore: KeyStore;
  urls: OAuthUrls;
  limiter: Limiter;
  resolver: BackendResolver;
  access: Access;
  handleMcp: ReturnType<typeof createMcpHandler>;
  authorization: EdgeAuthorization;
}): Express {
  const { deps, keyStore, urls, limiter, resolver, access, handleMcp, authorization } = parts;
  const { env, db, logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', env.TRUST_PROXY);
  // One server span per request when tracing is on (the POST /mcp fast path has its own in createEdge).
  if (tracingEnabled()) app.use(traceRequests((_req: unknown, _res: unknown, next: () => void) => next()));
  const handlers: EdgeHandlers = {
    mcp: (req, res) => void handleMcp(req, res),
    // Stateless Streamable HTTP: no server-initiated stream (GET) and no session to end (DELETE).
    'mcp-other-methods': (_req, res) => {
      res.setHeader('Allow', 'POST');
      res.status(405).json({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Method not allowed: this endpoint accepts POST only' },
      });
    },
    ...oauthRoutes({
      db,
      keyStore,
      urls,
      tokenTtlSeconds: env.EDGE_TOKEN_TTL_SECONDS,
      limiter,
      resolver,
      access,
      providerToken: authorization.token,
    }),
    ...authorization.handlers,
    ...serverCardRoutes(env),
  };
  // The edge's routes read their own bodies (MCP's JSON-RPC, the token endpoint's form): no app parser.
  registerRoutes(app, EDGE_ROUTES, handlers, { jsonParser: [] });
  app.use(healthRoutes({ db, redis: deps.redis }));
  // Unknown paths: JSON as every other refusal here, not Express's HTML page echoing the path.
  app.use((_req, res) => {
    res.status(404).json({ error: 'not_found', error_description: 'no such endpoint' });
  });
  const onError: ErrorRequestHandler = (error, _req, res, _next) => {
    // Body parser refusals (malformed or oversized form bodies at /mcp/token) are the client's: 4xx.
    const status = typeof error?.status === 'number' && error.status < 500 ? error.status : 500;
    // PostgreSQL or Redis down (the token endpoint reads clients and keys): a retryable 503, logged
    // once by the process's monitor. RFC 6749's code for it is temporarily_unavailable.
    if (status === 500 && outageMonitorOf(logger).failed(error)) {
      if (res.headersSent) return;
      res.setHeader('Retry-After', String(OUTAGE_RETRY_AFTER_SECONDS));
      res.status(503).json({ error: 'temporarily_unavailable' });
      return;
    }
    if (status === 500) logger.error({ err: error }, 'request failed');
    if (res.headersSent) return;
    if (status === 500) res.status(500).json({ error: 'server_error' });
    else res.status(status).json({ error: 'invalid_request', error_description: 'unreadable request body' });
  };
  app.use(onError);
  return app;
}

export function createApp(deps: AppDeps): Express {
  return createEdge(deps).app;
}
