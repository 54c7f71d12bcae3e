import {
  DependantsQuerySchema,
  DependantsResponseSchema,
  DeprecateRequestSchema,
  ErrorBodySchema,
  FeedQuerySchema,
  FeedResponseSchema,
  FILTER_NAMES,
  ListQuerySchema,
  ListResponseSchema,
  PackageDetailSchema,
  PackageFiltersSchema,
  PackageStateSchema,
  PublishAcceptedSchema,
  PublishRequestSchema,
  PublishRunSchema,
  ReportAcceptedSchema,
  ReportRequestSchema,
  SearchQuerySchema,
  SearchResponseSchema,
  TrackResponseSchema,
  toJsonSchema,
  VersionDetailSchema,
  VersionListQuerySchema,
  VersionListResponseSchema,
  WebhookResponseSchema,
  YankRequestSchema,
  YankStateSchema,
} from '@pkgreg/contracts';

// OpenAPI 3.1 uses JSON Schema 2020-12, so the contracts' schemas drop in as they are (one source).
type JsonObject = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ 'application/json': { schema: ref(name) } });
const error = (description: string) => ({ description, content: json('ErrorBody') });

/** Query parameters from a contracts query schema (input side: defaults make them optional). */
function queryParameters(schema: Parameters<typeof toJsonSchema>[0]): JsonObject[] {
  const input = toJsonSchema(schema, 'input') as {
    properties?: Record<string, JsonObject>;
    required?: string[];
  };
  return Object.entries(input.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: input.required?.includes(name) ?? false,
    schema: property,
  }));
}

const FILTER_DESCRIPTIONS: Record<(typeof FILTER_NAMES)[number], string> = {
  kind: 'Only packages of this kind',
  category: 'Only packages of this category (case-insensitive)',
  tag: 'Only packages with this tag (case-insensitive)',
  agent: 'Only packages that name this agent in `compatibility` (case-insensitive)',
  license: 'Only packages with this SPDX license expression (case-insensitive, the whole expression)',
  verified: 'Only packages whose publisher is verified (`true`) or is not (`false`)',
  status: '`active`: deprecated packages left out; `deprecated`: only them',
  risk: 'At most this risk (`low` keeps `none` and `low`); packages never scanned are left out',
  owner: 'Only the packages of this scope',
};

/**
 * The list's and search's query parameters, the filters described by their values' schemas (the query
 * schemas' input side only says "a string": each is parsed from one).
 */
function withFilters(parameters: JsonObject[]): JsonObject[] {
  const values = (toJsonSchema(PackageFiltersSchema) as { properties: Record<string, JsonObject> })
    .properties;
  return parameters.map((parameter) => {
    const name = parameter.name as (typeof FILTER_NAMES)[number];
    if (!(FILTER_NAMES as readonly string[]).includes(name)) return parameter;
    const schema = name === 'verified' ? { type: 'string', enum: ['true', 'false'] } : values[name];
    return { ...parameter, description: `${FILTER_DESCRIPTIONS[name]}. Given at most once.`, schema };
  });
}

const feedParameters = (): JsonObject[] =>
  queryParameters(FeedQuerySchema).map((parameter) => ({
    ...parameter,
    description: {
      cursor: 'The sync feed: go on after this `nextCursor` of an earlier answer (opaque)',
      limit: 'The sync feed: packages per page',
      updatedSince: 'The sync feed: start at the packages changed at or after this time',
    }[parameter.name as 'cursor' | 'limit' | 'updatedSince'],
    ...(parameter.name === 'updatedSince' ? { schema: { type: 'string', format: 'date-time' } } : {}),
  }));

const packagePathParameters = [
  {
    name: 'scope',
    in: 'path',
    required: true,
    description: 'Scope with its leading `@` (may be sent as `%40`)',
    schema: { type: 'string', pattern: '^@[a-z0-9-]{1,64}$' },
  },
  { name: 'name', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z0-9-]{1,64}$' } },
];

