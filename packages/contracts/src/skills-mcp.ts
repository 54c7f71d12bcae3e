import { z } from 'zod';
import {
  PackageDetailSchema,
  parsePackageName,
  SEARCH_MAX_QUERY_LENGTH,
  SearchResultItemSchema,
} from './registry.js';
import { hasLoneSurrogate } from './storable-text.js';
import { VersionSignatureSchema } from './versions.js';

// Skills over MCP (issue 20): the registry's catalog served by the MCP edge as resources, following the
// MCP skills interest group's "skills as resources" shape (modelcontextprotocol/experimental-ext-skills),
// and the two registry tools. URIs: `skill://@scope/name/SKILL.md`, `skill://@scope/name/_manifest`,
// `skill://@scope/name/<path>` and `skill://@scope/name@<version>/<path>`.

export const SKILL_URI_SCHEME = 'skill://';
/** The path of the synthetic manifest resource (it wins over a file of that name at the folder's root). */
export const SKILL_MANIFEST_PATH = '_manifest';
export const SKILL_MD_PATH = 'SKILL.md';

/** The two resource templates `resources/templates/list` answers (RFC 6570; `{+path}` keeps its `/`). */
export const SKILL_URI_TEMPLATES = {
  file: 'skill://@{scope}/{name}/{+path}',
  fileAtVersion: 'skill://@{scope}/{name}@{version}/{+path}',
} as const;

/** An opaque pagination cursor, as MCP 2025-11-25 (utilities/pagination) has clients echo it back. */
const CursorSchema = z.string().min(1).max(512);

/** `resources/list` and `resources/templates/list` params. */
export const ResourcesListParamsSchema = z.object({ cursor: CursorSchema.optional() }).loose();
export type ResourcesListParams = z.infer<typeof ResourcesListParamsSchema>;

/** `resources/read` params: the URI is checked against the skill:// forms by the edge. */
/**
 * A lone UTF-16 surrogate cannot be percent-encoded into the registry request that would answer it: it is
 * refused as a schema error (found by the fault suite's fuzzing; it was an internal error).
 */
const encodable = (what: string) =>
  [
    (s: string) => !hasLoneSurrogate(s),
    { error: `${what} must not contain a lone surrogate (U+D800 to U+DFFF)` },
  ] as const;

export const ResourcesReadParamsSchema = z
  .object({
    uri: z
      .string()
      .min(1)
      .max(8192)
      .refine(...encodable('uri')),
  })
  .loose();
export type ResourcesReadParams = z.infer<typeof ResourcesReadParamsSchema>;

/** One file of the `_manifest` resource. */
export const SkillManifestFileSchema = z.object({
  /** Path relative to the skill folder, `/`-separated. */
  path: z.string(),
  /** Size in bytes. */
  size: z.number().int().nonnegative(),
  /** SHA-256 (hex) of the bytes: what the registry's version detail says. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** The same hash as the skills interest group's manifests write it: `sha256:<hex>`. */
  hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  /** For a symbolic link, its target inside the folder (reading the link reads the target). */
  linkTarget: z.string().nullable(),
});
export type SkillManifestFile = z.infer<typeof SkillManifestFileSchema>;

/** The JSON of `skill://@scope/name/_manifest` (and of `…@version/_manifest`). */
export const SkillManifestSchema = z.object({
  /** `@scope/name`. */
  skill: z.string(),
  /** The exact version the manifest lists (the latest one for the URI without a version). */
  version: z.string(),
  /** The version's digest (docs/versions.md). */
  digest: z.string(),
  /** SRI sha512 of the version's archive: what the registry's signatures cover. */
  integrity: z.string(),
  /**
   * The registry's signatures over `@scope/name@version:integrity` (docs/provenance.md), verifiable
   * with the keys of the registry's GET /api/keys.
   */
  signatures: z.array(VersionSignatureSchema),
  /** Every file of the version, sorted by path. */
  files: z.array(SkillManifestFileSchema),
});
export type SkillManifest = z.infer<typeof SkillManifestSchema>;

/** `pkgreg.registry.v1.search`: the parameters `GET /api/search` accepts today. */
export const RegistrySearchArgsSchema = z
  .object({
    /** Words to find in scopes, names and descriptions; each a prefix (registry-api.md, Search). */
    q: z
      .string()
      .max(SEARCH_MAX_QUERY_LENGTH)
      .refine(...encodable('q')),
  })
  .strict();
export type RegistrySearchArgs = z.infer<typeof RegistrySearchArgsSchema>;

/** A search result item with the skill:// URIs to read it by. */
export const RegistrySearchHitSchema = SearchResultItemSchema.extend({
  /** `skill://@scope/name/SKILL.md`. */
  uri: z.string(),
  /** `skill://@scope/name/_manifest`. */
  manifestUri: z.string(),
});
export type RegistrySearchHit = z.infer<typeof RegistrySearchHitSchema>;

export const RegistrySearchResultSchema = z.object({
  /** At most 50, ranked by relevance. */
  results: z.array(RegistrySearchHitSchema),
  /** Number of matches. */
  total: z.number().int().nonnegative(),
});
export type RegistrySearchResult = z.infer<typeof RegistrySearchResultSchema>;

/** `pkgreg.registry.v1.get`: one package by its scoped name. */
export const RegistryGetArgsSchema = z
  .object({
    /** `@scope/name`. */
    package: z.string().refine((s) => parsePackageName(s) !== null, {
      error: 'package must be @scope/name (1-64 of a-z 0-9 -)',
    }),
  })
  .strict();
export type RegistryGetArgs = z.infer<typeof RegistryGetArgsSchema>;

export const RegistryGetResultSchema = z.object({
  /** The registry's package detail (registry-api.md, Package detail). */
  package: PackageDetailSchema,
  /** `skill://@scope/name/SKILL.md`. */
  uri: z.string(),
  /** `skill://@scope/name/_manifest`. */
  manifestUri: z.string(),
});
export type RegistryGetResult = z.infer<typeof RegistryGetResultSchema>;
