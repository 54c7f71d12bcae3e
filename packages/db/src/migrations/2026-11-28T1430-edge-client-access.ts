import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// Issue 26, "A client reaches only the tenants and tunnels it is allowed to":
// - `edge_backend_clients`: which clients (by namespace, the client identity) may use a hosted tenant or
//   a tunnel session, beside the ones its seeded setting names.
// - `edge_access_version`: one counter every change of who may call (a grant, a client disabled or
//   enabled) bumps in its own transaction, by trigger, so edges notice it with one cheap read however the
//   change was made.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('edge_backend_clients')
    .addColumn('backend_mode', 'text', (c) =>
      c.notNull().check(sql`backend_mode in ('hosted', 'local_tunnel')`),
    )
    .addColumn('backend_id', 'text', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('edge_backend_clients_pkey', ['backend_mode', 'backend_id', 'namespace'])
    .execute();
  await db.schema
    .createTable('edge_access_version')
    .addColumn('id', 'boolean', (c) => c.primaryKey().defaultTo(true).check(sql`id`))
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into edge_access_version (id, version) values (true, 1)`.execute(db);
  // Schema-qualified by the table that fired it: tenant schemas (same migrations) get their own.
  await sql`
    create function pkgreg_edge_access_changed() returns trigger language plpgsql as $$
    begin
      execute format('update %I.edge_access_version set version = version + 1', tg_table_schema);
      return null;
    end $$`.execute(db);
  await sql`
    create trigger oauth_clients_access_changed after update of disabled_at or delete on oauth_clients
    for each statement execute function pkgreg_edge_access_changed()`.execute(db);
  await sql`
    create trigger edge_backend_clients_access_changed after insert or update or delete
    on edge_backend_clients for each statement execute function pkgreg_edge_access_changed()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists oauth_clients_access_changed on oauth_clients`.execute(db);
  await db.schema.dropTable('edge_backend_clients').ifExists().execute();
  await db.schema.dropTable('edge_access_version').ifExists().execute();
  await sql`drop function if exists pkgreg_edge_access_changed()`.execute(db);
}
