import { SCOPE_DESCRIPTIONS } from '@pkgreg/contracts';
import type { Response } from 'express';
import { escapeHtml, sendBrowserPage, signInSection } from './browser-page.js';
import type { ConsentRequest } from './mcp-consent.repository.js';
import { returnsToThisComputer } from './mcp-consent.service.js';

// The page GET /api/mcp/consent/{id} answers (docs/accounts.md, "Consent for MCP clients"), a browser
// page of the registry's own (browser-page.ts). Everything about the app (its name, logo, client id,
// redirect host) is what the app claimed: escaped, and said to be its own claim unless the operator
// registered it.

export type McpConsentPage =
  | {
      kind: 'consent';
      request: ConsentRequest;
      /** The consent's id, as in this page's address (checked well formed). */
      id: string;
      email: string;
      /** Where the web UI is (its connected apps page). */
      webOrigin: string;
      /** The edge's own MCP resource: a request for another (a tenant's or tunnel's host) names it. */
      edgeResource: string;
    }
  | { kind: 'sign-in'; signInUrl: string; devSignIn: boolean }
  | { kind: 'unknown' };

const STYLE = `.logo{width:48px;height:48px;object-fit:contain;float:right}
.warn{background:#fff4e5;border:1px solid #e0a040;padding:.5rem .75rem}
li{margin:.3rem 0}code{font-size:.85rem;color:#555}`;

/** The host of a client id that is an https URL (a client metadata document), else the id itself. */
function clientIdHost(clientId: string): string {
  return URL.parse(clientId)?.host || clientId;
}

/** What the app calls itself, at most 100 characters; a stand-in when it gave no name. */
function nameOf(request: ConsentRequest): string {
  const name = request.client_name?.trim().slice(0, 100);
  if (name) return name;
  return request.client_kind === 'metadata_document' ? clientIdHost(request.client_id) : 'An unnamed app';
}

/** The logo, only for an app identified by its metadata document and only from https. */
function logoOf(request: ConsentRequest): string | undefined {
  if (request.client_kind !== 'metadata_document' || !request.logo_uri) return undefined;
  return URL.parse(request.logo_uri)?.protocol === 'https:' ? request.logo_uri : undefined;
}

function vouching(request: ConsentRequest): string {
  switch (request.client_kind) {
    case 'metadata_document':
      return `<p>Identified by <strong>${escapeHtml(clientIdHost(request.client_id))}</strong>. Its name and logo are its own claim.</p>`;
    case 'registered':
      return `<p class="warn"><strong>Unverified app:</strong> it registered itself and its name is its own claim.</p>`;
    case 'operator':
      return `<p>Registered by this server's operator.</p>`;
  }
}

function returnsTo(host: string): string {
  return returnsToThisComputer(host)
    ? `an app on this computer (<code>${escapeHtml(host)}</code>)`
    : `<strong>${escapeHtml(host)}</strong>`;
}

/** Where the app will use pkgreg, when not the edge's own address (a tenant's or tunnel's host). */
function usedAt(page: Extract<McpConsentPage, { kind: 'consent' }>): string {
  if (page.request.resource === page.edgeResource) return '';
  return `<p class="warn">It will use pkgreg at <strong>${escapeHtml(page.request.resource)}</strong>.</p>`;
}

function scopeItems(scopes: readonly string[]): string {
  const described = SCOPE_DESCRIPTIONS as Readonly<Record<string, string>>;
  return scopes
    .map((scope) => {
      const words = described[scope];
      return `<li>${words ? `${escapeHtml(words)} ` : ''}<code>${escapeHtml(scope)}</code></li>`;
    })
    .join('');
}

function consentBody(page: Extract<McpConsentPage, { kind: 'consent' }>): string {
  const { request } = page;
  const logo = logoOf(request);
  return `${logo ? `<img class="logo" src="${escapeHtml(logo)}" alt="" width="48" height="48" referrerpolicy="no-referrer">` : ''}
<h1>Allow ${escapeHtml(nameOf(request))} to use pkgreg as you?</h1>
${vouching(request)}
<p>It will be able to:</p>
<ul>${scopeItems(request.scopes)}</ul>
${usedAt(page)}<p>Then you go back to ${returnsTo(request.redirect_host)}.</p>
<p class="note">Signed in as ${escapeHtml(page.email)}. Allowed apps are listed, and disconnected, in <a href="${escapeHtml(`${page.webOrigin}/settings/connected-apps`)}">Connected apps</a>.</p>
<form method="post" action="/api/mcp/consent/${escapeHtml(page.id)}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></form>`;
}

function body(page: McpConsentPage, nonce: string): string {
  switch (page.kind) {
    case 'consent':
      return consentBody(page);
    case 'sign-in':
      return signInSection(
        `An app asks to use pkgreg as you. <a href="${escapeHtml(page.signInUrl)}">Sign in</a> to see what it asks for.`,
        page.devSignIn,
        nonce,
      );
    case 'unknown':
      return `<h1>This sign-in request is unknown or has expired</h1><p>Start again from your app.</p>`;
  }
}

export function sendMcpConsentPage(res: Response, page: McpConsentPage, status = 200): void {
  sendBrowserPage(res, {
    title: 'Allow an app · pkgreg',
    body: (nonce) => body(page, nonce),
    status,
    // Chrome checks form-action against every redirect after the post: the edge, then the app's
    // redirect_uri, which may redirect on to a scheme of its own (claude.ai to claude://). The form posts
    // here only, and every redirect after it is the edge's (configured) or one it validated.
    ...(page.kind === 'consent' ? { formTargets: 'any' as const } : {}),
    httpsImages: page.kind === 'consent' && logoOf(page.request) !== undefined,
    style: STYLE,
  });
}
