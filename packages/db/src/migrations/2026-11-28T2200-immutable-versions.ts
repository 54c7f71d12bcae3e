import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.

// What keeps a version immutable (docs/versions.md): the database refuses to change one.
//
// package_versions: an UPDATE may change only the scan's columns (risk, findings, scanned_at: the
// rescan rewrites them when the rules change); any other column, including one added later, is
// refused. Yanks live in package_version_yanks, deprecation and quarantine on packages. A version is
// deleted only with its package (the cascade of a DELETE of the package row: its row is gone by then).
//
// package_version_files: never updated; deleted only with their version (so only with the package).
// package_version_dependencies: never updated (rows of older versions are still added by a later run).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function pkgreg_guard_package_version() returns trigger language plpgsql as $$
    declare
      mutable constant text[] := array['risk', 'findings', 'scanned_at'];
      changed text;
    begin
      if tg_op = 'DELETE' then
        if exists (select 1 from packages where id = old.package_id) then
          raise exception 'package_versions are immutable: version % is deleted only with its package', old.id
            using errcode = 'restrict_violation';
        end if;
        return old;
      end if;
      select string_agg(n.key, ', ' order by n.key) into changed
      from jsonb_each(to_jsonb(new) - mutable) n
      where n.value is distinct from (to_jsonb(old) - mutable) -> n.key;
      if changed is not null then
        raise exception 'package_versions are immutable: % of version % cannot change', changed, old.id
          using errcode = 'restrict_violation';
      end if;
      return new;
    end $$`.execute(db);
  await sql`
    create trigger package_versions_immutable before update or delete on package_versions
    for each row execute function pkgreg_guard_package_version()`.execute(db);

  await sql`
    create function pkgreg_guard_version_content() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        if exists (select 1 from package_versions where id = old.version_id) then
          raise exception '% rows are immutable: % of version % is deleted only with its version',
            tg_table_name, old.path, old.version_id using errcode = 'restrict_violation';
        end if;
        return old;
      end if;
      raise exception '% rows are immutable', tg_table_name using errcode = 'restrict_violation';
    end $$`.execute(db);
  await sql`
    create trigger package_version_files_immutable before update or delete on package_version_files
    for each row execute function pkgreg_guard_version_content()`.execute(db);
  await sql`
    create trigger package_version_dependencies_immutable before update on package_version_dependencies
    for each row execute function pkgreg_guard_version_content()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists package_version_dependencies_immutable on package_version_dependencies`.execute(
    db,
  );
  await sql`drop trigger if exists package_version_files_immutable on package_version_files`.execute(db);
  await sql`drop trigger if exists package_versions_immutable on package_versions`.execute(db);
  await sql`drop function if exists pkgreg_guard_version_content()`.execute(db);
  await sql`drop function if exists pkgreg_guard_package_version()`.execute(db);
}