const versionParameter = {
  name: 'version',
  in: 'path',
  required: true,
  description: 'An exact version (semver) or `latest`',
  schema: { type: 'string' },
};

const versionErrors = {
  400: error('Invalid package path, version or file path'),
  404: error('Package, version or file not found'),
  410: error('Removed from the registry by its operator (the message says why)'),
};

/** Bytes of a version: also 410 while its package is quarantined (the manifest stays readable). */
const contentErrors = {
  ...versionErrors,
  410: error(
    'Removed from the registry by its operator, or quarantined by it: no client gets the bytes (the message says why)',
  ),
};

const contentHeaders = {
  ETag: { schema: { type: 'string' } },
  'Last-Modified': {
    description: "An exact version's creation (If-Modified-Since is answered)",
    schema: { type: 'string' },
  },
  'Cache-Control': {
    description:
      '`public, max-age=31536000, s-maxage=<HTTP_CACHE_CDN_MAX_AGE_S>, immutable` for an exact version, `public, max-age=<HTTP_CACHE_MAX_AGE_S>, must-revalidate` for `latest` (docs/caching.md)',
    schema: { type: 'string' },
  },
};

/** A moving answer: revalidated after HTTP_CACHE_MAX_AGE_S with its ETag (docs/caching.md). */
const movingHeaders = {
  ETag: { schema: { type: 'string' } },
  'Cache-Control': {
    description: '`public, max-age=<HTTP_CACHE_MAX_AGE_S>, must-revalidate` (docs/caching.md)',
    schema: { type: 'string' },
  },
};
const notModified = { 304: { description: 'Not modified (If-None-Match matched)' } };

const jsonBody = (name: string, required = true) => ({ required, content: json(name) });

/** Proof-bearing endpoints: `Authorization: Bearer <OIDC token | GitHub user token>` (docs/publishing.md). */
const proofSecurity = [{ oidcToken: [] }, { codeHostToken: [] }];

/** A per-client or per-repository limit: the 429 and when to come back. */
const tooMany = (description: string) => ({
  ...error(description),
  headers: {
    'Retry-After': { description: 'Seconds until a request is accepted again', schema: { type: 'integer' } },
  },
});

const proofErrors = {
  401: error(
    'No proof, or one that does not verify: expired, wrong audience, wrong issuer, unknown signing key, bad credentials (`WWW-Authenticate` says why)',
  ),
  403: error(
    'A valid proof that does not cover the request: another repository or ref, no push access, or a scope bound to another account',
  ),
  429: tooMany(
    'Too many publishes and owner actions from this client address (`PUBLISHES_PER_HOUR`); nothing was asked of the code host',
  ),
  503: error('The OIDC issuer, the code host or the job queue did not answer; try again'),
};

const strip = (schema: JsonObject) => {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
};

