import { createHash } from 'node:crypto';
import { MCP_MODERN_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION } from '@pkgreg/contracts';
import type { RequestHandler } from 'express';
import type { Env } from '../env.js';
import { SERVER_VERSION } from '../mcp/server-info.js';
import { EDGE_CACHE_CONTROL } from './route-table.js';

// Discovery before connecting (the MCP Server Card extension, SEP-2127, docs/discovery.md of
// modelcontextprotocol/experimental-ext-server-card): the card describes the edge's one endpoint and the
// revisions it speaks; an AI Catalog at /.well-known/ai-catalog.json points to it. The card sits at
// `<endpoint>/server-card`, the location the extension reserves, and at /.well-known/mcp/server-card.json,
// where earlier drafts and many clients look; /.well-known/mcp/catalog.json, the earlier drafts' MCP
// Catalog, redirects to the AI Catalog (docs/decisions.md). Public metadata only: sign-in is found as for
// any request, through the 401 and the protected resource metadata.

const CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
const CARD_TYPE = 'application/mcp-server-card+json';
const CATALOG_TYPE = 'application/ai-catalog+json';
const CATALOG_PATH = '/.well-known/ai-catalog.json';

/** The extension's CORS headers for hosted cards: any origin reads them and revalidates by ETag. */
const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET',
  'Access-Control-Allow-Headers': 'Content-Type, If-None-Match',
  'Access-Control-Expose-Headers': 'ETag',
};

/** `mcp.example.com` → `com.example.mcp`: the card's reverse-DNS namespace. */
function reverseDns(host: string): string {
  return host.split('.').reverse().join('.');
}

type ServerCardRouteId =
  | 'server-card'
  | 'server-card-well-known'
  | 'ai-catalog'
  | 'mcp-catalog'
  | 'server-card-other-methods'
  | 'server-card-well-known-other-methods'
  | 'ai-catalog-other-methods'
  | 'mcp-catalog-other-methods';

export function serverCardRoutes(env: Env): Record<ServerCardRouteId, RequestHandler> {
  const base = env.PKGREG_PUBLIC_BASE_URL;
  const { hostname } = new URL(base);
  const endpoint = `${base}/mcp`;
  const card = JSON.stringify({
    $schema: CARD_SCHEMA,
    name: `${reverseDns(hostname)}/${env.PKGREG_SERVER_NAME}`,
    version: SERVER_VERSION,
    title: 'pkgreg',
    description: 'Agent skills from the pkgreg registry, memory and agents over MCP',
    remotes: [
      {
        type: 'streamable-http',
        url: endpoint,
        supportedProtocolVersions: [MCP_MODERN_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION],
      },
    ],
  });
  // The AI Catalog's entry for a card: `urn:air:{publisher}:{namespace}:{name}`, the publisher's domain
  // and `mcp`; its title, description and version are the card's.
  const catalog = JSON.stringify({
    specVersion: '1.0',
    entries: [
      {
        identifier: `urn:air:${hostname}:mcp:${env.PKGREG_SERVER_NAME}`,
        type: CARD_TYPE,
        url: `${endpoint}/server-card`,
      },
    ],
  });
  // Both documents are built once, so is each ETag; `req.fresh` compares If-None-Match with it.
  const send = (body: string, type: string): RequestHandler => {
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    return (req, res) => {
      res.set(CORS_HEADERS);
      res.setHeader('Cache-Control', EDGE_CACHE_CONTROL.metadata as string);
      res.setHeader('ETag', etag);
      if (req.fresh) {
        res.status(304).end();
        return;
      }
      res.type(type).send(body);
    };
  };
  // A browser's preflight (a client sending If-None-Match asks for one); any other method is refused.
  const otherMethods: RequestHandler = (req, res) => {
    res.set(CORS_HEADERS);
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    res.setHeader('Allow', 'GET, HEAD, OPTIONS');
    res.status(405).json({ error: 'method_not_allowed', error_description: 'read-only: GET' });
  };
  return {
    'server-card': send(card, CARD_TYPE),
    'server-card-well-known': send(card, CARD_TYPE),
    'ai-catalog': send(catalog, CATALOG_TYPE),
    'mcp-catalog': (_req, res) => {
      res.set(CORS_HEADERS);
      res.setHeader('Cache-Control', EDGE_CACHE_CONTROL.metadata as string);
      res.redirect(308, CATALOG_PATH);
    },
    'server-card-other-methods': otherMethods,
    'server-card-well-known-other-methods': otherMethods,
    'ai-catalog-other-methods': otherMethods,
    'mcp-catalog-other-methods': otherMethods,
  };
}
