import { z } from 'zod';
import { PackageDependencySchema } from './dependencies.js';
import { RiskSchema, ScanFindingSchema } from './risk.js';

// The registry REST API's shapes: ../shared/spec/registry-api.md and the Registry part of decisions.md.

/** Scope or name: 1-64 of a-z 0-9 -, no leading/trailing '-', no '--' (agentskills.io name rule). */
export const PACKAGE_SEGMENT_PATTERN = /^(?!-)(?!.*--)[a-z0-9-]{1,64}(?<!-)$/;
export const PackageSegmentSchema = z.string().regex(PACKAGE_SEGMENT_PATTERN);

export const INVALID_PACKAGE_PATH_MESSAGE = 'Invalid package path: expected @scope/name';
export const PACKAGE_NOT_FOUND_MESSAGE = 'Package not found';
export const TRACK_NOT_FOUND_MESSAGE = 'Not found';

export const PackageKindSchema = z.enum(['skill', 'composite', 'workflow', 'app']);
export type PackageKind = z.infer<typeof PackageKindSchema>;

/** `quarantined` (added to the contract's three): set by an operator; out of list and search, install refused. */
export const PackageStatusSchema = z.enum(['active', 'deprecated', 'delisted', 'quarantined']);
export type PackageStatus = z.infer<typeof PackageStatusSchema>;

const IsoTimestamp = z.iso.datetime({ offset: true });

export const PackageListItemSchema = z.object({
  /** Namespace: the source repository's owner, lowercased. */
  scope: z.string(),
  /** Package name within the scope. */
  name: z.string(),
  /** Human-readable description. */
  description: z.string(),
  /** Package kind. */
  kind: PackageKindSchema,
  /** Source repository as `owner/repo`. */
  sourceRepo: z.string(),
  /** Owner of the source repository. */
  repoOwner: z.string(),
  /** Stars of the source repository. */
  repoStars: z.number().int().nonnegative(),
  /** SPDX license identifier (empty string when unknown). */
  license: z.string(),
  /** When the package was last indexed (ISO 8601). */
  lastIndexedAt: IsoTimestamp,
  /** The latest version's risk (docs/risk-scan.md); null before its first scan. Added to the contract. */
  risk: RiskSchema.nullable().default(null),
});
export type PackageListItem = z.infer<typeof PackageListItemSchema>;

export const PackageDetailSchema = z.object({
  /** Package UUID. */
  id: z.uuid(),
  /** Namespace. */
  scope: z.string(),
  /** Package name. */
  name: z.string(),
  /** Human-readable description. */
  description: z.string(),
  /** `skill`, `composite`, `workflow` or `app`. */
  kind: PackageKindSchema,
  /** Category. */
  category: z.string().nullable(),
  /** Searchable tags. */
  tags: z.array(z.string()),
  /** Compatible agents. */
  compatibility: z.array(z.string()),
  /** Primary language code. */
  language: z.string().nullable(),
  /** Semver version. */
  version: z.string().nullable(),
  /** Source repository as `owner/repo`. */
  sourceRepo: z.string(),
  /** Directory path within the repository ('' for the root). */
  sourcePath: z.string(),
  /** Branch of the repository. */
  sourceRef: z.string(),
  /** Full URL of the source repository. */
  repoUrl: z.string().nullable(),
  /** Project homepage. */
  homepageUrl: z.string().nullable(),
  /** Owner of the source repository. */
  repoOwner: z.string(),
  /** Package author. */
  author: z.string().nullable(),
  /** Stars of the source repository. */
  repoStars: z.number().int().nonnegative(),
  /** SPDX license identifier. */
  license: z.string().nullable(),
  /** Full SKILL.md content. */
  skillMdRaw: z.string(),
  /** Parsed YAML frontmatter of SKILL.md (unknown keys kept). */
  frontmatter: z.record(z.string(), z.unknown()),
  /** Tools the skill may use. */
  allowedTools: z.array(z.string()),
  /** Approximate LLM token count (o200k_base). */
  tokenCount: z.number().int().nonnegative(),
  /** Number of files in the skill's directory. */
  fileCount: z.number().int().nonnegative(),
  /** Whether the skill uses progressive disclosure. */
  progressiveDisclosure: z.boolean(),
  /** Total download/install count. */
  downloadCount: z.number().int().nonnegative(),
  /** Number of dependencies. */
  depCount: z.number().int().nonnegative(),
  /** Number of packages that depend on this one. */
  dependantCount: z.number().int().nonnegative(),
  /** Whether the publisher is verified. */
  verified: z.boolean(),
  /** Whether the package is featured. */
  featured: z.boolean(),
  /** `active`, `deprecated` or `delisted`. */
  status: PackageStatusSchema,
  /** True if hosted by the service, false if proxied from the source repository. */
  hosted: z.boolean(),
  /** First indexed (ISO 8601). */
  firstIndexedAt: IsoTimestamp,
  /** Last indexed (ISO 8601). */
  lastIndexedAt: IsoTimestamp,
  /** Git blob SHA-1 of the SKILL.md file. */
  lastCommitSha: z.string().nullable(),
  /**
   * Rules agents tolerate that the latest version breaks (a description over 1024 characters, an
   * unknown frontmatter key, ...): indexed anyway, said here. Added to the contract's 35 fields.
   */
  warnings: z.array(z.string()).default([]),
  /** The latest version's risk: its scan's highest severity, or `none`; null before its first scan. */
  risk: RiskSchema.nullable().default(null),
  /** What the latest version's scan found, by file and line (docs/risk-scan.md). */
  findings: z.array(ScanFindingSchema).default([]),
  /** Why the operator quarantined the package (status `quarantined`); null otherwise. */
  quarantineReason: z.string().nullable().default(null),
  /**
   * The owner's deprecation message (`pkgreg deprecate --message`), shown by info, install and the web
   * page; null when the package is not deprecated by its owner or no message was given.
   */
  deprecationMessage: z.string().nullable().default(null),
  /**
   * What the latest version declares it needs (`metadata.dependencies`), in declared order, each with
   * whether it resolves now; `depCount` is their number. Added to the contract.
   */
  dependencies: z.array(PackageDependencySchema).default([]),
});
export type PackageDetail = z.infer<typeof PackageDetailSchema>;

