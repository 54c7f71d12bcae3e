import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';

// decisions.md, Tunnel envelope: "a `jti` already seen (`tunnel_replay_detected`)". The local runtime keeps
// consumed nonces in its own database, so a restart does not forget them: a captured envelope replayed
// after a restart, within its lifetime, is still refused.

export interface NonceStore {
  /** True the first time (`sessionId`, `jti`) is consumed, false ever after (until it expires). */
  consume(sessionId: string, jti: string, expiresAtSeconds: number): Promise<boolean>;
  /** Drops nonces whose envelope has expired (an expired envelope is refused before its nonce is read). */
  sweep(): Promise<number>;
}

export function createDbNonceStore(db: Db): NonceStore {
  return {
    async consume(sessionId, jti, expiresAtSeconds) {
      const row = await db
        .insertInto('tunnel_nonces')
        .values({ session_id: sessionId, jti, expires_at: new Date(expiresAtSeconds * 1000) })
        .onConflict((oc) => oc.columns(['session_id', 'jti']).doNothing())
        .returning('jti')
        .executeTakeFirst();
      return row !== undefined;
    },
    async sweep() {
      const rows = await db
        .deleteFrom('tunnel_nonces')
        .where('expires_at', '<', sql<Date>`now()`)
        .returning('jti')
        .execute();
      return rows.length;
    },
  };
}
