import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';

// SQL of dependencies as the API reads them (the indexer writes them: @pkgreg/indexer).

export interface DependencyRow {
  scope: string;
  name: string;
  range: string | null;
  /** The versions of the named package a range may choose (not yanked); null when it is not visible. */
  versions: string[] | null;
}

/**
 * The dependencies of a package's version, in declared order, each with the versions it could resolve
 * to now: one statement, one index probe per dependency.
 */
export async function listDependenciesWithVersions(
  db: Db,
  packageId: string,
  version: string,
): Promise<DependencyRow[]> {
  const result = await sql<DependencyRow>`
    select d.scope, d.name, d.range,
      case when t.id is null then null else coalesce((
        select array_agg(o.version) from package_versions o
        where o.package_id = t.id
          and not exists (select 1 from package_version_yanks y where y.version_id = o.id)
      ), '{}') end as versions
    from package_versions v
    join package_version_dependencies d on d.version_id = v.id
    left join packages t on t.scope = d.scope and t.name = d.name and t.status <> 'delisted'
    where v.package_id = ${packageId} and v.version = ${version}
    order by d.position`.execute(db);
  return result.rows;
}

/** A version's declared dependencies, in declared order. */
export async function listVersionDependencies(db: Db, versionId: string) {
  return db
    .selectFrom('package_version_dependencies')
    .select(['scope', 'name', 'range'])
    .where('version_id', '=', versionId)
    .orderBy('position')
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
 * `scope/name`, by scope then name. The same set `dependant_count` counts.
 */
function dependantsOf(db: Db, scope: string, name: string) {
  return db
    .selectFrom('package_version_dependencies as d')
    .innerJoin('package_versions as v', 'v.id', 'd.version_id')
    .innerJoin('packages as p', (join) =>
      join.onRef('p.id', '=', 'v.package_id').onRef('p.version', '=', 'v.version'),
    )
    .where('d.scope', '=', scope)
    .where('d.name', '=', name)
    .where('p.status', '<>', 'delisted')
    .where('p.quarantined_at', 'is', null);
}

export async function listDependantRows(db: Db, scope: string, name: string, offset: number, limit: number) {
  return dependantsOf(db, scope, name)
    .select(DEPENDANT_COLUMNS)
    .orderBy('p.scope')
    .orderBy('p.name')
    .offset(offset)
    .limit(limit)
    .execute();
}

export async function countDependants(db: Db, scope: string, name: string): Promise<number> {
  const row = await dependantsOf(db, scope, name)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
