import type { RouteHandlers, RouteSpec } from '@pkgreg/server-kit';

// Every HTTP route of the edge, declared once: the Express app registers its handlers from this table
// (app.ts), the POST /mcp fast path in front of it takes its name from it, requests are labelled in
// metrics and spans by its templates, and the tests walk it. WebSocket upgrades (tunnels) and the
// health routes (server-kit) are not in it.

/**
 * How long an answer may be kept: `no-store`; `metadata` (the OAuth metadata documents, five minutes);
 * `keys` (the JWKS, one minute, so a rotated key is fetched soon); `none` (no Cache-Control is sent).
 */
export type EdgeRouteCache = 'no-store' | 'metadata' | 'keys' | 'none';

const metadata = (id: string, path: string, summary: string) =>
  ({ id, method: 'get', path, cache: 'metadata', access: 'anonymous', summary, responses: {} }) as const;
/** Any other method at a discovery document's path: a CORS preflight's 204, else 405 (server-card.ts). */
const otherMethods = (id: string, path: string) =>
  ({
    id,
    method: 'all',
    path,
    cache: 'none',
    access: 'anonymous',
    summary: 'CORS preflight (OPTIONS: 204), else 405: the document is read-only',
    responses: {},
  }) as const;

export const EDGE_ROUTES = [
  {
    id: 'mcp',
    method: 'post',
    path: '/mcp',
    cache: 'none',
    access: 'scope',
    summary: 'MCP over Streamable HTTP, stateless (answered before Express by app.ts in production)',
    responses: {},
  },
  {
    id: 'mcp-other-methods',
    method: 'all',
    path: '/mcp',
    cache: 'none',
    access: 'anonymous',
    summary: 'Any other method at /mcp: 405 (no server-initiated stream, no session to end)',
    responses: {},
  },
  metadata(
    'authorization-server-metadata',
    '/.well-known/oauth-authorization-server/mcp',
    'OAuth authorization server metadata (RFC 8414), path-aware',
  ),
  metadata(
    'authorization-server-metadata-root',
    '/.well-known/oauth-authorization-server',
    'OAuth authorization server metadata at the root, for clients that probe it there',
  ),
  metadata(
    'protected-resource-metadata',
    '/.well-known/oauth-protected-resource/mcp',
    'OAuth protected resource metadata (RFC 9728), path-aware',
  ),
  metadata(
    'protected-resource-metadata-root',
    '/.well-known/oauth-protected-resource',
    'OAuth protected resource metadata at the root, for clients that probe it there',
  ),
  metadata('server-card', '/mcp/server-card', 'MCP Server Card (SEP-2127) at the location it reserves'),
  metadata(
    'server-card-well-known',
    '/.well-known/mcp/server-card.json',
    'The same Server Card where earlier drafts and many clients look',
  ),
  metadata('ai-catalog', '/.well-known/ai-catalog.json', 'AI Catalog naming the Server Card'),
  metadata(
    'mcp-catalog',
    '/.well-known/mcp/catalog.json',
    "Earlier drafts' MCP Catalog: 308 to the AI Catalog",
  ),
  otherMethods('server-card-other-methods', '/mcp/server-card'),
  otherMethods('server-card-well-known-other-methods', '/.well-known/mcp/server-card.json'),
  otherMethods('ai-catalog-other-methods', '/.well-known/ai-catalog.json'),
  otherMethods('mcp-catalog-other-methods', '/.well-known/mcp/catalog.json'),
  {
    id: 'jwks',
    method: 'get',
    path: '/mcp/jwks.json',
    cache: 'keys',
    access: 'anonymous',
    summary: "The edge's token signing keys (JWKS)",
    responses: {},
  },
  {
    id: 'authorize',
    method: 'get',
    path: '/mcp/authorize',
    cache: 'no-store',
    access: 'anonymous',
    summary: 'OAuth authorization endpoint: code + PKCE (S256), on to sign-in and consent',
    responses: {},
  },
  {
    id: 'authorize-resume',
    method: 'get',
    path: '/mcp/authorize/:uid',
    cache: 'no-store',
    access: 'anonymous',
    summary: 'Where a finished sign-in resumes its authorization request (the provider redirects here)',
    responses: {},
  },
  {
    id: 'interaction',
    method: 'get',
    path: '/mcp/interaction/:uid',
    cache: 'no-store',
    access: 'anonymous',
    summary: "Hands a sign-in over to the registry's consent page",
    responses: {},
  },
  {
    id: 'interaction-return',
    method: 'get',
    path: '/mcp/interaction/:uid/return',
    cache: 'no-store',
    access: 'anonymous',
    summary: "Takes the registry's consent decision back and finishes the sign-in",
    responses: {},
  },
  {
    id: 'token',
    method: 'post',
    path: '/mcp/token',
    cache: 'no-store',
    access: 'anonymous',
    summary: 'OAuth token endpoint (client_credentials, authorization_code, refresh_token); form body',
    responses: {},
  },
  {
    id: 'register',
    method: 'post',
    path: '/mcp/register',
    cache: 'no-store',
    access: 'anonymous',
    summary: 'Dynamic client registration (RFC 7591), for clients without a metadata document',
    responses: {},
  },
  {
    id: 'revoke',
    method: 'post',
    path: '/mcp/revoke',
    cache: 'no-store',
    access: 'anonymous',
    summary: 'Token revocation (RFC 7009) for refresh tokens',
    responses: {},
  },
] as const satisfies readonly RouteSpec<string, EdgeRouteCache>[];

export type EdgeRoute = (typeof EDGE_ROUTES)[number];
export type EdgeRouteId = EdgeRoute['id'];
export type EdgeHandlers = RouteHandlers<EdgeRoute>;

const BY_ID = new Map<string, EdgeRoute>(EDGE_ROUTES.map((route) => [route.id, route]));

/** The route of `id` (ids are checked by typecheck, so it is always there). */
export function edgeRouteOf(id: EdgeRouteId): EdgeRoute {
  return BY_ID.get(id) as EdgeRoute;
}

/** The Cache-Control each rule sends (`none`: the route sends none). */
export const EDGE_CACHE_CONTROL: Record<EdgeRouteCache, string | undefined> = {
  'no-store': 'no-store',
  metadata: 'public, max-age=300',
  keys: 'public, max-age=60',
  none: undefined,
};
