import { z } from 'zod';
import { PackageDependencySchema } from './dependencies.js';
import { FILTER_NAMES } from './filter-names.js';
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
  /** Readable by members only (it or its scope is private; docs/accounts.md); absent: public. Added to the contract. */
  private: z.boolean().optional(),
});
export type PackageListItem = z.infer<typeof PackageListItemSchema>;

/** Downloads per UTC day, oldest first: `counts[i]` is the day `from` + i; the last is today. */
export const DailyDownloadsSchema = z.object({
  /** The first day (YYYY-MM-DD, UTC). */
  from: z.iso.date(),
  counts: z.array(z.number().int().nonnegative()),
});
export type DailyDownloads = z.infer<typeof DailyDownloadsSchema>;

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
  /** Total download/install count: every accepted track call adds one. */
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
  /**
   * Downloads of the last 7 days (UTC): today and the 6 days before, each day's unique downloaders
   * (a client counts once a day, however often it tracks; days before issue 26 count calls). Added to
   * the contract.
   */
  downloadsLast7Days: z.number().int().nonnegative().default(0),
  /** Downloads of the last 30 days (UTC): today and the 29 days before, counted as the last 7 are. */
  downloadsLast30Days: z.number().int().nonnegative().default(0),
  /** The same 30 days one by one (what the web page's sparkline draws); null from older registries. */
  dailyDownloads: DailyDownloadsSchema.nullable().default(null),
  /** Readable by members only (it or its scope is private; docs/accounts.md); false from older registries. Added to the contract. */
  private: z.boolean().default(false),
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
  /** Readable by members only (docs/accounts.md); absent: public. Added to the contract. */
  private: z.boolean().optional(),
});
export type SearchResultItem = z.infer<typeof SearchResultItemSchema>;

export const ErrorBodySchema = z.object({
  /** A human-readable message. */
  error: z.string(),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/**
 * `downloads`: all-time downloads; `trending`: the last 7 days' downloads weighted by recency; both
 * count each day's unique downloaders, not calls (docs/decisions.md, "Registry: discovery", "Registry:
 * unique downloaders"). Both added to the contract's three.
 */
export const LIST_SORTS = ['name', 'stars', 'indexed', 'downloads', 'trending'] as const;
export const LIST_ORDERS = ['asc', 'desc'] as const;

/** Filter values `status` takes: active only, or deprecated only (absent: both). */
export const STATUS_FILTERS = ['active', 'deprecated'] as const;

export { FILTER_NAMES, type FilterName } from './filter-names.js';

/** A category, tag or agent as a filter: compared lowercased, so 1-64 characters without controls. */
const FACET_TEXT_PATTERN = /^[^\p{Cc}]{1,64}$/u;
const LICENSE_PATTERN = /^[^\p{Cc}]{1,128}$/u;

/** Filters as values (the MCP registry tool's arguments; what the query parameters parse to). */
export const PackageFiltersSchema = z.object({
  /** Only packages of this kind. */
  kind: PackageKindSchema.optional(),
  /** Only packages of this category (case-insensitive). */
  category: z.string().regex(FACET_TEXT_PATTERN).optional(),
  /** Only packages with this tag (case-insensitive). */
  tag: z.string().regex(FACET_TEXT_PATTERN).optional(),
  /** Only packages that name this agent in `compatibility` (case-insensitive). */
  agent: z.string().regex(FACET_TEXT_PATTERN).optional(),
  /** Only packages with this SPDX license expression (case-insensitive, the whole expression). */
  license: z.string().regex(LICENSE_PATTERN).optional(),
  /** Only packages whose publisher is verified (true) or is not (false). */
  verified: z.boolean().optional(),
  /** `active`: deprecated packages left out; `deprecated`: only them. Absent: both. */
  status: z.enum(STATUS_FILTERS).optional(),
  /** At most this risk (`low` keeps `none` and `low`); packages never scanned are left out. */
  risk: RiskSchema.optional(),
  /** Only the packages of this scope (the repository owner, lowercased). */
  owner: PackageSegmentSchema.optional(),
});
export type PackageFilters = z.infer<typeof PackageFiltersSchema>;

/**
 * One query parameter given once: Express hands a repeated one over as an array, which is a 400 naming
 * the parameter, as is a value out of its rule.
 */
const once = (name: string, rule: string) =>
  z.string({
    error: (issue) => (Array.isArray(issue.input) ? `${name} must be given once` : `${name} must be ${rule}`),
  });

const facetTextParam = (name: string, pattern: RegExp, rule: string) =>
  once(name, rule)
    .transform((value) => value.trim().toLowerCase())
    .pipe(z.string().regex(pattern, { error: `${name} must be ${rule}` }))
    .optional();

const enumParam = <const T extends readonly [string, ...string[]]>(name: string, values: T) =>
  once(name, `one of ${values.join(', ')}`)
    .pipe(z.enum(values, { error: `${name} must be one of ${values.join(', ')}` }))
    .optional();

/** The filters as query parameters of GET /api/packages and GET /api/search. */
export const FilterQueryShape = {
  kind: enumParam('kind', PackageKindSchema.options as ['skill', 'composite', 'workflow', 'app']),
  category: facetTextParam('category', FACET_TEXT_PATTERN, '1-64 characters'),
  tag: facetTextParam('tag', FACET_TEXT_PATTERN, '1-64 characters'),
  agent: facetTextParam('agent', FACET_TEXT_PATTERN, '1-64 characters'),
  license: facetTextParam('license', LICENSE_PATTERN, '1-128 characters'),
  verified: once('verified', 'true or false')
    .pipe(z.enum(['true', 'false'], { error: 'verified must be true or false' }))
    .transform((value) => value === 'true')
    .optional(),
  status: enumParam('status', STATUS_FILTERS),
  risk: enumParam('risk', RiskSchema.options as ['none', 'low', 'medium', 'high']),
  owner: once('owner', 'a scope: 1-64 of a-z 0-9 -')
    .transform((value) => value.trim().toLowerCase())
    .pipe(z.string().regex(PACKAGE_SEGMENT_PATTERN, { error: 'owner must be a scope: 1-64 of a-z 0-9 -' }))
    .optional(),
};

/** The filters of a parsed query (list or search), without the other parameters. */
export function filtersOf(query: PackageFilters): PackageFilters {
  const filters: PackageFilters = {};
  for (const name of FILTER_NAMES) {
    const value = query[name];
    if (value !== undefined) (filters as Record<string, unknown>)[name] = value;
  }
  return filters;
}

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
  sort: z
    .enum(LIST_SORTS, { error: 'sort must be one of name, stars, indexed, downloads, trending' })
    .default('name'),
  order: z.enum(LIST_ORDERS, { error: 'order must be one of asc, desc' }).default('asc'),
  ...FilterQueryShape,
});
export type ListQuery = z.infer<typeof ListQuerySchema>;

