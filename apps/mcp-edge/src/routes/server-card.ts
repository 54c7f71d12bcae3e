import { MCP_MODERN_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION } from '@pkgreg/contracts';
import type { RequestHandler } from 'express';
import type { Env } from '../env.js';
import { SERVER_VERSION } from '../mcp/server-info.js';
import { EDGE_CACHE_CONTROL } from './route-table.js';

// Discovery before connecting (the MCP Server Card extension, SEP-2127): the card describes the edge's
// one endpoint and the revisions it speaks; an MCP Catalog at /.well-known/mcp/catalog.json points to it.
// The card sits at `<endpoint>/server-card`, the location the extension reserves, and at
// /.well-known/mcp/server-card.json, where earlier drafts and many clients look. Public metadata only:
// sign-in is found as for any request, through the 401 and the protected resource metadata.

const CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json';
const CARD_TYPE = 'application/mcp-server-card+json';

/** `mcp.example.com` → `com.example.mcp`: the card's reverse-DNS namespace. */
function reverseDns(host: string): string {
  return host.split('.').reverse().join('.');
}

export function serverCardRoutes(
  env: Env,
): Record<'server-card' | 'server-card-well-known' | 'mcp-catalog', RequestHandler> {
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
  const catalog = JSON.stringify({
    specVersion: 'draft',
    entries: [
      {
        identifier: `urn:air:${hostname}:${env.PKGREG_SERVER_NAME}`,
        displayName: 'pkgreg',
        type: CARD_TYPE,
        url: `${endpoint}/server-card`,
      },
    ],
  });
  const send =
    (body: string, type: string): RequestHandler =>
    (_req, res) => {
      // Read by browser-based clients from any origin: public, read-only metadata.
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Cache-Control', EDGE_CACHE_CONTROL.metadata as string);
      res.type(type).send(body);
    };
  return {
    'server-card': send(card, CARD_TYPE),
    'server-card-well-known': send(card, CARD_TYPE),
    'mcp-catalog': send(catalog, 'application/json'),
  };
}
