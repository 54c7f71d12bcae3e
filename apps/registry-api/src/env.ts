import { readFileSync } from 'node:fs';
import { indexerEnvShape } from '@pkgreg/indexer';
import { type RegistrySigner, signerFromPem } from '@pkgreg/registry';
import {
  booleanFlag,
  commonEnvShape,
  httpServerEnvShape,
  metricsEnvShape,
  parseEnv,
  port,
  redisKeysEnvShape,
} from '@pkgreg/server-kit';
import { DEFAULT_QUEUE_PREFIX } from '@pkgreg/tasks';
import { z } from 'zod';

// The only place registry-api reads process.env: settings are parsed once at start, so a bad value
// stops the process before it serves a request.
const EnvFields = z.object({
  ...commonEnvShape,
  ...httpServerEnvShape,
  ...redisKeysEnvShape,
  // The code host (also the source redirect's base) and indexing limits, as the indexer declares them.
  ...indexerEnvShape,
  REGISTRY_HOST: z.string().default('127.0.0.1'),
  REGISTRY_PORT: port(4000),
  /** Operator listener for Prometheus (`GET /metrics`): a port, `0` for any free one, or `off`. */
  ...metricsEnvShape(9464),
  /** `registry seed-demo`: where the demo git repositories go (relative: from the repository root). */
  DEMO_REPOS_DIR: z.string().min(1).default('.data/demo-repos'),
  /** Set by pnpm to the directory a script was started from: `registry index ./path` resolves against it. */
  INIT_CWD: z.string().optional(),
  /** Postgres pool size of one API process. */
  REGISTRY_DB_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  /** How often track deltas are folded into packages.download_count (detail trails by about this). */
  DOWNLOAD_FLUSH_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  /** Track batch INSERTs running at once per process (group commit); 1 measured best (bigger batches). */
  TRACK_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(16).default(1),
  /** After a busy commit, how long (ms) the next track batch may wait for more calls (0 = never). */
  TRACK_HOLD_MS: z.coerce.number().min(0).max(10).default(0.3),
  /**
   * Track calls one client address (IPv6: its /64) may make per minute, over all packages; past it a
   * call is answered 429 with Retry-After and counts nothing (docs/decisions.md, unique downloaders).
   */
  TRACK_PER_MINUTE: z.coerce.number().int().min(1).max(10_000_000).default(600),
  /** Detail/skill-md micro-cache lifetime per process, ms (0 = off); changes show within this much more. */
  DETAIL_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  /**
   * Read-only PostgreSQL URL (a replica) for list, search, the feed, detail, skill-md, dependants and
   * versions; unset: they read DATABASE_URL. Writes, publishing, track and moderation always use DATABASE_URL.
   */
  DATABASE_READ_URL: z.url().optional(),
  /** max-age (s) of moving answers: lists, search, skill-md, `latest`, version metadata (docs/caching.md). */
  HTTP_CACHE_MAX_AGE_S: z.coerce.number().int().min(0).max(86_400).default(60),
  /** s-maxage (s) of exact-version files and archives: a removal or quarantine reaches CDNs within it. */
  HTTP_CACHE_CDN_MAX_AGE_S: z.coerce.number().int().min(0).max(86_400).default(300),
  /** How long (ms) a process reuses the catalog's change mark for list/search ETags (0 = read per request). */
  CATALOG_VALIDATOR_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  /** Memory for version files and archives kept in each API process (content-addressed, never stale). */
  CONTENT_CACHE_MAX_MB: z.coerce.number().int().min(0).max(65_536).default(128),
  /** How often package changes are checked for list positions and search order (lists trail by about this). */
  DERIVED_REFRESH_INTERVAL_MS: z.coerce.number().int().min(50).max(600_000).default(1000),
  /**
   * How often the downloads and trending orders are rebuilt when downloads moved (they trail the counts
   * by about this; a rebuild takes seconds at 1M packages).
   */
  POPULARITY_REFRESH_INTERVAL_MS: z.coerce.number().int().min(50).max(3_600_000).default(300_000),
  /** Reports one client address may send per hour (POST …/reports; docs/risk-scan.md). */
  REPORTS_PER_HOUR: z.coerce.number().int().min(1).max(10_000).default(10),
  // Publishing (docs/publishing.md).
  /**
   * The registry's URL as clients reach it: the audience an OIDC token must name, and the base of the
   * webhook URL given at publish. Default `http://<REGISTRY_HOST>:<REGISTRY_PORT>`; required in production.
   */
  REGISTRY_PUBLIC_URL: z
    .url()
    .optional()
    .transform((url) => url?.replace(/\/+$/, '')),
  /** Issuer of the CI OIDC tokens trusted for publishing (GitHub Enterprise Server: `https://HOST/_services/token`). */
  OIDC_ISSUER: z
    .url()
    .default('https://token.actions.githubusercontent.com')
    .transform((url) => url.replace(/\/+$/, '')),
  /**
   * Key webhook secrets are derived from (HMAC-SHA256 of a per-repository salt): the secrets themselves
   * are never stored. At least 32 characters; required in production. Never logged.
   */
  WEBHOOK_SECRET_KEY: z.string().min(32, { error: 'must be at least 32 characters' }).optional(),
  /**
   * Publishes and owner actions (deprecate, yank and their undo) one client address may send per hour:
   * each asks the code host to check a proof.
   */
  PUBLISHES_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(60),
  /**
   * Webhook deliveries one client address may send per hour, counted before the signature is read.
   * GitHub sends every repository's deliveries from a few addresses: keep it well above their traffic.
   */
  WEBHOOK_DELIVERIES_PER_HOUR: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /** Signed webhook deliveries one repository may send per hour (each push re-indexes it). */
  WEBHOOK_DELIVERIES_PER_REPOSITORY_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(60),
  // Uploads (docs/publishing.md, "Uploading (hosted packages)").
  /** Largest upload body (a tar.gz of one skill folder) read, bytes; past it the answer is 413. */
  UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .default(50 * 1024 * 1024),
  /**
   * CI OIDC issuers whose tokens trusted publishers may upload with, comma-separated (each discovered at
   * `<issuer>/.well-known/openid-configuration`): GitHub Actions and GitLab.com by default; a
   * self-managed GitLab is its own URL.
   */
  TRUSTED_PUBLISHING_ISSUERS: z
    .string()
    .default('https://token.actions.githubusercontent.com,https://gitlab.com')
    .transform((value) =>
      value
        .split(',')
        .map((issuer) => issuer.trim().replace(/\/+$/, ''))
        .filter(Boolean),
    )
    .pipe(z.array(z.url()).min(1)),
  /** BullMQ key prefix the indexing jobs are enqueued under (the workers' QUEUE_PREFIX). */
  QUEUE_PREFIX: z.string().min(1).default(DEFAULT_QUEUE_PREFIX),
  // Accounts and sign-in (docs/accounts.md).
  /** Signs session cookies (better-auth's secret): 32+ characters, required in production. Never logged. */
  AUTH_SECRET: z.string().min(32, { error: 'must be at least 32 characters' }).optional(),
  /** Origins besides REGISTRY_PUBLIC_URL's whose cookie-authenticated writes are trusted (the dev web UI). */
  WEB_ORIGINS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((origin) => origin.trim().replace(/\/+$/, ''))
        .filter(Boolean),
    ),
  /** The development sign-in (any handle, no identity provider); refused in production. */
  DEV_SIGN_IN: booleanFlag(false),
  /** GitHub OAuth app for signing in (its callback: `<REGISTRY_PUBLIC_URL>/api/auth/callback/github`). */
  GITHUB_OAUTH_CLIENT_ID: z.string().min(1).optional(),
  GITHUB_OAUTH_CLIENT_SECRET: z.string().min(1).optional(),
  /** An OpenID Connect provider for signing in (callback: `…/api/auth/callback/oidc`). */
  OIDC_SIGN_IN_DISCOVERY_URL: z.url().optional(),
  OIDC_SIGN_IN_CLIENT_ID: z.string().min(1).optional(),
  OIDC_SIGN_IN_CLIENT_SECRET: z.string().min(1).optional(),
  /** The provider's name on the sign-in button. */
  OIDC_SIGN_IN_NAME: z.string().min(1).max(60).default('Single sign-on'),
  /** Who may create organisations: `anyone` signed in, or `site-admins`. */
  ORGANIZATION_CREATION: z.enum(['anyone', 'site-admins']).default('anyone'),
  /** How long an invitation link stays valid, seconds. */
  INVITATION_TTL_S: z.coerce
    .number()
    .int()
    .min(300)
    .max(30 * 86_400)
    .default(7 * 86_400),
  /** Sign-in attempts one client address may make per minute. */
  SIGN_IN_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(20),
  /** The longest expiry an access token may be given, days. */
  TOKEN_MAX_DAYS: z.coerce.number().int().min(1).max(3650).default(365),
  /**
   * How long a token's row and an account's reach are kept in memory at most, ms (0 = read on every
   * request). Any change of access drops them at once (accounts/access-cache.ts); this bounds only what
   * the database cannot announce, such as a suspension that lapses.
   */
  ACCESS_CACHE_TTL_MS: z.coerce.number().int().min(0).max(300_000).default(60_000),
  /** Tokens and accounts whose resolution is kept at most, per process. */
  ACCESS_CACHE_MAX: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /**
   * The MCP edge's public base URL (its PKGREG_PUBLIC_BASE_URL): where the consent page sends the
   * browser back with the decision (docs/accounts.md, "Consent for MCP clients"), and `<it>/mcp` the
   * issuer of the edge's delegation assertions ("Reading through the MCP edge"). Unset: no consent
   * page (its routes answer 404), and every assertion is refused.
   */
  EDGE_PUBLIC_BASE_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .transform((url) => url?.replace(/\/+$/, '')),
  /**
   * The registry's Ed25519 signing key, a PKCS#8 PEM (docs/provenance.md), or the path of a file holding
   * it (`_FILE`). Unset: versions are not signed and GET /api/keys publishes what signed before. Never
   * logged.
   */
  REGISTRY_SIGNING_KEY: z.string().min(1).optional(),
  REGISTRY_SIGNING_KEY_FILE: z.string().min(1).optional(),
  /** How often the signer looks for versions to sign. */
  SIGNING_INTERVAL_MS: z.coerce.number().int().min(50).max(600_000).default(1000),
});

