// The web UI's Content-Security-Policy, sent by registry-api with the built UI (web-static.ts) and by
// Vite's preview server (apps/web, which relaxes it for its dev server). SKILL.md is untrusted input
// rendered as HTML, so even after DOMPurify nothing inline may run: scripts only from our own origin, no
// plugins, no <base> hijack, no framing, no inline styles.
export const WEB_CONTENT_SECURITY_POLICY = [
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
