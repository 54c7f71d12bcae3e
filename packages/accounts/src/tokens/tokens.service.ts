import type { Database } from '@pkgreg/db';
import ipaddr from 'ipaddr.js';
import type { Kysely } from 'kysely';
import { recordAuditEvent } from '../audit/audit.repository.js';
import { generateToken, hashToken, isWellFormedToken } from './token-format.js';
import {
  type AccessTokenRow,
  findAccountToken,
  findTokenByHash,
  insertToken,
  listTokens,
  revokeToken,
  touchToken,
} from './tokens.repository.js';

// Granular access tokens (docs/accounts.md, "Tokens"): created by a signed-in account, shown once,
// stored hashed, limited to organisations, scopes or packages, to read or publish, expiring, optionally
// bound to address ranges, revocable.

type Conn = Kysely<Database>;

export interface CreateTokenInput {
  name: string;
  permission: 'read' | 'publish';
  organizations?: string[];
  scopes?: string[];
  packages?: string[];
  allowedCidrs?: string[];
  /** Days until it expires; at most the operator's maximum. */
  expiresInDays: number;
}

export class TokenInputError extends Error {}

/** Parses CIDR ranges (a bare address is its own /32 or /128); throws TokenInputError naming a bad one. */
export function parseCidrs(ranges: readonly string[]): Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> {
  return ranges.map((range) => {
    try {
      return range.includes('/')
        ? ipaddr.parseCIDR(range)
        : (() => {
            const address = ipaddr.parse(range);
            return [address, address.kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
          })();
    } catch {
      throw new TokenInputError(`"${range}" is not an IP address or CIDR range`);
    }
  });
}

/** True when `address` is inside one of the ranges (IPv4-mapped IPv6 addresses compare as IPv4). */
export function addressAllowed(address: string | undefined, ranges: readonly string[]): boolean {
  if (ranges.length === 0) return true;
  if (!address || !ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parseCidrs(ranges).some(
    ([net, bits]) => net.kind() === parsed.kind() && (parsed as ipaddr.IPv4).match(net as ipaddr.IPv4, bits),
  );
}

export async function createToken(
  db: Conn,
  accountId: string,
  input: CreateTokenInput,
  context: { maxDays: number; requestId?: string },
): Promise<{ token: string; row: AccessTokenRow }> {
  if (input.expiresInDays > context.maxDays) {
    throw new TokenInputError(`expiresInDays is at most ${context.maxDays} on this registry`);
  }
  parseCidrs(input.allowedCidrs ?? []);
  const { token, hash, prefix } = generateToken();
  const row = await db.transaction().execute(async (trx) => {
    const inserted = await insertToken(trx, {
      accountId,
      name: input.name,
      hash,
      prefix,
      permission: input.permission,
      organizations: input.organizations ?? [],
      scopes: input.scopes ?? [],
      packages: input.packages ?? [],
      allowedCidrs: input.allowedCidrs ?? [],
      expiresAt: new Date(Date.now() + input.expiresInDays * 86_400_000),
    });
    await recordAuditEvent(trx, {
      actorId: accountId,
      action: 'token.create',
      target: inserted.id,
      details: { name: input.name, permission: input.permission, prefix },
      requestId: context.requestId,
    });
    return inserted;
  });
  return { token, row };
}

export async function revokeAccountToken(
  db: Conn,
  accountId: string,
  id: string,
  requestId?: string,
): Promise<AccessTokenRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const revoked = await revokeToken(trx, accountId, id);
    if (revoked) {
      await recordAuditEvent(trx, {
        actorId: accountId,
        action: 'token.revoke',
        target: id,
        requestId,
        details: { prefix: revoked.prefix },
      });
    }
    return revoked;
  });
}

export { findAccountToken, listTokens };

/** Why a presented token is refused; each a 401 with its own message. */
export type TokenRefusal = 'malformed' | 'unknown' | 'revoked' | 'expired' | 'suspended' | 'address';

export const TOKEN_REFUSAL_MESSAGES: Record<TokenRefusal, string> = {
  malformed: 'The token is malformed: a pkgreg token is pkgreg_ followed by 36 letters and digits',
  unknown: 'The token is not valid on this registry',
  revoked: 'The token was revoked',
  expired: 'The token has expired; create a new one',
  suspended: "The token's account is suspended",
  address: 'The token may not be used from this address',
};