/** Publishing needs the public URL (the OIDC audience) and a real webhook key in production. */
export const EnvSchema = EnvFields.superRefine((env, ctx) => {
  if (env.METRICS_PORT !== 0 && env.METRICS_PORT === env.REGISTRY_PORT) {
    ctx.addIssue({ code: 'custom', path: ['METRICS_PORT'], message: 'must differ from REGISTRY_PORT' });
  }
  const github = [env.GITHUB_OAUTH_CLIENT_ID, env.GITHUB_OAUTH_CLIENT_SECRET].filter(Boolean).length;
  if (github === 1) {
    ctx.addIssue({
      code: 'custom',
      path: ['GITHUB_OAUTH_CLIENT_SECRET'],
      message: 'set both GITHUB_OAUTH_CLIENT_ID and _SECRET, or neither',
    });
  }
  const oidc = [
    env.OIDC_SIGN_IN_DISCOVERY_URL,
    env.OIDC_SIGN_IN_CLIENT_ID,
    env.OIDC_SIGN_IN_CLIENT_SECRET,
  ].filter(Boolean).length;
  if (oidc !== 0 && oidc !== 3) {
    ctx.addIssue({
      code: 'custom',
      path: ['OIDC_SIGN_IN_DISCOVERY_URL'],
      message: 'set OIDC_SIGN_IN_DISCOVERY_URL, _CLIENT_ID and _CLIENT_SECRET together',
    });
  }
  if (env.REGISTRY_SIGNING_KEY !== undefined && env.REGISTRY_SIGNING_KEY_FILE !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['REGISTRY_SIGNING_KEY_FILE'],
      message: 'set REGISTRY_SIGNING_KEY or REGISTRY_SIGNING_KEY_FILE, not both',
    });
  }
  if (env.NODE_ENV !== 'production') return;
  for (const name of ['REGISTRY_PUBLIC_URL', 'WEBHOOK_SECRET_KEY', 'AUTH_SECRET'] as const) {
    if (env[name] === undefined)
      ctx.addIssue({ code: 'custom', path: [name], message: 'is required in production' });
  }
  if (env.DEV_SIGN_IN) {
    ctx.addIssue({
      code: 'custom',
      path: ['DEV_SIGN_IN'],
      message: 'the development sign-in is refused in production',
    });
  }
});
export type Env = z.infer<typeof EnvSchema>;

