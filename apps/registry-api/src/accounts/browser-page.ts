import { randomBytes } from 'node:crypto';
import type { Response } from 'express';

// What the registry's own browser pages share (the CLI sign-in, the consent of MCP clients): each is
// self-contained (no external script, style or font), never cached, never framed (a framed button could
// be clicked by a page the person cannot see), sends no referrer on, and runs its one script and style
// by a nonce of this answer only.

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}
h1{font-size:1.3rem}button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.5rem}
.note{color:#555;font-size:.9rem}input{font-size:1rem;padding:.3rem}`;

export interface BrowserPage {
  /** The tab's title. */
  title: string;
  /** The body's HTML, given this answer's nonce (for an inline script). */
  body: (nonce: string) => string;
  status?: number;
  /**
   * Origins besides the registry's own a form may post to or be redirected to (CSP form-action); `any`
   * leaves form-action out, for a form whose answer redirects along a chain the page cannot name.
   */
  formTargets?: readonly string[] | 'any';
  /** Lets https images load (an app's logo). */
  httpsImages?: boolean;
  /** CSS added to the shared style. */
  style?: string;
}

export function sendBrowserPage(res: Response, page: BrowserPage): void {
  const nonce = randomBytes(16).toString('base64');
  const formAction =
    page.formTargets === 'any' ? '' : `form-action ${["'self'", ...(page.formTargets ?? [])].join(' ')}; `;
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; ${page.httpsImages ? 'img-src https:; ' : ''}connect-src 'self'; ${formAction}frame-ancestors 'none'; base-uri 'none'`,
  );
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res
    .status(page.status ?? 200)
    .type('html')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(page.title)}</title><style nonce="${nonce}">${STYLE}${page.style ?? ''}</style></head><body><main>${page.body(nonce)}</main></body></html>`,
    );
}

/**
 * "Sign in to pkgreg" with `lead` (HTML holding the link to the web UI's sign-in), and, when the
 * development sign-in is on, a form that signs in here and reloads the page.
 */
export function signInSection(lead: string, devSignIn: boolean, nonce: string): string {
  return `<h1>Sign in to pkgreg</h1>
<p>${lead}</p>${
    devSignIn
      ? `<form id="dev"><p class="note">Development sign-in (DEV_SIGN_IN is on):</p>
<input name="handle" placeholder="handle" pattern="[a-z0-9][a-z0-9-]{0,38}" required> <button type="submit">Sign in</button></form>
<script nonce="${nonce}">document.getElementById('dev').addEventListener('submit',async(e)=>{e.preventDefault();
const handle=new FormData(e.target).get('handle');
const res=await fetch('/api/auth/dev/sign-in',{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify({handle})});
if(res.ok)location.reload();else alert('Sign-in failed');});</script>`
      : ''
  }`;
}
