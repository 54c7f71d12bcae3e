// Search's two entry points: searchPackages for a request, rebuildSearchTables for the refresher. The
// design (the derived tables, the plan choice and the three plans) is in docs/search.md.
import { type PackageFilters, SEARCH_MAX_RESULTS, type SearchResponse } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { isPublicOnly, PUBLIC_ONLY, type ReadAccess } from '@pkgreg/registry';
import { type FacetOperand, facetOperands } from './facets.repository.js';
import { filterKeys } from './filters.js';
import { filterPlan, postingPlan } from './posting-plan.js';
import { searchesPositions, searchPrivate } from './private-search.repository.js';
import { scanPlan } from './scan-plan.js';
import {
  choosePlan,
  DEFAULT_SEARCH_PLAN,
  type PlanChoice,
  type SearchPlanOptions,
} from './search-planner.js';
import { byTierAndRank } from './search-ranking.js';
import type { SearchPage, SearchRow } from './search-sql.js';
import { countSearchDocs, prefixStats } from './search-statistics.repository.js';
import {
  createNextBlocks,
  createNextDocs,
  createNextFacets,
  createNextInitials,
  createNextLexemes,
  createNextNameKeys,
  createNextPrefixes,
  createNextPrivateDocs,
  createNextPrivateGroups,
  createNextPrivateKeys,
  DEFAULT_SEARCH_TABLES,
  dropNextTables,
  type SearchTablesOptions,
  swapInNextTables,
} from './search-tables.repository.js';
import { searchLexemes } from './search-terms.js';
import { selectivePlan } from './selective-plan.repository.js';

function toResult(row: SearchRow) {
  return {
    scope: row.scope,
    name: row.name,
    description: row.description,
    kind: row.kind,
    category: row.category ?? '',
    sourceRepo: row.source_repo,
    tokenCount: row.token_count,
    verified: row.verified,
    risk: row.risk,
    ...(row.private ? { private: true } : {}),
  };
}

/**
 * registry-api.md: Search rules 1-4, with the filters of issue 20 (every one must hold). `q` arrives
 * trimmed; an empty `q` answers nothing, filters or not (rule 3: the list answers filters alone). The
 * plans read public packages only; a reader with private access gets its private matches merged in.
 */
export async function searchPackages(
  db: Db,
  q: string,
  plan: SearchPlanOptions = DEFAULT_SEARCH_PLAN,
  filters: PackageFilters = {},
  access: ReadAccess = PUBLIC_ONLY,
): Promise<SearchResponse> {
  const lexemes = searchLexemes(q);
  // Empty, or nothing but punctuation: nothing can match, and no query is sent.
  if (lexemes.length === 0) return { results: [], total: 0 };
  if (!isPublicOnly(access)) return searchWithPrivate(db, lexemes, plan, filters, access);
  const answer = await searchPublic(db, lexemes, plan, filters);
  return { results: answer.rows.map(toResult), total: answer.total };
}

/** The public answer; `docs` is the catalog's document count when another statement reads it. */
async function searchPublic(
  db: Db,
  lexemes: string[],
  plan: SearchPlanOptions,
  filters: PackageFilters,
  docsCount: Promise<number> = countSearchDocs(db),
): Promise<SearchPage> {
  const [stats, docs, facets] = await Promise.all([
    prefixStats(db, lexemes, plan.maxExpansions),
    docsCount,
    facetOperands(db, filterKeys(filters)),
  ]);
  const choice = choosePlan(lexemes, stats, docs, plan, facets);
  return runPlan(db, lexemes, choice, plan, docs, { filters, facets });
}

/**
 * The public answer merged with the reader's private matches (private-search.repository.ts): both are
 * in ranking order (tier, then repo_stars desc, scope, name), so the top 50 of the merge is the top 50
 * of all; `total` adds the private matches (exact) to the public total (as its plan counts it).
 */
async function searchWithPrivate(
  db: Db,
  lexemes: string[],
  plan: SearchPlanOptions,
  filters: PackageFilters,
  access: ReadAccess,
): Promise<SearchResponse> {
  const matches = searchPrivate(db, access, lexemes, filters, SEARCH_MAX_RESULTS);
  // From positions, the private statement also reads the document count the public plans need.
  const docs = searchesPositions(access, filters)
    ? matches.then((found) => found.docs ?? countSearchDocs(db))
    : countSearchDocs(db);
  const [open, own] = await Promise.all([searchPublic(db, lexemes, plan, filters, docs), matches]);
  if (own.total === 0) return { results: open.rows.map(toResult), total: open.total };
  // Every plan gives its rows' tiers (rowsOf, the selective statement): the merge reads nothing more.
  const ranked = [...open.rows.map((row) => ({ ...row, tier: tierOfRow(row) })), ...own.rows].sort(
    byTierAndRank,
  );
  return { results: ranked.slice(0, SEARCH_MAX_RESULTS).map(toResult), total: open.total + own.total };
}

function tierOfRow(row: SearchRow): number {
  if (row.tier === undefined)
    throw new Error(`search plan returned @${row.scope}/${row.name} without its tier`);
  return row.tier;
}

/** A search's filters: as given (the selective plan's predicates) and as facet lists (the other plans). */
interface Filtering {
  filters: PackageFilters;
  facets: FacetOperand[];
}

async function runPlan(
  db: Db,
  lexemes: string[],
  choice: PlanChoice,
  plan: SearchPlanOptions,
  docs: number,
  { filters, facets }: Filtering,
): Promise<SearchPage> {
  switch (choice.plan) {
    case 'selective':
      return selectivePlan(db, lexemes, choice.indexQuery, SEARCH_MAX_RESULTS, choice.recheck, filters);
    case 'filter':
      return filterPlan(db, lexemes, facets);
    case 'posting':
      return postingPlan(db, lexemes, choice.terms, facets, plan, docs, choice.expectedMatches);
    case 'scan': {
      const { exactFallback } = choice;
      const scan = await scanPlan(
        db,
        lexemes,
        plan,
        docs,
        choice.expectedMatches,
        exactFallback !== null,
        facets,
      );
      // Fewer matches than a page although the statistics promised more: the terms are rarer together
      // than apart, and the index query finds the rest wherever they rank. Counted in matches, not rows,
      // so that a page one short for a delisting does not send a common term to the index.
      if (scan.exact || scan.matches >= SEARCH_MAX_RESULTS || !exactFallback) return scan;
      return selectivePlan(
        db,
        lexemes,
        exactFallback.indexQuery,
        SEARCH_MAX_RESULTS,
        exactFallback.recheck,
        filters,
      );
    }
  }
}

/**
 * Rebuilds the tables search reads aside, each from packages or the ones before it, and swaps them in
 * together: readers keep the old tables until the swap. The refresher calls it under its lock.
 */
export async function rebuildSearchTables(
  db: Db,
  options: SearchTablesOptions = DEFAULT_SEARCH_TABLES,
): Promise<void> {
  await dropNextTables(db);
  await createNextDocs(db);
  await createNextInitials(db);
  await createNextLexemes(db);
  await createNextPrefixes(db);
  await createNextBlocks(db, options);
  await createNextNameKeys(db);
  await createNextFacets(db, options);
  await createNextPrivateDocs(db);
  await createNextPrivateGroups(db);
  await createNextPrivateKeys(db);
  await swapInNextTables(db);
}
