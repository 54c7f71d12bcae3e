import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './database.js';

// int8 (bigint, bigserial, count(*)) as number: our counters stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

export interface CreateDbOptions {
  /** Pool size; defaults to 10. */
  max?: number;
  /** Postgres schema to put first on the search_path (hosted tenants). */
  schema?: string;
  applicationName?: string;
  /** Session settings sent with each new connection (`-c name=value` startup options). */
  settings?: Record<string, string>;
  /**
   * Called when an idle pooled connection fails (server restart, a dropped test database). pg removes the
   * connection itself; without a listener the pool's 'error' event would crash the process.
   */
  onIdleError?: (error: Error) => void;
  /**
   * How long a query waits for a connection (a new one, or a free one of a busy pool) before it fails;
   * defaults to 10 s. Without it a query waits for good on a server that does not answer.
   */
  connectionTimeoutMs?: number;
}

export type Db = Kysely<Database>;

/** A pg pool (createPool, poolOf), for the statements that run on pg directly. */
export type PgPool = pg.Pool;

export function createPool(url: string, options: CreateDbOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'pkgreg',
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
    // A peer that vanished without closing (a dropped network) is noticed by TCP keepalive.
    keepAlive: true,
    ...startupOptions(options),
  });
  const onError = options.onIdleError ?? (() => {});
  pool.on('error', onError);
  // A connection checked out between two queries (a transaction, a COPY) has no listener of the pool's:
  // a server shutdown there would be an unhandled 'error' and end the process. The query that uses it
  // next fails instead, and the pool drops it on release.
  pool.on('connect', (client) => client.on('error', onError));
  return pool;
}

function startupOptions(options: CreateDbOptions): { options?: string } {
  const settings: Record<string, string> = { ...options.settings };
  if (options.schema) settings.search_path = `${quoteIdent(options.schema)},public`;
  const entries = Object.entries(settings);
  if (!entries.length) return {};
  // libpq option syntax: spaces separate options, so a value's spaces are backslash-escaped.
  return { options: entries.map(([name, value]) => `-c ${name}=${value.replaceAll(' ', '\\ ')}`).join(' ') };
}

// The pg pool under each Db createDb made, for the few hot statements that run as named (prepared)
// statements: Kysely sends every query unnamed, so Postgres parses and plans it on every execution.
const pools = new WeakMap<Db, pg.Pool>();

export function createDb(url: string, options: CreateDbOptions = {}): Db {
  const pool = createPool(url, options);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}

/** The pool under a Db made by createDb (undefined for a transaction or a Db made elsewhere). */
export function poolOf(db: Db): pg.Pool | undefined {
  return pools.get(db);
}

/** poolOf for code that cannot work without the pool: throws, naming `user`, when there is none. */
export function requirePool(db: Db, user: string): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error(`${user} needs a Db made by createDb (it runs statements on its pg pool)`);
  return pool;
}

/**
 * Runs `text` as the named (prepared) statement `name` on the pool under `db`, so each connection
 * parses and plans it once; inside a transaction (no pool of its own) it runs unnamed through Kysely,
 * on the transaction's connection. Every call with one name must send the same text.
 */
export async function queryNamed<R extends pg.QueryResultRow>(
  db: Kysely<Database>,
  name: string,
  text: string,
  values: readonly unknown[],
): Promise<R[]> {
  const pool = pools.get(db);
  if (pool) return (await pool.query<R>({ name, text, values: [...values] })).rows;
  return (await db.executeQuery<R>(CompiledQuery.raw(text, [...values]))).rows;
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
