import {
  ErrorBodySchema,
  FILTER_NAMES,
  type FilterName,
  PackageFiltersSchema,
  toJsonSchema,
} from '@pkgreg/contracts';
import type { NamedSchema, ParameterDoc, RouteResponse } from '@pkgreg/server-kit';
import type { z } from 'zod';

// The OpenAPI text several routes of the table share: error answers, cache headers, the filters'
// descriptions. OpenAPI 3.1 uses JSON Schema 2020-12, so the contracts' schemas drop in as they are.

export const named = (name: string, schema: z.ZodType, io?: 'input' | 'output'): NamedSchema => ({
  name,
  schema,
  ...(io ? { io } : {}),
});

const ErrorBody = named('ErrorBody', ErrorBodySchema);

export const error = (description: string): RouteResponse => ({ description, json: ErrorBody });

/** A per-client or per-repository limit: the 429 and when to come back. */
export const tooMany = (description: string, retryAfter = 'Seconds until a request is accepted again') => ({
  ...error(description),
  headers: { 'Retry-After': { description: retryAfter, schema: { type: 'integer' } } },
});

export const contentHeaders = {
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
export const movingHeaders = {
  ETag: { schema: { type: 'string' } },
  'Cache-Control': {
    description: '`public, max-age=<HTTP_CACHE_MAX_AGE_S>, must-revalidate` (docs/caching.md)',
    schema: { type: 'string' },
  },
};

export const notModified = { 304: { description: 'Not modified (If-None-Match matched)' } };

export const versionErrors = {
  400: error('Invalid package path, version or file path'),
  404: error('Package, version or file not found'),
  410: error('Removed from the registry by its operator (the message says why)'),
};

/** Bytes of a version: also 410 while its package is quarantined (the manifest stays readable). */
export const contentErrors = {
  ...versionErrors,
  410: error(
    'Removed from the registry by its operator, or quarantined by it: no client gets the bytes (the message says why)',
  ),
};

/** Proof-bearing endpoints: `Authorization: Bearer <OIDC token | GitHub user token>` (docs/publishing.md). */
export const PROOF_SECURITY = [{ oidcToken: [] }, { codeHostToken: [] }];

export const proofErrors = {
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

const FILTER_DESCRIPTIONS: Record<FilterName, string> = {
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
 * The list's and search's filters, described by their values' schemas (the query schemas' input side
 * only says "a string": each is parsed from one).
 */
export function filterDocs(): Record<string, ParameterDoc> {
  const values = (
    toJsonSchema(PackageFiltersSchema) as { properties: Record<string, Record<string, unknown>> }
  ).properties;
  return Object.fromEntries(
    FILTER_NAMES.map((name) => [
      name,
      {
        description: `${FILTER_DESCRIPTIONS[name]}. Given at most once.`,
        schema: name === 'verified' ? { type: 'string', enum: ['true', 'false'] } : values[name],
      },
    ]),
  );
}

export const FEED_DOCS: Record<string, ParameterDoc> = {
  cursor: { description: 'The sync feed: go on after this `nextCursor` of an earlier answer (opaque)' },
  limit: { description: 'The sync feed: packages per page' },
  updatedSince: {
    description: 'The sync feed: start at the packages changed at or after this time',
    schema: { type: 'string', format: 'date-time' },
  },
};
