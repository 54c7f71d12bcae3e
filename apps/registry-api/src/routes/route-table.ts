import {
  AuditLogSchema,
  AuditQuerySchema,
  CreatedTokenSchema,
  CreateTokenRequestSchema,
  DependantsQuerySchema,
  DependantsResponseSchema,
  DeprecateRequestSchema,
  ExactVersionPathParamsSchema,
  FeedQuerySchema,
  FeedResponseSchema,
  ListQuerySchema,
  ListResponseSchema,
  MeSchema,
  OrganizationParamsSchema,
  PackageDetailSchema,
  PackagePathParamsSchema,
  PackageSettingsRequestSchema,
  PackageSettingsSchema,
  PackageStateSchema,
  PublishAcceptedSchema,
  PublishRequestSchema,
  PublishRunParamsSchema,
  PublishRunSchema,
  ReportAcceptedSchema,
  ReportRequestSchema,
  ScopeParamsSchema,
  ScopeSettingsRequestSchema,
  ScopeSettingsSchema,
  SearchQuerySchema,
  SearchResponseSchema,
  TokenIdParamsSchema,
  TokenListSchema,
  TokenSummarySchema,
  TrackResponseSchema,
  TrustedPublisherRequestSchema,
  UploadResultSchema,
  VersionDetailSchema,
  VersionFilePathParamsSchema,
  VersionListQuerySchema,
  VersionListResponseSchema,
  VersionPathParamsSchema,
  WebhookHeadersSchema,
  WebhookResponseSchema,
  YankRequestSchema,
  YankStateSchema,
} from '@pkgreg/contracts';
import type { RouteHandlers, RouteSpec } from '@pkgreg/server-kit';
import {
  contentErrors,
  contentHeaders,
  error,
  FEED_DOCS,
  filterDocs,
  movingHeaders,
  named,
  notModified,
  proofErrors,
  tooMany,
  versionErrors,
} from './route-docs.js';

// Every route of the registry API, declared once: the Express app registers its handlers from this
// table (app.ts), the listener in front of it answers the `beforeExpress` ones
// (packages/package-endpoints.ts), the OpenAPI document is generated from it (openapi/openapi.ts),
// requests are named by its templates in metrics and spans, and the tests iterate it.

/**
 * How long an answer may be kept (docs/caching.md; http/cache-policy.ts has the header values):
 * `no-store`; `moving` (revalidated after HTTP_CACHE_MAX_AGE_S); `revalidate` (every time: detail);
 * `moving-unless-moderated` (no-store while its package is moderated); `version-bytes` (immutable for an
 * exact version, moving for `latest`).
 */
export type RouteCache = 'no-store' | 'moving' | 'revalidate' | 'moving-unless-moderated' | 'version-bytes';

const filters = filterDocs();
const PackageParams = PackagePathParamsSchema;
const packageNotFound = { 400: error('Invalid package path'), 404: error('Package not found') };

