// Filters on search (issue 20): every plan (selective, filter, posting, scan) answers a filtered query
// exactly as a plain SQL of the same terms and filters ranking every match, on a table small enough to
// rank in full, with blocks of 8 positions so that the facet chains cross blocks and complements run.
import type { PackageFilters } from '@pkgreg/contracts';
import { sql } from 'kysely';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { facetOperands } from '../src/search/facets.repository.js';
import { filterKeys } from '../src/search/filters.js';
import { rebuildSearchTables, searchPackages } from '../src/search/search.service.js';
import { choosePlan, DEFAULT_SEARCH_PLAN, type SearchPlanOptions } from '../src/search/search-planner.js';
import { tierOf } from '../src/search/search-ranking.js';
import { anywhereQuery } from '../src/search/search-sql.js';
import { prefixStats } from '../src/search/search-statistics.repository.js';
import { searchLexemes } from '../src/search/search-terms.js';
import { type PackageInsert, packageRow, useTestRegistry } from './fixtures.js';
import { loggedDb, names } from './search-helpers.js';

const t = useTestRegistry();
const blocks = { blockShift: 3, blockMinDocs: 2 };
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];

beforeAll(async () => {
  const rows: PackageInsert[] = [];
  for (let i = 0; i < 160; i += 1) {
    const w = (k: number) => WORDS[(i * k + Math.floor(i / 7)) % WORDS.length];
    rows.push(
      packageRow({
        scope: `s${i % 9}`,
        name: i % 4 === 0 ? `${w(1)}-${w(3)}-${i}` : `${w(2)}-${i}`,
        description: `Works with ${w(3)} and ${w(5)}${i % 3 === 0 ? ` plus ${w(7)}` : ''}.`,
        repo_stars: (i * 31) % 50,
        kind: (['skill', 'skill', 'app', 'workflow', 'composite'] as const)[i % 5],
        category: i % 6 === 0 ? null : (['data', 'Design', 'ops'] as const)[i % 3],
        tags: [`t${i % 4}`, i % 10 === 0 ? 'Rare' : `t${(i + 1) % 4}`],
        compatibility: i % 7 === 0 ? [] : ['claude-code', i % 2 ? 'codex' : 'cursor'],
        license: (['MIT', 'Apache-2.0', null] as const)[i % 3],
        verified: i % 5 === 0,
        status: i % 11 === 0 ? 'deprecated' : i % 29 === 3 ? 'delisted' : 'active',
        risk: (['none', 'none', 'none', 'low', 'high', null] as const)[i % 6],
      }),
    );
  }
  // All-in-name matches ranked last by stars, one of them filtered in, one out.
  rows.push(
    packageRow({ scope: 'zz', name: 'alpha-beta-finale', description: 'Last.', repo_stars: 0, kind: 'app' }),
  );
  rows.push(
    packageRow({ scope: 'zz', name: 'alpha-beta-coda', description: 'Last.', repo_stars: 0, kind: 'skill' }),
  );
  await t.db.insertInto('packages').values(rows).execute();
  await rebuildSearchTables(t.db, blocks);
});

/** The filters as plain SQL (apart from src/search/filters.ts). */
function plainWhere(filters: PackageFilters) {
  const parts = [sql`p.status <> 'delisted'`, sql`p.quarantined_at is null`, sql`not p.private`];
  const lowered = (column: string) => sql`array(select lower(x) from unnest(${sql.ref(`p.${column}`)}) x)`;
  if (filters.kind) parts.push(sql`p.kind = ${filters.kind}`);
  if (filters.category) parts.push(sql`lower(p.category) = ${filters.category}`);
  if (filters.tag) parts.push(sql`${filters.tag} = any(${lowered('tags')})`);
  if (filters.agent) parts.push(sql`${filters.agent} = any(${lowered('compatibility')})`);
  if (filters.license) parts.push(sql`lower(p.license) = ${filters.license}`);
  if (filters.verified !== undefined) parts.push(sql`p.verified = ${filters.verified}`);
  if (filters.status) parts.push(sql`p.status = ${filters.status}`);
  if (filters.risk) {
    const levels = ['none', 'low', 'medium', 'high'];
    parts.push(sql`p.risk = any(${levels.slice(0, levels.indexOf(filters.risk) + 1)}::text[])`);
  }
  if (filters.owner) parts.push(sql`p.scope = ${filters.owner}`);
  return sql.join(parts, sql` and `);
}

/** Every match ranked (tiers, then stars, scope, name): the top 50 and the count. */
async function reference(q: string, filters: PackageFilters) {
  const lexemes = searchLexemes(q);
  const rows = await sql<{ key: string; total: number }>`
    select p.scope || '/' || p.name as key, count(*) over ()::int as total from packages p
    where p.search_vector @@ ${anywhereQuery(lexemes)} and ${plainWhere(filters)}
    order by ${tierOf(sql`p.search_vector`, lexemes)}, p.repo_stars desc, p.scope, p.name
    limit 50`.execute(t.db);
  return { names: rows.rows.map((r) => r.key), total: rows.rows[0]?.total ?? 0 };
}

