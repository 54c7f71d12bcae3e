import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// Unique downloaders (issue 26). `download_count` still adds one per accepted track, but the popularity
// orders and the downloads per day count each downloader once per package and UTC day, so one client
// repeating track no longer moves a ranking. A downloader is a 64-bit digest (HMAC-SHA256 with a key
// that is random per UTC day) of the client's address, IPv6 by its /64; nothing raw is stored.
//
// - package_download_batches gains the UTC day its calls were received on (the day their digests were
//   made for; null in rows of older processes: the fold takes the commit's day) and the batch's distinct
//   downloaders: `downloader_refs[i]` is the 1-based position in package_ids of the package that
//   `downloaders[i]` fetched. package_ids may hold NULL for a package the batch did not count, so that
//   positions stay those of the writer's arrays.
// - package_downloaders: the (day, package, downloader) triples seen, only for today and yesterday (the
//   flusher deletes older days); the fold inserts a batch's triples and counts only those new.
// - download_day_keys: the day's HMAC key, created by the first process that needs it and deleted once
//   its day is over, after which that day's digests can be linked to nothing.
// - packages.unique_download_count: the sum over days of that day's unique downloaders (the downloads
//   order). It starts at download_count, the only history there is, with the row trigger off: copying
//   it is no change of the package (updated_at and row_version stay).
// - package_downloads_daily.count now counts unique downloaders; older rows keep their counts.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table package_download_batches
      add column day date,
      add column downloader_refs int4[],
      add column downloaders int8[],
      add constraint package_download_batches_downloaders_same_length
        check (cardinality(downloader_refs) = cardinality(downloaders))`.execute(db);
  await sql`
    create table package_downloaders (
      day date not null,
      package_id uuid not null,
      downloader int8 not null,
      primary key (day, package_id, downloader)
    )`.execute(db);
  await sql`create table download_day_keys (day date primary key, key bytea not null)`.execute(db);
  await sql`alter table packages add column unique_download_count bigint not null default 0`.execute(db);
  await sql`alter table packages disable trigger packages_row_version`.execute(db);
  await sql`update packages set unique_download_count = download_count where download_count <> 0`.execute(db);
  await sql`alter table packages enable trigger packages_row_version`.execute(db);
  // The downloads order is rebuilt from the new column at the popularity refresher's next tick.
  await sql`update package_derived_state set popularity_counter = null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table packages drop column if exists unique_download_count`.execute(db);
  await sql`drop table if exists download_day_keys`.execute(db);
  await sql`drop table if exists package_downloaders`.execute(db);
  // NULL package ids left in unfolded batches are skipped by the older fold (its join finds no package).
  await sql`
    alter table package_download_batches
      drop constraint if exists package_download_batches_downloaders_same_length,
      drop column if exists downloaders,
      drop column if exists downloader_refs,
      drop column if exists day`.execute(db);
  await sql`update package_derived_state set popularity_counter = null`.execute(db);
}
