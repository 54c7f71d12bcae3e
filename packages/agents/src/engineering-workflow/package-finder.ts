import { SearchResponseSchema, type SearchResultItem } from '@pkgreg/contracts';
import { request } from 'undici';
import { PHASE_FALLBACK_QUERY, type Phase, STOPWORDS } from './lexicon.js';

// Finds registry packages for a step through the registry's own search (registry-api.md, GET /api/search).

export interface PackageFinder {
  search(query: string): Promise<SearchResultItem[]>;
}

export interface RecommendedPackage {
  /** `@scope/name`. */
  package: string;
  description: string;
  kind: SearchResultItem['kind'];
  verified: boolean;
  /** The exact version the model read (plans of the model tool loop); absent for the rule planner's. */
  version?: string;
}

/** The registry's HTTP search; `baseUrl` is the registry API origin (e.g. http://127.0.0.1:4000). */
export function createHttpPackageFinder(baseUrl: string, timeoutMs = 3000): PackageFinder {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    async search(query) {
      const url = `${base}/api/search?q=${encodeURIComponent(query)}`;
      const res = await request(url, {
        method: 'GET',
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new Error(`registry search answered ${res.statusCode}`);
      }
      return SearchResponseSchema.parse(await res.body.json()).results;
    },
  };
}

/** Caches queries for one run: steps share words, and the registry should see each query once. */
export function memoizeFinder(finder: PackageFinder): PackageFinder {
  const cache = new Map<string, Promise<SearchResultItem[]>>();
  return {
    search(query) {
      const key = query.toLowerCase();
      let hit = cache.get(key);
      if (!hit) {
        hit = finder.search(query);
        cache.set(key, hit);
      }
      return hit;
    },
  };
}

const PER_STEP = 3;

/**
 * The registry ANDs every word of a query and splits words on punctuation, so "end-to-end" would ask
 * for "to" too (a stop word, never indexed in descriptions) and find nothing: query the parts that can
 * match, longer than two letters and not stop words.
 */
export function queryWords(keyword: string): string {
  const parts = keyword.split(/[^\p{L}\p{N}]+/u).filter((p) => p.length > 2 && !STOPWORDS.has(p));
  return [...new Set(parts)].join(' ');
}

/**
 * Packages for one step: the two strongest keywords together (weight 3), then each keyword alone
 * (weight 1), scored by rank in each answer plus one per step keyword the package's name or
 * description holds; the phase's own word when nothing else matches.
 */
export async function findPackagesForStep(
  finder: PackageFinder,
  step: { keywords: string[]; phase: Phase },
): Promise<RecommendedPackage[]> {
  const words = step.keywords.map(queryWords).filter(Boolean);
  const queries: { q: string; weight: number }[] = [];
  if (words.length >= 2) queries.push({ q: words.slice(0, 2).join(' '), weight: 3 });
  for (const k of words.slice(0, 4)) queries.push({ q: k, weight: 1 });
  const scores = new Map<string, { item: SearchResultItem; score: number; first: number }>();
  let order = 0;
  const collect = (results: SearchResultItem[], weight: number) => {
    results.slice(0, 10).forEach((item, rank) => {
      const id = `@${item.scope}/${item.name}`;
      const entry = scores.get(id) ?? { item, score: 0, first: order++ };
      entry.score += weight / (rank + 1);
      scores.set(id, entry);
    });
  };
  const answers = await Promise.all(queries.map((q) => finder.search(q.q)));
  answers.forEach((results, i) => {
    collect(results, queries[i]?.weight ?? 1);
  });
  if (scores.size === 0) collect(await finder.search(PHASE_FALLBACK_QUERY[step.phase]), 0.5);
  // A package that covers more of the step's words fits it better than one that ranks high for one word.
  for (const [id, entry] of scores) {
    const text = `${id} ${entry.item.description}`.toLowerCase();
    entry.score += step.keywords.filter((k) => text.includes(k)).length;
  }
  return [...scores.entries()]
    .sort(
      (a, b) =>
        b[1].score - a[1].score ||
        Number(b[1].item.verified) - Number(a[1].item.verified) ||
        a[1].first - b[1].first,
    )
    .slice(0, PER_STEP)
    .map(([id, { item }]) => ({
      package: id,
      description: item.description,
      kind: item.kind,
      verified: item.verified,
    }));
}
