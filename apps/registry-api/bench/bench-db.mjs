import { createDb, ensureDatabase, migrateToLatest } from '@pkgreg/db';
import { sql } from 'kysely';
import { refreshDerivedTables } from '../dist/packages/derived-tables-refresher.js';
import { generatorDownloads, generatorFunctions, generatorInsert } from './generate.mjs';

/** The benchmark database; PKGREG_BENCH_DATABASE picks another (a branch with migrations of its own). */
export const BENCH_DATABASE = process.env.PKGREG_BENCH_DATABASE || 'pkgreg_bench';

export function benchDatabaseUrl(adminUrl) {
  const url = new URL(adminUrl);
  url.pathname = `/${BENCH_DATABASE}`;
  return url.toString();
}

/**
 * Share of packages made private (BENCH_PRIVATE_SHARE, 0-1): every package of `megacorp`, the
 * generator's large organisation (~1% of packages), plus the scopes a hash of the name picks, about this
 * share of the rest. Private packages leave every derived table (docs/search.md, "Private packages").
 * Unset: `private` is left as it is (bench/accounts.mjs makes its own share private through
 * scope_settings).
 */
export const BENCH_PRIVATE_SHARE =
  process.env.BENCH_PRIVATE_SHARE === undefined ? undefined : Number(process.env.BENCH_PRIVATE_SHARE);
/** The scope whose members the private-reads scenario reads as (bench/private-reads.mjs). */
export const BENCH_PRIVATE_ORG_SCOPE = 'megacorp';

/** Marks the share of packages private (and the rest public); true when any row changed. */
async function applyPrivateShare(db, share) {
  if (share === undefined) return false;
  const wanted =
    share > 0
      ? sql`(scope = ${BENCH_PRIVATE_ORG_SCOPE} or abs(hashtext(scope)) % 10000 < ${Math.round(share * 10000)})`
      : sql`false`;
  const result = await sql`
    update packages set private = ${wanted}, visibility = case when ${wanted} then 'private' else 'public' end
    where private is distinct from ${wanted}`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}

/** Fills pkgreg_bench with exactly `size` generated packages (reuses them when already there). */
export async function prepareBenchDatabase(adminUrl, size, { fresh = false, log = console.log } = {}) {
  const url = benchDatabaseUrl(adminUrl);
  await ensureDatabase(url);
  const db = createDb(url, { max: 1, applicationName: 'pkgreg-bench-setup' });
  try {
    await migrateToLatest(db);
    const have = await sql`select count(*)::int as n from packages`.execute(db);
    if (have.rows[0].n === size && !fresh) {
      log(`pkgreg_bench already holds ${size} packages`);
      if (await applyPrivateShare(db, BENCH_PRIVATE_SHARE)) {
        const t = Date.now();
        await refreshDerivedTables(db);
        log(
          `private share ${BENCH_PRIVATE_SHARE} applied, derived tables rebuilt in ${((Date.now() - t) / 1000).toFixed(1)} s`,
        );
        return url;
      }
      // A migration that changed what the search tables hold marks them stale (-1): rebuild them here,
      // or the server would, in the middle of the measurements.
      const state = await sql`select change_counter::int as n from package_derived_state`.execute(db);
      if ((state.rows[0]?.n ?? -1) < 0) {
        const t = Date.now();
        await refreshDerivedTables(db);
        log(
          `derived tables marked stale by a migration: rebuilt in ${((Date.now() - t) / 1000).toFixed(1)} s`,
        );
      }
      return url;
    }
    const started = Date.now();
    await db.connection().execute(async (conn) => {
      // The cascade reaches the transparency log, whose guard refuses truncation: a bench database holds
      // no log worth keeping, so the guard is off for this one statement (the bench connects as a superuser).
      await sql`set session_replication_role = replica`.execute(conn);
      await sql`truncate packages cascade`.execute(conn);
      await sql`reset session_replication_role`.execute(conn);
      await sql`truncate package_downloads_daily`.execute(conn);
      for (const statement of generatorFunctions()) await sql.raw(statement).execute(conn);
      // Maintaining the GIN index row by row is most of a bulk load: drop it, load, build it once.
      await sql`set maintenance_work_mem = '256MB'`.execute(conn);
      await sql`drop index if exists packages_search_keys_idx`.execute(conn);
      // Batches of 250k keep each statement's memory small; still one INSERT ... SELECT each.
      for (let from = 0; from < size; from += 250_000) {
        await sql.raw(generatorInsert(from, Math.min(250_000, size - from))).execute(conn);
      }
      await sql`
        create index packages_search_keys_idx on packages
        using gin (pkgreg_search_keys(search_vector)) with (fastupdate = off)`.execute(conn);
      await sql.raw(generatorDownloads()).execute(conn);
      await applyPrivateShare(conn, BENCH_PRIVATE_SHARE);
    });
    log(`generated ${size} packages in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const t2 = Date.now();
    await sql`vacuum analyze packages`.execute(db);
    await refreshDerivedTables(db);
    await sql`vacuum analyze package_list_ranks`.execute(db);
    await sql`vacuum analyze package_search_docs`.execute(db);
    await sql`vacuum analyze package_downloads_daily`.execute(db);
    log(`vacuum, analyze, list positions and search tables in ${((Date.now() - t2) / 1000).toFixed(1)} s`);
    return url;
  } finally {
    await db.destroy();
  }
}
