import { z } from 'zod';

// The path and header parameters of the registry's routes, as its OpenAPI document describes them. The
// API parses them with its own rules (parsePackagePath, the version and file-path parsers), whose error
// messages clients see; these schemas say what a client may send.

/** `@scope/name` in a path: the scope keeps its `@`. */
export const PackagePathParamsSchema = z.object({
  scope: z
    .string()
    .regex(/^@[a-z0-9-]{1,64}$/)
    .describe('Scope with its leading `@` (may be sent as `%40`)'),
  name: z.string().regex(/^[a-z0-9-]{1,64}$/),
});
export type PackagePathParams = z.infer<typeof PackagePathParamsSchema>;

/** A scope alone, with its `@` (a scope's discovery index, docs/discovery.md). */
export const ScopePathParamsSchema = PackagePathParamsSchema.pick({ scope: true });
export type ScopePathParams = z.infer<typeof ScopePathParamsSchema>;

/** A version of a package by exact version or `latest`. */
export const VersionPathParamsSchema = PackagePathParamsSchema.extend({
  version: z.string().describe('An exact version (semver) or `latest`'),
});
export type VersionPathParams = z.infer<typeof VersionPathParamsSchema>;

/** A version by exact version only (yanks). */
export const ExactVersionPathParamsSchema = PackagePathParamsSchema.extend({
  version: z.string().describe('An exact version'),
});
export type ExactVersionPathParams = z.infer<typeof ExactVersionPathParamsSchema>;

/** One file of a version: its path inside the skill folder. */
export const VersionFilePathParamsSchema = VersionPathParamsSchema.extend({
  path: z.string().describe('Path inside the skill folder; its `/` separators stay as they are'),
});
export type VersionFilePathParams = z.infer<typeof VersionFilePathParamsSchema>;

/** A publish run by its id. */
export const PublishRunParamsSchema = z.object({ runId: z.string().meta({ format: 'uuid' }) });
export type PublishRunParams = z.infer<typeof PublishRunParamsSchema>;

/** The headers of a GitHub webhook delivery the registry reads. */
export const WebhookHeadersSchema = z.object({
  'X-GitHub-Event': z.string(),
  'X-GitHub-Delivery': z.string().regex(/^[A-Za-z0-9-]{1,128}$/),
  'X-Hub-Signature-256': z.string(),
});
export type WebhookHeaders = z.infer<typeof WebhookHeadersSchema>;
