import type { Db } from '@pkgreg/db';
import { type ReadAccess, readableSql } from '@pkgreg/registry';
import { sql } from 'kysely';

// The packages a discovery index lists (docs/discovery.md): the root's, an organisation's, a scope's or
// one package's, each with its latest version (the newest not yanked), read live.

/** Which index: the registry's root, one organisation's (by slug), one scope's, or one package's. */
export type IndexSelection =
  | { kind: 'root' }
  | { kind: 'organization'; slug: string }
  | { kind: 'scope'; scope: string }
  | { kind: 'package'; scope: string; name: string };

export interface IndexRow {
  scope: string;
  name: string;
  description: string;
  /** The latest version (null when every version is yanked, or there is none). */
  version_id: string | null;
  version: string | null;
  file_count: number | null;
  risk: 'none' | 'low' | 'medium' | 'high' | null;
  /** The SKILL.md's SHA-256 when it is a regular file (null for a link, or no version). */
  skill_md_sha256: string | null;
  /** Another listed package of the selection has its name (an organisation's index leaves it out). */
  shared: boolean;
}

/**
 * The scopes of an organisation that is not suspended: those its settings name, and those bound to the
 * GitHub organisation it is linked to; the two ways its members reach scopes (scopeRolesOfAccount in
 * @pkgreg/accounts, docs/accounts.md "Who owns a scope").
 */
function organizationScopesSql(slug: string) {
  return sql`(
    select s.scope from scope_settings s
      join auth_organization o on o."id" = s.organization_id
     where o.slug = ${slug} and o."suspendedAt" is null
    union
    select so.scope from scope_owners so
      join auth_organization o on o."githubOrgId" = so.owner_id
     where o.slug = ${slug} and o."suspendedAt" is null)`;
}

/**
 * The listed packages of the selection the reader may read (as the list: not delisted, quarantined or
 * removed), by name then scope. The root takes public packages only, and of those only the ones whose
 * name no other public listed package holds: a name in the root index means one skill (docs/decisions.md).
 * An organisation's rows say which names another of its packages the reader may read holds (`shared`),
 * so that a private package counts only for those who see it.
 */
export async function listIndexRows(
  db: Db,
  selection: IndexSelection,
  access: ReadAccess,
): Promise<IndexRow[]> {
  const root = selection.kind === 'root';
  const where = [
    sql`p.status <> 'delisted'`,
    sql`p.quarantined_at is null`,
    sql`p.removed_at is null`,
    root ? sql`not p.private` : readableSql(access, 'p'),
  ];
  if (selection.kind === 'organization') where.push(sql`p.scope in ${organizationScopesSql(selection.slug)}`);
  if (selection.kind === 'scope' || selection.kind === 'package')
    where.push(sql`p.scope = ${selection.scope}`);
  if (selection.kind === 'package') where.push(sql`p.name = ${selection.name}`);
  // A scope's names are unique; the root's and an organisation's span scopes.
  const shared =
    selection.kind === 'root' || selection.kind === 'organization'
      ? sql`count(*) over (partition by p.name) > 1`
      : sql`false`;
  const result = await sql<IndexRow>`
    with listed as (
      select p.id, p.scope, p.name, p.description, ${shared} as shared
      from packages p
      where ${sql.join(where, sql` and `)}
    )
    select l.scope, l.name, l.description, v.id as version_id, v.version, v.file_count, v.risk, l.shared,
      (select f.sha256 from package_version_files f
        where f.version_id = v.id and f.path = 'SKILL.md' and f.link_target is null) as skill_md_sha256
    from listed l
    left join lateral (
      select v.id, v.version, v.file_count, v.risk from package_versions v
      where v.package_id = l.id
        and not exists (select 1 from package_version_yanks y where y.version_id = v.id)
      order by v.seq desc
      limit 1
    ) v on true
    ${root ? sql`where not l.shared` : sql``}
    order by l.name collate "C", l.scope collate "C"`.execute(db);
  return result.rows;
}
