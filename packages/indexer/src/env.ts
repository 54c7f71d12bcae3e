import { z } from 'zod';
import type { IndexerDeps } from './indexer.service.js';

// The indexer's settings, as every app that indexes (registry-api's operator command, the runtime
// worker) declares them in its own env.ts: spread this shape into the app's schema, then pass the parsed
// values to indexerSettings. Nothing here reads process.env.

export const indexerEnvShape = {
  /** REST API base of the code host (GitHub Enterprise: `https://HOST/api/v3`). */
  GITHUB_API_URL: z.url().default('https://api.github.com'),
  /** Web base of the code host, for repository links and source redirects. */
  GITHUB_WEB_URL: z.url().default('https://github.com'),
  /** Token for the code host's API; optional, raises the rate limit. Never logged, never in job data. */
  GITHUB_TOKEN: z.string().optional(),
  /** Longest wait for a code-host rate-limit reset before a run gives up (ms). */
  GITHUB_RATE_LIMIT_MAX_WAIT_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  /** Limits of a skill (docs/versions.md): past one it is rejected with a reason naming it. */
  INDEX_MAX_FILE_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(10 * 1024 * 1024),
  INDEX_MAX_SKILL_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(50 * 1024 * 1024),
  INDEX_MAX_SKILL_FILES: z.coerce.number().int().min(1).default(2000),
};

export type IndexerEnv = z.infer<z.ZodObject<typeof indexerEnvShape>>;

/** IndexerDeps' settings from the parsed variables. */
export function indexerSettings(env: IndexerEnv): Pick<IndexerDeps, 'github' | 'limits'> {
  return {
    github: {
      apiUrl: env.GITHUB_API_URL,
      webUrl: env.GITHUB_WEB_URL,
      ...(env.GITHUB_TOKEN ? { token: env.GITHUB_TOKEN } : {}),
      maxRateLimitWaitMs: env.GITHUB_RATE_LIMIT_MAX_WAIT_MS,
    },
    limits: {
      maxFileBytes: env.INDEX_MAX_FILE_BYTES,
      maxSkillBytes: env.INDEX_MAX_SKILL_BYTES,
      maxSkillFiles: env.INDEX_MAX_SKILL_FILES,
    },
  };
}
