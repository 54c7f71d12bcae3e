import {
  AgentSkillsIndexSchema,
  AuditLogSchema,
  AuditQuerySchema,
  AuthOptionsSchema,
  CliAuthorizeQuerySchema,
  CliTokenRequestSchema,
  CliTokenResponseSchema,
  ConnectedAppListSchema,
  ConnectedAppParamsSchema,
  CreatedTokenSchema,
  CreateTokenRequestSchema,
  DependantsQuerySchema,
  DependantsResponseSchema,
  DeprecateRequestSchema,
  ExactVersionPathParamsSchema,
  FeedQuerySchema,
  FeedResponseSchema,
  GitHubOrgLinkRequestSchema,
  GitHubOrgLinkSchema,
  ListQuerySchema,
  ListResponseSchema,
  LogConsistencyQuerySchema,
  LogEntriesQuerySchema,
  LogEntriesResponseSchema,
  LogInclusionQuerySchema,
  LogProofSchema,
  McpConsentParamsSchema,
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
  RegistryKeysResponseSchema,
  ReportAcceptedSchema,
  ReportRequestSchema,
  ScopeParamsSchema,
  ScopePathParamsSchema,
  ScopeSettingsRequestSchema,
  ScopeSettingsSchema,
  SearchQuerySchema,
  SearchResponseSchema,
  SessionIdParamsSchema,
  SessionListSchema,
  TakeOverRequestSchema,
  TakeOverSchema,
  TokenIdParamsSchema,
  TokenListSchema,
  TokenSummarySchema,
  TrackResponseSchema,
  TrustedPublisherParamsSchema,
  TrustedPublisherRequestSchema,
  UploadQuerySchema,
  UploadResultSchema,
  VersionAttestationsResponseSchema,
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
/** What every Agent Skills discovery index answers when found (docs/discovery.md). */
const agentSkillsIndexAnswers = {
  200: {
    description: 'The index',
    headers: movingHeaders,
    json: named('AgentSkillsIndex', AgentSkillsIndexSchema),
  },
  ...notModified,
};

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
    id: 'version-attestations',
    method: 'get',
    path: '/api/packages/:scope/:name/versions/:version/attestations',
    cache: 'moving-unless-moderated',
    access: 'anonymous',
    summary:
      "The registry's provenance attestations of a version (in-toto SLSA provenance in DSSE envelopes)",
    description:
      'Each attestation is a DSSE envelope of an in-toto Statement v1 whose subject is the archive (`pkg:pkgreg/%40scope/name@version`, sha512 of `archive.tgz`) and whose predicate (SLSA provenance v1) names the repository, commit, path and, for a CI publish, the workflow run; signed with a key of GET /api/keys over the DSSE pre-authentication encoding (docs/provenance.md, "Provenance attestations"). A version without one (an upload, a version not attested yet) answers an empty list.',
    params: VersionPathParamsSchema,
    responses: {
      200: {
        description: 'The attestations, newest key first; empty when the version has none',
        headers: movingHeaders,
        json: named('VersionAttestations', VersionAttestationsResponseSchema),
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
    id: 'version-agent-skill-v2',
    method: 'get',
    path: '/api/packages/:scope/:name/versions/:version/agent-skill.v2.tar.gz',
    cache: 'version-bytes',
    access: 'anonymous',
    summary:
      "The version as the Agent Skills discovery RFC's archive: its files at the root of a tar.gz (what the discovery indexes name)",
    description:
      "The same entries as `archive.tgz` (regular files 0644/0755, links, fixed mtime and owner), but at the archive's root rather than under `<name>/`, in gzip's stored blocks: the bytes are a function of the version's files alone, so every process serves the same bytes and the `sha256:` digest a discovery index names (docs/discovery.md). A path tar's ustar fields hold only as UTF-8 or split is in them too (for readers that skip PAX records). The same rules as `archive.tgz`: private, removed and quarantined packages alike.",
    params: VersionPathParamsSchema,
    responses: {
      200: {
        description: 'The archive; its `sha256:` digest is the one the discovery indexes list',
        headers: contentHeaders,
        content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
      },
      304: { description: 'Not modified' },
      ...contentErrors,
    },
  },
  {
    id: 'version-agent-skill',
    method: 'get',
    path: '/api/packages/:scope/:name/versions/:version/agent-skill.tar.gz',
    cache: 'version-bytes',
    access: 'anonymous',
    summary: 'The first form of `agent-skill.v2.tar.gz`, for the URLs and digests lockfiles recorded',
    description:
      "What the discovery indexes named before `agent-skill.v2.tar.gz`, its bytes unchanged: the same as v2's for a version whose paths are ASCII and fit ustar's fields (100 bytes, or a 155-byte prefix and a 100-byte name); for any other path, that entry's ustar header is named `PaxHeader` and its path is in the PAX record only (docs/discovery.md). The same rules as `archive.tgz`.",
    params: VersionPathParamsSchema,
    responses: {
      200: {
        description: 'The archive, as first served',
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
  // The Agent Skills discovery indexes (RFC v0.2.0, docs/discovery.md): the root's, an organisation's,
  // a scope's and a package's, each below the address a person opens for it, so `skills add <that
  // address>` finds it. The organisation's comes before the package's, whose template also matches it.
  {
    id: 'agent-skills-index',
    method: 'get',
    path: '/.well-known/agent-skills/index.json',
    cache: 'moving',
    access: 'anonymous',
    summary: "The registry's Agent Skills discovery index: public skills whose name no other scope holds",
    description:
      "Every public, listed package whose latest version (the newest not yanked) is not high-risk and whose name no other public listed package has: in one index a name means one skill, and a name two scopes hold is in neither's entry here (each scope's own index lists it). A folder of a lone SKILL.md is a `skill-md` entry (the exact version's SKILL.md), any other an `archive` (the exact version's `agent-skill.v2.tar.gz`); `digest` is the SHA-256 of that artifact. Public only, whoever asks.",
    responses: agentSkillsIndexAnswers,
  },
  {
    id: 'organization-agent-skills-index',
    method: 'get',
    path: '/orgs/:slug/.well-known/agent-skills/index.json',
    cache: 'moving',
    access: 'anonymous',
    summary: "An organisation's Agent Skills discovery index: what `skills add <registry>/orgs/<slug>` reads",
    description:
      "The listed packages the caller may read in every scope the organisation holds (its settings name it, or it is bound to the GitHub organisation linked to it; private ones with a session or token that reaches them), with the root index's rules for versions and artifacts. A name two of those packages share is in neither's entry (each scope's own index lists it); a private package counts only for callers who read it. An organisation with nothing the caller may read is not found, whether it is missing, suspended or private.",
    params: OrganizationParamsSchema,
    responses: {
      ...agentSkillsIndexAnswers,
      400: error('The slug is longer than 100 characters, or holds U+0000 or a lone surrogate'),
      404: error('Organisation not found (one the credentials cannot see answers the same)'),
    },
  },
  {
    id: 'scope-agent-skills-index',
    method: 'get',
    path: '/:scope/.well-known/agent-skills/index.json',
    cache: 'moving',
    access: 'anonymous',
    summary: "A scope's Agent Skills discovery index: what `skills add <registry>/@scope` reads",
    description:
      "The scope's listed packages the caller may read (private ones with a session or token that reaches them), with the root index's rules for versions and artifacts. A scope with nothing the caller may read is not found, whether it is missing or private.",
    params: ScopePathParamsSchema,
    responses: {
      ...agentSkillsIndexAnswers,
      400: error('Invalid package path: the segment is not `@scope`'),
      404: error('Scope not found (a private scope the credentials cannot see answers the same)'),
    },
  },
  {
    id: 'package-agent-skills-index',
    method: 'get',
    path: '/:scope/:name/.well-known/agent-skills/index.json',
    cache: 'moving',
    access: 'anonymous',
    summary: "One package's Agent Skills discovery index: what `skills add <registry>/@scope/name` reads",
    description:
      "The package alone, by the rules of its scope's index: one entry, or none when its latest version is not installable (every version yanked, or high-risk).",
    params: PackageParams,
    responses: {
      ...agentSkillsIndexAnswers,
      400: error('Invalid package path'),
      404: error('Package not found (a private package the credentials cannot see answers the same)'),
    },
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
    query: [UploadQuerySchema],
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
    id: 'registry-keys',
    method: 'get',
    path: '/api/keys',
    cache: 'moving',
    access: 'anonymous',
    summary:
      "Every key the registry signed versions with (npm's keys shape; docs/provenance.md): verify a version's signatures with them",
    responses: {
      200: {
        description: 'The keys, oldest first',
        headers: movingHeaders,
        json: named('RegistryKeys', RegistryKeysResponseSchema),
      },
    },
  },
  // The transparency log (docs/provenance.md, "Transparency log"): checkpoints, proofs and entries for
  // clients and witnesses. Proofs and entries stop at the latest checkpoint: all they show is signed.
  {
    id: 'log-checkpoint',
    method: 'get',
    path: '/api/log/checkpoint',
    cache: 'moving',
    access: 'anonymous',
    summary: "The transparency log's latest checkpoint: a signed note of its origin, size and root hash",
    description:
      "Every public version is a leaf `@scope/name@version sha512-…` of an RFC 6962 / RFC 9162 Merkle tree. The checkpoint is transparency-dev's checkpoint text (origin `<public host>/log`, size, base64 root hash) signed in the note format of Go's checksum database with the registry's Ed25519 key: `— <origin> <base64(4-byte key hash || signature)>` after a blank line. A witness checks that each new checkpoint extends the last one it saw (`pnpm registry log:verify`).",
    responses: {
      200: {
        description: 'The signed note',
        headers: movingHeaders,
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      ...notModified,
      404: error('The log is empty: nothing is signed yet'),
    },
  },
  {
    id: 'log-inclusion-proof',
    method: 'get',
    path: '/api/log/proof/inclusion',
    cache: 'moving',
    access: 'anonymous',
    summary: 'The proof that leaf `index` is in the tree of `size` leaves (RFC 9162 §2.1.3)',
    query: [LogInclusionQuerySchema],
    queryDocs: {
      index: { description: 'The leaf (0-based)', schema: { type: 'integer', minimum: 0 } },
      size: {
        description: "A tree size up to the latest checkpoint's",
        schema: { type: 'integer', minimum: 1 },
      },
    },
    responses: {
      200: { description: 'The audit path, leaf side first', json: named('LogProof', LogProofSchema) },
      ...notModified,
      400: error("Not whole numbers, an index not below size, or a size past the latest checkpoint's"),
    },
  },
  {
    id: 'log-consistency-proof',
    method: 'get',
    path: '/api/log/proof/consistency',
    cache: 'moving',
    access: 'anonymous',
    summary: 'The proof that the tree of `to` leaves extends the tree of `from` leaves (RFC 9162 §2.1.4)',
    query: [LogConsistencyQuerySchema],
    queryDocs: {
      from: { description: 'The older tree size', schema: { type: 'integer', minimum: 0 } },
      to: {
        description: "The newer tree size, up to the latest checkpoint's",
        schema: { type: 'integer', minimum: 0 },
      },
    },
    responses: {
      200: {
        description: 'The consistency path (empty when from is 0 or equals to)',
        json: named('LogProof', LogProofSchema),
      },
      ...notModified,
      400: error("Not whole numbers, from greater than to, or a to past the latest checkpoint's"),
    },
  },
  {
    id: 'log-entries',
    method: 'get',
    path: '/api/log/entries',
    cache: 'moving',
    access: 'anonymous',
    summary: "The log's leaves from `start`: what a witness replays",
    description:
      "At most `limit` entries, none at or past the latest checkpoint's size (an empty list past it). Each leaf hash is SHA-256(0x00 || the entry's UTF-8 bytes).",
    query: [LogEntriesQuerySchema],
    queryDocs: {
      start: { description: 'The first leaf (default 0)', schema: { type: 'integer', minimum: 0 } },
      limit: {
        description: 'Entries at most (default and maximum 1000)',
        schema: { type: 'integer', minimum: 1, maximum: 1000 },
      },
    },
    responses: {
      200: { description: 'The entries', json: named('LogEntries', LogEntriesResponseSchema) },
      ...notModified,
      400: error('start or limit out of its rule (the message names it)'),
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
    id: 'auth-options',
    method: 'get',
    path: '/api/auth-options',
    cache: 'no-store',
    access: 'anonymous',
    summary: 'The sign-in methods this registry offers (what the sign-in page of the web UI shows)',
    responses: {
      200: { description: 'Sign-in methods', json: named('AuthOptions', AuthOptionsSchema) },
    },
  },
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
      403: error('Sent with a token that is not a publish token without limits'),
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
      403: error('Sent with a read token, or a token asking for a wider one; or a cross-site request'),
    },
  },
  {
    id: 'tokens-revoke-current',
    method: 'delete',
    path: '/api/tokens/current',
    cache: 'no-store',
    access: 'account',
    summary: 'Revoke the access token this request is sent with (`pkgreg logout`)',
    responses: {
      200: { description: 'Revoked', json: named('TokenSummary', TokenSummarySchema) },
      401: error('No access token, or one that is malformed, unknown, revoked or expired'),
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
      403: error('Sent with a token that is not a publish token without limits'),
      404: error('No such token of yours (or already revoked)'),
    },
  },
  // The CLI's browser sign-in (docs/cli-auth.md): authorization code + PKCE to a loopback redirect.
  {
    id: 'cli-authorize-page',
    method: 'get',
    path: '/api/cli/authorize',
    cache: 'no-store',
    access: 'anonymous',
    summary: 'The page where a signed-in person approves a `pkgreg login` (or is sent to sign in)',
    description:
      'An HTML page, self-contained, never framed (CSP frame-ancestors none, X-Frame-Options DENY). With a session cookie it asks "Sign in pkgreg CLI on this computer as <email>?" with Approve and Deny; without one it links to the web UI\'s sign-in with `next` back here.',
    query: [CliAuthorizeQuerySchema],
    responses: {
      200: { description: 'The approval page, or a sign-in link', content: { 'text/html': {} } },
      400: {
        description: 'A parameter out of its rule (an HTML page says which)',
        content: { 'text/html': {} },
      },
    },
  },
  {
    id: 'cli-authorize',
    method: 'post',
    path: '/api/cli/authorize',
    cache: 'no-store',
    access: 'account',
    summary: "The person's decision: a one-time code (5 minutes) sent to the CLI's loopback redirect",
    description:
      'A form post from the approval page, with the session cookie (a same-origin Origin is required; a token is refused). Answers 303 to `redirect_uri?code=…&state=…`, or `?error=access_denied&state=…` for Deny. The code is bound to the account, the redirect_uri and the code_challenge.',
    body: {
      parser: 'raw',
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: {
            type: 'object',
            required: ['redirect_uri', 'state', 'code_challenge', 'code_challenge_method', 'decision'],
            properties: {
              redirect_uri: { type: 'string' },
              state: { type: 'string' },
              code_challenge: { type: 'string' },
              code_challenge_method: { type: 'string', enum: ['S256'] },
              decision: { type: 'string', enum: ['approve', 'deny'] },
            },
          },
        },
      },
    },
    responses: {
      303: { description: 'To the redirect_uri with the code (or the refusal) and the state' },
      400: error('A field out of its rule'),
      401: error('No session'),
      403: error('Sent with a token, or a cross-site request'),
    },
  },
  {
    id: 'cli-token',
    method: 'post',
    path: '/api/cli/token',
    cache: 'no-store',
    access: 'anonymous',
    summary: "Trade a sign-in code and its PKCE verifier for a publish token of the code's account",
    description: `The code is taken at the first try whatever its outcome. The token: permission publish, no limits, expiring after 90 days (or TOKEN_MAX_DAYS when shorter).`,
    body: { parser: 'json', required: true, json: named('CliTokenRequest', CliTokenRequestSchema, 'input') },
    responses: {
      201: {
        description: 'The token, shown this once',
        json: named('CliTokenResponse', CliTokenResponseSchema),
      },
      400: error('Unknown, used or expired code; another redirect_uri; a code_verifier that does not match'),
    },
  },
  {
    id: 'sessions-list',
    method: 'get',
    path: '/api/sessions',
    cache: 'no-store',
    access: 'account',
    summary:
      "The signed-in account's sessions (never their tokens); sign out everywhere is /api/auth/revoke-sessions",
    responses: {
      200: { description: 'Sessions, newest first', json: named('SessionList', SessionListSchema) },
      401: error('Not signed in'),
    },
  },
  {
    id: 'sessions-revoke',
    method: 'delete',
    path: '/api/sessions/:id',
    cache: 'no-store',
    access: 'account',
    summary: 'End one of your sessions',
    params: SessionIdParamsSchema,
    responses: {
      200: { description: 'Ended', json: named('SessionList', SessionListSchema) },
      401: error('Not signed in'),
      404: error('No such session of yours'),
    },
  },
  // MCP clients signing in to the edge (docs/accounts.md, "Consent for MCP clients" and "Connected apps").
  {
    id: 'mcp-consent-page',
    method: 'get',
    path: '/api/mcp/consent/:id',
    cache: 'no-store',
    access: 'anonymous',
    summary: 'The page where a signed-in person allows or denies an MCP client (or is sent to sign in)',
    description:
      "An HTML page the edge sends the browser to, self-contained, never framed. With a session cookie (and no Authorization) it claims the request for the account and shows the app's name (its own claim), who vouches for it, where the browser goes back to, the scopes in plain words and the account, with Allow and Deny; when the account allowed this app every scope asked before (not revoked since), it answers 303 to the edge at once. Without a session it links to the web UI's sign-in with `next` back here. EDGE_PUBLIC_BASE_URL unset: 404 `{error}`.",
    params: McpConsentParamsSchema,
    responses: {
      200: { description: 'The consent page, or a sign-in link', content: { 'text/html': {} } },
      303: {
        description:
          'Allowed before: to `<EDGE_PUBLIC_BASE_URL>/mcp/interaction/<uid>/return?c=<code>`, a one-time code',
        headers: { Location: { schema: { type: 'string' } } },
      },
      404: {
        description:
          'One page for a request unknown, expired, decided, used or claimed by another account (HTML); `{error}` when EDGE_PUBLIC_BASE_URL is unset',
        content: { 'text/html': {} },
      },
    },
  },
  {
    id: 'mcp-consent',
    method: 'post',
    path: '/api/mcp/consent/:id',
    cache: 'no-store',
    access: 'account',
    summary: "The person's decision on an MCP client: a 303 back to the edge with a one-time code",
    description:
      'A form post from the consent page, with the session cookie (a same-origin Origin is required; a request with Authorization is refused). Allow and Deny both answer 303 to `<EDGE_PUBLIC_BASE_URL>/mcp/interaction/<uid>/return?c=<code>`, the edge answering the app; Allow also records the connected app (its scopes joined to those allowed before). A request is decided once.',
    params: McpConsentParamsSchema,
    body: {
      parser: 'raw',
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: {
            type: 'object',
            required: ['decision'],
            properties: { decision: { type: 'string', enum: ['allow', 'deny'] } },
          },
        },
      },
    },
    responses: {
      303: {
        description: 'To the edge with the one-time code',
        headers: { Location: { schema: { type: 'string' } } },
      },
      400: error('decision missing, or not allow or deny'),
      401: error('No session'),
      403: error('Sent with Authorization, or a cross-site request'),
      404: {
        description:
          "The same page as the GET's for a request that is not this account's to decide (HTML); `{error}` when EDGE_PUBLIC_BASE_URL is unset",
        content: { 'text/html': {} },
      },
    },
  },
  {
    id: 'connected-apps-list',
    method: 'get',
    path: '/api/connected-apps',
    cache: 'no-store',
    access: 'account',
    summary: 'The MCP clients (agent apps) the signed-in person allowed to use the edge as them',
    responses: {
      200: {
        description: 'Apps not revoked, newest first',
        json: named('ConnectedAppList', ConnectedAppListSchema),
      },
      401: error('Not signed in'),
      403: error('Sent with an access token: connected apps are managed while signed in'),
    },
  },
  {
    id: 'connected-apps-revoke',
    method: 'delete',
    path: '/api/connected-apps/:clientId',
    cache: 'no-store',
    access: 'account',
    summary: 'Revoke a connected app: the edge refuses its tokens at once and it has nothing to refresh with',
    description:
      "The client id URL-encoded (it may be an https URL). In one transaction: the app's delegation is revoked and the edge's codes, refresh tokens and grant of it for this account are deleted.",
    params: ConnectedAppParamsSchema,
    responses: {
      204: { description: 'Revoked' },
      401: error('Not signed in'),
      403: error('Sent with an access token, or a cross-site request'),
      404: error('No such connected app of yours (or revoked already)'),
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
    params: TrustedPublisherParamsSchema,
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
    id: 'organization-github-link',
    method: 'post',
    path: '/api/orgs/:slug/github',
    cache: 'no-store',
    access: 'account',
    summary:
      'Link the GitHub organisation you administer: the scopes bound to it move into this organisation',
    description:
      'Signed in with a session whose account is an owner or admin here and has signed in with GitHub; GitHub must answer that it is an active admin of the organisation.',
    params: OrganizationParamsSchema,
    body: {
      parser: 'json',
      required: true,
      json: named('GitHubOrgLinkRequest', GitHubOrgLinkRequestSchema, 'input'),
    },
    responses: {
      200: { description: 'Linked', json: named('GitHubOrgLink', GitHubOrgLinkSchema) },
      400: error('login missing or not a GitHub login'),
      401: error('Not signed in'),
      403: error('Not an owner or admin here, or not an active admin of the GitHub organisation'),
      404: error('Organisation not found (or not yours to see)'),
      409: error('No GitHub account linked to yours, or the GitHub organisation is linked elsewhere'),
      503: error('GitHub did not answer'),
    },
  },
  {
    id: 'admin-organization-take-over',
    method: 'post',
    path: '/api/admin/orgs/:slug/take-over',
    cache: 'no-store',
    access: 'account',
    summary: 'A site administrator becomes an owner of an organisation (its owners are gone)',
    description:
      "Audited with the reason. Accounts are suspended with better-auth's `/api/auth/admin/ban-user`.",
    params: OrganizationParamsSchema,
    body: { parser: 'json', required: true, json: named('TakeOverRequest', TakeOverRequestSchema, 'input') },
    responses: {
      200: { description: 'Now an owner', json: named('TakeOver', TakeOverSchema) },
      400: error('reason missing'),
      401: error('Not signed in'),
      404: error('Not a site administrator, or no such organisation'),
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
