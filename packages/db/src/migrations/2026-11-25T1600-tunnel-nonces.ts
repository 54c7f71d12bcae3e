import { type Kysely, sql } from 'kysely';

// Frozen in time: never import app code here, never edit after it has shipped. Add a new file instead.
// decisions.md, Tunnel envelope: a local runtime consumes each envelope's nonce (`jti`) once. The row
// outlives the envelope's expiry by nothing: an envelope past `expires_at` is refused as expired anyway,
// so expired rows are swept. Kept in the database (not in memory) so a restarted runtime still refuses
// a replay of an envelope it consumed before.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tunnel_nonces')
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('tunnel_nonces_pkey', ['session_id', 'jti'])
    .execute();
  await sql`create index tunnel_nonces_expires_at_idx on tunnel_nonces (expires_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tunnel_nonces').ifExists().execute();
}
