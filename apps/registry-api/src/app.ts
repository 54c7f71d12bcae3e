import type { RequestListener } from 'node:http';
import { type Auth, CLIENT_ADDRESS_HEADER } from '@pkgreg/accounts';
import type { Db } from '@pkgreg/db';
import { DEFAULT_SKILL_LIMITS, indexerSettings } from '@pkgreg/indexer';
import { createPgContentStore } from '@pkgreg/registry';
import { healthRoutes, type Logger, registerRoutes, traceRequests } from '@pkgreg/server-kit';
import { createRuntimeQueue, type RuntimeQueue } from '@pkgreg/tasks';
import { toNodeHandler } from 'better-auth/node';
import express, { type Express, type RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { type AccessCache, createAccessCache } from './accounts/access-cache.js';
import { accountsRoutes } from './accounts/accounts.routes.js';
import { authOptionsRoutes } from './accounts/auth-options.routes.js';
import { createRegistryAuth, trustedOrigins } from './accounts/auth-setup.js';
import { cliLoginRoutes } from './accounts/cli-login.routes.js';
import { connectedAppsRoutes } from './accounts/connected-apps.routes.js';
import { csrfGuard } from './accounts/csrf.js';
import { createDelegationVerifier } from './accounts/delegation-assertion.js';
import { forgetAccessOnWrites } from './accounts/forget-access.js';
import { mcpConsentRoutes } from './accounts/mcp-consent.routes.js';
import { readAccessOf } from './accounts/read-access-of.js';
import { hasCredentials, type ViewerOf } from './accounts/viewer.js';
import { createViewerOf } from './accounts/viewer-of.js';
import { dependenciesRoutes } from './dependencies/dependencies.routes.js';
import { clientAddress, compileTrustProxy } from './downloads/client-address.js';
import { createDownloadRecorder, type DownloadRecorder } from './downloads/download-recorder.js';
import { createDownloaderIds } from './downloads/downloaders.js';
import { createTrackAdmission, type TrackAdmission } from './downloads/track-admission.js';
import { type Env, publishingSettings } from './env.js';
import { JSON_BODY_LIMIT, oversizedBody } from './http/body.js';
import { cachePolicy, NO_STORE } from './http/cache-policy.js';
import { errorHandler, notFoundHandler } from './http/error-handler.js';
import { requestId } from './http/request-id.js';
import { createWindowLimiter } from './http/window-limiter.js';
import { createRegistryMetrics, type RegistryMetrics } from './metrics.js';
import { moderationRoutes } from './moderation/moderation.routes.js';
import { createReportLimiter } from './moderation/report-limiter.js';
import { openApiRoutes } from './openapi/openapi.routes.js';
import { createCatalogValidator } from './packages/catalog-validator.js';
import { createPackageCache, type PackageCache } from './packages/package-cache.js';
import { createPackageEndpoints } from './packages/package-endpoints.js';
import { packagesRoutes } from './packages/packages.routes.js';
import { keysRoutes } from './provenance/keys.routes.js';
import { logRoutes } from './provenance/log.routes.js';
import { createGitHubTokenProof } from './publishing/github-token-proof.js';
import { createOidcProof } from './publishing/oidc-proof.js';
import { createOidcVerifier } from './publishing/oidc-verifier.js';
import { createProofVerifier } from './publishing/proof.js';
import { publishingRoutes } from './publishing/publishing.routes.js';
import type { PublishingDeps } from './publishing/publishing.service.js';
import { createReplayGuard } from './publishing/replay-guard.js';
import { type RegistryHandlers, ROUTES } from './routes/route-table.js';
import { searchRoutes } from './search/search.routes.js';
import { uploadsRoutes } from './uploads/uploads.routes.js';
import { createContentCache } from './versions/content-cache.js';
import { versionsRoutes } from './versions/versions.routes.js';
import { webStatic } from './web-static.js';
import { createAgentSkillArchives } from './well-known/agent-skill-archives.js';
import { agentSkillsRoutes } from './well-known/agent-skills.routes.js';

export interface AppDeps {
  db: Db;
  /**
   * Where list, search, the feed, detail, skill-md, dependants and versions are read (DATABASE_READ_URL,
   * a replica; read-db.ts); `db` when not given. Writes and read-your-writes stay on `db`.
   */
  readDb?: Db;
  redis: Redis;
  logger: Logger;
  env: Env;
  /** Group-commit writer for track calls; one per process (created here when not given). */
  recorder?: DownloadRecorder;
  /**
   * Where publishes enqueue their indexing jobs (the workers' queues). When not given, one is opened on
   * REDIS_URL / QUEUE_PREFIX at the first publish; whoever passes one closes it.
   */
  queue?: RuntimeQueue;
  /** Prometheus metrics (index.ts serves them on METRICS_PORT); a registry of its own when not given. */
  metrics?: RegistryMetrics;
  /** The clock whose UTC day a track call counts on (tests move it); Date.now when not given. */
  now?: () => number;
  /** Accounts, sessions and sign-in (better-auth); built from env when not given. */
  auth?: Auth;
}

/**
 * Builds the registry's request listener: detail, skill-md and track answered by
 * packages/package-endpoints.ts, in front of the Express app that answers everything else. Never
 * listens (tests drive it with supertest, so every test goes through the same listener as production).
 */
export function createApp(deps: AppDeps): RequestListener {
  // Each request in a server span when tracing is on (tracing.ts); the listener itself otherwise.
  return traceRequests(createRegistry(deps).handler);
}

/** The listener and its parts: the Express app behind the endpoints, the detail cache, the track recorder. */
export interface Registry {
  handler: RequestListener;
  express: Express;
  cache: PackageCache;
  recorder: DownloadRecorder;
  admission: TrackAdmission;
  metrics: RegistryMetrics;
  /** What credentials resolve to, kept until access changes (accounts/access-cache.ts). */
  accessCache: AccessCache;
  /** Ends what the registry opened itself (the access cache's LISTEN connection). */
  close(): Promise<void>;
}

export function createRegistry(input: AppDeps): Registry {
  const auth = input.auth ?? createRegistryAuth(input);
  const accessCache = createAccessCache(input.db, {
    ttlMs: input.env.ACCESS_CACHE_TTL_MS,
    max: input.env.ACCESS_CACHE_MAX,
  });
  const viewerOf = createViewerOf({
    db: input.db,
    auth,
    trust: compileTrustProxy(input.env.TRUST_PROXY),
    cache: accessCache,
    delegations: createDelegationVerifier(input.db, {
      edgeBaseUrl: input.env.EDGE_PUBLIC_BASE_URL,
      audience: publishingSettings(input.env).publicUrl,
    }),
  });
  const deps: WiredDeps = { ...input, auth, viewerOf, accessCache };
  const cache = createPackageCache(deps.readDb ?? deps.db, { ttlMs: deps.env.DETAIL_CACHE_TTL_MS });
  const recorder =
    deps.recorder ??
    createDownloadRecorder(deps.db, {
      maxInFlight: deps.env.TRACK_MAX_IN_FLIGHT,
      holdMs: deps.env.TRACK_HOLD_MS,
    });
  const express = createExpressApp(deps);
  const metrics = deps.metrics ?? createRegistryMetrics();
  metrics.watchConnections(deps.db, deps.redis);
  metrics.watchDownloads(recorder, deps.db, deps.logger);
  const admission = createTrackAdmission({
    ids: createDownloaderIds(deps.db, deps.now),
    limiter: createWindowLimiter(deps.redis, {
      keyPrefix: 'pkgreg:registry:track:',
      perWindow: deps.env.TRACK_PER_MINUTE,
      windowMs: 60_000,
    }),
    trust: compileTrustProxy(deps.env.TRUST_PROXY),
    logger: deps.logger,
  });
  const handler = metrics.http.instrument(
    createPackageEndpoints({
      app: express,
      cache,
      recorder,
      admission,
      logger: deps.logger,
      caching: cachePolicy(deps.env),
      viewerOf: deps.viewerOf,
      db: deps.db,
    }),
  );
  return { handler, express, cache, recorder, admission, metrics, accessCache, close: accessCache.close };
}

const HOUR_MS = 3_600_000;

/** Publishing's dependencies: the two proofs (OIDC, code-host token), the job queue, its limits. */
function publishingDeps(deps: AppDeps): PublishingDeps {
  const { publicUrl, webhookKey } = publishingSettings(deps.env);
  let queue = deps.queue;
  const replay = createReplayGuard(deps.redis);
  const limiter = (name: string, perWindow: number) =>
    createWindowLimiter(deps.redis, { keyPrefix: `pkgreg:registry:${name}:`, perWindow, windowMs: HOUR_MS });
  return {
    db: deps.db,
    logger: deps.logger,
    replay,
    limits: {
      publish: limiter('publishes', deps.env.PUBLISHES_PER_HOUR),
      webhookAddress: limiter('hook-addresses', deps.env.WEBHOOK_DELIVERIES_PER_HOUR),
      webhookRepository: limiter('hook-repositories', deps.env.WEBHOOK_DELIVERIES_PER_REPOSITORY_PER_HOUR),
    },
    proofs: createProofVerifier({
      oidc: createOidcProof(
        createOidcVerifier({ issuers: [deps.env.OIDC_ISSUER], audience: publicUrl, useJti: replay.useJti }),
      ),
      token: createGitHubTokenProof({ apiUrl: deps.env.GITHUB_API_URL, webUrl: deps.env.GITHUB_WEB_URL }),
    }),
    queue: () => {
      queue ??= createRuntimeQueue({ connection: deps.env.REDIS_URL, prefix: deps.env.QUEUE_PREFIX });
      return queue;
    },
    publicUrl,
    webhookKey,
  };
}

/** AppDeps with what createRegistry builds once for every route: accounts and the viewer of a request. */
interface WiredDeps extends AppDeps {
  auth: Auth;
  viewerOf: ViewerOf;
  accessCache: AccessCache;
}

function createExpressApp(deps: WiredDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // ETags come from row_version (packages.routes.ts), never from hashing the body.
  app.set('etag', false);
  app.set('trust proxy', deps.env.TRUST_PROXY);
  // Nothing is cacheable unless its route says so (docs/caching.md): health, publishing, owner actions,
  // reports and anything unknown answer no-store.
  app.use((_req, res, next) => {
    res.setHeader('Cache-Control', NO_STORE);
    next();
  });
  app.use(requestId());
  const reads = deps.readDb ?? deps.db;
  const caching = cachePolicy(deps.env);
  const catalog = createCatalogValidator(reads, { ttlMs: deps.env.CATALOG_VALIDATOR_TTL_MS });
  const content = createContentCache(
    createPgContentStore(reads),
    deps.env.CONTENT_CACHE_MAX_MB * 1024 * 1024,
  );
  const archives = createAgentSkillArchives(reads, content);
  const readAccess = readAccessOf(deps.viewerOf);
  const publishing = publishingDeps(deps);
  // The registry's own browser pages (CLI sign-in, MCP consent) link to the web UI's sign-in.
  const { publicUrl } = publishingSettings(deps.env);
  const webOrigin = deps.env.WEB_ORIGINS[0] ?? new URL(publicUrl).origin;
  const devSignIn = deps.env.DEV_SIGN_IN && deps.env.NODE_ENV !== 'production';
  const handlers: RegistryHandlers = {
    ...packagesRoutes({ db: reads, codeHostWebUrl: deps.env.GITHUB_WEB_URL, catalog, caching, readAccess }),
    ...versionsRoutes({ db: reads, content, archives, caching, readAccess }),
    ...agentSkillsRoutes({ db: reads, archives, caching, readAccess }),
    ...dependenciesRoutes({ db: reads, catalog, caching, readAccess }),
    ...publishingRoutes(publishing, deps.viewerOf),
    ...uploadsRoutes({
      db: deps.db,
      viewerOf: deps.viewerOf,
      oidc: createOidcVerifier({
        issuers: deps.env.TRUSTED_PUBLISHING_ISSUERS,
        audience: publishing.publicUrl,
        useJti: publishing.replay.useJti,
      }),
      limits: { ...DEFAULT_SKILL_LIMITS, ...indexerSettings(deps.env).limits },
      limiter: publishing.limits.publish,
      maxBytes: deps.env.UPLOAD_MAX_BYTES,
    }),
    ...moderationRoutes({
      db: deps.db,
      limiter: createReportLimiter(deps.redis, { perWindow: deps.env.REPORTS_PER_HOUR, windowMs: HOUR_MS }),
      readAccess,
    }),
    ...openApiRoutes({ caching }),
    ...keysRoutes({ db: reads, caching }),
    ...logRoutes({ db: reads, caching }),
    ...searchRoutes({ db: reads, catalog, caching, readAccess }),
    ...accountsRoutes({
      db: deps.db,
      auth: deps.auth,
      viewerOf: deps.viewerOf,
      tokenMaxDays: deps.env.TOKEN_MAX_DAYS,
      githubApiUrl: deps.env.GITHUB_API_URL,
    }),
    ...cliLoginRoutes({
      db: deps.db,
      redis: deps.redis,
      viewerOf: deps.viewerOf,
      webOrigin,
      publicUrl,
      devSignIn,
      tokenMaxDays: deps.env.TOKEN_MAX_DAYS,
    }),
    ...mcpConsentRoutes({
      db: deps.db,
      viewerOf: deps.viewerOf,
      webOrigin,
      edgeBaseUrl: deps.env.EDGE_PUBLIC_BASE_URL,
      devSignIn,
    }),
    ...connectedAppsRoutes({ db: deps.db, auth: deps.auth }),
    ...authOptionsRoutes(deps.env),
  };
  // Routes that take JSON parse it first; elsewhere a malformed one must still be a 400, never a 5xx.
  const jsonParser: RequestHandler[] = [
    (req, res, next) => next(oversizedBody(req, res)),
    express.json({ limit: JSON_BODY_LIMIT }),
  ];
  app.use(csrfGuard(trustedOrigins(deps.env)));
  app.use(forgetAccessOnWrites(deps.accessCache));
  // Credentials are checked on every route, so a bad, expired or revoked token is a 401 wherever it is
  // sent (docs/accounts.md); requests without any pass at no cost.
  app.use((req, _res, next) => {
    if (!hasCredentials(req)) return next();
    deps.viewerOf(req).then(() => next(), next);
  });
  // Every API route from the table, in its order; reads (list, source, versions) come first, so a
  // request does not walk the health and body-parsing layers before reaching them.
  registerRoutes(app, ROUTES, handlers, { jsonParser });
  // Sign-in, sessions, organisations and device codes: better-auth reads its own bodies and checks the
  // origin of its own writes.
  const authHandler = toNodeHandler(deps.auth);
  const trust = compileTrustProxy(deps.env.TRUST_PROXY);
  app.all('/api/auth/*splat', (req, res) => {
    req.headers[CLIENT_ADDRESS_HEADER] = clientAddress(req, trust);
    return authHandler(req, res);
  });
  app.use(healthRoutes({ db: deps.db, redis: deps.redis, readDb: deps.readDb }));
  // A body sent to any other path is read as before the table: a malformed or oversized one is refused.
  app.use(jsonParser);
  // The built web UI (apps/web/dist) and its SPA fallback, after every API route (web-static.ts).
  app.use(webStatic());
  app.use(notFoundHandler());
  app.use(errorHandler(deps.logger));
  return app;
}