export const ROUTES = [
  {
    id: 'list',
    method: 'get',
    path: '/api/packages',
    cache: 'moving',
    access: 'anonymous',
    summary: 'List packages, or follow the sync feed',
    description:
      'Without `cursor`, `limit` or `updatedSince`: a page of an order (name, stars, indexed, downloads, trending), of every visible package or of those that pass the filters; `total` counts them. With any of the three: the sync feed, every package in the order of its last change (delisted, quarantined and removed ones with their status), not combined with paging, sorts or filters; follow `nextCursor` to stay exact (docs/decisions.md, "Registry: discovery").',
    query: [ListQuerySchema, FeedQuerySchema],
    queryDocs: { ...filters, ...FEED_DOCS },
    responses: {
      200: {
        description: 'A page of the list, or of the feed',
        headers: movingHeaders,
        json: [named('ListResponse', ListResponseSchema), named('FeedResponse', FeedResponseSchema)],
      },
      ...notModified,
      400: error(
        'A parameter out of its rule, given twice, or a list parameter combined with the feed (the message names it)',
      ),
    },
  },
  {
    id: 'detail',
    method: 'get',
    path: '/api/packages/:scope/:name',
    cache: 'revalidate',
    access: 'anonymous',
    beforeExpress: true,
    summary: 'Package detail',
    params: PackageParams,
    responses: {
      200: {
        description: 'Detail (ETag from the row version)',
        headers: { ETag: { schema: { type: 'string' } } },
        json: named('PackageDetail', PackageDetailSchema),
      },
      304: { description: 'Not modified (If-None-Match matched)' },
      ...packageNotFound,
    },
  },
  {
    id: 'skill-md',
    method: 'get',
    path: '/api/packages/:scope/:name/skill-md',
    cache: 'moving',
    access: 'anonymous',
    beforeExpress: true,
    summary: 'Raw SKILL.md',
    params: PackageParams,
    responses: {
      200: { description: 'SKILL.md', content: { 'text/markdown': { schema: { type: 'string' } } } },
      304: { description: 'Not modified' },
      ...packageNotFound,
    },
  },
  {
    id: 'source',
    method: 'get',
    path: '/api/packages/:scope/:name/source',
    cache: 'moving',
    access: 'anonymous',
    summary: 'Redirect to the source on the code host (a hosted package: its latest SKILL.md here)',
    params: PackageParams,
    responses: {
      302: { description: 'Redirect', headers: { Location: { schema: { type: 'string' } } } },
      ...packageNotFound,
    },
  },
  {
    id: 'track',
    method: 'post',
    path: '/api/packages/:scope/:name/track',
    cache: 'no-store',
    access: 'anonymous',
    beforeExpress: true,
    summary: 'Count a download or install',
    description:
      'Each accepted call adds one to `downloadCount`; the downloads and trending orders and the downloads per day count each downloader (the client address, IPv6 by its /64) once per UTC day. Each client address may send `TRACK_PER_MINUTE` calls a minute (docs/decisions.md, "Registry: unique downloaders").',
    params: PackageParams,
    responses: {
      200: { description: 'Counted', json: named('TrackResponse', TrackResponseSchema) },
      400: error('Invalid package path'),
      404: error('Not found'),
      429: tooMany(
        'Too many downloads from this address; nothing was counted',
        'Seconds until a call from this address is counted again',
      ),
    },
  },
  {
    id: 'dependants',
    method: 'get',
    path: '/api/packages/:scope/:name/dependants',
    cache: 'moving',
    access: 'anonymous',
    summary: 'Packages whose latest version depends on this one, by scope then name',
    description:
      "Visible packages (as the list: not delisted, not quarantined) whose latest version declares this package in `metadata.dependencies`. `total` is the package's `dependantCount`. Its own dependencies are in detail's `dependencies`.",
    params: PackageParams,
    query: [DependantsQuerySchema],
    responses: {
      200: {
        description: 'A page of dependants',
        headers: movingHeaders,
        json: named('DependantsResponse', DependantsResponseSchema),
      },
      ...notModified,
      400: error('Invalid package path, page or pageSize'),
      404: error('Package not found'),
    },
  },
  {
    id: 'versions',
    method: 'get',
    path: '/api/packages/:scope/:name/versions',
    cache: 'moving-unless-moderated',
    access: 'anonymous',
    summary: 'Versions of a package, newest first',
    params: PackageParams,
    query: [VersionListQuerySchema],
    responses: {
      200: {
        description: 'A page of versions',
        headers: movingHeaders,
        json: named('VersionListResponse', VersionListResponseSchema),
      },
      ...notModified,
      ...versionErrors,
    },
  },
  {
    id: 'version',
    method: 'get',
    path: '/api/packages/:scope/:name/versions/:version',
    cache: 'moving-unless-moderated',
    access: 'anonymous',
    summary: "A version's record and its files (manifest)",
    params: VersionPathParamsSchema,
    responses: {
      200: {
        description: 'The version',
        headers: movingHeaders,
        json: named('VersionDetail', VersionDetailSchema),
      },
      ...notModified,
      ...versionErrors,
    },
  },
  {
    id: 'version-file',
    method: 'get',
    path: '/api/packages/:scope/:name/versions/:version/files/*path',
    cache: 'version-bytes',
    access: 'anonymous',
    summary: 'One file of a version, as stored',
    params: VersionFilePathParamsSchema,
    responses: {
      200: {
        description: 'The bytes; Content-Type from the file name; served sandboxed (CSP, nosniff)',
        headers: contentHeaders,
        content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
      304: { description: 'Not modified' },
      ...contentErrors,
    },
  },
  {
    id: 'version-archive',
    method: 'get',
    path: '/api/packages/:scope/:name/versions/:version/archive.tgz',
    cache: 'version-bytes',
    access: 'anonymous',
    summary: 'The version as a gzipped tarball; the same bytes on every download',
    params: VersionPathParamsSchema,
    responses: {
      200: {
        description: "The archive; its SRI sha512 is the version's `integrity`",
        headers: contentHeaders,
        content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
      },
      304: { description: 'Not modified' },
      ...contentErrors,
    },
  },
  {
    id: 'scope-only',
    method: 'get',
    path: '/api/packages/:scope',
    cache: 'no-store',
    access: 'anonymous',
    undocumented: true,
    summary: '`/api/packages/@scope` alone: a package path missing its name (400), not an unknown route',
    responses: { 400: error('Invalid package path') },
  },
  {
    id: 'publish',
    method: 'post',
    path: '/api/publish',
    cache: 'no-store',
    access: 'scope',
    summary: 'Publish a repository: index it now on the runtime worker',
    description:
      "The proof is `Authorization: Bearer <token>`: a GitHub Actions OIDC token (a JWT requested for the registry's URL as audience; `repository`, `repository_owner`, `repository_owner_id` and `ref` are checked) or a GitHub user token with push or admin access (checked with GET /repos/{owner}/{repo}, then forgotten). A token of the JWT form is taken as OIDC. The first publish with a user token returns the webhook secret, once. A refused proof leaves nothing behind.",
    body: { parser: 'json', required: true, json: named('PublishRequest', PublishRequestSchema, 'input') },
    responses: {
      202: { description: 'Queued: poll `statusUrl`', json: named('PublishAccepted', PublishAcceptedSchema) },
      400: error('Bad body (repository, ref), or rotateWebhookSecret with an OIDC token'),
      404: error('The repository is not on the code host, or the token cannot see it'),
      409: error('The repository is indexed from a local clone by the registry operator'),
      ...proofErrors,
    },
  },
  {
    id: 'publish-run',
    method: 'get',
    path: '/api/publish/:runId',
    cache: 'no-store',
    access: 'anonymous',
    summary: "A publish run's status and, once done, what became of each skill",
    params: PublishRunParamsSchema,
    responses: {
      200: { description: 'The run', json: named('PublishRun', PublishRunSchema) },
      400: error('runId is not a UUID'),
      404: error('Publish run not found'),
    },
  },
  {
    id: 'github-webhook',
    method: 'post',
    path: '/api/hooks/github',
    cache: 'no-store',
    access: 'anonymous',
    summary: 'GitHub webhook: a push to the indexed branch re-indexes a published repository',
    description:
      '`X-Hub-Signature-256` must be the HMAC-SHA256 of the raw body with the secret given at publish for the repository whose id the payload names (compared in constant time). The secret proves that repository only: the re-index reads it by id from the code host, whatever names the payload holds, and a delivery for a repository that changed owner since the secret was issued is refused. A delivery seen before (its `X-GitHub-Delivery`, or the same signed body, within a day) is answered `duplicate` and changes nothing. `ping` is answered `pong`; other events are ignored.',
    headers: WebhookHeadersSchema,
    body: { parser: 'raw', required: true, content: { 'application/json': { schema: { type: 'object' } } } },
    responses: {
      200: {
        description:
          'Ping answered, the delivery ignored (the reason says why), or a duplicate of one received before (nothing done)',
        json: named('WebhookResponse', WebhookResponseSchema),
      },
      202: { description: 'A re-index was queued', json: named('WebhookResponse', WebhookResponseSchema) },
      400: error('Not a GitHub delivery (no event, no delivery id, no repository)'),
      401: error('Missing or wrong signature: nothing was changed'),
      403: error(
        'The repository changed owner since its secret was issued: its new owner publishes it again',
      ),
      429: tooMany(
        'Too many deliveries from this client address (`WEBHOOK_DELIVERIES_PER_HOUR`) or for this repository (`WEBHOOK_DELIVERIES_PER_REPOSITORY_PER_HOUR`)',
      ),
      503: error('The job queue did not answer'),
    },
  },
  {
    id: 'deprecate',
    method: 'put',
    path: '/api/packages/:scope/:name/deprecation',
    cache: 'no-store',
    access: 'scope',
    summary: 'Deprecate a package (owner)',
    description:
      "The proof must cover the package's source repository, by the account its scope is bound to.",
    params: PackageParams,
    body: {
      parser: 'json',
      required: false,
      json: named('DeprecateRequest', DeprecateRequestSchema, 'input'),
    },
    responses: {
      200: { description: 'Deprecated', json: named('PackageState', PackageStateSchema) },
      400: error('Invalid package path or message'),
      404: error('Package not found'),
      410: error('Removed by the operator'),
      ...proofErrors,
    },
  },
  {
    id: 'undeprecate',
    method: 'delete',
    path: '/api/packages/:scope/:name/deprecation',
    cache: 'no-store',
    access: 'scope',
    summary: "Lift the owner's deprecation",
    params: PackageParams,
    // Takes no body; one sent is still parsed (a malformed one is a 400), as for every owner action.
    body: { parser: 'json', required: false },
    responses: {
      200: {
        description: 'No longer deprecated by its owner',
        json: named('PackageState', PackageStateSchema),
      },
      400: error('Invalid package path'),
      404: error('Package not found'),
      410: error('Removed by the operator'),
      ...proofErrors,
    },
  },
  {
    id: 'yank',
    method: 'put',
    path: '/api/packages/:scope/:name/versions/:version/yank',
    cache: 'no-store',
    access: 'scope',
    summary: 'Yank a version (owner): still fetchable by exact version, never chosen by a range or `latest`',
    params: ExactVersionPathParamsSchema,
    body: { parser: 'json', required: false, json: named('YankRequest', YankRequestSchema, 'input') },
    responses: {
      200: { description: 'Yanked', json: named('YankState', YankStateSchema) },
      400: error('Invalid package path, version (exact only) or reason'),
      404: error('Package or version not found'),
      410: error('Removed by the operator'),
      ...proofErrors,
    },
  },
  {
    id: 'unyank',
    method: 'delete',
    path: '/api/packages/:scope/:name/versions/:version/yank',
    cache: 'no-store',
    access: 'scope',
    summary: 'Undo a yank',
    params: ExactVersionPathParamsSchema,
    body: { parser: 'json', required: false },
    responses: {
      200: { description: 'No longer yanked', json: named('YankState', YankStateSchema) },
      400: error('Invalid package path or version'),
      404: error('Package or version not found'),
      410: error('Removed by the operator'),
      ...proofErrors,
    },
  },
  {
    id: 'version-upload',
    method: 'put',
    path: '/api/packages/:scope/:name/versions/:version',
    cache: 'no-store',
    access: 'scope',
    summary: 'Upload a version of a hosted package: a tar.gz of its skill folder',
    description:
      "The body is a gzipped tarball of one skill folder with its entries under `<name>/`, as the registry's own `archive.tgz` (regular files only; no absolute, `..`, duplicate or non-UTF-8 paths; the indexer's size limits). The SKILL.md's `name` must be the package's; a version it declares must be this one. Stored like an indexed version (scanned, immutable, its archive rebuilt by the registry), the package `hosted`. Credentials: `Authorization: Bearer pkgreg_…` (a publish token of an account with the publisher role on the scope), a session cookie, or a CI OIDC token (GitHub Actions, GitLab CI) that one of the package's trusted publishers names; the first upload to a scope nobody holds claims it for the uploader's account. A refusal stores nothing.",
    params: ExactVersionPathParamsSchema,
    body: {
      parser: 'raw',
      required: true,
      content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
    },
    responses: {
      201: { description: 'Stored', json: named('UploadResult', UploadResultSchema) },
      400: error(
        'Invalid path or version, or an archive that is not a skill folder (the message names the rule: gzip, tar, a path, a link, SKILL.md, the name, the version)',
      ),
      401: error(
        'No credentials, or ones that do not verify: a bad, expired or revoked token, an OIDC token refused (`WWW-Authenticate` says why)',
      ),
      403: error(
        "A read token, a role below publisher, a scope that is someone else's, or a CI identity that is not a trusted publisher of the package",
      ),
      404: error('A private package (or private scope) the credentials cannot see'),
      409: error(
        'The version exists (versions are immutable), the same files as the latest version, or a package indexed from a repository',
      ),
      410: error('Removed by the operator'),
      413: error('A body over `UPLOAD_MAX_BYTES`, or a skill over the size limits'),
      429: tooMany(
        'Too many publishes, uploads and owner actions from this client address (`PUBLISHES_PER_HOUR`)',
      ),
      503: error('The OIDC issuer did not answer; try again'),
    },
  },
  {
    id: 'report',
    method: 'post',
    path: '/api/packages/:scope/:name/reports',
    cache: 'no-store',
    access: 'anonymous',
    summary: 'Report a package to the registry operator (docs/risk-scan.md)',
    description:
      'Anyone may report; each client address may send `REPORTS_PER_HOUR` reports an hour. Stored for `pnpm registry reports`.',
    params: PackageParams,
    body: { parser: 'json', required: true, json: named('ReportRequest', ReportRequestSchema, 'input') },
    responses: {
      201: { description: 'Stored', json: named('ReportAccepted', ReportAcceptedSchema) },
      400: error('Invalid package path, or a body without a reason of 1-200 characters'),
      404: error('Package not found'),
      429: tooMany('Too many reports from this address', 'Seconds until a report is accepted again'),
    },
  },
  {
    id: 'openapi',
    method: 'get',
    path: '/api/openapi.json',
    cache: 'moving',
    access: 'anonymous',
    undocumented: true,
    summary: 'This document',
    responses: { 200: { description: 'The OpenAPI document', headers: movingHeaders } },
  },
  {
    id: 'search',
    method: 'get',
    path: '/api/search',
    cache: 'moving',
    access: 'anonymous',
    summary: 'Full-text search',
    query: [SearchQuerySchema],
    queryDocs: filters,
    responses: {
      200: {
        description: 'Results',
        headers: movingHeaders,
        json: named('SearchResponse', SearchResponseSchema),
      },
      ...notModified,
      400: error('q too long, or a filter out of its rule or given twice (the message names it)'),
    },
  },
  // Accounts (docs/accounts.md). Sign-in, sessions and organisation membership are better-auth's
  // endpoints under /api/auth (app.ts mounts them); these are the registry's own.
  {
    id: 'me',
    method: 'get',
    path: '/api/me',
    cache: 'no-store',
    access: 'account',
    summary: 'Who the credentials belong to, their organisations and the scopes they reach',
    responses: {
      200: { description: 'The account', json: named('Me', MeSchema) },
      401: error('No session and no access token, or a token that is malformed, unknown, revoked or expired'),
    },
  },
  {
    id: 'tokens-list',
    method: 'get',
    path: '/api/tokens',
    cache: 'no-store',
    access: 'account',
    summary: "The signed-in account's access tokens (never their secrets)",
    responses: {
      200: { description: 'Tokens, newest first', json: named('TokenList', TokenListSchema) },
      401: error('Not signed in'),
      403: error('Sent with an access token: tokens are managed while signed in'),
    },
  },
  {
    id: 'tokens-create',
    method: 'post',
    path: '/api/tokens',
    cache: 'no-store',
    access: 'account',
    summary: 'Create an access token; its secret is in this answer only',
    body: {
      parser: 'json',
      required: true,
      json: named('CreateTokenRequest', CreateTokenRequestSchema, 'input'),
    },
    responses: {
      201: { description: 'Created', json: named('CreatedToken', CreatedTokenSchema) },
      400: error('A field out of its rule (the message names it), or an expiry past TOKEN_MAX_DAYS'),
      401: error('Not signed in'),
      403: error('Sent with an access token, or a cross-site request'),
    },
  },
  {
    id: 'tokens-revoke',
    method: 'delete',
    path: '/api/tokens/:id',
    cache: 'no-store',
    access: 'account',
    summary: 'Revoke one of your tokens: it is refused from the next request on',
    params: TokenIdParamsSchema,
    responses: {
      200: { description: 'Revoked', json: named('TokenSummary', TokenSummarySchema) },
      401: error('Not signed in'),
      404: error('No such token of yours (or already revoked)'),
    },
  },
  {
    id: 'scope-settings',
    method: 'get',
    path: '/api/scopes/:scope/settings',
    cache: 'no-store',
    access: 'scope',
    summary: "A scope's visibility and organisation (admins of the scope)",
    params: ScopeParamsSchema,
    responses: {
      200: { description: 'Settings', json: named('ScopeSettings', ScopeSettingsSchema) },
      401: error('No credentials, or credentials that do not verify'),
      403: error('A member below admin'),
      404: error('Scope not found (or not yours to see)'),
    },
  },
  {
    id: 'scope-settings-update',
    method: 'put',
    path: '/api/scopes/:scope/settings',
    cache: 'no-store',
    access: 'scope',
    summary: 'Make a scope private or public, or move it into an organisation you administer',
    params: ScopeParamsSchema,
    body: {
      parser: 'json',
      required: true,
      json: named('ScopeSettingsRequest', ScopeSettingsRequestSchema, 'input'),
    },
    responses: {
      200: { description: 'Settings after the change', json: named('ScopeSettings', ScopeSettingsSchema) },
      400: error('Neither visibility nor organizationId, or one out of its rule'),
      401: error('No credentials, or credentials that do not verify'),
      403: error('A member below admin, or not an admin of the target organisation'),
      404: error('Scope not found (or not yours to see)'),
    },
  },
  {
    id: 'package-settings',
    method: 'get',
    path: '/api/packages/:scope/:name/settings',
    cache: 'no-store',
    access: 'scope',
    summary: "A package's visibility and trusted publishers (admins of its scope)",
    params: PackageParams,
    responses: {
      200: { description: 'Settings', json: named('PackageSettings', PackageSettingsSchema) },
      401: error('No credentials, or credentials that do not verify'),
      403: error('A member below admin'),
      404: error('Package not found'),
    },
  },
  {
    id: 'package-settings-update',
    method: 'put',
    path: '/api/packages/:scope/:name/settings',
    cache: 'no-store',
    access: 'scope',
    summary: 'Make a package private or public',
    params: PackageParams,
    body: {
      parser: 'json',
      required: true,
      json: named('PackageSettingsRequest', PackageSettingsRequestSchema, 'input'),
    },
    responses: {
      200: {
        description: 'Settings after the change',
        json: named('PackageSettings', PackageSettingsSchema),
      },
      400: error('visibility missing or not public/private'),
      401: error('No credentials, or credentials that do not verify'),
      403: error('A member below admin'),
      404: error('Package not found'),
    },
  },
  {
    id: 'trusted-publisher-add',
    method: 'post',
    path: '/api/packages/:scope/:name/trusted-publishers',
    cache: 'no-store',
    access: 'scope',
    summary: 'Trust a CI identity (OIDC issuer, repository, workflow, environment) to upload versions',
    params: PackageParams,
    body: {
      parser: 'json',
      required: true,
      json: named('TrustedPublisherRequest', TrustedPublisherRequestSchema, 'input'),
    },
    responses: {
      201: {
        description: 'Settings after the change',
        json: named('PackageSettings', PackageSettingsSchema),
      },
      400: error('A field out of its rule'),
      401: error('No credentials, or credentials that do not verify'),
      403: error('A member below admin'),
      404: error('Package not found'),
    },
  },
  {
    id: 'trusted-publisher-remove',
    method: 'delete',
    path: '/api/packages/:scope/:name/trusted-publishers/:id',
    cache: 'no-store',
    access: 'scope',
    summary: 'Stop trusting a CI identity',
    responses: {
      200: {
        description: 'Settings after the change',
        json: named('PackageSettings', PackageSettingsSchema),
      },
      401: error('No credentials, or credentials that do not verify'),
      403: error('A member below admin'),
      404: error('Package or trusted publisher not found'),
    },
  },
  {
    id: 'organization-audit',
    method: 'get',
    path: '/api/orgs/:slug/audit',
    cache: 'no-store',
    access: 'account',
    summary: "An organisation's audit log, newest first (owners and admins)",
    params: OrganizationParamsSchema,
    query: [AuditQuerySchema],
    responses: {
      200: { description: 'Events', json: named('AuditLog', AuditLogSchema) },
      401: error('No credentials, or credentials that do not verify'),
      403: error('A member below admin'),
      404: error('Organisation not found (or not yours to see)'),
    },
  },
] as const satisfies readonly RouteSpec<string, RouteCache>[];

export type RegistryRoute = (typeof ROUTES)[number];
export type RouteId = RegistryRoute['id'];

const BY_ID = new Map<string, RegistryRoute>(ROUTES.map((route) => [route.id, route]));

/** The route of `id` (ids are checked by typecheck, so it is always there). */
export function routeOf(id: RouteId): RegistryRoute {
  return BY_ID.get(id) as RegistryRoute;
}

/** The Express handlers of every route not answered before Express, by route id. */
export type RegistryHandlers = RouteHandlers<RegistryRoute>;
