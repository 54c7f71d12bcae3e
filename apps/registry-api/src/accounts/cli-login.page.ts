import { randomBytes } from 'node:crypto';
import type { CliAuthorizeQuery } from '@pkgreg/contracts';
import type { Response } from 'express';

// The page GET /api/cli/authorize answers (docs/cli-auth.md): self-contained (no external asset), never
// cached, never framed (a framed Approve button could be clicked by a page the person cannot see), its
// one script allowed by a nonce, its form allowed to post here and to be redirected only to the CLI's
// own loopback address.

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

export type CliAuthorizePage =
  | { kind: 'approve'; query: CliAuthorizeQuery; email: string }
  | { kind: 'sign-in'; signInUrl: string; devSignIn: boolean }
  | { kind: 'invalid'; message: string };

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}
h1{font-size:1.3rem}button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.5rem}
.note{color:#555;font-size:.9rem}input{font-size:1rem;padding:.3rem}`;

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
      return `<h1>Sign in to pkgreg</h1>
<p>The pkgreg CLI asks to sign in. <a href="${escapeHtml(page.signInUrl)}">Sign in</a>, then come back to this page.</p>${
        page.devSignIn
          ? `<form id="dev"><p class="note">Development sign-in (DEV_SIGN_IN is on):</p>
<input name="handle" placeholder="handle" pattern="[a-z0-9][a-z0-9-]{0,38}" required> <button type="submit">Sign in</button></form>
<script nonce="${nonce}">document.getElementById('dev').addEventListener('submit',async(e)=>{e.preventDefault();
const handle=new FormData(e.target).get('handle');
const res=await fetch('/api/auth/dev/sign-in',{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify({handle})});
if(res.ok)location.reload();else alert('Sign-in failed');});</script>`
          : ''
      }`;
    case 'invalid':
      return `<h1>This sign-in link is not valid</h1><p>${escapeHtml(page.message)}</p><p class="note">Run <code>pkgreg login</code> again.</p>`;
  }
}

export function sendCliAuthorizePage(res: Response, page: CliAuthorizePage, status = 200): void {
  const nonce = randomBytes(16).toString('base64');
  // The form posts here, and its answer is a 303 to the CLI's loopback address: form-action must allow it.
  const redirect = page.kind === 'approve' ? new URL(page.query.redirect_uri).origin : '';
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'${redirect ? ` ${redirect}` : ''}; frame-ancestors 'none'; base-uri 'none'`,
  );
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res
    .status(status)
    .type('html')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>pkgreg CLI sign-in</title><style nonce="${nonce}">${STYLE}</style></head><body>${body(page, nonce)}</body></html>`,
    );
}
