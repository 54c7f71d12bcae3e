import type { CliAuthorizeQuery } from '@pkgreg/contracts';
import type { Response } from 'express';
import { escapeHtml, sendBrowserPage, signInSection } from './browser-page.js';

// The page GET /api/cli/authorize answers (docs/cli-auth.md), a browser page of the registry's own
// (browser-page.ts): its form allowed to post here and to be redirected only to the CLI's own loopback
// address.

export type CliAuthorizePage =
  | { kind: 'approve'; query: CliAuthorizeQuery; email: string }
  | { kind: 'sign-in'; signInUrl: string; devSignIn: boolean }
  | { kind: 'invalid'; message: string };

function hidden(query: CliAuthorizeQuery): string {
  return Object.entries(query)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
}

function body(page: CliAuthorizePage, nonce: string): string {
  switch (page.kind) {
    case 'approve':
      return `<h1>Sign in pkgreg CLI on this computer as ${escapeHtml(page.email)}?</h1>
<p class="note">The CLI that opened this page gets an access token that can read and publish everything your account can. Approve only if you just ran <code>pkgreg login</code>.</p>
<form method="post" action="/api/cli/authorize">${hidden(page.query)}
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button></form>`;
    case 'sign-in':
      return signInSection(
        `The pkgreg CLI asks to sign in. <a href="${escapeHtml(page.signInUrl)}">Sign in</a>, then come back to this page.`,
        page.devSignIn,
        nonce,
      );
    case 'invalid':
      return `<h1>This sign-in link is not valid</h1><p>${escapeHtml(page.message)}</p><p class="note">Run <code>pkgreg login</code> again.</p>`;
  }
}

export function sendCliAuthorizePage(res: Response, page: CliAuthorizePage, status = 200): void {
  // The form posts here, and its answer is a 303 to the CLI's loopback address: form-action must allow it.
  const redirect = page.kind === 'approve' ? [new URL(page.query.redirect_uri).origin] : [];
  sendBrowserPage(res, {
    title: 'pkgreg CLI sign-in',
    body: (nonce) => body(page, nonce),
    status,
    formTargets: redirect,
  });
}
