import { type PackageFilters, RISK_ORDER } from '@pkgreg/contracts';
import { type RawBuilder, sql } from 'kysely';

// Filters (issue 20) in their two forms, which must agree: the keys the rebuild stores per package
// (pkgreg_facet_keys, migration 2026-11-25T1700-registry-discovery), read by search's posting tables and
// by filtered lists, and predicates on a live packages row (`p`), read by the selective plan and by lists
// walking an order. Free-text values compare lowercased and trimmed, as the keys store them.

/** The filter keys a package must all hold, sorted (as pkgreg_facet_keys gives them). */
export function filterKeys(filters: PackageFilters): string[] {
  const keys: string[] = [];
  if (filters.kind) keys.push(`kind:${filters.kind}`);
  if (filters.category) keys.push(`category:${filters.category.trim().toLowerCase()}`);
  if (filters.tag) keys.push(`tag:${filters.tag.trim().toLowerCase()}`);
  if (filters.agent) keys.push(`agent:${filters.agent.trim().toLowerCase()}`);
  if (filters.license) keys.push(`license:${filters.license.trim().toLowerCase()}`);
  if (filters.verified !== undefined) keys.push(`verified:${filters.verified}`);
  if (filters.status) keys.push(`status:${filters.status}`);
  // `risk:<level>` is stored for every level at least the package's own: "at most <level>".
  if (filters.risk) keys.push(`risk:${filters.risk}`);
  if (filters.owner) keys.push(`owner:${filters.owner.toLowerCase()}`);
  return keys.sort();
}

export function hasFilters(filters: PackageFilters): boolean {
  return filterKeys(filters).length > 0;
}

const anyOf = (column: string, value: string) =>
  sql`exists (select 1 from unnest(${sql.ref(column)}) x where lower(btrim(x)) = lower(${value}))`;

/** The filters as one predicate on packages row `alias` (true when there is none). */
export function filterPredicate(filters: PackageFilters, alias = 'p'): RawBuilder<boolean> {
  const c = (column: string) => `${alias}.${column}`;
  const parts: RawBuilder<unknown>[] = [];
  if (filters.kind) parts.push(sql`${sql.ref(c('kind'))} = ${filters.kind}`);
  if (filters.category) parts.push(sql`lower(btrim(${sql.ref(c('category'))})) = lower(${filters.category})`);
  if (filters.tag) parts.push(anyOf(c('tags'), filters.tag));
  if (filters.agent) parts.push(anyOf(c('compatibility'), filters.agent));
  if (filters.license) parts.push(sql`lower(btrim(${sql.ref(c('license'))})) = lower(${filters.license})`);
  if (filters.verified !== undefined) parts.push(sql`${sql.ref(c('verified'))} = ${filters.verified}`);
  if (filters.status) parts.push(sql`${sql.ref(c('status'))} = ${filters.status}`);
  if (filters.risk) {
    const allowed = RISK_ORDER.slice(0, RISK_ORDER.indexOf(filters.risk) + 1);
    parts.push(sql`${sql.ref(c('risk'))} = any(${allowed}::text[])`);
  }
  if (filters.owner) parts.push(sql`${sql.ref(c('scope'))} = ${filters.owner.toLowerCase()}`);
  return parts.length === 0 ? sql<boolean>`true` : sql<boolean>`(${sql.join(parts, sql` and `)})`;
}
