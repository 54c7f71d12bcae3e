// The posting plan of registry search (package_search_blocks and package_search_name_keys), on a table
// small enough to compare against the exact answer, with blocks of 8 positions so that every
// multi-block path runs.
import { createDb } from '@pkgreg/db';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { rebuildSearchTables, searchPackages } from '../src/search/search.service.js';
import { DEFAULT_SEARCH_PLAN, type SearchPlanOptions } from '../src/search/search-planner.js';
import { initialsMask, searchLexemes } from '../src/search/search-terms.js';
import { type PackageInsert, packageRow } from './fixtures.js';
import { loggedDb, names } from './search-helpers.js';

const t = useTestDatabase();
const blocks = { blockShift: 3, blockMinDocs: 2 };

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];

beforeAll(async () => {
  const rows: PackageInsert[] = [];
  // 120 packages, stars 120..1: a name of one or two words, a description of two or three.
  for (let i = 0; i < 120; i += 1) {
    const w = (k: number) => WORDS[(i * k + Math.floor(i / 7)) % WORDS.length];
    rows.push(
      packageRow({
        scope: `s${i % 9}`,
        name: i % 4 === 0 ? `${w(1)}-${w(3)}-${i}` : `${w(2)}-${i}`,
        description: `Works with ${w(3)} and ${w(5)}${i % 3 === 0 ? ` plus ${w(7)}` : ''}.`,
        repo_stars: 120 - i,
      }),
    );
  }
  // All-in-name and name+scope matches ranked last by stars: a plan that reads in ranking order until
  // it has 50 matches misses them.
  rows.push(packageRow({ scope: 'zz', name: 'alpha-beta-finale', description: 'Last.', repo_stars: 0 }));
  rows.push(packageRow({ scope: 'alpha', name: 'beta-scoped', description: 'Scoped.', repo_stars: 0 }));
  // A name key (`alph`) that is not the term: with broad terms these are name candidates whose match is
  // in the description only (tier 2), ranked last by stars.
  for (let i = 0; i < 12; i += 1) {
    rows.push(
      packageRow({ scope: 'horn', name: `alphorn-${i}`, description: 'About alpha horns.', repo_stars: 0 }),
    );
  }
  rows.push(
    packageRow({ scope: 'zz', name: 'zeta-rare', description: 'Only once: omegaword.', repo_stars: 0 }),
  );
  await t.db.insertInto('packages').values(rows).execute();
  await rebuildSearchTables(t.db, blocks);
});

// Never selective: every query with keys takes the posting plan. The reference is the selective plan
// over every candidate (exact by construction: it ranks all matches) without the posting tables.
const postings: SearchPlanOptions = { ...DEFAULT_SEARCH_PLAN, ...{ blockShift: 3 }, selectiveMaxDocs: -1 };
const exact: SearchPlanOptions = { ...DEFAULT_SEARCH_PLAN, selectiveMaxDocs: 1e9, postingPlan: false };
const QUERIES = [
  'alpha',
  'alpha beta',
  'al be',
  'gamma delta',
  'alpha beta gamma',
  'beta s1',
  'eps gam del',
  'works',
  // One-character terms beside terms with blocks: name keys of their own, the blocks' re-check.
  'alpha b',
  'al b g',
  'beta s',
  'gamma w',
  'd alpha',
  'alpha b e',
];

