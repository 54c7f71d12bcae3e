import type { Database } from '@pkgreg/db';
import { type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool, sql } from 'kysely';

// Who may read which private packages (docs/accounts.md, "Private skills"). Every public package is
// readable by anyone; a private one (packages.private: it or its scope is private) only by a member of
// its scope's organisation, its scope's account, or a token limited to it. A reader's access is the set
// of scopes and packages that lets it through; anonymous callers have neither.

/** The private packages a reader may see beyond every public one. */
export interface ReadAccess {
  /** Scopes (without `@`) whose private packages the reader sees. */
  readonly scopes: readonly string[];
  /** `scope/name` of single private packages the reader sees (a token limited to packages). */
  readonly packages: readonly string[];
}

/** What anyone sees: public packages only. */
export const PUBLIC_ONLY: ReadAccess = Object.freeze({
  scopes: Object.freeze([]),
  packages: Object.freeze([]),
});

/** True when the reader sees no private package at all (answers may then be shared by caches). */
export function isPublicOnly(access: ReadAccess): boolean {
  return access.scopes.length === 0 && access.packages.length === 0;
}

/** Whether the reader may see this package. */
export function canRead(access: ReadAccess, pkg: { scope: string; name: string; private: boolean }): boolean {
  if (!pkg.private) return true;
  return access.scopes.includes(pkg.scope) || access.packages.includes(`${pkg.scope}/${pkg.name}`);
}

/**
 * The SQL condition "this reader may see the row" over a `packages` row under `alias`: `not private`
 * alone for public-only readers, so their plans stay those of before private packages existed.
 */
export function readableBy(
  access: ReadAccess,
  alias = 'packages',
): (eb: ExpressionBuilder<Database, 'packages'>) => Expression<SqlBool> {
  return () => readableSql(access, alias);
}

/** readableBy as raw SQL, for statements written with `sql` or joining `packages` under an alias. */
export function readableSql(access: ReadAccess, alias = 'packages'): RawBuilder<SqlBool> {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  if (isPublicOnly(access)) return sql<SqlBool>`not ${column('private')}`;
  return sql<SqlBool>`(not ${column('private')} or ${column('scope')} = any(${[...access.scopes]}::text[]) or (${column('scope')} || '/' || ${column('name')}) = any(${[...access.packages]}::text[]))`;
}

/**
 * The SQL condition "this private row is one the reader may read" (the rows of packages_private_idx it
 * reaches): for merging a reader's private packages into answers built from public-only tables. The
 * scopes of every grant come first as one `scope = any(...)`, an index condition on
 * packages_private_idx, so the reader's rows are read and no other private package is.
 */
export function privateReadableSql(access: ReadAccess, alias = 'packages'): RawBuilder<SqlBool> {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  const split = access.packages.map((key) => key.split('/'));
  const scopes = [...new Set([...access.scopes, ...split.map(([scope = '']) => scope)])];
  if (access.packages.length === 0)
    return sql<SqlBool>`(${column('private')} and ${column('scope')} = any(${scopes}::text[]))`;
  return sql<SqlBool>`(${column('private')} and ${column('scope')} = any(${scopes}::text[])
    and (${column('scope')} = any(${[...access.scopes]}::text[])
      or (${column('name')} = any(${split.map(([, name = '']) => name)}::text[])
        and ${column('scope')} || '/' || ${column('name')} = any(${[...access.packages]}::text[]))))`;
}
