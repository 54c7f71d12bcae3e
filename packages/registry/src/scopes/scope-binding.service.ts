import type { Database } from '@pkgreg/db';
import type { Kysely } from 'kysely';
import {
  findScopeOfOwner,
  findScopeOwner,
  heldByAnotherAccount,
  insertScopeOwner,
  renameScopeOwner,
  type ScopeOwnerRow,
} from './scope-owners.repository.js';

// How a scope is bound to its owner (docs/publishing.md): by the code host's account id, never by the
// login. The first publish or index of an account binds the scope its login names; a renamed account
// keeps it; a new account that took a freed login gets nothing; nor does a login naming a scope a
// pkgreg account or organisation holds already (docs/publishing.md, "Uploading").

type Conn = Kysely<Database>;

/** Who is asking for a scope: the code host's account (id and current login). */
export interface ScopeClaim {
  /** The scope the login names (sanitizeScope of it). */
  scope: string;
  ownerId: number;
  login: string;
}

/** The scope a claim resolves to, or why it is refused; nothing is written. */
export type ScopeDecision =
  | { ok: true; scope: string; bound: ScopeOwnerRow | null }
  | { ok: false; message: string };

/** Thrown by bindScope when the scope belongs to another account (the indexer reports it as forbidden). */
export class ScopeTakenError extends Error {
  override readonly name = 'ScopeTakenError';
}

/**
 * A renamed account (same id) keeps the scope it was bound to, whatever its login says now; a login
 * whose scope is bound to another id is refused (a new account that took a freed login gets nothing).
 */
export async function decideScope(db: Conn, claim: ScopeClaim): Promise<ScopeDecision> {
  const mine = await findScopeOfOwner(db, claim.ownerId);
  if (mine) return { ok: true, scope: mine.scope, bound: mine };
  const holder = await findScopeOwner(db, claim.scope);
  if (holder) return { ok: false, message: scopeTakenMessage(holder, claim) };
  // A scope a pkgreg account or organisation took first (an upload claimed it, or it was moved into an
  // organisation) is not taken by a code-host login that happens to name it: first come, as above.
  if (await heldByAnotherAccount(db, claim.scope, claim.ownerId)) {
    return {
      ok: false,
      message: `scope @${claim.scope} belongs to a pkgreg account or organisation not linked to the code-host account "${claim.login}" (id ${claim.ownerId}), so it cannot publish into that scope`,
    };
  }
  return { ok: true, scope: claim.scope, bound: null };
}

export function scopeTakenMessage(holder: ScopeOwnerRow, claim: ScopeClaim): string {
  return (
    `scope @${holder.scope} belongs to the code-host account with id ${holder.owner_id} ` +
    `(last seen as "${holder.owner_login}"); "${claim.login}" is now account ${claim.ownerId}, ` +
    'another account, so it cannot publish into that scope'
  );
}

/**
 * Binds the claim's scope to its account unless bound already (first publish or index wins), and
 * records a renamed account's new login. Throws ScopeTakenError when the scope belongs to another
 * account. Run it in the transaction that writes under the scope, so a failure binds nothing.
 */
export async function bindScope(db: Conn, claim: ScopeClaim, boundBy: 'publish' | 'index'): Promise<string> {
  const decision = await decideScope(db, claim);
  if (!decision.ok) throw new ScopeTakenError(decision.message);
  if (decision.bound) {
    if (decision.bound.owner_login !== claim.login)
      await renameScopeOwner(db, decision.bound.scope, claim.login);
    return decision.scope;
  }
  const inserted = await insertScopeOwner(db, {
    scope: decision.scope,
    ownerId: claim.ownerId,
    login: claim.login,
    boundBy,
  });
  if (inserted) return inserted;
  // Another run bound it between our read and our insert: decide again against what it wrote.
  const again = await decideScope(db, claim);
  if (!again.ok) throw new ScopeTakenError(again.message);
  return again.scope;
}

/** Whether the claim may manage a package of `scope`, and why not (nothing is written). */
export type PackageOwnership = { ok: true; bound: boolean } | { ok: false; message: string };

/**
 * Owner actions (deprecate, yank) on a package: the account must own the package's scope, by id. The
 * caller binds the scope (bindScope) when `bound` is false.
 */
export async function checkPackageOwner(
  db: Conn,
  claim: ScopeClaim,
  pkg: { scope: string; name: string },
): Promise<PackageOwnership> {
  const decision = await decideScope(db, claim);
  if (!decision.ok) return { ok: false, message: `Refused: ${decision.message}` };
  if (decision.scope !== pkg.scope) {
    return {
      ok: false,
      message: `@${pkg.scope}/${pkg.name} is in scope @${pkg.scope}; the account ${claim.login} (id ${claim.ownerId}) owns @${decision.scope}`,
    };
  }
  return { ok: true, bound: decision.bound !== null };
}
