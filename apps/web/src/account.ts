import type { Me, RoleName } from '@pkgreg/contracts';
import { useEffect, useState } from 'preact/hooks';
import { getMe } from './account-session.js';

// Who is signed in, asked once per page load (GET /api/me) and shared by the header and every page.
// Signing in, out or joining an organisation calls refreshAccount() so they all see the change.

export type AccountState =
  | { status: 'loading' }
  | { status: 'signed-out' }
  | { status: 'signed-in'; me: Me }
  | { status: 'error'; error: unknown };

let state: AccountState = { status: 'loading' };
let pending: Promise<void> | null = null;
const listeners = new Set<(next: AccountState) => void>();

function set(next: AccountState): void {
  state = next;
  for (const listener of listeners) listener(next);
}

export function refreshAccount(): Promise<void> {
  pending = getMe().then(
    (me) => set(me ? { status: 'signed-in', me } : { status: 'signed-out' }),
    (error: unknown) => set({ status: 'error', error }),
  );
  return pending;
}

export function useAccount(): AccountState {
  const [current, setCurrent] = useState(state);
  useEffect(() => {
    listeners.add(setCurrent);
    if (!pending) void refreshAccount();
    setCurrent(state);
    return () => {
      listeners.delete(setCurrent);
    };
  }, []);
  return current;
}

const RANK: Record<RoleName, number> = { reader: 0, publisher: 1, admin: 2, owner: 3 };

export function atLeast(role: RoleName | undefined, least: RoleName): boolean {
  return role !== undefined && RANK[role] >= RANK[least];
}

/** The signed-in account's role in `scope`, if any. */
export function scopeRole(account: AccountState, scope: string): RoleName | undefined {
  if (account.status !== 'signed-in') return undefined;
  return account.me.scopes.find((s) => s.scope === scope)?.role;
}
