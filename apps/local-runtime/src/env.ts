import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

// The only place the local runtime reads its configuration: flags (index.ts) over environment variables,
// parsed once at start by one schema, so a bad setting fails loudly there and names itself (never its
// value: the secret is one of them).

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
/** `X=` (set but empty, common in compose files and shells) means unset. */
const unsetIfEmpty = <S extends z.ZodType>(schema: S) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema);

export const ConfigSchema = z
  .object({
    /** The tunnel session this runtime serves (`pnpm edge tunnels:create` prints it). */
    PKGREG_TUNNEL_SESSION_ID: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'expected the session id'),
    /**
     * The clients this runtime serves (comma-separated): client ids, or `app:<namespace>` for a client of
     * another issuer. Whatever the edge admits, a call of anyone else is refused here: the edge's grants
     * are the operator's say, this is the user's (`tunnels:create --client` prints it).
     */
    PKGREG_TUNNEL_CLIENTS: z
      .string()
      .default('')
      .transform((v) => [...new Set(v.split(/[\s,]+/).filter(Boolean))])
      .pipe(z.array(z.string().max(200))),
    /**
     * Also serve the people the edge admits for the session's owner (`pnpm edge tunnels:own`): the owner,
     * or the members of the owning organisation, with any app they signed in with (issue 29).
     */
    PKGREG_TUNNEL_SERVE_OWNERS: z
      .enum(['true', 'false', '1', '0', 'yes', 'no'])
      .default('false')
      .transform((v) => v === 'true' || v === '1' || v === 'yes'),
    /** The session's HS256 secret, shared with the edge (at least 32 characters). Never logged. */
    PKGREG_TUNNEL_SECRET: z.string().min(32, 'expected the session secret (32 characters or more)'),
    /** The edge's base URL; the runtime dials out to `{edge}/tunnel/connect` (ws:, or wss: for https:). */
    PKGREG_EDGE_URL: unsetIfEmpty(
      z
        .url({ protocol: /^https?$/ })
        .transform((u) => u.replace(/\/+$/, ''))
        .optional(),
    ),
    /** Also serve the HTTP receiver (`POST /tunnel/mcp`) on this port, for a session with a `target`. */
    PKGREG_RUNTIME_PORT: unsetIfEmpty(z.coerce.number().int().min(0).max(65535).optional()),
    PKGREG_RUNTIME_HOST: z.string().min(1).default('127.0.0.1'),
    /** A PostgreSQL of your own instead of the embedded store. */
    DATABASE_URL: unsetIfEmpty(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
    /** The schema the runtime's tables live in there; default `pkgreg_runtime_<hash of the session id>`. */
    PKGREG_RUNTIME_DB_SCHEMA: unsetIfEmpty(
      z
        .string()
        .regex(/^[a-z_][a-z0-9_]{0,62}$/)
        .optional(),
    ),
    /** Where the embedded store keeps its files; default `$XDG_DATA_HOME/pkgreg/runtime/<session id>`. */
    PKGREG_RUNTIME_DATA_DIR: unsetIfEmpty(z.string().min(1).optional()),
    XDG_DATA_HOME: unsetIfEmpty(z.string().min(1).optional()),
    HOME: unsetIfEmpty(z.string().min(1).optional()),
    /** The runtime pings the edge this often; no pong within the timeout closes and redials. */
    PKGREG_TUNNEL_HEARTBEAT_MS: positiveInt(15_000),
    PKGREG_TUNNEL_HEARTBEAT_TIMEOUT_MS: positiveInt(10_000),
    /** Redial backoff: from the minimum, doubling to the maximum, each delay jittered (50-100%). */
    PKGREG_TUNNEL_RECONNECT_MIN_MS: positiveInt(500),
    PKGREG_TUNNEL_RECONNECT_MAX_MS: positiveInt(30_000),
    /** Invoke and compact jobs running at once in this process. */
    PKGREG_RUNTIME_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
    /** A sync invoke or compact not done within this is answered as a task (the edge's default). */
    PKGREG_SYNC_THRESHOLD_MS: positiveInt(10_000),
    /** mcp-edge.md Limits: maxTaskPollWindowSeconds. */
    PKGREG_TASK_POLL_WINDOW_SECONDS: positiveInt(300),
    /** Registry the engineering.workflow agent searches for packages (as the CLI's PKGREG_REGISTRY). */
    PKGREG_REGISTRY: z.url().default('https://registry.pkgreg.dev'),
    PKGREG_REGISTRY_TIMEOUT_MS: positiveInt(3000),
    /** OpenAI-compatible endpoint base (…/v1) the agent may reword titles with; unset runs without a model. */
    MODEL_BASE_URL: unsetIfEmpty(z.url().optional()),
    MODEL_NAME: z.string().min(1).default('gpt-4o-mini'),
    /** Bearer key for the model endpoint. Never logged. */
    MODEL_API_KEY: unsetIfEmpty(z.string().optional()),
    MODEL_TIMEOUT_MS: positiveInt(8000),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .refine((c) => c.PKGREG_EDGE_URL !== undefined || c.PKGREG_RUNTIME_PORT !== undefined, {
    error: 'set the edge to dial (--edge / PKGREG_EDGE_URL), a port to listen on (--port), or both',
    path: ['PKGREG_EDGE_URL'],
  })
  .refine((c) => c.PKGREG_TUNNEL_CLIENTS.length > 0 || c.PKGREG_TUNNEL_SERVE_OWNERS, {
    error: 'expected the clients this runtime serves (comma-separated client ids), or --serve-owners',
    path: ['PKGREG_TUNNEL_CLIENTS'],
  })
  .refine((c) => c.PKGREG_TUNNEL_RECONNECT_MIN_MS <= c.PKGREG_TUNNEL_RECONNECT_MAX_MS, {
    error: 'must not exceed PKGREG_TUNNEL_RECONNECT_MAX_MS',
    path: ['PKGREG_TUNNEL_RECONNECT_MIN_MS'],
  })
  .transform((c) => ({
    sessionId: c.PKGREG_TUNNEL_SESSION_ID,
    secret: c.PKGREG_TUNNEL_SECRET,
    clients: c.PKGREG_TUNNEL_CLIENTS,
    servesOwners: c.PKGREG_TUNNEL_SERVE_OWNERS,
    edgeUrl: c.PKGREG_EDGE_URL,
    listen:
      c.PKGREG_RUNTIME_PORT === undefined
        ? undefined
        : { port: c.PKGREG_RUNTIME_PORT, host: c.PKGREG_RUNTIME_HOST },
    store: c.DATABASE_URL
      ? ({
          kind: 'postgres',
          url: c.DATABASE_URL,
          schema: c.PKGREG_RUNTIME_DB_SCHEMA ?? defaultSchema(c.PKGREG_TUNNEL_SESSION_ID),
        } as const)
      : ({
          kind: 'embedded',
          dataDir:
            c.PKGREG_RUNTIME_DATA_DIR ??
            join(
              c.XDG_DATA_HOME ?? join(c.HOME ?? homedir(), '.local', 'share'),
              'pkgreg',
              'runtime',
              c.PKGREG_TUNNEL_SESSION_ID,
            ),
        } as const),
    heartbeat: { intervalMs: c.PKGREG_TUNNEL_HEARTBEAT_MS, timeoutMs: c.PKGREG_TUNNEL_HEARTBEAT_TIMEOUT_MS },
    reconnect: { minMs: c.PKGREG_TUNNEL_RECONNECT_MIN_MS, maxMs: c.PKGREG_TUNNEL_RECONNECT_MAX_MS },
    concurrency: c.PKGREG_RUNTIME_CONCURRENCY,
    syncThresholdMs: c.PKGREG_SYNC_THRESHOLD_MS,
    pollWindowSeconds: c.PKGREG_TASK_POLL_WINDOW_SECONDS,
    registry: { url: c.PKGREG_REGISTRY, timeoutMs: c.PKGREG_REGISTRY_TIMEOUT_MS },
    model: c.MODEL_BASE_URL
      ? {
          baseUrl: c.MODEL_BASE_URL,
          model: c.MODEL_NAME,
          ...(c.MODEL_API_KEY ? { apiKey: c.MODEL_API_KEY } : {}),
          timeoutMs: c.MODEL_TIMEOUT_MS,
        }
      : null,
    logLevel: c.LOG_LEVEL,
  }));
export type Config = z.infer<typeof ConfigSchema>;

/**
 * A schema of this session's own: the runtime fails the tasks it finds unfinished at start (their runs
 * died with the previous process), so it must never share its tables with an edge, a worker or another
 * session, even in one database. Hashed: session ids are case-sensitive, schema names are not.
 */
function defaultSchema(sessionId: string): string {
  return `pkgreg_runtime_${createHash('sha256').update(sessionId).digest('hex').slice(0, 16)}`;
}

/** Flags of `pkgreg-runtime local`, by the variable each one overrides. */
export type ConfigFlags = Partial<Record<keyof z.input<typeof ConfigSchema>, string>>;

/** Parses flags over `source`; on failure throws one message naming every bad setting, never a value. */
export function loadConfig(
  flags: ConfigFlags = {},
  source: Record<string, string | undefined> = process.env,
): Config {
  const given = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
  const result = ConfigSchema.safeParse({ ...source, ...given });
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(config)'}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}