export const ListResponseSchema = z.object({
  data: z.array(PackageListItemSchema),
  /** Count of all visible packages (with filters: of those that pass them). */
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

/** The sync feed's parameters: any of them makes GET /api/packages the feed (issue 20). */
export const FEED_PARAMETERS = ['cursor', 'limit', 'updatedSince'] as const;
export const FEED_DEFAULT_LIMIT = 100;
export const FEED_MAX_LIMIT = 500;

/**
 * Query of the sync feed, GET /api/packages?cursor=…&limit=…&updatedSince=…: every package in the order
 * of its last change, delisted, quarantined and removed ones included, for mirrors (as the MCP Registry
 * serves `updated_since` and `cursor`). Not combined with paging, sorts or filters.
 */
export const FeedQuerySchema = z.object({
  /** Where to go on: `nextCursor` of an earlier answer (opaque). */
  cursor: once('cursor', 'the nextCursor of an earlier answer')
    .pipe(
      z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,200}$/, { error: 'cursor must be the nextCursor of an earlier answer' }),
    )
    .optional(),
  limit: z.coerce
    .number({ error: `limit must be an integer from 1 to ${FEED_MAX_LIMIT}` })
    .int({ error: `limit must be an integer from 1 to ${FEED_MAX_LIMIT}` })
    .min(1, { error: `limit must be an integer from 1 to ${FEED_MAX_LIMIT}` })
    .max(FEED_MAX_LIMIT, { error: `limit must be an integer from 1 to ${FEED_MAX_LIMIT}` })
    .default(FEED_DEFAULT_LIMIT),
  /** Only packages changed at or after this time (ISO 8601 with an offset). */
  updatedSince: once('updatedSince', 'an ISO 8601 date-time with an offset')
    .pipe(
      z.iso.datetime({ offset: true, error: 'updatedSince must be an ISO 8601 date-time with an offset' }),
    )
    .optional(),
});
export type FeedQuery = z.infer<typeof FeedQuerySchema>;

/** A package's state as the feed gives it: the detail's statuses, and `removed` by the operator. */
export const FeedStatusSchema = z.enum(['active', 'deprecated', 'delisted', 'quarantined', 'removed']);
export type FeedStatus = z.infer<typeof FeedStatusSchema>;

export const PackageFeedItemSchema = PackageListItemSchema.extend({
  /** Package UUID (stable across renames of nothing: a package is its `@scope/name`). */
  id: z.uuid(),
  category: z.string().nullable(),
  tags: z.array(z.string()),
  compatibility: z.array(z.string()),
  verified: z.boolean(),
  /** The latest version not yanked; null when there is none. */
  version: z.string().nullable(),
  /** `removed` over `quarantined` over `delisted` over the author's status. */
  status: FeedStatusSchema,
  /** The package's last change (downloads excluded), ISO 8601. */
  updatedAt: IsoTimestamp,
});
export type PackageFeedItem = z.infer<typeof PackageFeedItemSchema>;

export const FeedResponseSchema = z.object({
  /** Packages in the order of their last change; one changed again comes again, later. */
  data: z.array(PackageFeedItemSchema),
  /**
   * Where the next request goes on, always present: a page shorter than `limit` means the feed is
   * caught up, and asking again with this cursor later returns what changed since.
   */
  nextCursor: z.string(),
  limit: z.number().int().min(1).max(FEED_MAX_LIMIT),
});
export type FeedResponse = z.infer<typeof FeedResponseSchema>;

export const SEARCH_MAX_QUERY_LENGTH = 256;
export const SEARCH_MAX_RESULTS = 50;

/** Query of GET /api/search: `q` trimmed; empty gives no results; over 256 chars is a 400. */
export const SearchQuerySchema = z.object({
  q: z
    .string()
    .optional()
    .transform((q) => (q ?? '').trim())
    .pipe(z.string().max(SEARCH_MAX_QUERY_LENGTH, { error: 'q must be at most 256 characters' })),
  ...FilterQueryShape,
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
