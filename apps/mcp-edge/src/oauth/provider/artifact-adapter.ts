import { createHash } from 'node:crypto';
import type { Db } from '@pkgreg/db';
import { sql } from 'kysely';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { errors } from 'oidc-provider';
import { hashSecret } from '../clients.service.js';

// oidc-provider's storage (docs/plans/edge-oauth.md, "Adapter"): each model it persists (Session,
// Interaction, AuthorizationCode, RefreshToken, Grant) is a row of edge_oauth_artifacts (migration
// 2026-11-29T0400). Ids are stored as their SHA-256: an authorization code or refresh token is its own
// id, so a copy of the table holds nothing a client could present. JWT access tokens are never stored
// (the provider only asks to revoke them by grant, which finds nothing). Clients registered dynamically
// (RFC 7591) are rows of edge_dynamic_clients, their secret kept as a scrypt hash like the operator's
// clients (the provider compares through authorization-provider.ts), expiring when unused.
//
// The provider checks `consumed` and then consumes, two steps apart: two requests presenting one refresh
// token at once would both pass. Here consuming is one conditional update, so the second finds the token
// already used, revokes everything issued under its grant (as the provider does for a reuse it sees)
// and answers invalid_grant.

export function idHash(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/** How a reused artifact is named in the invalid_grant description. */
const USED_LABELS: Record<string, string> = {
  AuthorizationCode: 'authorization code',
  RefreshToken: 'refresh token',
};

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

export interface ArtifactAdapterOptions {
  /** A registered client unused this long is forgotten (each use pushes it back, at most once a day). */
  dynamicClientUnusedDays: number;
}

export function createArtifactAdapter(db: Db, options: ArtifactAdapterOptions): (model: string) => Adapter {
  return (model) =>
    model === 'Client'
      ? new DynamicClientAdapter(db, options.dynamicClientUnusedDays)
      : new ArtifactAdapter(db, model);
}

/**
 * Client metadata naming the scopes an operator's client may be given (the provider's own `scope`
 * member is for OpenID scopes); any other client may be given every scope.
 */
export const ALLOWED_SCOPES = 'pkgreg_allowed_scopes';

/** The ids of clients registered through RFC 7591 (authorization-provider.ts makes them). */
export const DYNAMIC_CLIENT_PREFIX = 'dcr_';

/**
 * A client the operator registered with redirect URIs (`pnpm edge clients:create --redirect-uri`), as
 * the provider reads clients: confidential (its scrypt hash compared by authorization-provider.ts,
 * HTTP Basic as RFC 6749 requires servers to accept), limited to its allowed scopes. A disabled client,
 * or one without redirect URIs (client_credentials only), is no client here.
 */
async function operatorClient(db: Db, id: string): Promise<AdapterPayload | undefined> {
  if (id.includes('\u0000')) return undefined;
  const row = await db
    .selectFrom('oauth_clients')
    .select(['client_id', 'client_secret_hash', 'name', 'allowed_scopes', 'redirect_uris'])
    .where('client_id', '=', id)
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  if (!row || row.redirect_uris.length === 0) return undefined;
  return {
    client_id: row.client_id,
    client_secret: row.client_secret_hash,
    client_name: row.name,
    redirect_uris: row.redirect_uris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
    // An app's own scheme (cursor://…) or a loopback address makes it a native app for the provider.
    application_type: row.redirect_uris.every((uri) => uri.startsWith('https:')) ? 'web' : 'native',
    [ALLOWED_SCOPES]: row.allowed_scopes,
  };
}

/** Clients registered through RFC 7591: the secret hashed, the row forgotten when unused. */
class DynamicClientAdapter implements Adapter {
  constructor(
    private readonly db: Db,
    private readonly unusedDays: number,
  ) {}

  async upsert(id: string, payload: AdapterPayload): Promise<void> {
    const { client_secret: secret, ...metadata } = payload as AdapterPayload & { client_secret?: unknown };
    const secretHash = typeof secret === 'string' ? await hashSecret(secret) : null;
    await sql`
      insert into edge_dynamic_clients (client_id, metadata, secret_hash, expires_at)
      values (${id}, ${JSON.stringify(metadata)}::jsonb, ${secretHash},
        now() + make_interval(days => ${this.unusedDays}))
      on conflict (client_id) do update set metadata = excluded.metadata, secret_hash = excluded.secret_hash`.execute(
      this.db,
    );
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (!id.startsWith(DYNAMIC_CLIENT_PREFIX)) return operatorClient(this.db, id);
    // One round trip: a use pushes the expiry back, at most once a day.
    const { rows } = await sql<{ metadata: AdapterPayload; secret_hash: string | null }>`
      with touched as (
        update edge_dynamic_clients set last_used_at = now(),
          expires_at = now() + make_interval(days => ${this.unusedDays})
        where client_id = ${id} and expires_at > now()
          and (last_used_at is null or last_used_at < now() - interval '1 day'))
      select metadata, secret_hash from edge_dynamic_clients where client_id = ${id} and expires_at > now()`.execute(
      this.db,
    );
    const row = rows[0];
    if (!row) return undefined;
    return row.secret_hash === null ? row.metadata : { ...row.metadata, client_secret: row.secret_hash };
  }

  async destroy(id: string): Promise<void> {
    await sql`delete from edge_dynamic_clients where client_id = ${id}`.execute(this.db);
  }

  async findByUid(): Promise<undefined> {
    return undefined;
  }

  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  async consume(): Promise<void> {}

  async revokeByGrantId(): Promise<void> {}
}

class ArtifactAdapter implements Adapter {
  constructor(
    private readonly db: Db,
    private readonly model: string,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    // A Grant is its own family: revoking a grant id takes the grant too.
    const grantId = this.model === 'Grant' ? id : text(payload.grantId);
    const expiresAt = expiresIn ? sql`now() + make_interval(secs => ${expiresIn})` : sql`null`;
    await sql`
      insert into edge_oauth_artifacts (model, id_hash, payload, grant_id, uid, account_id, client_id, expires_at)
      values (${this.model}, ${idHash(id)}, ${JSON.stringify(payload)}::jsonb, ${grantId}, ${text(payload.uid)},
        ${text(payload.accountId)}, ${text(payload.clientId)}, ${expiresAt})
      on conflict (model, id_hash) do update set payload = excluded.payload, grant_id = excluded.grant_id,
        uid = excluded.uid, account_id = excluded.account_id, client_id = excluded.client_id,
        expires_at = excluded.expires_at`.execute(this.db);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return this.first(sql`id_hash = ${idHash(id)}`);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.first(sql`uid = ${uid}`);
  }

  async findByUserCode(): Promise<undefined> {
    // The device flow is not offered.
    return undefined;
  }

  async consume(id: string): Promise<void> {
    const result = await sql<{ grant_id: string | null }>`
      update edge_oauth_artifacts set consumed_at = now()
      where model = ${this.model} and id_hash = ${idHash(id)} and consumed_at is null
      returning grant_id`.execute(this.db);
    if (result.rows.length > 0) return;
    const { rows } = await sql<{ grant_id: string | null }>`
      select grant_id from edge_oauth_artifacts where model = ${this.model} and id_hash = ${idHash(id)}`.execute(
      this.db,
    );
    const grantId = rows[0]?.grant_id;
    if (grantId) await revokeGrant(this.db, grantId);
    throw new errors.InvalidGrant(`${USED_LABELS[this.model] ?? this.model} already used`);
  }

  async destroy(id: string): Promise<void> {
    await sql`delete from edge_oauth_artifacts where model = ${this.model} and id_hash = ${idHash(id)}`.execute(
      this.db,
    );
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    // The provider revokes a grant model by model (a reused token, the revocation endpoint): with its
    // refresh tokens, the app is disconnected, so the access tokens already issued stop too.
    if (this.model === 'RefreshToken') await revokeGrant(this.db, grantId);
    else
      await sql`delete from edge_oauth_artifacts where model = ${this.model} and grant_id = ${grantId}`.execute(
        this.db,
      );
  }

  private async first(where: ReturnType<typeof sql>): Promise<AdapterPayload | undefined> {
    const { rows } = await sql<{ payload: AdapterPayload; consumed: number | null }>`
      select payload, extract(epoch from consumed_at)::int8 as consumed from edge_oauth_artifacts
      where model = ${this.model} and ${where} and (expires_at is null or expires_at > now())`.execute(
      this.db,
    );
    const row = rows[0];
    if (!row) return undefined;
    return row.consumed === null ? row.payload : { ...row.payload, consumed: Number(row.consumed) };
  }
}

/**
 * Everything issued under a grant, and the grant: a reused code or refresh token ends its whole family,
 * and disconnects the app (edge_delegations), so admission refuses the access tokens already issued. One
 * statement: both happen, or neither.
 */
export async function revokeGrant(db: Db, grantId: string): Promise<void> {
  await sql`
    with gone as (delete from edge_oauth_artifacts where grant_id = ${grantId})
    update edge_delegations set revoked_at = coalesce(revoked_at, now()), tokens_not_before = now()
    where grant_id = ${grantId}`.execute(db);
}
