import type { Db, PgPool } from '@pkgreg/db';
import { privateReadableSql, type ReadAccess } from '@pkgreg/registry';
import { sql } from 'kysely';
import type { Downloader } from './downloaders.js';

/** One package's calls in a batch; `id` when the recorder already knows it (see KnownIds). */
export interface DownloadCount {
  scope: string;
  name: string;
  count: number;
  id?: string;
  /** The distinct downloader digests (int8 decimals, downloaders.ts) among the calls. */
  downloaders?: Set<string>;
}

/** What a batch insert learned: packages looked up (with their ids), packages not visible. */
export interface BatchOutcome {
  /** The list-change generation the lookups ran at (undefined when nothing needed a lookup). */
  generation?: number;
  found: Array<{ scope: string; name: string; id: string }>;
  missing: Array<{ scope: string; name: string }>;
}

// ONE statement per batch: visibility check and insert together, so a call is counted exactly when it
// is answered 200 (a package delisted in between is either counted and 200, or not and 404).
//
// Ids the recorder sends ($4) were looked up at list-change generation $5. The trigger on packages
// bumps that sequence on every insert, delete and status (or name) change, so while it has not moved
// no package has become invisible and those ids are counted without a lookup. When it moved, every
// package of the batch is looked up again by scope and name. The whole batch is one row of parallel
// arrays in the order the recorder sent them, NULL for a package not counted, so that the downloader
// refs ($7, positions in those arrays) stay right. The result lists only what was looked up, and the
// packages not found.
const INSERT_BATCH_SQL = `
  with gen as (
    select case when is_called then last_value else 0 end as value from package_list_changes
  ), wanted as (
    select * from unnest($1::text[], $2::text[], $3::int[], $4::uuid[]) with ordinality as w(scope, name, n, id, ord)
  ), trusted as (
    select w.ord, w.id from wanted w, gen where w.id is not null and gen.value = $5
  ), looked_up as (
    select w.ord, p.id, w.scope, w.name from wanted w cross join gen
    join packages p on p.scope = w.scope and p.name = w.name and p.status <> 'delisted' and not p.private
    where w.id is null or gen.value <> $5
  ), counted as (
    select ord, id from trusted union all select ord, id from looked_up
  ), inserted as (
    insert into package_download_batches (package_ids, counts, day, downloader_refs, downloaders)
    select array_agg(c.id order by w.ord), array_agg(w.n order by w.ord), $6::date, $7::int4[], $8::int8[]
    from wanted w left join counted c on c.ord = w.ord
    having count(c.id) > 0
  )
  select l.scope, l.name, l.id, g.value as generation from looked_up l, gen g
  union all
  select w.scope, w.name, null, g.value from wanted w, gen g
  where (w.id is null or g.value <> $5)
    and not exists (select 1 from looked_up l where l.ord = w.ord)`;

interface BatchRow {
  scope: string;
  name: string;
  id: string | null;
  generation: string;
}

