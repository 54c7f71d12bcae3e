import { NAMESPACE_PATTERN } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { HostedBinding, TunnelSession } from '../env.js';
import { deriveNamespace } from '../oauth/verify-token.js';
import { type AccessRows, readAccessRows, readAccessVersion } from './access.repository.js';
import type { Backend } from './backends.js';

// Who may call (issue 26): a hosted tenant or a tunnel session serves only the clients it names (its
// seeded setting's `clients` and the stored grants), and a disabled client's tokens stop at once, not at
// their expiry. Both can change while edges run, on any edge or by hand in SQL; every change bumps one
// version row (by trigger). Each event-loop turn reads that version once for all its requests, and a
// changed version reloads the whole state, so a request that arrives after a change committed is
// judged by it, on every edge, at the cost of one small read per turn (docs/benchmarks.md).

export interface AccessState {
  /** Whether the client `namespace` may use `backend` (the development backend: every client). */
  allows(backend: Backend, namespace: string): boolean;
  /** Whether a client of the edge's own authorization server is disabled. */
  disabled(issuer: string, clientId: string): boolean;
}

export interface Access {
  /** The state as of this event-loop turn (reloaded when it changed since the last one). */
  current(): Promise<AccessState>;
}

export interface AccessOptions {
  db: Db;
  /** The built-in authorization server's issuer: client ids in settings and `disabled` are its clients. */
  issuer: string;
  /** Seeded tenants and sessions: their `clients` are granted beside the stored grants. */
  hosted: readonly HostedBinding[];
  tunnels: readonly TunnelSession[];
}

/** A `clients` entry as a namespace: `app:…` as it is, anything else a client id of our own issuer. */
export function clientNamespace(issuer: string, entry: string): string {
  return NAMESPACE_PATTERN.test(entry) ? entry : deriveNamespace(issuer, entry);
}

interface Snapshot extends AccessState {
  version: number;
}

export function createAccess(options: AccessOptions): Access {
  const { db, issuer } = options;
  // Seeds never change while the process runs: their sets are built once and copied into each snapshot.
  const seeded = new Map<string, string[]>();
  const seed = (label: string, clients: readonly string[]) =>
    seeded.set(label, [...(seeded.get(label) ?? []), ...clients.map((c) => clientNamespace(issuer, c))]);
  for (const b of options.hosted) seed(`hosted:${b.tenant}`, b.clients);
  for (const s of options.tunnels) seed(`local_tunnel:${s.sessionId}`, s.clients);

  function build(rows: AccessRows): Snapshot {
    const grants = new Map<string, Set<string>>();
    for (const [label, namespaces] of seeded) grants.set(label, new Set(namespaces));
    for (const g of rows.grants) {
      const label = `${g.backend_mode}:${g.backend_id}`;
      let set = grants.get(label);
      if (!set) {
        set = new Set();
        grants.set(label, set);
      }
      set.add(g.namespace);
    }
    const disabled = new Set(rows.disabledClients);
    return {
      version: rows.version,
      allows: (backend, namespace) =>
        backend.mode === 'development' || grants.get(backend.label)?.has(namespace) === true,
      disabled: (tokenIssuer, clientId) => tokenIssuer === issuer && disabled.has(clientId),
    };
  }

  let snapshot: Snapshot | undefined;
  let loading: Promise<Snapshot> | undefined;
  let turn: Promise<AccessState> | undefined;

  async function refresh(): Promise<AccessState> {
    const version = await readAccessVersion(db);
    if (snapshot?.version === version) return snapshot;
    // Loads run one at a time, each reading after the previous ended: one started before this version
    // committed may be older, so wait for one that is not.
    for (;;) {
      loading ??= readAccessRows(db)
        .then(build)
        .finally(() => {
          loading = undefined;
        });
      const loaded = await loading;
      snapshot = loaded;
      if (loaded.version >= version) return loaded;
    }
  }

  return {
    current() {
      if (!turn) {
        const read = refresh();
        // Refusals that never ask (an unknown host) must not leave it unhandled.
        read.catch(() => {});
        turn = read;
        setImmediate(() => {
          turn = undefined;
        });
      }
      return turn;
    },
  };
}
