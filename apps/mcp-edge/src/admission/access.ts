import { deriveNamespace, NAMESPACE_PATTERN } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { HostedBinding, TunnelSession } from '../env.js';
import { type AccessRows, readAccessRows, readAccessVersion } from './access.repository.js';
import type { Backend } from './backends.js';

// Who may call (issue 26): a hosted tenant or a tunnel session serves only the clients it names (its
// seeded setting's `clients` and the stored grants), and a disabled client's tokens stop soon after, not
// at their expiry. Both can change while edges run, on any edge or by hand in SQL; every change bumps one
// version row (by trigger). A request is judged by a read of that version that started at most
// `maxAgeMs` (EDGE_ACCESS_MAX_AGE_MS) before it arrived, on every edge; a changed version reloads the
// whole state. A busy edge reads once per `maxAgeMs` and an idle one not at all (docs/benchmarks.md,
// "MCP edge: who may call", for what 1 ms cost). One read runs at a time; calls it is too old for share
// the next.

export interface AccessState {
  /** Whether the client `namespace` may use `backend` (the development backend: every client). */
  allows(backend: Backend, namespace: string): boolean;
  /**
   * Whether the person `accountId` may use `backend` with any app they signed in with: they own it, or
   * are a member of the organisation that does (the development backend: everyone).
   */
  allowsPerson(backend: Backend, accountId: string): boolean;
  /** Whether a client of the edge's own authorization server is disabled. */
  disabled(issuer: string, clientId: string): boolean;
  /**
   * Whether the person `subject` revoked the app `clientId` (the web UI's connected apps) after a token
   * of the edge's own issuer was issued to it at `issuedAt` (seconds).
   */
  revoked(issuer: string, clientId: string, subject: string, issuedAt: number): boolean;
}

export interface Access {
  /**
   * The state as of a version read that started at most `maxAgeMs` (default: the options') before this
   * call: at once when the last read is that recent, else once a read is. 0 asks for a read after now.
   */
  current(maxAgeMs?: number): AccessState | Promise<AccessState>;
}

export interface AccessOptions {
  db: Db;
  /** The built-in authorization server's issuer: client ids in settings and `disabled` are its clients. */
  issuer: string;
  /** Seeded tenants and sessions: their `clients` are granted beside the stored grants. */
  hosted: readonly HostedBinding[];
  tunnels: readonly TunnelSession[];
  /** How long the edge's tokens live: revocations older than this no longer matter. */
  tokenTtlSeconds: number;
  /** How old the read behind a request's verdict may be: a change takes effect within this on every edge. */
  maxAgeMs: number;
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
    const people = new Map<string, Set<string>>();
    for (const o of rows.owners) {
      const label = `${o.backend_mode}:${o.backend_id}`;
      let set = people.get(label);
      if (!set) {
        set = new Set();
        people.set(label, set);
      }
      set.add(o.account_id);
    }
    const disabled = new Set(rows.disabledClients);
    // Keyed by client and person; the value is when (seconds) the person revoked the app.
    const revokedAt = new Map(
      rows.revokedDelegations.map((r) => [`${r.client_id}\n${r.account_id}`, r.revoked_at.getTime() / 1000]),
    );
    return {
      version: rows.version,
      allows: (backend, namespace) =>
        backend.mode === 'development' || grants.get(backend.label)?.has(namespace) === true,
      allowsPerson: (backend, accountId) =>
        backend.mode === 'development' || people.get(backend.label)?.has(accountId) === true,
      disabled: (tokenIssuer, clientId) => tokenIssuer === issuer && disabled.has(clientId),
      revoked: (tokenIssuer, clientId, subject, issuedAt) => {
        if (tokenIssuer !== issuer) return false;
        const at = revokedAt.get(`${clientId}\n${subject}`);
        return at !== undefined && issuedAt <= at;
      },
    };
  }

  let snapshot: Snapshot | undefined;
  let loading: Promise<Snapshot> | undefined;
  /** When the version read behind `snapshot` started (performance.now()). */
  let snapshotAt = Number.NEGATIVE_INFINITY;
  /** The version read running now, and the one to start when it ends (for calls it is too old for). */
  let running: { startedAt: number; state: Promise<AccessState> } | undefined;
  let next: Promise<AccessState> | undefined;

  function startRead(): { startedAt: number; state: Promise<AccessState> } {
    const startedAt = performance.now();
    const read = {
      startedAt,
      state: refresh().then((state) => {
        snapshotAt = Math.max(snapshotAt, startedAt);
        return state;
      }),
    };
    running = read;
    read.state
      .finally(() => {
        if (running === read) running = undefined;
      })
      // A refusal that never asks (an unknown host) must not leave a failed read unhandled.
      .catch(() => {});
    return read;
  }

  async function refresh(): Promise<AccessState> {
    const version = await readAccessVersion(db);
    if (snapshot?.version === version) return snapshot;
    // Loads run one at a time, each reading after the previous ended: one started before this version
    // committed may be older, so wait for one that is not.
    for (;;) {
      loading ??= readAccessRows(db, options.tokenTtlSeconds)
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
    current(maxAgeMs = options.maxAgeMs) {
      const now = performance.now();
      if (snapshot && now - snapshotAt <= maxAgeMs) return snapshot;
      if (running && now - running.startedAt <= maxAgeMs) return running.state;
      if (!running) return startRead().state;
      // One read at a time: the calls the running one is too old for share the next.
      next ??= running.state
        .catch(() => undefined)
        .then(() => {
          next = undefined;
          return (running ?? startRead()).state;
        });
      return next;
    },
  };
}
