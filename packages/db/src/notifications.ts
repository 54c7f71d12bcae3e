import pg from 'pg';
import { type Db, poolOf } from './create-db.js';

// PostgreSQL LISTEN on a connection of its own, for in-memory state that must follow the database's
// writes (the registry's access cache). A notification is delivered on its writer's commit. While the
// connection is down, `listening` is false and `onLost` has been called: whatever was kept from the
// notifications must be dropped and not kept again until `listening` is true once more.

export interface Notifications {
  /** True while LISTEN is in force: state kept now will hear of the next change. */
  readonly listening: boolean;
  close(): Promise<void>;
}

export interface NotificationHandlers {
  onNotification: (payload: string) => void;
  /** The connection dropped (or never came up): notifications may have been missed. */
  onLost: () => void;
}

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;

/** LISTENs on `channel` with the connection settings of the pool under `db`, reconnecting with backoff. */
export function listenFor(db: Db, channel: string, handlers: NotificationHandlers): Notifications {
  const pool = poolOf(db);
  if (!pool) throw new Error('listenFor needs a Db made by createDb');
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`"${channel}" is not a plain channel name`);
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let retryMs = RETRY_MIN_MS;
  let timer: NodeJS.Timeout | undefined;

  const lost = () => {
    if (listening) handlers.onLost();
    listening = false;
  };

  const retry = () => {
    lost();
    // A pool that is ending (its Db destroyed) takes its listener with it.
    if (closed || (pool as pg.Pool & { ending?: boolean }).ending) return;
    timer = setTimeout(connect, retryMs);
    timer.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  };

  async function connect(): Promise<void> {
    // Named, so an operator (or a test) can tell it from the pool's connections in pg_stat_activity.
    const next = new pg.Client({ ...pool?.options, application_name: `pkgreg-listen-${channel}` });
    client = next;
    let failed = false;
    const fail = () => {
      if (failed) return;
      failed = true;
      next.end().catch(() => {});
      if (client === next) retry();
    };
    next.on('error', fail);
    next.on('end', fail);
    next.on('notification', (message) => handlers.onNotification(message.payload ?? ''));
    try {
      await next.connect();
      await next.query(`listen ${channel}`);
    } catch {
      return fail();
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    listening = true;
    retryMs = RETRY_MIN_MS;
  }

  void connect();
  return {
    get listening() {
      return listening && !closed;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      lost();
      const open = client;
      client = undefined;
      await open?.end().catch(() => {});
    },
  };
}