export function buildOpenApiDocument(): JsonObject {
  return {
    openapi: '3.1.0',
    info: {
      title: 'pkgreg registry API',
      version: '1.0.0',
      description:
        'Listing with filters and popularity sorts, a sync feed for mirrors, detail, raw SKILL.md, source redirect, filtered search, download tracking with downloads per day, immutable versions with their files and archives, dependencies and dependants, and publishing with a proof of control (OIDC or a code-host token), webhooks, deprecation and yanks.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths: {
      '/api/packages': {
        get: {
          summary: 'List packages, or follow the sync feed',
          description:
            'Without `cursor`, `limit` or `updatedSince`: a page of an order (name, stars, indexed, downloads, trending), of every visible package or of those that pass the filters; `total` counts them. With any of the three: the sync feed, every package in the order of its last change (delisted, quarantined and removed ones with their status), not combined with paging, sorts or filters; follow `nextCursor` to stay exact (docs/decisions.md, "Registry: discovery").',
          parameters: [...withFilters(queryParameters(ListQuerySchema)), ...feedParameters()],
          responses: {
            200: {
              description: 'A page of the list, or of the feed',
              headers: movingHeaders,
              content: {
                'application/json': { schema: { oneOf: [ref('ListResponse'), ref('FeedResponse')] } },
              },
            },
            ...notModified,
            400: error(
              'A parameter out of its rule, given twice, or a list parameter combined with the feed (the message names it)',
            ),
          },
        },
      },
      '/api/packages/{scope}/{name}': {
        get: {
          summary: 'Package detail',
          parameters: packagePathParameters,
          responses: {
            200: {
              description: 'Detail (ETag from the row version)',
              headers: { ETag: { schema: { type: 'string' } } },
              content: json('PackageDetail'),
            },
            304: { description: 'Not modified (If-None-Match matched)' },
            400: error('Invalid package path'),
            404: error('Package not found'),
          },
        },
      },
      '/api/packages/{scope}/{name}/skill-md': {
        get: {
          summary: 'Raw SKILL.md',
          parameters: packagePathParameters,
          responses: {
            200: { description: 'SKILL.md', content: { 'text/markdown': { schema: { type: 'string' } } } },
            304: { description: 'Not modified' },
            400: error('Invalid package path'),
            404: error('Package not found'),
          },
        },
      },
      '/api/packages/{scope}/{name}/source': {
        get: {
          summary: 'Redirect to the source on the code host',
          parameters: packagePathParameters,
          responses: {
            302: { description: 'Redirect', headers: { Location: { schema: { type: 'string' } } } },
            400: error('Invalid package path'),
            404: error('Package not found'),
          },
        },
      },
      '/api/packages/{scope}/{name}/track': {
        post: {
          summary: 'Count a download or install',
          description:
            'Each accepted call adds one to `downloadCount`; the downloads and trending orders and the downloads per day count each downloader (the client address, IPv6 by its /64) once per UTC day. Each client address may send `TRACK_PER_MINUTE` calls a minute (docs/decisions.md, "Registry: unique downloaders").',
          parameters: packagePathParameters,
          responses: {
            200: { description: 'Counted', content: json('TrackResponse') },
            400: error('Invalid package path'),
            404: error('Not found'),
            429: {
              ...error('Too many downloads from this address; nothing was counted'),
              headers: {
                'Retry-After': {
                  description: 'Seconds until a call from this address is counted again',
                  schema: { type: 'integer' },
                },
              },
            },
          },
        },
      },
      '/api/packages/{scope}/{name}/dependants': {
        get: {
          summary: 'Packages whose latest version depends on this one, by scope then name',
          description:
            "Visible packages (as the list: not delisted, not quarantined) whose latest version declares this package in `metadata.dependencies`. `total` is the package's `dependantCount`. Its own dependencies are in detail's `dependencies`.",
          parameters: [...packagePathParameters, ...queryParameters(DependantsQuerySchema)],
          responses: {
            200: {
              description: 'A page of dependants',
              headers: movingHeaders,
              content: json('DependantsResponse'),
            },
            ...notModified,
            400: error('Invalid package path, page or pageSize'),
            404: error('Package not found'),
          },
        },
      },
      '/api/packages/{scope}/{name}/versions': {
        get: {
          summary: 'Versions of a package, newest first',
          parameters: [...packagePathParameters, ...queryParameters(VersionListQuerySchema)],
          responses: {
            200: {
              description: 'A page of versions',
              headers: movingHeaders,
              content: json('VersionListResponse'),
            },
            ...notModified,
            ...versionErrors,
          },
        },
      },
      '/api/packages/{scope}/{name}/versions/{version}': {
        get: {
          summary: "A version's record and its files (manifest)",
          parameters: [...packagePathParameters, versionParameter],
          responses: {
            200: { description: 'The version', headers: movingHeaders, content: json('VersionDetail') },
            ...notModified,
            ...versionErrors,
          },
        },
      },
      '/api/packages/{scope}/{name}/versions/{version}/files/{path}': {
        get: {
          summary: 'One file of a version, as stored',
          parameters: [
            ...packagePathParameters,
            versionParameter,
            {
              name: 'path',
              in: 'path',
              required: true,
              description: 'Path inside the skill folder; its `/` separators stay as they are',
              schema: { type: 'string' },
            },
          ],
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
      },
      '/api/packages/{scope}/{name}/versions/{version}/archive.tgz': {
        get: {
          summary: 'The version as a gzipped tarball; the same bytes on every download',
          parameters: [...packagePathParameters, versionParameter],
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
      },
      '/api/publish': {
        post: {
          summary: 'Publish a repository: index it now on the runtime worker',
          description:
            "The proof is `Authorization: Bearer <token>`: a GitHub Actions OIDC token (a JWT requested for the registry's URL as audience; `repository`, `repository_owner`, `repository_owner_id` and `ref` are checked) or a GitHub user token with push or admin access (checked with GET /repos/{owner}/{repo}, then forgotten). A token of the JWT form is taken as OIDC. The first publish with a user token returns the webhook secret, once. A refused proof leaves nothing behind.",
          security: proofSecurity,
          requestBody: jsonBody('PublishRequest'),
          responses: {
            202: { description: 'Queued: poll `statusUrl`', content: json('PublishAccepted') },
            400: error('Bad body (repository, ref), or rotateWebhookSecret with an OIDC token'),
            404: error('The repository is not on the code host, or the token cannot see it'),
            409: error('The repository is indexed from a local clone by the registry operator'),
            ...proofErrors,
          },
        },
      },
      '/api/publish/{runId}': {
        get: {
          summary: "A publish run's status and, once done, what became of each skill",
          parameters: [
            { name: 'runId', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
          ],
          responses: {
            200: { description: 'The run', content: json('PublishRun') },
            400: error('runId is not a UUID'),
            404: error('Publish run not found'),
          },
        },
      },
      '/api/hooks/github': {
        post: {
          summary: 'GitHub webhook: a push to the indexed branch re-indexes a published repository',
          description:
            '`X-Hub-Signature-256` must be the HMAC-SHA256 of the raw body with the secret given at publish for the repository whose id the payload names (compared in constant time). The secret proves that repository only: the re-index reads it by id from the code host, whatever names the payload holds, and a delivery for a repository that changed owner since the secret was issued is refused. A delivery seen before (its `X-GitHub-Delivery`, or the same signed body, within a day) is answered `duplicate` and changes nothing. `ping` is answered `pong`; other events are ignored.',
          parameters: [
            { name: 'X-GitHub-Event', in: 'header', required: true, schema: { type: 'string' } },
            {
              name: 'X-GitHub-Delivery',
              in: 'header',
              required: true,
              schema: { type: 'string', pattern: '^[A-Za-z0-9-]{1,128}$' },
            },
            { name: 'X-Hub-Signature-256', in: 'header', required: true, schema: { type: 'string' } },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
          responses: {
            200: {
              description:
                'Ping answered, the delivery ignored (the reason says why), or a duplicate of one received before (nothing done)',
              content: json('WebhookResponse'),
            },
            202: { description: 'A re-index was queued', content: json('WebhookResponse') },
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
      },
      '/api/packages/{scope}/{name}/deprecation': {
        put: {
          summary: 'Deprecate a package (owner)',
          description:
            "The proof must cover the package's source repository, by the account its scope is bound to.",
          parameters: packagePathParameters,
          security: proofSecurity,
          requestBody: jsonBody('DeprecateRequest', false),
          responses: {
            200: { description: 'Deprecated', content: json('PackageState') },
            400: error('Invalid package path or message'),
            404: error('Package not found'),
            410: error('Removed by the operator'),
            ...proofErrors,
          },
        },
        delete: {
          summary: "Lift the owner's deprecation",
          parameters: packagePathParameters,
          security: proofSecurity,
          responses: {
            200: { description: 'No longer deprecated by its owner', content: json('PackageState') },
            400: error('Invalid package path'),
            404: error('Package not found'),
            410: error('Removed by the operator'),
            ...proofErrors,
          },
        },
      },
      '/api/packages/{scope}/{name}/versions/{version}/yank': {
        put: {
          summary:
            'Yank a version (owner): still fetchable by exact version, never chosen by a range or `latest`',
          parameters: [...packagePathParameters, { ...versionParameter, description: 'An exact version' }],
          security: proofSecurity,
          requestBody: jsonBody('YankRequest', false),
          responses: {
            200: { description: 'Yanked', content: json('YankState') },
            400: error('Invalid package path, version (exact only) or reason'),
            404: error('Package or version not found'),
            410: error('Removed by the operator'),
            ...proofErrors,
          },
        },
        delete: {
          summary: 'Undo a yank',
          parameters: [...packagePathParameters, { ...versionParameter, description: 'An exact version' }],
          security: proofSecurity,
          responses: {
            200: { description: 'No longer yanked', content: json('YankState') },
            400: error('Invalid package path or version'),
            404: error('Package or version not found'),
            410: error('Removed by the operator'),
            ...proofErrors,
          },
        },
      },
      '/api/packages/{scope}/{name}/reports': {
        post: {
          summary: 'Report a package to the registry operator (docs/risk-scan.md)',
          description:
            'Anyone may report; each client address may send `REPORTS_PER_HOUR` reports an hour. Stored for `pnpm registry reports`.',
          parameters: packagePathParameters,
          requestBody: { required: true, content: json('ReportRequest') },
          responses: {
            201: { description: 'Stored', content: json('ReportAccepted') },
            400: error('Invalid package path, or a body without a reason of 1-200 characters'),
            404: error('Package not found'),
            429: {
              ...error('Too many reports from this address'),
              headers: {
                'Retry-After': {
                  description: 'Seconds until a report is accepted again',
                  schema: { type: 'integer' },
                },
              },
            },
          },
        },
      },
      '/api/search': {
        get: {
          summary: 'Full-text search',
          parameters: withFilters(queryParameters(SearchQuerySchema)),
          responses: {
            200: { description: 'Results', headers: movingHeaders, content: json('SearchResponse') },
            ...notModified,
            400: error('q too long, or a filter out of its rule or given twice (the message names it)'),
          },
        },
      },
    },
    components: {
      schemas: {
        ListResponse: strip(toJsonSchema(ListResponseSchema)),
        FeedResponse: strip(toJsonSchema(FeedResponseSchema)),
        PackageDetail: strip(toJsonSchema(PackageDetailSchema)),
        SearchResponse: strip(toJsonSchema(SearchResponseSchema)),
        TrackResponse: strip(toJsonSchema(TrackResponseSchema)),
        VersionListResponse: strip(toJsonSchema(VersionListResponseSchema)),
        VersionDetail: strip(toJsonSchema(VersionDetailSchema)),
        ReportRequest: strip(toJsonSchema(ReportRequestSchema, 'input')),
        ReportAccepted: strip(toJsonSchema(ReportAcceptedSchema)),
        ErrorBody: strip(toJsonSchema(ErrorBodySchema)),
        PublishRequest: strip(toJsonSchema(PublishRequestSchema, 'input')),
        PublishAccepted: strip(toJsonSchema(PublishAcceptedSchema)),
        PublishRun: strip(toJsonSchema(PublishRunSchema)),
        WebhookResponse: strip(toJsonSchema(WebhookResponseSchema)),
        DependantsResponse: strip(toJsonSchema(DependantsResponseSchema)),
        DeprecateRequest: strip(toJsonSchema(DeprecateRequestSchema, 'input')),
        PackageState: strip(toJsonSchema(PackageStateSchema)),
        YankRequest: strip(toJsonSchema(YankRequestSchema, 'input')),
        YankState: strip(toJsonSchema(YankStateSchema)),
      },
      securitySchemes: {
        oidcToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'A GitHub Actions OIDC token requested for the registry URL as audience (trusted publishing)',
        },
        codeHostToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A GitHub user token with push or admin access to the repository; used for one permission check, never stored',
        },
      },
    },
  };
}
