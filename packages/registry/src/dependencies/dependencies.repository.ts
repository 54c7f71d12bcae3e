import type { Database } from '@pkgreg/db';
import { type Kysely, sql } from 'kysely';
import { type ReadAccess, readableSql } from '../access/read-access.js';
import type { DeclaredDependency } from './declared-dependencies.js';

// SQL of skill dependencies (docs/versions.md, Dependencies): the rows each version declares, the
// counts kept on packages, and both directions as the API reads them. `dep_count` is the number of dependencies the package's latest version (the
// newest not yanked, `packages.version`) declares; `dependant_count` the number of visible packages (not
// delisted, not quarantined) whose latest version names it. Whatever changes either (an indexing run, a
// yank, a delisting, a quarantine) calls refreshDependencyState in the same transaction.

type Conn = Kysely<Database>;

/**
 * Serialises the transactions that change the dependency graph until they commit. Taken FIRST in such a
 * transaction (before any package row is locked): two runs each touching the other's dependants would
 * otherwise wait on each other's rows. Counts computed under it see every committed change, so two runs
 * never both miss the other's new dependant.
 */
export async function lockDependencyGraph(db: Conn): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended('pkgreg-dependency-graph', 0))`.execute(db);
}

/** Which of these `scope/name` keys are visible packages (not delisted). */
export async function visiblePackageKeys(db: Conn, keys: ReadonlyArray<{ scope: string; name: string }>) {
  if (keys.length === 0) return new Set<string>();
  const result = await sql<{ scope: string; name: string }>`
    select p.scope, p.name
    from unnest(${keys.map((k) => k.scope)}::text[], ${keys.map((k) => k.name)}::text[]) as k(scope, name)
    join packages p on p.scope = k.scope and p.name = k.name and p.status <> 'delisted'`.execute(db);
  return new Set(result.rows.map((r) => `${r.scope}/${r.name}`));
}

/** A version's declared dependencies, in declared order. */
export async function insertDependencies(
  db: Conn,
  versionId: string,
  dependencies: readonly DeclaredDependency[],
): Promise<void> {
  if (dependencies.length === 0) return;
  await db
    .insertInto('package_version_dependencies')
    .values(
      dependencies.map((d, position) => ({
        version_id: versionId,
        position,
        scope: d.scope,
        name: d.name,
        range: d.range,
      })),
    )
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** The versions among these that record no dependency (created before dependencies were recorded). */
export async function versionsWithoutDependencies(
  db: Conn,
  versionIds: readonly string[],
): Promise<Set<string>> {
  if (versionIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('package_versions as v')
    .select('v.id')
    .where('v.id', 'in', versionIds)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('package_version_dependencies as d')
            .select('d.version_id')
            .whereRef('d.version_id', '=', 'v.id'),
        ),
      ),
    )
    .execute();
  return new Set(rows.map((r) => r.id));
}

export interface DependencyChange {
  /** Packages whose latest version, status or visibility may have changed: their counts are recomputed. */
  packageIds: readonly string[];
  /**
   * Packages that may resolve differently now (created, new version, yank, delisted, relisted): the
   * packages depending on them are touched, so their detail (whose `resolves` reads these) gets a new
   * row version, hence a new ETag, and no cache serves the old answer.
   */
  changedIds?: readonly string[];
}

/**
 * Recomputes `dep_count` of the packages, and `dependant_count` of every package their versions name
 * (before and after the change: any version's dependencies, a superset of the old and new latest's)
 * and of the packages themselves (a package indexed after its dependants is counted now). Rows already
 * right are not rewritten. Takes the graph lock (again, if the caller holds it: it is re-entrant).
 */
export async function refreshDependencyState(db: Conn, change: DependencyChange): Promise<void> {
  const ids = [...new Set(change.packageIds)];
  if (ids.length === 0) return;
  await lockDependencyGraph(db);
  await sql`
    update packages p set dep_count = c.n
    from (
      select a.id, (
        select count(*)::int from package_versions v
        join package_version_dependencies d on d.version_id = v.id
        where v.package_id = a.id and v.version = a.version
      ) as n
      from packages a where a.id = any(${ids}::uuid[])
    ) c
    where p.id = c.id and p.dep_count <> c.n`.execute(db);
  await sql`
    with targets as (
      select d.scope, d.name
      from package_versions v join package_version_dependencies d on d.version_id = v.id
      where v.package_id = any(${ids}::uuid[])
      union
      select scope, name from packages where id = any(${ids}::uuid[])
    ),
    counted as (
      select t.scope, t.name, (
        select count(*)::int
        from package_version_dependencies d
        join package_versions v on v.id = d.version_id
        join packages p on p.id = v.package_id and p.version = v.version
        where d.scope = t.scope and d.name = t.name
          and p.status <> 'delisted' and p.quarantined_at is null and not p.private
      ) as n
      from targets t
    )
    update packages p set dependant_count = c.n
    from counted c
    where p.scope = c.scope and p.name = c.name and p.dependant_count <> c.n`.execute(db);
  const changed = [...new Set(change.changedIds ?? [])];
  if (changed.length === 0) return;
  // A no-op write: the row-version trigger moves the dependants' ETags (their `resolves` may differ).
  await sql`
    update packages p set dep_count = p.dep_count
    from packages t, package_versions v, package_version_dependencies d
    where t.id = any(${changed}::uuid[])
      and d.scope = t.scope and d.name = t.name
      and v.id = d.version_id and v.package_id = p.id and v.version = p.version
      and p.status <> 'delisted' and not (p.id = any(${changed}::uuid[]))`.execute(db);
}

export interface DependencyRow {
  scope: string;
  name: string;
  range: string | null;
  /** The versions of the named package a range may choose (not yanked); null when it is not visible. */
  versions: string[] | null;
  /** The named package is private (packages.private): shown only to readers that may read it. */
  private: boolean;
}

/**
 * The dependencies of a package's version, in declared order, each with the versions it could resolve
 * to now: one statement, one index probe per dependency.
 */
export async function listDependenciesWithVersions(
  db: Conn,
  packageId: string,
  version: string,
): Promise<DependencyRow[]> {
  const result = await sql<DependencyRow>`
    select d.scope, d.name, d.range,
      case when t.id is null then null else coalesce((
        select array_agg(o.version) from package_versions o
        where o.package_id = t.id
          and not exists (select 1 from package_version_yanks y where y.version_id = o.id)
      ), '{}') end as versions,
      coalesce(t.private, false) as private
    from package_versions v
    join package_version_dependencies d on d.version_id = v.id
    left join packages t on t.scope = d.scope and t.name = d.name and t.status <> 'delisted'
    where v.package_id = ${packageId} and v.version = ${version}
    order by d.position`.execute(db);
  return result.rows;
}

/** A version's declared dependencies, in declared order, each with whether the package it names is private. */
export async function listVersionDependencies(db: Conn, versionId: string) {
  return db
    .selectFrom('package_version_dependencies as d')
    .leftJoin('packages as t', (join) => join.onRef('t.scope', '=', 'd.scope').onRef('t.name', '=', 'd.name'))
    .select(['d.scope', 'd.name', 'd.range', sql<boolean>`coalesce(t.private, false)`.as('private')])
    .where('d.version_id', '=', versionId)
    .orderBy('d.position')
    .execute();
}

const DEPENDANT_COLUMNS = [
  'p.scope',
  'p.name',
  'p.description',
  'p.kind',
  'p.source_repo',
  'p.repo_owner',
  'p.repo_stars',
  'p.license',
  'p.last_indexed_at',
  'p.risk',
] as const;

/**
 * The visible packages (not delisted, not quarantined, as the list) whose latest version names
 * `scope/name`, by scope then name, that `access` may read. For a public-only reader, the same set
 * `dependant_count` counts (public dependants only).
 */
function dependantsOf(db: Conn, scope: string, name: string, access: ReadAccess) {
  return db
    .selectFrom('package_version_dependencies as d')
    .innerJoin('package_versions as v', 'v.id', 'd.version_id')
    .innerJoin('packages as p', (join) =>
      join.onRef('p.id', '=', 'v.package_id').onRef('p.version', '=', 'v.version'),
    )
    .where('d.scope', '=', scope)
    .where('d.name', '=', name)
    .where('p.status', '<>', 'delisted')
    .where('p.quarantined_at', 'is', null)
    .where(readableSql(access, 'p'));
}

export async function listDependantRows(
  db: Conn,
  scope: string,
  name: string,
  offset: number,
  limit: number,
  access: ReadAccess,
) {
  return dependantsOf(db, scope, name, access)
    .select(DEPENDANT_COLUMNS)
    .orderBy('p.scope')
    .orderBy('p.name')
    .offset(offset)
    .limit(limit)
    .execute();
}

export async function countDependants(
  db: Conn,
  scope: string,
  name: string,
  access: ReadAccess,
): Promise<number> {
  const row = await dependantsOf(db, scope, name, access)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