describe('posting plan (decisions.md: Registry search, posting tables)', () => {
  it('answers every query exactly as ranking every match would, in chunks and blocks of any size', async () => {
    const variants: Array<Partial<SearchPlanOptions>> = [
      {},
      { nameChunk: 1, blockChunk: 1, firstRoundBlocks: 1 },
      { nameChunk: 2, blockChunk: 3, firstRoundBlocks: 2, maxChunk: 5 },
      { nameChunk: 7, blockChunk: 11, firstRoundBlocks: 20 },
      // Every term of 5+ characters broad: name keys are its first 4 characters, a superset that the
      // name phase re-checks in chunks instead of taking tiers from the sets.
      { maxExpansions: 0, nameChunk: 1, blockChunk: 2, firstRoundBlocks: 1 },
      { maxExpansions: 0 },
    ];
    for (const q of QUERIES) {
      const reference = await searchPackages(t.db, q, exact);
      expect(reference.results.length).toBeGreaterThan(0);
      for (const variant of variants) {
        const statements: string[] = [];
        const logged = loggedDb(t.db, (text) => statements.push(text));
        const res = await searchPackages(logged, q, { ...postings, ...variant });
        expect({ q, variant, names: names(res) }).toEqual({ q, variant, names: names(reference) });
        // Fewer than a page: every block was read, so the total is exact too.
        if (reference.total < 50) expect({ q, total: res.total }).toEqual({ q, total: reference.total });
        expect(statements.some((s) => s.includes('"package_search_blocks" s'))).toBe(true);
      }
    }
  });

  it('never fails on odd input and answers it as ranking every match would (registry-api.md: Search rule 4)', async () => {
    const odd = [
      "alpha'beta",
      'alpha" OR beta',
      'alpha & !beta | gamma',
      'alpha:* <-> beta',
      '\\alpha\\',
      'the alpha',
      'alpha the',
      'to',
      'alpha alphabet alp',
      '@s1/alpha-beta',
      'ALPHA BETA',
      'álpha bëta',
      'alpha 🚀 beta',
      'al-ph-a',
      'zz alpha',
      'omegaword',
      'alpha beta gamma delta epsilon works with plus',
    ];
    for (const q of odd) {
      const res = await searchPackages(t.db, q, postings);
      expect({ q, names: names(res) }).toEqual({ q, names: names(await searchPackages(t.db, q, exact)) });
    }
  });

  it('ranks all-in-name, then name+scope matches first wherever their stars put them', async () => {
    const res = await searchPackages(t.db, 'alpha beta', postings);
    const list = names(res);
    const finale = list.indexOf('zz/alpha-beta-finale');
    const scoped = list.indexOf('alpha/beta-scoped');
    expect(finale).toBeGreaterThanOrEqual(0);
    expect(scoped).toBeGreaterThan(finale);
    // Every package before the name+scope one has both terms in its name.
    for (const name of list.slice(0, scoped)) expect(name).toMatch(/alpha.*beta|beta.*alpha/);
  });

  it('a rare term (no blocks), or terms of one character only, leave the posting plan to the others', async () => {
    for (const q of ['omegaword works', 'a b', 'b']) {
      const statements: string[] = [];
      const res = await searchPackages(
        loggedDb(t.db, (text) => statements.push(text)),
        q,
        postings,
      );
      expect(statements.some((s) => s.includes('"package_search_blocks" s'))).toBe(false);
      expect(names(res)).toEqual(names(await searchPackages(t.db, q, exact)));
    }
  });

  it('a one-character term beside terms with blocks: its name key gives the tiers, the blocks leave it to the re-check', async () => {
    for (const q of ['alpha b', 'b alpha e']) {
      const statements: string[] = [];
      const res = await searchPackages(
        loggedDb(t.db, (text) => statements.push(text)),
        q,
        postings,
      );
      expect(statements.some((s) => s.includes('"package_search_blocks" s'))).toBe(true);
      expect({ q, names: names(res) }).toEqual({ q, names: names(await searchPackages(t.db, q, exact)) });
    }
  });

  it('tables rebuilt before first-character keys existed: a one-character term leaves the query to the scan plan', async () => {
    // What such a rebuild left: no one-character rows in the prefix statistics (and no such name keys).
    const removed = await sql<{ prefix: string; docs: number; lexemes: number }>`
      delete from package_search_prefixes where length(prefix) = 1 returning prefix, docs, lexemes`.execute(
      t.db,
    );
    expect(removed.rows.length).toBeGreaterThan(0);
    try {
      const statements: string[] = [];
      const res = await searchPackages(
        loggedDb(t.db, (text) => statements.push(text)),
        'alpha b',
        postings,
      );
      expect(statements.some((s) => s.includes('"package_search_blocks" s'))).toBe(false);
      expect(names(res)).toEqual(names(await searchPackages(t.db, 'alpha b', exact)));
    } finally {
      for (const row of removed.rows) {
        await sql`insert into package_search_prefixes (prefix, docs, lexemes)
          values (${row.prefix}, ${row.docs}, ${row.lexemes})`.execute(t.db);
      }
    }
  });

  it('takes over from a selective plan past selectiveMaxPostings GIN postings or selectiveMaxDocsBesidePostings candidates', async () => {
    const selective = {
      ...DEFAULT_SEARCH_PLAN,
      blockShift: 3,
      selectiveMaxDocs: 1e9,
      selectiveMaxPostings: 1e9,
      selectiveMaxDocsBesidePostings: 1e9,
    };
    for (const bound of ['selectiveMaxPostings', 'selectiveMaxDocsBesidePostings'] as const) {
      for (const [max, viaBlocks] of [
        [0, true],
        [1e9, false],
      ] as const) {
        const statements: string[] = [];
        const res = await searchPackages(
          loggedDb(t.db, (text) => statements.push(text)),
          'gamma delta',
          { ...selective, [bound]: max },
        );
        expect([bound, max, statements.some((s) => s.includes('"package_search_blocks" s'))]).toEqual([
          bound,
          max,
          viaBlocks,
        ]);
        expect(res).toEqual(await searchPackages(t.db, 'gamma delta', exact));
      }
    }
  });

  it('runs its statements prepared, and answers the same once Postgres keeps their generic plans', async () => {
    // One connection, so its prepared statements can be read: after five custom plans Postgres keeps a
    // generic one (named-statements.ts), whose answers must not change.
    const one = createDb(t.url, { max: 1 });
    try {
      for (const q of ['alpha beta', 'gamma d', 'eps gam del']) {
        const truth = await searchPackages(t.db, q, exact);
        for (let i = 0; i < 8; i++) expect(await searchPackages(one, q, postings)).toEqual(truth);
      }
      const prepared = await sql<{ name: string; generic_plans: string }>`
        select name, generic_plans from pg_prepared_statements where name like 'pkgreg_search_%'`.execute(
        one,
      );
      expect(prepared.rows.length).toBeGreaterThanOrEqual(3);
      expect(prepared.rows.filter((r) => Number(r.generic_plans) > 0).length).toBeGreaterThanOrEqual(3);
    } finally {
      await one.destroy();
    }
  });

  it('honours a delisting since the tables were rebuilt (decisions.md: Registry / Status)', async () => {
    await t.db
      .updateTable('packages')
      .set({ status: 'delisted' })
      .where('name', '=', 'alpha-beta-finale')
      .execute();
    try {
      const res = await searchPackages(t.db, 'alpha beta', postings);
      expect(names(res)).not.toContain('zz/alpha-beta-finale');
      expect(names(res)).toContain('alpha/beta-scoped');
    } finally {
      await t.db
        .updateTable('packages')
        .set({ status: 'active' })
        .where('name', '=', 'alpha-beta-finale')
        .execute();
    }
  });

  it('rebuild: blocks for keys in at least blockMinDocs packages, name keys for name and scope only', async () => {
    const keyRows = await sql<{ key: string; n: number }>`
      select key, (select count(*) from (select distinct unnest(ords)) u)::int as n
      from (select key, pkgreg_int_union(ords) as ords from package_search_blocks group by key) x`.execute(
      t.db,
    );
    const byKey = new Map(keyRows.rows.map((r) => [r.key, r.n]));
    // `alph` is a prefix key of `alpha` (in many packages); `omeg` is in one description only.
    expect(byKey.get('alph')).toBeGreaterThan(2);
    expect(byKey.has('omeg')).toBe(false);
    // Each block holds the positions of its range only, sorted.
    const misplaced = await sql<{ n: number }>`
      select count(*)::int as n from package_search_blocks b, unnest(b.ords) o where (o >> 3) <> b.block`.execute(
      t.db,
    );
    expect(misplaced.rows[0]?.n).toBe(0);
    // Name keys: `a` exactly the positions with a name lexeme starting with `alph`, `b` with a scope one.
    const nameKeys = await sql<{ key: string; a: number[]; b: number[] }>`
      select key, a, b from package_search_name_keys where key in ('alph', 'work', 'zeta', 'alpha')`.execute(
      t.db,
    );
    const byName = new Map(nameKeys.rows.map((r) => [r.key, r]));
    expect(byName.has('work')).toBe(false); // description only
    expect(byName.get('zeta')?.a.length).toBe(1);
    // First characters too: `b` holds every name with a word starting with b.
    const b = await sql<{ a: number[] }>`select a from package_search_name_keys where key = 'b'`.execute(
      t.db,
    );
    const bTruth = await sql<{ ord: number }>`
      select ord from package_search_docs where search_vector @@ to_tsquery('simple', 'b:*A') order by ord`.execute(
      t.db,
    );
    expect(bTruth.rows.length).toBeGreaterThan(10);
    expect(b.rows[0]?.a).toEqual(bTruth.rows.map((r) => r.ord));
    // One-character prefixes are counted in the statistics (a lookup, not a sum over their lexemes).
    const prefix = await sql<{ docs: number }>`
      select docs::int from package_search_prefixes where prefix = 'a'`.execute(t.db);
    expect(prefix.rows[0]?.docs).toBeGreaterThan(0);
    for (const weight of ['A', 'B'] as const) {
      const truth = await sql<{ ord: number }>`
        select ord from package_search_docs
        where search_vector @@ to_tsquery('simple', ${`alph:*${weight}`}) order by ord`.execute(t.db);
      expect(truth.rows.length).toBeGreaterThan(0);
      const stored = byName.get('alph');
      expect(weight === 'A' ? stored?.a : stored?.b).toEqual(truth.rows.map((r) => r.ord));
    }
  });
});

