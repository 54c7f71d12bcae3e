import { agentLimitsEnvShape } from '@pkgreg/contracts';
import { memoryEnvShape } from '@pkgreg/memory';
import {
  booleanFlag,
  commonEnvShape,
  httpServerEnvShape,
  metricsEnvShape,
  parseEnv,
  port,
  redisKeysEnvShape,
} from '@pkgreg/server-kit';
import { z } from 'zod';

// The only place mcp-edge reads process.env: parsed once at start, so a bad setting fails loudly there.

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const commaList = z
  .string()
  .default('')
  .transform((s) =>
    s
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean),
  );

/** A JSON-valued variable, parsed and validated at start so a typo fails loudly, not per request. */
const jsonVar = <S extends z.ZodType>(schema: S, fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((raw, ctx) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'not valid JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);

const hostOrHandle = {
  /** Exact public host (port ignored), e.g. `acme.mcp.example.com`. */
  host: z.string().min(1).toLowerCase().optional(),
  /** Matches the host's first label, e.g. `acme` for `acme.mcp.example.com`. */
  handle: z.string().min(1).toLowerCase().optional(),
};
const needsHostOrHandle = (b: { host?: string; handle?: string }) => Boolean(b.host || b.handle);
/**
 * Clients allowed to use the tenant or session (issue 26), beside those `pnpm edge tenants:allow` /
 * `tunnels:allow` stored: a client id of the edge's own authorization server, or a namespace (`app:` + 64
 * hex) for a client of a trusted issuer. No one else may use it.
 */
const allowedClients = z.array(z.string().min(1).max(200)).max(1000).default([]);

export const HostedBindingSchema = z
  .object({ ...hostOrHandle, tenant: z.string().regex(/^[a-z0-9_]{1,40}$/), clients: allowedClients })
  .refine(needsHostOrHandle, { error: 'host or handle is required' });
export type HostedBinding = z.infer<typeof HostedBindingSchema>;

export const TunnelSessionSchema = z
  .object({
    ...hostOrHandle,
    /** Names the session in envelopes, connect tokens and logs (never secret). */
    sessionId: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/),
    /**
     * URL of the local runtime's HTTP tunnel receiver, e.g. `https://tunnel.example/tunnel/mcp`: used when
     * its runtime has no WebSocket connected to the edge. Without it, calls go only over that WebSocket.
     */
    target: z.url().optional(),
    /** HS256 secret shared with the local runtime (at least 32 bytes). */
    secret: z.string().min(32),
    expiresAt: z.iso.datetime({ offset: true }).optional(),
    clients: allowedClients,
  })
  .refine(needsHostOrHandle, { error: 'host or handle is required' });
export type TunnelSession = z.infer<typeof TunnelSessionSchema>;

export const TrustedIssuerSchema = z.object({
  issuer: z.url(),
  jwksUrl: z.url(),
  /** Audience the issuer puts in tokens for this edge; defaults to the MCP resource `{base}/mcp`. */
  audience: z.string().optional(),
  algorithms: z
    .array(z.enum(['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256']))
    .default(['ES256', 'EdDSA', 'RS256']),
});
export type TrustedIssuer = z.infer<typeof TrustedIssuerSchema>;

export const EnvSchema = z
  .object({
    ...commonEnvShape,
    ...httpServerEnvShape,
    ...redisKeysEnvShape,
    EDGE_HOST: z.string().default('127.0.0.1'),
    EDGE_PORT: port(4100),
    /** Operator listener for Prometheus (`GET /metrics`): a port, `0` for any free one, or `off`. */
    ...metricsEnvShape(9465),
    /** Base URL used by the OAuth discovery documents; the issuer is `{base}/mcp`. */
    PKGREG_PUBLIC_BASE_URL: z
      .url()
      .default('http://localhost:4100')
      .transform((u) => u.replace(/\/+$/, '')),
    /** Seeded hosted tenant bindings: JSON array of {host?, handle?, tenant, clients?}. */
    PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON: jsonVar(z.array(HostedBindingSchema), '[]'),
    /** Seeded tunnel sessions: JSON array of {host?, handle?, sessionId, target?, secret, expiresAt?, clients?}. */
    PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON: jsonVar(
      z.array(TunnelSessionSchema).refine((all) => new Set(all.map((s) => s.sessionId)).size === all.length, {
        error: 'sessionId must be unique',
      }),
      '[]',
    ),
    /** Accept Host (and Origin) localhost as development; defaults to on except in production. */
    EDGE_ALLOW_LOCALHOST: z
      .enum(['true', 'false', '1', '0', 'yes', 'no'])
      .optional()
      .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1' || v === 'yes')),
    /** Allowed browser origins; empty means the public base origin plus localhost origins. */
    EDGE_ALLOWED_ORIGINS: commaList,
    /** Other issuers whose tokens the edge accepts: JSON array of {issuer, jwksUrl, audience?, algorithms?}. */
    EDGE_TRUSTED_ISSUERS_JSON: jsonVar(z.array(TrustedIssuerSchema), '[]'),
    /** Lifetime of access tokens the built-in authorization server issues. */
    EDGE_TOKEN_TTL_SECONDS: positiveInt(600),
    /**
     * How old the read of who may call behind a verdict may be (docs/decisions.md, "MCP edge: who may
     * call"): a disabled client, a revoked app or a removed grant is refused on every edge within this.
     * 0 reads afresh for every request.
     */
    EDGE_ACCESS_MAX_AGE_MS: z.coerce.number().int().min(0).max(10_000).default(100),
    /** Token requests (successful or not) per client address per minute. */
    EDGE_TOKEN_REQUESTS_PER_MINUTE: positiveInt(60),
    /** Lifetime of a refresh token of the authorization code flow (each use rotates it). */
    EDGE_REFRESH_TOKEN_TTL_SECONDS: positiveInt(30 * 86_400),
    /**
     * Keys signing the sign-in cookies (comma-separated, newest first, each at least 32 characters).
     * Unset outside production: a random key per process (a sign-in in progress fails across restarts).
     */
    EDGE_COOKIE_KEYS: commaList.pipe(z.array(z.string().min(32, 'each cookie key needs 32+ characters'))),
    /** Sign-ins started (authorize and its hand-off) per client address per minute. */
    EDGE_AUTHORIZE_REQUESTS_PER_MINUTE: positiveInt(60),
    /** Client registrations (RFC 7591) per client address per minute. */
    EDGE_REGISTER_REQUESTS_PER_MINUTE: positiveInt(10),
    /** A dynamically registered client unused this many days is forgotten. */
    EDGE_DCR_UNUSED_DAYS: positiveInt(30),
    /** Verified tokens kept in memory (until their exp) so a hot client is not re-verified per request. */
    EDGE_TOKEN_CACHE_SIZE: positiveInt(10_000),
    /** Default per-tool request rate per namespace (all tokens of a client), per minute. */
    EDGE_RATE_LIMIT_PER_MINUTE: positiveInt(60),
    /** Per-tool overrides of the rate: JSON object {toolName: perMinute}. */
    EDGE_RATE_LIMITS_JSON: jsonVar(z.record(z.string(), z.number().int().positive()), '{}'),
    EDGE_INVOKE_PER_MINUTE: positiveInt(10),
    EDGE_COMPACT_PER_MINUTE: positiveInt(10),
    /** A sync invoke/compact not done within this is answered as a task (decisions.md: default 10 s). */
    EDGE_SYNC_THRESHOLD_MS: positiveInt(10_000),
    /**
     * How long more a 2026-07-28 call from a client without the tasks extension is waited for once it
     * became a task (such a client cannot poll one); past it, it gets the contract's task handle.
     */
    EDGE_UNTASKED_WAIT_MS: positiveInt(110_000),
    /**
     * Longest wait on SIGTERM for open requests before the process exits; unset, the sync threshold plus
     * 5 s, so a sync invoke that arrived just before the signal is still answered.
     */
    SHUTDOWN_GRACE_MS: z.preprocess(
      (v) => (v === '' ? undefined : v),
      z.coerce.number().int().min(0).optional(),
    ),
    EDGE_MAX_TASK_POLL_WINDOW_SECONDS: positiveInt(300),
    /**
     * The agent's posture for system info (docs/agent.md): the same variables the runtime worker runs
     * with, so one env file configures both. Only whether a model is set is read here, never its key.
     */
    MODEL_BASE_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
    MODEL_PROVIDER: z.enum(['openai', 'anthropic']).default('openai'),
    // The worker's variables and bounds (one env file configures both): a value one refuses, both refuse.
    AGENT_TOOL_LOOP: booleanFlag(true),
    ...agentLimitsEnvShape,
    /** Public tool mappings switched off by the operator (comma-separated tool names). */
    EDGE_DISABLED_TOOLS: commaList,
    /** BullMQ prefix of the development backend's runtime queues (hosted tenants get their own). */
    EDGE_QUEUE_PREFIX: z.string().default('pkgreg'),
    /** system info `server.name` and `server.phase` (vary by deployment). */
    PKGREG_SERVER_NAME: z.string().default('pkgreg-mcp-edge'),
    PKGREG_SERVER_PHASE: z
      .string()
      .regex(/^phase-\d+$/)
      .default('phase-1'),
    /** Audit rows are written in batches: at most every this many ms, or when this many are waiting. */
    EDGE_AUDIT_FLUSH_MS: positiveInt(200),
    EDGE_AUDIT_BATCH_SIZE: positiveInt(2000),
    /** How long a forwarded tunnel call may take before the edge gives up. */
    EDGE_TUNNEL_TIMEOUT_MS: positiveInt(30_000),
    /** Tunnel WebSockets are pinged this often; one with no pong by the next ping is closed. */
    EDGE_TUNNEL_HEARTBEAT_MS: positiveInt(15_000),
    /** Registry API origin the skill:// resources and registry tools read (docs/decisions.md, Skills over MCP). */
    REGISTRY_URL: z
      .url()
      .default('http://127.0.0.1:4000')
      .transform((u) => u.replace(/\/+$/, '')),
    /**
     * The registry's public URL, where browsers are sent to sign in and consent (its
     * `/api/mcp/consent/<id>` page), and the audience of the edge's delegation assertions (the
     * registry's own REGISTRY_PUBLIC_URL); REGISTRY_URL when unset.
     */
    REGISTRY_PUBLIC_URL: z
      .url()
      .optional()
      .transform((u) => u?.replace(/\/+$/, '')),
    /** How long one registry request may take before the call is `registry_unavailable`. */
    REGISTRY_TIMEOUT_MS: positiveInt(5_000),
    /** How long a package's visibility is trusted before it is asked again (a delisting shows within 2×). */
    EDGE_CATALOG_TTL_MS: positiveInt(1_000),
    /** Memory for skill file bytes and built read results, kept by SHA-256 (versions never change). */
    EDGE_CATALOG_CACHE_MB: z.coerce.number().int().min(0).max(65_536).default(64),
    /** Packages per resources/list page (two resources each: SKILL.md and _manifest). */
    EDGE_RESOURCES_PAGE_SIZE: z.coerce.number().int().min(1).max(100).default(50),
    // Memory search: recency half-life and weights, its bounds, and the optional embedding endpoint.
    ...memoryEnvShape,
  })
  .superRefine((e, ctx) => {
    if (e.NODE_ENV === 'production' && e.EDGE_COOKIE_KEYS.length === 0)
      ctx.addIssue({ code: 'custom', path: ['EDGE_COOKIE_KEYS'], message: 'required in production' });
  })
  .transform((e) => ({
    ...e,
    REGISTRY_PUBLIC_URL: e.REGISTRY_PUBLIC_URL ?? e.REGISTRY_URL,
    EDGE_ALLOW_LOCALHOST: e.EDGE_ALLOW_LOCALHOST ?? e.NODE_ENV !== 'production',
    SHUTDOWN_GRACE_MS: e.SHUTDOWN_GRACE_MS ?? e.EDGE_SYNC_THRESHOLD_MS + 5_000,
  }));
export type Env = z.infer<typeof EnvSchema>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}
