import { z } from 'zod';
import {
  PackageDetailSchema,
  parsePackageName,
  SEARCH_MAX_QUERY_LENGTH,
  SearchResultItemSchema,
} from './registry.js';
import { RejectError } from './reject-reasons.js';
import { RiskSchema } from './risk.js';
import { hasLoneSurrogate } from './storable-text.js';
import { VersionSignatureSchema } from './versions.js';

// Skills over MCP (issue 20): the registry's catalog served by the MCP edge as resources, and as the MCP
// skills extension `io.modelcontextprotocol/skills` (SEP-2640: skills/list, skills/get,
// resources/directory/read), and the two registry tools. URIs (docs/decisions.md, "Skills over MCP"):
// `skill://<scope>/<name>/<path>` for the latest version, `skill://<scope>/<version>/<name>/<path>` for an
// exact one (a version always holds a dot, a package name never does), `…/_manifest` for a version's file
// list. The first forms, `skill://@scope/name/<path>` and `skill://@scope/name@<version>/<path>`, are still
// read until SKILL_URI_LEGACY_UNTIL.

export const SKILL_URI_SCHEME = 'skill://';
/** The path of the synthetic manifest resource (it wins over a file of that name at the folder's root). */
export const SKILL_MANIFEST_PATH = '_manifest';
export const SKILL_MD_PATH = 'SKILL.md';
/** The last day the deprecated `skill://@scope/name[@version]/<path>` URIs are read (never emitted). */
export const SKILL_URI_LEGACY_UNTIL = '2027-05-31';

/** The two resource templates `resources/templates/list` answers (RFC 6570; `{+path}` keeps its `/`). */
export const SKILL_URI_TEMPLATES = {
  file: 'skill://{scope}/{name}/{+path}',
  fileAtVersion: 'skill://{scope}/{version}/{name}/{+path}',
} as const;

/** The `_meta` key prefix the skills extension reserves for facts about a skill (SEP-2640). */
export const SKILLS_META_PREFIX = 'io.modelcontextprotocol.skills/';

/** The `_meta` keys pkgreg puts on a skills/list or skills/get entry, and the one a request may carry. */
export const SKILLS_META = {
  /** Entry: the exact version the entry lists (the latest for a URI without a version). */
  version: `${SKILLS_META_PREFIX}version`,
  /** Entry: that version's risk scan (docs/risk-scan.md): `none` … `high`, or null when not scanned yet. */
  risk: `${SKILLS_META_PREFIX}risk`,
  /** Entry: whether the package's publisher is verified (the registry's `verified`). */
  verified: `${SKILLS_META_PREFIX}verified`,
  /** Entry: the key ids of the registry's signatures of that version (docs/provenance.md), newest first. */
  signatures: `${SKILLS_META_PREFIX}signatures`,
  /** Entry: the version's digest (`sha256:`, over every file's path, mode and bytes; docs/versions.md). */
  digest: `${SKILLS_META_PREFIX}digest`,
  /** Request (skills/list, skills/get): `true` also serves skills whose version's risk is `high`. */
  includeHighRisk: `${SKILLS_META_PREFIX}includeHighRisk`,
  /** skills/list result: how many skills of the page were left out because their version's risk is `high`. */
  withheldHighRisk: `${SKILLS_META_PREFIX}withheldHighRisk`,
} as const;

/**
 * The request header that opts in as `_meta` SKILLS_META.includeHighRisk does (`true` or `false`), for
 * clients that cannot set a request's `_meta` (the v2 SDK's SkillsClient sends only `{cursor}` and `{uri}`;
 * a transport's headers reach every request).
 */
export const SKILLS_HIGH_RISK_HEADER = 'pkgreg-include-high-risk';

/**
 * The extension's limits of one skill (SEP-2640, "Limits": entries of `resources`, SKILL.md included, and
 * the sum of their sizes): a skill past either is not served through the extension (docs/decisions.md,
 * "Skills over MCP").
 */
export const SKILL_EXTENSION_LIMITS = { files: 512, bytes: 16 * 1024 * 1024 } as const;

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

/** The longest resource URI a read accepts. */
export const MAX_RESOURCE_URI_LENGTH = 8192;

export const ResourcesReadParamsSchema = z
  .object({
    uri: z
      .string()
      .min(1)
      .max(MAX_RESOURCE_URI_LENGTH)
      .refine(...encodable('uri')),
  })
  .loose();
