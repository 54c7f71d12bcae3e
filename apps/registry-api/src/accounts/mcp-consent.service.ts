import { createHash, randomBytes } from 'node:crypto';
import { recordAuditEvent } from '@pkgreg/accounts';
import type { Db } from '@pkgreg/db';
import { allowDelegation, delegationCovers } from './connected-apps.repository.js';
import { type ConsentRequest, claimConsentRequest, decideConsentRequest } from './mcp-consent.repository.js';

// The registry's half of an MCP client's sign-in (docs/accounts.md, "Consent for MCP clients"): the
// consent id and the decision code travel in URLs, so only their SHA-256 is stored; the edge checks the
// code against it when the browser comes back, and consumes the request.

/** 32 random bytes, base64url: how the edge forms consent ids, and how the registry forms codes. */
const WELL_FORMED_ID = /^[A-Za-z0-9_-]{43}$/;

const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');

/** The account's claim on the usable request `id`; undefined for an id that is not one (whyever). */
export async function claimRequest(
  db: Db,
  id: string,
  accountId: string,
): Promise<ConsentRequest | undefined> {
  if (!WELL_FORMED_ID.test(id)) return undefined;
  return claimConsentRequest(db, sha256Hex(id), accountId);
}

/**
 * The person allowed this app every scope it asks for already (and has not revoked it): not asked again.
 * Only for the edge's own resource and an app answered on the web: a sign-in for a tenant's or tunnel's
 * host shows which one, and an app on this computer (a loopback or its own scheme) is asked each time,
 * since any local program can claim its client id (RFC 8252 §8.6).
 */
export async function isRemembered(
  db: Db,
  accountId: string,
  request: ConsentRequest,
  edgeBaseUrl: string,
): Promise<boolean> {
  if (request.resource !== `${edgeBaseUrl}/mcp` || returnsToThisComputer(request.redirect_host)) return false;
  return delegationCovers(db, accountId, request.client_id, request.scopes);
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Whether the app's redirect is on this computer: a loopback address (any port), or an app's own scheme
 * (the edge writes those as `scheme://host`).
 */
export function returnsToThisComputer(redirectHost: string): boolean {
  if (redirectHost.includes('://')) return true;
  const url = URL.parse(`http://${redirectHost}`);
  return url !== null && LOOPBACK_HOSTS.has(url.hostname);
}

export interface Decided {
  request: ConsentRequest;
  /** The one-time code the edge is shown (only its hash is stored). */
  code: string;
}

/**
 * Records the decision on the account's usable request `id`; on allow, in the same transaction, the
 * delegation (remembered consent) and an audit event. Undefined when there is no such request.
 */
export async function decide(
  db: Db,
  input: { id: string; accountId: string; decision: 'allow' | 'deny'; requestId?: string },
): Promise<Decided | undefined> {
  if (!WELL_FORMED_ID.test(input.id)) return undefined;
  const code = randomBytes(32).toString('base64url');
  return db.transaction().execute(async (trx) => {
    const request = await decideConsentRequest(trx, {
      idHash: sha256Hex(input.id),
      accountId: input.accountId,
      decision: input.decision,
      codeHash: sha256Hex(code),
    });
    if (!request) return undefined;
    if (input.decision === 'allow') {
      await allowDelegation(trx, {
        accountId: input.accountId,
        clientId: request.client_id,
        clientName: request.client_name,
        scopes: request.scopes,
      });
      await recordAuditEvent(trx, {
        actorId: input.accountId,
        action: 'connected-app.allow',
        target: request.client_id,
        details: { scopes: request.scopes },
        requestId: input.requestId,
      });
    }
    return { request, code };
  });
}

/** Where the browser takes the decision: the edge's interaction, from configuration and the row only. */
export function edgeReturnUrl(edgeBaseUrl: string, decided: Decided): string {
  return `${edgeBaseUrl}/mcp/interaction/${encodeURIComponent(decided.request.interaction_uid)}/return?c=${decided.code}`;
}
