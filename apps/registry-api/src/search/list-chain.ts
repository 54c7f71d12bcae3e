import { type RawBuilder, sql } from 'kysely';

/** One sorted int4[] set operation of a chain: `&` keeps the list's positions, `-` drops them, `|` adds. */
export interface ChainStep {
  list: RawBuilder<unknown>;
  op: '&' | '-' | '|';
  /** What the list holds, for ordering (rarest first); not used by the chain itself. */
  cost: number;
}

/**
 * A chain of set operations over sorted int4[] lists as laterals (`joins`, then read `value`), from
 * `base` (or the first step's list when null). `&` and `-` stop reading lists once the value is empty,
 * since every intarray operation copies its operands.
 */
export function chain(
  base: RawBuilder<unknown> | null,
  steps: ChainStep[],
  alias: string,
): { joins: RawBuilder<unknown>; value: RawBuilder<unknown> } {
  const step = (i: number) => sql.ref(`${alias}${i}.a`);
  const joins: RawBuilder<unknown>[] = [];
  const all = base === null ? steps : [{ list: base, op: '&' as const, cost: 0 }, ...steps];
  if (all.length === 0) throw new Error('chain: no list');
  if (all[0]?.op === '-') throw new Error('chain: a difference needs a base');
  all.forEach((s, i) => {
    const at = sql.id(`${alias}${i}`);
    if (i === 0) {
      joins.push(sql`cross join lateral (select ${s.list} as a offset 0) ${at}`);
    } else if (s.op === '|') {
      joins.push(sql`cross join lateral (select ${step(i - 1)} | ${s.list} as a offset 0) ${at}`);
    } else {
      joins.push(sql`cross join lateral (select case when cardinality(${step(i - 1)}) = 0 then ${step(i - 1)}
          else ${step(i - 1)} ${sql.raw(s.op)} ${s.list} end as a offset 0) ${at}`);
    }
  });
  return { joins: sql.join(joins, sql` `), value: step(all.length - 1) };
}