export type ResourcesReadParams = z.infer<typeof ResourcesReadParamsSchema>;

/** A skills/list or skills/get request's `_meta`: pkgreg's opt-in; every other key (MCP's own) is kept. */
const SkillsRequestMetaSchema = z.object({ [SKILLS_META.includeHighRisk]: z.boolean().optional() }).loose();

/** `skills/list` params: an optional opaque cursor. */
export const SkillsListParamsSchema = z
  .object({ cursor: CursorSchema.optional(), _meta: SkillsRequestMetaSchema.optional() })
  .loose();
export type SkillsListParams = z.infer<typeof SkillsListParamsSchema>;

/** `skills/get` params: the URI of the skill's SKILL.md (listed or not, an exact version too). */
export const SkillsGetParamsSchema = ResourcesReadParamsSchema.extend({
  _meta: SkillsRequestMetaSchema.optional(),
});
export type SkillsGetParams = z.infer<typeof SkillsGetParamsSchema>;

/** `resources/directory/read` params: a skill's folder or a folder in it (no trailing `/`), and a cursor. */
export const ResourcesDirectoryReadParamsSchema = ResourcesReadParamsSchema.extend({
  cursor: CursorSchema.optional(),
});
export type ResourcesDirectoryReadParams = z.infer<typeof ResourcesDirectoryReadParamsSchema>;

/**
 * Whether a skills/list or skills/get request opted in to high-risk versions: by its `_meta`, or by its
 * SKILLS_HIGH_RISK_HEADER (`header`, as the request carried it). A header that is not `true` or `false`
 * is request_schema_invalid, as a `_meta` value that is not a boolean is.
 */
export function includesHighRisk(
  params: SkillsListParams | SkillsGetParams,
  header?: string | string[],
): boolean {
  if (header !== undefined && header !== 'false') {
    if (header !== 'true')
      throw new RejectError(
        'request_schema_invalid',
        `header ${SKILLS_HIGH_RISK_HEADER} must be true or false`,
      );
    return true;
  }
  return params._meta?.[SKILLS_META.includeHighRisk] === true;
}

/** One file of a skill entry (SEP-2640): its URI, `sha256:` of its bytes and their length. */
export const SkillEntryResourceSchema = z.object({
  uri: z.string(),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
});
export type SkillEntryResource = z.infer<typeof SkillEntryResourceSchema>;

/** One skill of skills/list and skills/get. */
export const SkillEntrySchema = z.object({
  /** The skill's SKILL.md: `skill://<scope>/<name>/SKILL.md`, or `skill://<scope>/<version>/<name>/SKILL.md`. */
  uri: z.string(),
  /** SKILL.md's frontmatter as YAML 1.2 (core schema) reads it; `name` is the URI's last folder. */
  frontmatter: z.record(z.string(), z.unknown()),
  /**
   * Every file of the version once, SKILL.md included (a link as its target's bytes: reading it reads
   * them); a skill past SKILL_EXTENSION_LIMITS has no entry.
   */
  resources: z.array(SkillEntryResourceSchema),
  /** pkgreg's facts about the version (SKILLS_META). */
  _meta: z.object({
    [SKILLS_META.version]: z.string(),
    [SKILLS_META.risk]: RiskSchema.nullable(),
    [SKILLS_META.verified]: z.boolean(),
    [SKILLS_META.signatures]: z.array(z.string()),
    [SKILLS_META.digest]: z.string(),
  }),
});
export type SkillEntry = z.infer<typeof SkillEntrySchema>;

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

/** The JSON of `skill://<scope>/<name>/_manifest` (and of `skill://<scope>/<version>/<name>/_manifest`). */
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
  /** The version's risk scan (docs/risk-scan.md), or null when it was not scanned yet. */
  risk: RiskSchema.nullable().default(null),
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
  /** `skill://<scope>/<name>/SKILL.md`. */
  uri: z.string(),
  /** `skill://<scope>/<name>/_manifest`. */
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
  /** `skill://<scope>/<name>/SKILL.md`. */
  uri: z.string(),
  /** `skill://<scope>/<name>/_manifest`. */
  manifestUri: z.string(),
});
export type RegistryGetResult = z.infer<typeof RegistryGetResultSchema>;