// Array parameters as Postgres array literals, built directly: pg's generic array encoding escapes
// element by element, a measurable share of a batch's CPU at a few hundred batches a second. Safe here
// because scope and name passed parsePackagePath ([a-z0-9-] only), ids are UUIDs and counts integers;
// every text element is quoted, so a package called "null" stays a string.
function quotedArray(values: string[]): string {
  if (values.some((v) => /["\\]/.test(v))) throw new Error('package key with a quote or backslash');
  return values.length ? `{"${values.join('","')}"}` : '{}';
}

/** The batch's downloaders as two array literals: 1-based positions in `counts`, and the digests. */
function downloaderParams(counts: DownloadCount[]): [string | null, string | null] {
  let refs = '';
  let digests = '';
  counts.forEach((c, i) => {
    if (!c.downloaders) return;
    for (const digest of c.downloaders) {
      refs += refs ? `,${i + 1}` : `${i + 1}`;
      digests += digests ? `,${digest}` : digest;
    }
  });
  return refs ? [`{${refs}}`, `{${digests}}`] : [null, null];
}

const batchParams = (counts: DownloadCount[], generation: number, day: string | null) => [
  quotedArray(counts.map((c) => c.scope)),
  quotedArray(counts.map((c) => c.name)),
  `{${counts.map((c) => c.count).join(',')}}`,
  `{${counts.map((c) => c.id ?? 'NULL').join(',')}}`,
  generation,
  day,
  ...downloaderParams(counts),
];

function toOutcome(rows: BatchRow[]): BatchOutcome {
  const outcome: BatchOutcome = { found: [], missing: [] };
  for (const row of rows) {
    outcome.generation = Number(row.generation);
    if (row.id) outcome.found.push({ scope: row.scope, name: row.name, id: row.id });
    else outcome.missing.push({ scope: row.scope, name: row.name });
  }
  return outcome;
}

// The usual batch under steady traffic: every package known and the generation unchanged. The same
// check as INSERT_BATCH_SQL's `trusted` branch, with the arrays written as they come, which costs
// Postgres markedly less CPU per batch than the general statement (docs/benchmarks.md).
// No row inserted means the generation moved, and the batch goes through INSERT_BATCH_SQL.
const INSERT_KNOWN_SQL = `
  insert into package_download_batches (package_ids, counts, day, downloader_refs, downloaders)
  select $1::uuid[], $2::int[], $4::date, $5::int4[], $6::int8[] from package_list_changes
  where (case when is_called then last_value else 0 end) = $3`;

/**
 * Writes one batch of track calls in ONE statement, named (prepared) on the pool: each connection parses
 * and plans it once (Kysely sends every statement unnamed, so Postgres would re-plan the CTE per batch).
 * `day` is the UTC day (YYYY-MM-DD) the calls' downloader digests were made for; null counts them on
 * the commit's day.
 */
export async function insertDownloadBatch(
  pool: PgPool,
  counts: DownloadCount[],
  generation: number,
  day: string | null = null,
): Promise<BatchOutcome> {
  if (counts.length > 0 && counts.every((c) => c.id !== undefined)) {
    const known = await pool.query({
      name: 'pkgreg_insert_known_download_batch',
      text: INSERT_KNOWN_SQL,
      values: [
        `{${counts.map((c) => c.id).join(',')}}`,
        `{${counts.map((c) => c.count).join(',')}}`,
        generation,
        day,
        ...downloaderParams(counts),
      ],
    });
    // What INSERT_BATCH_SQL answers when every package was trusted: nothing looked up, nothing missing.
    if (known.rowCount === 1) return { found: [], missing: [] };
  }
  const result = await pool.query<BatchRow>({
    name: 'pkgreg_insert_download_batch',
    text: INSERT_BATCH_SQL,
    values: batchParams(counts, generation, day),
  });
  return toOutcome(result.rows);
}

// One folder at a time across API processes: two folders updating the same packages in different
// orders could deadlock; the loser of the lock just skips its tick.
const FOLD_LOCK_KEY = 0x706b_646c; // "pkdl"

/**
 * Folds up to `limit` batch rows and deletes them, in one transaction: a crash before commit leaves the
 * batches in place, after commit they are counted, never twice. Every call adds one to
 * packages.download_count (the contract's downloadCount). The batches' downloaders go into
 * package_downloaders by the UTC day they were received on; only those new there count: each adds one
 * to that day's package_downloads_daily row and to packages.unique_download_count (the popularity
 * orders). A fold that counted a new downloader bumps package_download_changes (the popularity
 * refresher's cue). Returns how many batch rows were folded (-1 when another process holds the lock).
 * Downloaders are not checked against packages (a probe per new downloader): packages are never
 * deleted, and one deleted anyway leaves a day's rows that nothing reads.
 */
export async function foldDownloadDeltas(db: Db, limit: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const lock = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${FOLD_LOCK_KEY}) as ok`.execute(
      trx,
    );
    if (!lock.rows[0]?.ok) return -1;
    const result = await sql<{ folded: number }>`
      with moved as (
        delete from package_download_batches
        where id in (select id from package_download_batches order by id limit ${limit} for update skip locked)
        returning package_ids, counts, downloader_refs, downloaders,
          coalesce(day, (created_at at time zone 'UTC')::date) as day
      ), calls as (
        select u.package_id, sum(u.n)::bigint as total
        from moved m cross join lateral unnest(m.package_ids, m.counts) as u(package_id, n)
        where u.package_id is not null
        group by 1
      ), seen as (
        select distinct m.day, m.package_ids[r.ref] as package_id, r.downloader
        from moved m cross join lateral unnest(m.downloader_refs, m.downloaders) as r(ref, downloader)
        where m.package_ids[r.ref] is not null
      ), fresh as (
        insert into package_downloaders (day, package_id, downloader)
        select day, package_id, downloader from seen order by 1, 2, 3
        on conflict do nothing
        returning day, package_id
      ), fresh_daily as (
        select package_id, day, count(*)::bigint as n from fresh group by 1, 2
      ), fresh_total as (
        select package_id, sum(n)::bigint as n from fresh_daily group by 1
      ), updated as (
        update packages p set download_count = p.download_count + c.total,
          unique_download_count = p.unique_download_count + coalesce(f.n, 0)
        from calls c left join fresh_total f on f.package_id = c.package_id
        where p.id = c.package_id
      ), daily as (
        insert into package_downloads_daily as d (package_id, day, count)
        select package_id, day, n from fresh_daily order by 1, 2
        on conflict (package_id, day) do update set count = d.count + excluded.count
      )
      select (select count(*)::int from moved) as folded,
        case when exists (select 1 from fresh) then nextval('package_download_changes') end as change`.execute(
      trx,
    );
    return result.rows[0]?.folded ?? 0;
  });
}

/** Deletes the keys of days before `today`: their digests can then be linked to nothing. */
export async function deletePastDayKeys(db: Db, today: string): Promise<void> {
  await sql`delete from download_day_keys where day < ${today}::date`.execute(db);
}

/**
 * Deletes the downloaders seen before yesterday; yesterday's stay a day, since a batch received
 * before midnight may be folded after it.
 */
export async function deleteOldDownloaders(db: Db, today: string): Promise<void> {
  await sql`delete from package_downloaders where day < ${today}::date - 1`.execute(db);
}

/**
 * The HMAC key of `day`'s downloader digests: read when it exists (the flusher makes each key the day
 * before); else `candidate`, or the key another process created first (one statement, so concurrent
 * callers all get the same key).
 */
export async function dayKey(db: Db, day: string, candidate: Buffer): Promise<Buffer> {
  const found = await db
    .selectFrom('download_day_keys')
    .select('key')
    .where('day', '=', day)
    .executeTakeFirst();
  if (found) return found.key;
  const result = await sql<{ key: Buffer }>`
    insert into download_day_keys (day, key) values (${day}::date, ${candidate})
    on conflict (day) do update set key = download_day_keys.key
    returning key`.execute(db);
  const key = result.rows[0]?.key;
  if (!key) throw new Error('download_day_keys: no key returned');
  return key;
}

/** Makes `day`'s key unless it exists: a track call then only reads it (a refused call writes no row). */
export async function ensureDayKey(db: Db, day: string, candidate: Buffer): Promise<void> {
  await sql`
    insert into download_day_keys (day, key) values (${day}::date, ${candidate})
    on conflict (day) do nothing`.execute(db);
}

/**
 * Reclaims the rows folds deleted. The batches table is a queue: every row is deleted within about a
 * second, so without this its heap and index grow with dead rows until a vacuum, and every fold and
 * insert slows down (seen on this machine, where autovacuum is off). `skip_locked`: when another
 * process is vacuuming it already, this one returns at once.
 */
export async function vacuumDownloadBatches(db: Db): Promise<void> {
  await sql`vacuum (skip_locked) package_download_batches`.execute(db);
}

/** Seconds since the oldest batch not yet folded was committed (0 when every batch is folded). */
export async function oldestUnfoldedBatchAgeSeconds(db: Db): Promise<number> {
  const { rows } = await sql<{ age: number }>`
    select extract(epoch from now() - created_at)::float8 as age
    from package_download_batches order by id limit 1`.execute(db);
  return Math.max(0, rows[0]?.age ?? 0);
}

/**
 * One track call of a private package by a reader that may read it, written alone: the batches above
 * count public packages only (a private one is "not found" to them, as to every outsider), and such
 * calls are rare. The same row a batch writes, so the fold counts it like any other. False when the
 * package is not a visible private one the reader may read (the caller then answers as for the public).
 */
export async function insertPrivateDownload(
  db: Db,
  key: { scope: string; name: string },
  access: ReadAccess,
  downloader: Downloader | undefined,
): Promise<boolean> {
  const result = await sql`
    insert into package_download_batches (package_ids, counts, day, downloader_refs, downloaders)
    select array[p.id], '{1}'::int[], ${downloader?.day ?? null}::date,
      ${downloader ? '{1}' : null}::int4[], ${downloader ? `{${downloader.digest}}` : null}::int8[]
    from packages p
    where p.scope = ${key.scope} and p.name = ${key.name} and p.status <> 'delisted'
      and ${privateReadableSql(access, 'p')}`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}
