import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { ALL_SCOPES, hasNul } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  disableClient,
  findClient,
  findEnabledClientByName,
  insertClient,
  listClients,
  updateClient,
} from './clients.repository.js';

// Client secrets are stored as scrypt hashes: `scrypt$N$r$p$salt$hash` (base64url), so the parameters
// can be raised later without invalidating existing secrets.

const SCRYPT = { N: 16384, r: 8, p: 1, keyLength: 32 };

function scryptAsync(
  secret: string,
  salt: Buffer,
  keyLength: number,
  options: ScryptOptions,
): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p, keyLength } = SCRYPT;
  const hash = await scryptAsync(secret, salt, keyLength, { N, r, p });
  return ['scrypt', N, r, p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(secret, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}

export class UnknownScopeError extends Error {}

export class InvalidRedirectUriError extends Error {}

/**
 * Where a person may be sent back after signing in: https, an http loopback address (any port, RFC
 * 8252), or an app's own scheme (`cursor://…`, RFC 8252 §7.1); never a fragment.
 */
export function checkRedirectUri(uri: string): void {
  const url = URL.parse(uri);
  const loopback = url?.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  const ownScheme =
    url !== null && !['http:', 'https:', 'javascript:', 'data:', 'file:'].includes(url.protocol);
  if (!url || url.hash || !(url.protocol === 'https:' || loopback || ownScheme) || uri.length > 2000)
    throw new InvalidRedirectUriError(
      `redirect URI ${uri} must be https, an http loopback address or an app's own scheme, without a fragment`,
    );
}

/**
 * Registers a client; the returned secret is shown once and never stored in clear. With redirect URIs
 * it may also sign people in through the authorization code flow (docs/mcp-oauth.md).
 */
export async function createClient(
  db: Db,
  input: { name: string; scopes: string[]; redirectUris?: string[] },
) {
  const unknown = input.scopes.filter((s) => !ALL_SCOPES.includes(s as (typeof ALL_SCOPES)[number]));
  if (unknown.length) throw new UnknownScopeError(`unknown scopes: ${unknown.join(', ')}`);
  const redirectUris = [...new Set(input.redirectUris ?? [])];
  for (const uri of redirectUris) checkRedirectUri(uri);
  const clientId = `pkc_${randomBytes(12).toString('hex')}`;
  const clientSecret = `pks_${randomBytes(32).toString('base64url')}`;
  const row = await insertClient(db, {
    clientId,
    secretHash: await hashSecret(clientSecret),
    name: input.name,
    allowedScopes: [...new Set(input.scopes)],
    redirectUris,
  });
  return {
    clientId: row.client_id,
    clientSecret,
    name: row.name,
    allowedScopes: row.allowed_scopes,
    ...(row.redirect_uris.length > 0 ? { redirectUris: row.redirect_uris } : {}),
  };
}

/**
 * The development demo client (`pnpm dev` prints it): one client of that name with every scope. Its
 * secret can only be shown when set, so each call gives it a fresh one.
 */
export async function resetDemoClient(db: Db, name = 'pkgreg-demo') {
  const existing = await findEnabledClientByName(db, name);
  if (!existing) return createClient(db, { name, scopes: [...ALL_SCOPES] });
  const clientSecret = `pks_${randomBytes(32).toString('base64url')}`;
  await updateClient(db, existing.client_id, {
    secretHash: await hashSecret(clientSecret),
    allowedScopes: [...ALL_SCOPES],
  });
  return { clientId: existing.client_id, clientSecret, name, allowedScopes: [...ALL_SCOPES] };
}

// A fixed hash compared against when the client id is unknown, so a miss costs as much as a hit.
let dummyHash: Promise<string> | undefined;

/** The client when id and secret match an enabled client; undefined otherwise (never says which part failed). */
export async function authenticateClient(db: Db, clientId: string, clientSecret: string) {
  // An id with U+0000 cannot be stored (Postgres text), so it names no client; asking would be a 500.
  const row = hasNul(clientId) ? undefined : await findClient(db, clientId);
  if (!row) {
    dummyHash ??= hashSecret('pkgreg-dummy-secret');
    await verifySecret(clientSecret, await dummyHash);
    return undefined;
  }
  const ok = await verifySecret(clientSecret, row.client_secret_hash);
  if (!ok || row.disabled_at) return undefined;
  return { clientId: row.client_id, name: row.name, allowedScopes: row.allowed_scopes };
}

export { disableClient, listClients };