describe('scan plan: one-character terms through package_search_initials (migration 2026-11-25T0300)', () => {
  it('stores, per row, the bits of its lexemes first characters exactly as initialsMask gives them', async () => {
    const rows = await sql<{ lexemes: string[]; initials: string }>`
      select tsvector_to_array(d.search_vector) as lexemes, i.initials
      from package_search_docs d join package_search_initials i on i.ord = d.ord`.execute(t.db);
    expect(rows.rows.length).toBeGreaterThan(100);
    for (const row of rows.rows) {
      const mask = initialsMask(row.lexemes.map((lexeme) => lexeme[0] as string)) ?? 0n;
      expect(BigInt(row.initials)).toBe(mask);
    }
    // Digits, letters outside a-z, and the shared bits of other characters, as Postgres computes them.
    const odd = ['a', 'z', '0', '9', 'é', 'ж', '中', 'ß', 'ǅ'];
    for (const c of odd) {
      const one = await sql<{ bits: string }>`
        select pkgreg_search_initials(array_to_tsvector(array[${`${c}word`}::text])) as bits`.execute(t.db);
      expect([c, BigInt(one.rows[0]?.bits ?? -1)]).toEqual([c, initialsMask([c])]);
    }
    expect(initialsMask(['a', 'b', 'alpha'])).toBe(3n);
    expect(initialsMask(['0'])).toBe(1n << 26n);
    expect(initialsMask(['alpha', 'beta'])).toBeNull();
  });

  it('answers queries of one-character terms as ranking every match in the window would', async () => {
    // The window (60k rows) holds this whole table, so ranking every match is the reference; for a
    // one-character term (no stem) that is a `simple` prefix match, tiers by weight.
    const used: string[] = [];
    const logged = loggedDb(t.db, (text) => {
      if (text.includes('package_search_initials i')) used.push(text);
    });
    for (const q of [
      'b',
      'a b',
      'w a',
      'b g d',
      'e w p',
      's 1',
      'z',
      'q',
      '1 2',
      'é',
      'alpha b w',
      'd a s',
    ]) {
      // Every term is dense in this table: the density bound is lifted so the initials are used.
      const plan = {
        ...DEFAULT_SEARCH_PLAN,
        postingPlan: false,
        selectiveMaxDocs: -1,
        initialsMaxDensity: 1,
      };
      const got = await searchPackages(logged, q, plan);
      const terms = searchLexemes(q);
      const all = (weights: string) => terms.map((x) => `${x}:*${weights}`).join(' & ');
      const truth = await sql<{ scope: string; name: string }>`
        select scope, name from packages
        where status <> 'delisted' and search_vector @@ to_tsquery('simple', ${all('')})
        order by case when search_vector @@ to_tsquery('simple', ${all('A')}) then 0
          when search_vector @@ to_tsquery('simple', ${all('AB')}) then 1 else 2 end,
          repo_stars desc, scope, name
        limit 50`.execute(t.db);
      expect([q, names(got)]).toEqual([q, truth.rows.map((r) => `${r.scope}/${r.name}`)]);
    }
    // Every query above has a one-character term: each went through the initials table.
    expect(used.length).toBeGreaterThanOrEqual(12);
    // Under the default bound, terms this dense take the plain scan: same answer, no initials.
    used.length = 0;
    const plain = await searchPackages(logged, 'b g d', { ...DEFAULT_SEARCH_PLAN, postingPlan: false });
    expect(used).toEqual([]);
    expect(plain).toEqual(
      await searchPackages(t.db, 'b g d', {
        ...DEFAULT_SEARCH_PLAN,
        postingPlan: false,
        initialsMaxDensity: 1,
      }),
    );
  });
});
