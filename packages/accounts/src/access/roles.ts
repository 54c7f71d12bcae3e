// An organisation member's role, weakest first (docs/accounts.md, "Organisations"): readers see the
// organisation's private packages, publishers also publish, admins also manage members, invitations and
// package settings, owners also delete the organisation and name other owners.

export const ROLES = ['reader', 'publisher', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** True when `role` is `least` or stronger. */
export function atLeast(role: Role, least: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(least);
}

/** The stronger of two roles (one scope reached through two paths). */
export function stronger(a: Role, b: Role): Role {
  return atLeast(a, b) ? a : b;
}
