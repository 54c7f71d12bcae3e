import { createDb, type Db, migrateToLatest } from '@pkgreg/db';
import type { Env, HostedBinding, TunnelSession } from '../env.js';

// decisions.md, Backends: a request resolves by its Host. The same public contract holds in every mode;
// only where the work runs differs.

interface RuntimeBackend {
  /** Where memory and tasks live for this backend. */
  db: Db;
  /** BullMQ prefix of this backend's runtime queues. */
  queuePrefix: string;
  /** Resolves once the backend's storage is usable (a hosted tenant's schema is migrated on first use). */
  ready: Promise<void>;
  /** Stable key for per-backend caches (queues). */
  key: string;
}
export type Backend =
  | ({ mode: 'development' } & RuntimeBackend)
  | ({ mode: 'hosted'; tenant: string } & RuntimeBackend)
  | { mode: 'local_tunnel'; session: TunnelSession; key: string };

export interface BackendResolver {
  resolve(hostHeader: string | undefined): Backend | undefined;
  close(): Promise<void>;
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '::1']);

/** Hostname of a Host header, lowercased, port dropped (`[::1]:4100` → `::1`). */
export function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  return h.split(':')[0] ?? '';
}

export function createBackendResolver(env: Env, db: Db): BackendResolver {
  const baseHost = new URL(env.PKGREG_PUBLIC_BASE_URL).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const development: Backend = {
    mode: 'development',
    db,
    queuePrefix: env.EDGE_QUEUE_PREFIX,
    ready: Promise.resolve(),
    key: 'development',
  };
  const hosted = new Map<string, Backend>();
  // Tenant migrations run one at a time: concurrent ones race on shared objects (extensions, types).
  let migrating: Promise<unknown> = Promise.resolve();
  const bindings: HostedBinding[] = env.PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON;
  const sessions: TunnelSession[] = env.PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON;

  function hostedBackend(tenant: string): Backend {
    let backend = hosted.get(tenant);
    if (!backend) {
      const schema = `tenant_${tenant}`;
      const tenantDb = createDb(env.DATABASE_URL, { schema, applicationName: `pkgreg-edge-${tenant}` });
      const ready = migrating.then(() => migrateToLatest(db, { schema })).then(() => undefined);
      migrating = ready.catch(() => undefined);
      // A failed migration is retried by the next request rather than cached forever.
      ready.catch(() => {
        hosted.delete(tenant);
        void tenantDb.destroy();
      });
      backend = {
        mode: 'hosted',
        tenant,
        db: tenantDb,
        queuePrefix: `${env.EDGE_QUEUE_PREFIX}:tenant:${tenant}`,
        ready,
        key: `hosted:${tenant}`,
      };
      hosted.set(tenant, backend);
    }
    return backend;
  }

  function tunnel(session: TunnelSession): Backend | undefined {
    if (session.expiresAt && Date.parse(session.expiresAt) <= Date.now()) return undefined;
    return { mode: 'local_tunnel', session, key: `tunnel:${session.sessionId}` };
  }

  return {
    resolve(hostHeader) {
      if (!hostHeader) return undefined;
      const host = hostnameOf(hostHeader);
      const binding = bindings.find((b) => b.host === host);
      if (binding) return hostedBackend(binding.tenant);
      const session = sessions.find((s) => s.host === host);
      if (session) return tunnel(session);
      if (host === baseHost || (env.EDGE_ALLOW_LOCALHOST && LOCAL_HOSTS.has(host))) return development;
      const handle = host.split('.')[0];
      if (host.includes('.') && handle) {
        const byHandle = bindings.find((b) => b.handle === handle);
        if (byHandle) return hostedBackend(byHandle.tenant);
        const sessionByHandle = sessions.find((s) => s.handle === handle);
        if (sessionByHandle) return tunnel(sessionByHandle);
      }
      return undefined;
    },
    async close() {
      await Promise.allSettled(
        [...hosted.values()].map((b) => (b.mode === 'hosted' ? b.db.destroy() : Promise.resolve())),
      );
    },
  };
}
