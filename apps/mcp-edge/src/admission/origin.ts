import type { Env } from '../env.js';

export interface OriginPolicy {
  allows(origin: string): boolean;
}

const LOCAL_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/i;

/**
 * MCP transports: servers must validate Origin to stop DNS rebinding. A request without Origin (a
 * non-browser client) passes; one with an Origin must be on the list: the configured origins, else the
 * public base origin plus localhost origins (when localhost is allowed).
 */
export function createOriginPolicy(env: Env): OriginPolicy {
  const configured = env.EDGE_ALLOWED_ORIGINS.map((o) => o.replace(/\/+$/, '').toLowerCase());
  const allowed = new Set(
    configured.length ? configured : [new URL(env.PKGREG_PUBLIC_BASE_URL).origin.toLowerCase()],
  );
  const localhost = !configured.length && env.EDGE_ALLOW_LOCALHOST;
  return {
    allows(origin) {
      const o = origin.toLowerCase();
      return allowed.has(o) || (localhost && LOCAL_ORIGIN.test(o));
    },
  };
}
