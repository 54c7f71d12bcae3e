import { commonEnvShape, parseEnv, port } from '@pkgreg/server-kit';
import { z } from 'zod';

// The only place registry-api reads process.env (STYLE.md §5).
export const EnvSchema = z.object({
  ...commonEnvShape,
  REGISTRY_HOST: z.string().default('127.0.0.1'),
  REGISTRY_PORT: port(4000),
  /** Web base of the code host, for the source redirect (GitHub Enterprise: your host). */
  GITHUB_WEB_URL: z.url().default('https://github.com'),
  /** REST API base of the code host. */
  GITHUB_API_URL: z.url().default('https://api.github.com'),
  /** Token for the code host's API; optional, raises the rate limit. Never logged. */
  GITHUB_TOKEN: z.string().optional(),
});
export type Env = z.infer<typeof EnvSchema>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  return parseEnv(EnvSchema, source);
}
