import type { BackendMode } from '@pkgreg/contracts';
import type { Runtime } from '@pkgreg/runtime';
import type { Env, HostedBinding, TunnelSession } from '../env.js';

// decisions.md, Backends: a request resolves by its Host. The same public contract holds in every mode;
// only the runtime its admitted calls run on differs. Resolving builds nothing: every backend exists from
// the start, and a hosted tenant's storage is provisioned by the first call that needs it.

export interface Backend {
  mode: BackendMode;
  /** Where this backend's admitted calls run. Dispatch asks, after admission: never a refused request. */
  runtime(): Runtime;
}

export interface BackendRuntimes {
  development: Runtime;
  /** A hosted tenant's runtime (tenant-provisioner.ts). */
  hosted(tenant: string): Runtime;
  /** A tunnel session's runtime; asked once per session, at start. */
  tunnel(session: TunnelSession): Runtime;
}

export interface BackendResolver {
  resolve(hostHeader: string | undefined): Backend | undefined;
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1']);

/** Hostname of a Host header, lowercased, port dropped (`[::1]:4100` → `::1`). */
export function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  return h.split(':')[0] ?? '';
}

export function createBackendResolver(env: Env, runtimes: BackendRuntimes): BackendResolver {
  const baseHost = new URL(env.PKGREG_PUBLIC_BASE_URL).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const development: Backend = { mode: 'development', runtime: () => runtimes.development };
  const bindings: HostedBinding[] = env.PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON;
  const sessions: TunnelSession[] = env.PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON;
  const hosted = new Map<string, Backend>();
  for (const { tenant } of bindings) {
    hosted.set(tenant, { mode: 'hosted', runtime: () => runtimes.hosted(tenant) });
  }
  const tunnels = new Map<TunnelSession, Backend>();
  for (const session of sessions) {
    const runtime = runtimes.tunnel(session);
    tunnels.set(session, { mode: 'local_tunnel', runtime: () => runtime });
  }

  const hostedBackend = (binding: HostedBinding) => hosted.get(binding.tenant);
  function tunnel(session: TunnelSession): Backend | undefined {
    if (session.expiresAt && Date.parse(session.expiresAt) <= Date.now()) return undefined;
    return tunnels.get(session);
  }

  return {
    resolve(hostHeader) {
      if (!hostHeader) return undefined;
      const host = hostnameOf(hostHeader);
      const binding = bindings.find((b) => b.host === host);
      if (binding) return hostedBackend(binding);
      const session = sessions.find((s) => s.host === host);
      if (session) return tunnel(session);
      if (host === baseHost || (env.EDGE_ALLOW_LOCALHOST && LOCAL_HOSTS.has(host))) return development;
      const handle = host.split('.')[0];
      if (host.includes('.') && handle) {
        const byHandle = bindings.find((b) => b.handle === handle);
        if (byHandle) return hostedBackend(byHandle);
        const sessionByHandle = sessions.find((s) => s.handle === handle);
        if (sessionByHandle) return tunnel(sessionByHandle);
      }
      return undefined;
    },
  };
}
