// Content-Security-Policy of the web UI: production's is the one registry-api sends with the built UI
// (@pkgreg/contracts, web.ts). The dev server needs inline styles and a websocket, because Vite injects
// CSS as <style> elements and talks HMR over a websocket.
import { WEB_CONTENT_SECURITY_POLICY } from '@pkgreg/contracts';

export const PRODUCTION_CSP = WEB_CONTENT_SECURITY_POLICY;

export const DEV_CSP = PRODUCTION_CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'").replace(
  "connect-src 'self'",
  "connect-src 'self' ws: wss:",
);