/** The key development and tests derive webhook secrets from when none is set (never in production). */
const DEVELOPMENT_WEBHOOK_KEY = 'pkgreg-development-webhook-secret-key (not for production)';

/** Publishing settings with their defaults resolved. */
export function publishingSettings(env: Env): { publicUrl: string; webhookKey: string } {
  return {
    publicUrl: env.REGISTRY_PUBLIC_URL ?? `http://${env.REGISTRY_HOST}:${env.REGISTRY_PORT}`,
    webhookKey: env.WEBHOOK_SECRET_KEY ?? DEVELOPMENT_WEBHOOK_KEY,
  };
}

/** The secret development and tests sign sessions with when none is set (never in production). */
const DEVELOPMENT_AUTH_SECRET = 'pkgreg-development-auth-secret (not for production)';

export function authSecret(env: Env): string {
  return env.AUTH_SECRET ?? DEVELOPMENT_AUTH_SECRET;
}

/**
 * The registry's signer when a signing key is configured (the PEM, or the file's), else undefined;
 * throws a message naming the setting (never the key) when it is not an Ed25519 private key.
 */
export function registrySigner(env: Env): RegistrySigner | undefined {
  const pem =
    env.REGISTRY_SIGNING_KEY ??
    (env.REGISTRY_SIGNING_KEY_FILE === undefined ? undefined : readKeyFile(env.REGISTRY_SIGNING_KEY_FILE));
  if (pem === undefined) return undefined;
  try {
    return signerFromPem(pem);
  } catch (error) {
    throw new Error(`REGISTRY_SIGNING_KEY: ${(error as Error).message}`);
  }
}

function readKeyFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(
      `REGISTRY_SIGNING_KEY_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code})`,
    );
  }
}

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}
