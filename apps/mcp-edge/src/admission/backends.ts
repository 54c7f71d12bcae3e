import type { BackendMode } from '@pkgreg/contracts';
import type { Runtime } from '@pkgreg/runtime';
import type { Env, HostedBinding, TunnelSession } from '../env.js';

// decisions.md, Backends: a request resolves by its Host. The same public contract holds in every mode;
// only the runtime its admitted calls run on differs. Resolving builds nothing: every backend exists from
// the start, and a hosted tenant's storage is provisioned by the first call that needs it.
//
// Each host is its own OAuth protected resource (issue 26): `{base}/mcp` for the development backend,
// the base URL with the host's name for a tenant or a tunnel session (`https://acme.mcp.example.com/mcp`
// for a base of `https://mcp.example.com`). Tokens name it as their audience (RFC 8707).

export interface Backend {
  mode: BackendMode;
  /** `development`, `hosted:<tenant>` or `local_tunnel:<session id>`: the audit record's backend. */
  label: string;
  /** Where this backend's admitted calls run. Dispatch asks, after admission: never a refused request. */
  runtime(): Runtime;
}

/** A host's backend and the MCP resource the host serves. */
export interface Resolved {
  backend: Backend;
  /** The resource URL a token must name (its `aud`) to be used on this host. */
  resource: string;
}

export interface BackendRuntimes {
  development: Runtime;
  /** A hosted tenant's runtime (tenant-provisioner.ts). */
  hosted(tenant: string): Runtime;
  /** A tunnel session's runtime; asked once per session, at start. */
  tunnel(session: TunnelSession): Runtime;
}

export interface BackendResolver {
  resolve(hostHeader: string | undefined): Resolved | undefined;
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1']);

/** Hostname of a Host header, lowercased, port dropped (`[::1]:4100` → `::1`). */
export function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  return h.split(':')[0] ?? '';
}

/** The MCP resource a host serves: the public base URL with that host's name, then `/mcp`. */
export function hostResource(baseUrl: string, hostname: string): string {
  const url = new URL(baseUrl);
  url.hostname = hostname.includes(':') ? `[${hostname}]` : hostname;
  return `${url.toString().replace(/\/+$/, '')}/mcp`;
}

export function createBackendResolver(env: Env, runtimes: BackendRuntimes): BackendResolver {
  const base = env.PKGREG_PUBLIC_BASE_URL;
  const baseHost = new URL(base).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const development: Resolved = {
    backend: {
      mode: 'development',
      label: 'development',
      runtime: () => runtimes.development,
    },
    resource: `${base}/mcp`,
  };
  const bindings: HostedBinding[] = env.PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON;
  const sessions: TunnelSession[] = env.PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON;
  const hosted = new Map<string, Backend>();
  for (const { tenant } of bindings) {
    hosted.set(tenant, {
      mode: 'hosted',
      label: `hosted:${tenant}`,
      runtime: () => runtimes.hosted(tenant),
    });
  }
  const tunnels = new Map<TunnelSession, Backend>();
  for (const session of sessions) {
    const runtime = runtimes.tunnel(session);
    tunnels.set(session, {
      mode: 'local_tunnel',
      label: `local_tunnel:${session.sessionId}`,
      runtime: () => runtime,
    });
  }
  // Each host's resolution is made once and kept; at most 10,000 of them, since a handle matches under
  // any domain and the hosts are then the callers' choice.
  const byHost = new Map<string, Resolved>();
  const resolved = (backend: Backend | undefined, host: string): Resolved | undefined => {
    if (!backend) return undefined;
    let found = byHost.get(host);
    if (found?.backend !== backend) {
      found = { backend, resource: hostResource(base, host) };
      if (byHost.size < 10_000) byHost.set(host, found);
    }
    return found;
  };

  function tunnel(session: TunnelSession): Backend | undefined {
    if (session.expiresAt && Date.parse(session.expiresAt) <= Date.now()) return undefined;
    return tunnels.get(session);
  }

  // Most requests carry the Host header the last one did: its hostname is kept, not cut out again.
  let lastHeader = '';
  let lastHost = '';
  return {
    resolve(hostHeader) {
      if (!hostHeader) return undefined;
      if (hostHeader !== lastHeader) {
        lastHost = hostnameOf(hostHeader);
        lastHeader = hostHeader;
      }
      const host = lastHost;
      const binding = bindings.find((b) => b.host === host);
      if (binding) return resolved(hosted.get(binding.tenant), host);
      const session = sessions.find((s) => s.host === host);
      if (session) return resolved(tunnel(session), host);
      if (host === baseHost || (env.EDGE_ALLOW_LOCALHOST && LOCAL_HOSTS.has(host))) return development;
      const handle = host.split('.')[0];
      if (host.includes('.') && handle) {
        const byHandle = bindings.find((b) => b.handle === handle);
        if (byHandle) return resolved(hosted.get(byHandle.tenant), host);
        const sessionByHandle = sessions.find((s) => s.handle === handle);
        if (sessionByHandle) return resolved(tunnel(sessionByHandle), host);
      }
      return undefined;
    },
  };
}