const QUERIES = ['alpha', 'alpha beta', 'gamma delta', 'works', 'al be', 'beta s1', 'alpha b', 'a', 'w d'];
const FILTERS: PackageFilters[] = [
  { kind: 'app' },
  { kind: 'skill', verified: false },
  { category: 'design' },
  { tag: 'rare' },
  { agent: 'cursor', license: 'mit' },
  { status: 'active' },
  { status: 'deprecated' },
  { risk: 'low' },
  { owner: 's4' },
  { owner: 's4', kind: 'skill' },
  { risk: 'none', status: 'active', verified: false },
  { tag: 'no-such-tag' },
];

const base: SearchPlanOptions = { ...DEFAULT_SEARCH_PLAN, blockShift: 3 };
const PLANS: Record<string, Partial<SearchPlanOptions>> = {
  selective: { selectiveMaxDocs: 1e9, postingPlan: false, filterMaxDocs: -1 },
  filter: { selectiveMaxDocs: -1, filterMaxDocs: 1e9 },
  posting: { selectiveMaxDocs: -1, filterMaxDocs: -1 },
  'posting, chunks of 1-3': {
    selectiveMaxDocs: -1,
    filterMaxDocs: -1,
    nameChunk: 1,
    blockChunk: 3,
    firstRoundBlocks: 1,
    maxChunk: 5,
  },
  'posting, broad name keys': { selectiveMaxDocs: -1, filterMaxDocs: -1, maxExpansions: 0, nameChunk: 2 },
  scan: { selectiveMaxDocs: -1, filterMaxDocs: -1, postingPlan: false, minChunk: 3, parallel: 2 },
};

describe('filtered search: every plan equals a plain SQL of the same terms and filters', () => {
  it.each(Object.entries(PLANS))('%s plan', async (_label, variant) => {
    const options = { ...base, ...variant };
    let compared = 0;
    for (const q of QUERIES) {
      for (const filters of FILTERS) {
        const want = await reference(q, filters);
        const got = await searchPackages(t.db, q, options, filters);
        expect({ q, filters, names: names(got) }).toEqual({ q, filters, names: want.names });
        // Fewer than a page: every plan read every candidate, so the total is exact too.
        if (want.total < 50)
          expect({ q, filters, total: got.total }).toEqual({ q, filters, total: want.total });
        if (want.names.length > 0) compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(60);
  });

  it('the planner picks the filter plan for filters that leave few packages, not for broad ones', async () => {
    const plan = async (q: string, filters: PackageFilters) => {
      const lexemes = searchLexemes(q);
      const stats = await prefixStats(t.db, lexemes, base.maxExpansions);
      const facets = await facetOperands(t.db, filterKeys(filters));
      return choosePlan(lexemes, stats, 159, { ...base, selectiveMaxDocs: 20, filterMaxDocs: 10 }, facets)
        .plan;
    };
    expect(await plan('works', { owner: 's4', kind: 'app' })).toBe('filter');
    expect(await plan('works', { tag: 'rare' })).not.toBe('filter');
    expect(await plan('works', { status: 'active' })).toBe('posting');
  });

  it('reads the facet lists in the posting tables statement, and the rows only of what they keep', async () => {
    const statements: string[] = [];
    const logged = loggedDb(t.db, (text) => statements.push(text));
    await searchPackages(logged, 'alpha', { ...base, ...PLANS.posting }, { kind: 'app' });
    expect(statements.some((s) => s.includes('package_search_facets s'))).toBe(true);
  });

  // A package's row still sits in the rebuilt tables until the next rebuild: the plans re-read it live,
  // and neither show it nor count it (an outsider must not learn from a total that a private one exists).
  it.each(Object.entries(PLANS))(
    '%s plan: a package delisted or made private since the rebuild leaves page and total at once',
    async (_label, variant) => {
      const options = { ...base, ...variant };
      const filters: PackageFilters = variant.filterMaxDocs === 1e9 ? { kind: 'app' } : {};
      const before = await reference('alpha beta', filters);
      const [delisted, hidden] = before.names.slice(0, 2);
      if (!delisted || !hidden) throw new Error('the fixture has fewer than two matches');
      const named = (key: string) => key.slice(key.indexOf('/') + 1);
      const change = (
        key: string,
        set: { status?: 'delisted' | 'active'; visibility?: 'private' | 'public' },
      ) => t.db.updateTable('packages').set(set).where('name', '=', named(key)).execute();
      await change(delisted, { status: 'delisted' });
      await change(hidden, { visibility: 'private' });
      try {
        const want = await reference('alpha beta', filters);
        expect(want.total).toBe(before.total - 2);
        const got = await searchPackages(t.db, 'alpha beta', options, filters);
        expect({ names: names(got), total: got.total }).toEqual({ names: want.names, total: want.total });
      } finally {
        await change(delisted, { status: 'active' });
        await change(hidden, { visibility: 'public' });
      }
    },
  );
});

describe('GET /api/search with filters', () => {
  it('applies them, and an empty q still answers nothing (rule 3)', async () => {
    await rebuildSearchTables(t.db);
    const res = await request(t.app).get('/api/search?q=alpha&kind=app&risk=none').expect(200);
    expect(names(res.body)).toEqual((await reference('alpha', { kind: 'app', risk: 'none' })).names);
    await request(t.app).get('/api/search?kind=app').expect(200, { results: [], total: 0 });
  });
});
