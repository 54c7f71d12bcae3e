import { z } from 'zod';

// The only place the web app's tooling reads process.env, parsed once. Browser code reads no env at all:
// it talks to the same-origin /api, proxied in development and served by registry-api in production.
export const WebEnvSchema = z.object({
  /** Where the dev server proxies /api. */
  WEB_API_PROXY: z.url().default('http://127.0.0.1:4000'),
});
export type WebEnv = z.infer<typeof WebEnvSchema>;

export function loadWebEnv(source: Record<string, string | undefined> = process.env): WebEnv {
  return WebEnvSchema.parse(source);
}
