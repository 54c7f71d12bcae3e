// Content-Security-Policy of the web UI. SKILL.md is untrusted input rendered as HTML, so even after
// DOMPurify nothing inline may run: scripts only from our own origin, no plugins, no <base> hijack, no framing.
// Production (registry-api's web-static.ts sends the same policy) needs no inline styles either; the dev server
// does, because Vite injects CSS as <style> elements and talks HMR over a websocket.
export const PRODUCTION_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https: data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const DEV_CSP = PRODUCTION_CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'").replace(
  "connect-src 'self'",
  "connect-src 'self' ws: wss:",
);
