import type { Db } from '@pkgreg/db';
import { type RawBuilder, sql } from 'kysely';
import { type ChainStep, chain } from './list-chain.js';
import { runNamed } from './named-statements.js';

// Filter keys' ranking positions (package_search_facets, rebuilt with the other search tables): each key
// by block of package_search_docs positions, like package_search_blocks, and whole (block -1) for the
// statements that want every position at once (the name phase's sets, the filter plan, list counts):
// building a whole list from its blocks at query time costs tens of milliseconds for a common key. A key
// held by more than half of the packages is stored as its complement (`!key`: the positions without
// it), so no stored list is longer than half the table and "every package but a few" costs a difference
// with a short list.

/** The block number of a key's whole list. */
export const WHOLE_FACET = -1;

/** A filter key as the facet tables hold it, with its count as of the last rebuild. */
export interface FacetOperand {
  key: string;
  /** The key the positions are stored under: `key`, or `!key` when `negated`. */
  stored: string;
  /** Packages holding the key. */
  docs: number;
  /** `stored` holds the positions WITHOUT the key: applied as a difference. */
  negated: boolean;
}

/**
 * The filter keys' operands, as the statistics of the last rebuild have them. A key no package held
 * then is an empty positive list: the filter matches nothing until the next rebuild.
 */
export async function facetOperands(db: Db, keys: string[]): Promise<FacetOperand[]> {
  if (keys.length === 0) return [];
  const rows = await runNamed(
    db,
    sql<{ key: string; docs: number; stored: string }>`
      select key, docs, stored from package_search_facet_stats
      where key = any((select ${keys}::text[])::text[])`,
  );
  const found = new Map(rows.map((row) => [row.key, row]));
  return keys.map((key) => {
    const row = found.get(key);
    if (!row) return { key, stored: key, docs: 0, negated: false };
    return { key, stored: row.stored, docs: Number(row.docs), negated: row.stored !== key };
  });
}

/** Share of the `docs` packages that pass every operand, the keys assumed independent. */
export function facetSelectivity(operands: FacetOperand[], docs: number): number {
  const total = Math.max(docs, 1);
  return operands.reduce((share, operand) => share * Math.min(1, operand.docs / total), 1);
}

/**
 * Chain steps that keep the positions holding every operand: the positive lists (rarest first), then
 * the differences with the complements. `where` narrows package_search_facets (`s`) to a block or range.
 */
export function facetSteps(operands: FacetOperand[], where: RawBuilder<unknown>): ChainStep[] {
  const list = (stored: string) =>
    sql`coalesce((select s.ords from package_search_facets s where s.key = ${stored} ${where}), '{}'::int4[])`;
  const positive = operands.filter((o) => !o.negated).sort((a, b) => a.docs - b.docs);
  const negative = operands.filter((o) => o.negated).sort((a, b) => a.docs - b.docs);
  return [
    ...positive.map((o) => ({ list: list(o.stored), op: '&' as const, cost: o.docs })),
    ...negative.map((o) => ({ list: list(o.stored), op: '-' as const, cost: Number.POSITIVE_INFINITY })),
  ];
}

/** Every position of block `block` (an int4 expression) up to `last`: the base of a chain of complements. */
export function blockPositions(
  block: RawBuilder<unknown>,
  shift: number,
  last: RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql`array(select generate_series(greatest(${block} << ${sql.lit(shift)}, 1),
    least(((${block} + 1) << ${sql.lit(shift)}) - 1, ${last}))::int4)`;
}

/** Chain steps over the operands' whole lists (facetSteps' order). */
export function wholeFacetSteps(operands: FacetOperand[]): ChainStep[] {
  return facetSteps(operands, sql`and s.block = ${sql.lit(WHOLE_FACET)}`);
}

/**
 * The positions passing every operand, from their whole lists: the chain, or every position minus the
 * complements when no operand is positive (only then is the table's range materialised).
 */
export function wholeFacetChain(
  operands: FacetOperand[],
  alias: string,
): { joins: RawBuilder<unknown>; value: RawBuilder<unknown> } {
  const steps = wholeFacetSteps(operands);
  const base =
    steps[0]?.op === '&'
      ? null
      : sql`array(select generate_series(1, (select coalesce(max(ord), 0) from package_search_docs)))::int4[]`;
  return chain(base, steps, alias);
}

/**
 * How many of the `docs` ranked packages pass every operand (as of the last rebuild), from the whole
 * lists. Without a positive operand it is `docs` minus the union of the complements, which never
 * materialises the table's range.
 */
export async function countFacets(db: Db, operands: FacetOperand[], docs: number): Promise<number> {
  if (operands.length === 0) return docs;
  const positive = operands.some((o) => !o.negated);
  const steps = positive
    ? wholeFacetSteps(operands)
    : wholeFacetSteps(operands).map((step) => ({ ...step, op: '|' as const }));
  const { joins, value } = chain(null, steps, 'f');
  const rows = await runNamed(
    db,
    sql<{ n: number }>`select icount(${value}) as n from (select 1) one ${joins}`,
  );
  const n = Number(rows[0]?.n ?? 0);
  return positive ? n : docs - n;
}
