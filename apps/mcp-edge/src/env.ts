import { booleanFlag, commonEnvShape, parseEnv, port } from '@pkgreg/server-kit';
import { z } from 'zod';

// The only place mcp-edge reads process.env (STYLE.md §5).
export const EnvSchema = z.object({
  ...commonEnvShape,
  EDGE_HOST: z.string().default('127.0.0.1'),
  EDGE_PORT: port(4100),
  /** Base URL used by the OAuth discovery documents; the issuer is `{base}/mcp`. */
  PKGREG_PUBLIC_BASE_URL: z.url().default('http://localhost:4100'),
  /** Seeded hosted tenant bindings: JSON array of {host?, handle?, tenant}. */
  PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON: z.string().default('[]'),
  /** Seeded tunnel sessions: JSON array of {host?, handle?, sessionId, target, secret, expiresAt?}. */
  PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON: z.string().default('[]'),
  /** Accept requests whose Host is localhost as development (on in development). */
  EDGE_ALLOW_LOCALHOST: booleanFlag(true),
});
export type Env = z.infer<typeof EnvSchema>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}