export type TokenCheck =
  | { ok: true; token: AccessTokenRow; siteAdmin: boolean }
  | { ok: false; refusal: TokenRefusal };

/**
 * What a presented token is, from the database: refused when malformed, unknown, revoked or its account
 * suspended. What depends on the moment and the caller (expiry, address ranges) is `admitToken`'s, so a
 * token found once can be kept (the API's access cache) and still checked on every use.
 */
export async function findPresentedToken(db: Conn, presented: string): Promise<TokenCheck> {
  if (!isWellFormedToken(presented)) return { ok: false, refusal: 'malformed' };
  const row = await findTokenByHash(db, hashToken(presented));
  if (!row) return { ok: false, refusal: 'unknown' };
  if (row.revoked_at !== null) return { ok: false, refusal: 'revoked' };
  if (row.banned) return { ok: false, refusal: 'suspended' };
  const { banned: _banned, site_role, ...token } = row;
  return { ok: true, token, siteAdmin: site_role === 'admin' };
}

/**
 * Whether a found token may be used now from `clientAddress`; one that may has its last use recorded
 * (to the minute, in the background; `token.last_used_at` follows, so a kept token writes once a minute).
 */
export function admitToken(
  db: Conn,
  token: AccessTokenRow,
  clientAddress: string | undefined,
): TokenRefusal | undefined {
  if (token.expires_at.getTime() <= Date.now()) return 'expired';
  if (!addressAllowed(clientAddress, token.allowed_cidrs)) return 'address';
  if (token.last_used_at === null || Date.now() - token.last_used_at.getTime() > 60_000) {
    token.last_used_at = new Date();
    touchToken(db, token.id).catch(() => {});
  }
  return undefined;
}

/** A token's limits: none of them set means everything its account reaches. */
function unlimited(row: Pick<AccessTokenRow, 'organizations' | 'scopes' | 'packages'>): boolean {
  return row.organizations.length === 0 && row.scopes.length === 0 && row.packages.length === 0;
}

/**
 * Why a token may not create `input` (docs/cli-auth.md, "Tokens that create tokens"), or undefined when
 * it may. Like npm's, a publish token creates tokens no wider than itself: a read token, or a publish
 * token; limited to what it is limited to (each organisation, scope and package among its own, a
 * package also within one of its scopes); expiring no later; bound to its address ranges, when it has
 * any. A read token creates none. The check is by name, so it may refuse a token that is in fact
 * narrower (a scope of one of its organisations): create that one while signed in.
 */
export function widerThanToken(
  parent: Pick<
    AccessTokenRow,
    'permission' | 'organizations' | 'scopes' | 'packages' | 'allowed_cidrs' | 'expires_at'
  >,
  input: CreateTokenInput,
): string | undefined {
  if (parent.permission !== 'publish') return 'a read token cannot create tokens';
  const child = {
    organizations: input.organizations ?? [],
    scopes: input.scopes ?? [],
    packages: input.packages ?? [],
  };
  if (!unlimited(parent)) {
    if (unlimited(child))
      return 'this token is limited: the new one must name organisations, scopes or packages it reaches';
    const outside =
      child.organizations.find((org) => !parent.organizations.includes(org)) ??
      child.scopes.find((scope) => !parent.scopes.includes(scope)) ??
      child.packages.find(
        (pkg) => !parent.packages.includes(pkg) && !parent.scopes.includes(pkg.split('/')[0] ?? ''),
      );
    if (outside !== undefined) return `"${outside}" is outside this token's limits`;
  }
  const cidrs = input.allowedCidrs ?? [];
  if (
    parent.allowed_cidrs.length > 0 &&
    (cidrs.length === 0 || cidrs.some((c) => !parent.allowed_cidrs.includes(c)))
  )
    return `this token is bound to ${parent.allowed_cidrs.join(', ')}: the new one must be bound to some of them`;
  if (Date.now() + input.expiresInDays * 86_400_000 > parent.expires_at.getTime())
    return 'the new token would outlive this one: give fewer days';
  return undefined;
}

/** Whether a token may act on the account's tokens as a person would (list, revoke any): publish, no limits. */
export function isAccountWideToken(
  row: Pick<AccessTokenRow, 'permission' | 'organizations' | 'scopes' | 'packages'>,
): boolean {
  return row.permission === 'publish' && unlimited(row);
}