export const SearchResultItemSchema = z.object({
  scope: z.string(),
  name: z.string(),
  description: z.string(),
  kind: PackageKindSchema,
  /** Category ('' when the package has none). */
  category: z.string(),
  sourceRepo: z.string(),
  tokenCount: z.number().int().nonnegative(),
  verified: z.boolean(),
  /** The latest version's risk; null before its first scan. Added to the contract. */
  risk: RiskSchema.nullable().default(null),
});
export type SearchResultItem = z.infer<typeof SearchResultItemSchema>;

export const ErrorBodySchema = z.object({
  /** A human-readable message. */
  error: z.string(),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

export const LIST_SORTS = ['name', 'stars', 'indexed'] as const;
export const LIST_ORDERS = ['asc', 'desc'] as const;

/** Query of GET /api/packages. Messages name the parameter and its rule (decisions.md). */
export const ListQuerySchema = z.object({
  page: z.coerce
    .number({ error: 'page must be an integer, minimum 1' })
    .int({ error: 'page must be an integer, minimum 1' })
    .min(1, { error: 'page must be an integer, minimum 1' })
    .default(1),
  pageSize: z.coerce
    .number({ error: 'pageSize must be an integer from 1 to 100' })
    .int({ error: 'pageSize must be an integer from 1 to 100' })
    .min(1, { error: 'pageSize must be an integer from 1 to 100' })
    .max(100, { error: 'pageSize must be an integer from 1 to 100' })
    .default(20),
  sort: z.enum(LIST_SORTS, { error: 'sort must be one of name, stars, indexed' }).default('name'),
  order: z.enum(LIST_ORDERS, { error: 'order must be one of asc, desc' }).default('asc'),
});
export type ListQuery = z.infer<typeof ListQuerySchema>;

export const ListResponseSchema = z.object({
  data: z.array(PackageListItemSchema),
  /** Count of all visible packages. */
  total: z.number().int().nonnegative(),
  page: z.number().int().min(1),
  pageSize: z.number().int().min(1).max(100),
});
export type ListResponse = z.infer<typeof ListResponseSchema>;

/** Query of GET /api/packages/@scope/name/dependants: the list's paging rules. */
export const DependantsQuerySchema = ListQuerySchema.pick({ page: true, pageSize: true });
export type DependantsQuery = z.infer<typeof DependantsQuerySchema>;

/**
 * GET /api/packages/@scope/name/dependants: the visible packages whose latest version depends on this
 * one, by scope then name; `total` equals the package's `dependantCount`.
 */
export const DependantsResponseSchema = ListResponseSchema;
export type DependantsResponse = z.infer<typeof DependantsResponseSchema>;

export const SEARCH_MAX_QUERY_LENGTH = 256;
export const SEARCH_MAX_RESULTS = 50;

/** Query of GET /api/search: `q` trimmed; empty gives no results; over 256 chars is a 400. */
export const SearchQuerySchema = z.object({
  q: z
    .string()
    .optional()
    .transform((q) => (q ?? '').trim())
    .pipe(z.string().max(SEARCH_MAX_QUERY_LENGTH, { error: 'q must be at most 256 characters' })),
});
export type SearchQuery = z.infer<typeof SearchQuerySchema>;

export const SearchResponseSchema = z.object({
  results: z.array(SearchResultItemSchema).max(SEARCH_MAX_RESULTS),
  /** Number of matches (results are capped at 50). */
  total: z.number().int().nonnegative(),
});
export type SearchResponse = z.infer<typeof SearchResponseSchema>;

export const TrackResponseSchema = z.object({ ok: z.literal(true) });
export type TrackResponse = z.infer<typeof TrackResponseSchema>;

/** Parses `@scope/name` (the `@` may arrive as `%40`); null when it breaks the rule. */
export function parsePackagePath(scopeWithAt: string, name: string): { scope: string; name: string } | null {
  const scope = scopeWithAt.startsWith('%40') ? scopeWithAt.slice(3) : scopeWithAt.replace(/^@/, '');
  if (!PACKAGE_SEGMENT_PATTERN.test(scope) || !PACKAGE_SEGMENT_PATTERN.test(name)) return null;
  return { scope, name };
}

/** Parses a full `@scope/name` string, as typed on the command line. */
export function parsePackageName(full: string): { scope: string; name: string } | null {
  const match = /^(?:@|%40)([^/]+)\/([^/]+)$/.exec(full);
  if (!match?.[1] || !match[2]) return null;
  return parsePackagePath(match[1], match[2]);
}
