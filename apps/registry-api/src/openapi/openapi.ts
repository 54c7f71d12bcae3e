import {
  ErrorBodySchema,
  ListQuerySchema,
  ListResponseSchema,
  PackageDetailSchema,
  ReportAcceptedSchema,
  ReportRequestSchema,
  SearchQuerySchema,
  SearchResponseSchema,
  TrackResponseSchema,
  toJsonSchema,
  VersionDetailSchema,
  VersionListQuerySchema,
  VersionListResponseSchema,
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

const contentHeaders = {
  ETag: { schema: { type: 'string' } },
  'Cache-Control': {
    description: '`immutable` for an exact version, `max-age=60, must-revalidate` for `latest`',
    schema: { type: 'string' },
  },
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
        'Listing, detail, raw SKILL.md, source redirect, search, download tracking, and immutable versions with their files and archives.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths: {
      '/api/packages': {
        get: {
          summary: 'List packages',
          parameters: queryParameters(ListQuerySchema),
          responses: {
            200: { description: 'A page', content: json('ListResponse') },
            400: error('Bad parameter'),
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
          parameters: packagePathParameters,
          responses: {
            200: { description: 'Counted', content: json('TrackResponse') },
            400: error('Invalid package path'),
            404: error('Not found'),
          },
        },
      },
      '/api/packages/{scope}/{name}/versions': {
        get: {
          summary: 'Versions of a package, newest first',
          parameters: [...packagePathParameters, ...queryParameters(VersionListQuerySchema)],
          responses: {
            200: { description: 'A page of versions', content: json('VersionListResponse') },
            ...versionErrors,
          },
        },
      },
      '/api/packages/{scope}/{name}/versions/{version}': {
        get: {
          summary: "A version's record and its files (manifest)",
          parameters: [...packagePathParameters, versionParameter],
          responses: {
            200: { description: 'The version', content: json('VersionDetail') },
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
            ...versionErrors,
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
            ...versionErrors,
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
              headers: { 'Retry-After': { description: 'Seconds until a report is accepted again', schema: { type: 'integer' } } },
            },
          },
        },
      },
      '/api/search': {
        get: {
          summary: 'Full-text search',
          parameters: queryParameters(SearchQuerySchema),
          responses: {
            200: { description: 'Results', content: json('SearchResponse') },
            400: error('q too long'),
          },
        },
      },
    },
    components: {
      schemas: {
        ListResponse: strip(toJsonSchema(ListResponseSchema)),
        PackageDetail: strip(toJsonSchema(PackageDetailSchema)),
        SearchResponse: strip(toJsonSchema(SearchResponseSchema)),
        TrackResponse: strip(toJsonSchema(TrackResponseSchema)),
        VersionListResponse: strip(toJsonSchema(VersionListResponseSchema)),
        VersionDetail: strip(toJsonSchema(VersionDetailSchema)),
        ReportRequest: strip(toJsonSchema(ReportRequestSchema, 'input')),
        ReportAccepted: strip(toJsonSchema(ReportAcceptedSchema)),
        ErrorBody: strip(toJsonSchema(ErrorBodySchema)),
      },
    },
  };
}
