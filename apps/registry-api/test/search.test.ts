import { SearchResponseSchema } from '@pkgreg/contracts';
import { sql } from 'kysely';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { searchPackages } from '../src/search/search.service.js';
import { DEFAULT_SEARCH_PLAN } from '../src/search/search-planner.js';
import { prefixStats } from '../src/search/search-statistics.repository.js';
import { searchLexemes } from '../src/search/search-terms.js';
import { insertPackages, type PackageInsert, packageRow, useTestRegistry } from './fixtures.js';
import { loggedDb, names } from './search-helpers.js';

const t = useTestRegistry();

beforeAll(async () => {
  const rows: PackageInsert[] = [
    packageRow({
      scope: 'acme',
      name: 'pdf-editor',
      description: 'Edit and annotate documents',
      repo_stars: 3,
    }),
    packageRow({
      scope: 'tools',
      name: 'docx-helper',
      description: 'Converts documents to pdf',
      repo_stars: 900,
    }),
    packageRow({ scope: 'pdfkit', name: 'merge-files', description: 'Merges many files', repo_stars: 50 }),
    packageRow({ scope: 'acme', name: 'pdf-viewer', description: 'Views files', repo_stars: 40 }),
    packageRow({ scope: 'acme', name: 'pdf-hidden', description: 'Delisted pdf tool', status: 'delisted' }),
    packageRow({
      scope: 'acme',
      name: 'pdf-legacy',
      description: 'Old',
      status: 'deprecated',
      repo_stars: 1,
    }),
    packageRow({
      scope: 'acme',
      name: 'runner',
      description: 'Running the test suites quickly',
      repo_stars: 2,
    }),
    packageRow({ scope: 'acme', name: 'café-tool', description: 'Übersetzt Texte über Grenzen' }),
  ];
  // 60 packages matching `bulk` so the cap of 50 and the total can be checked.
  for (let i = 0; i < 60; i += 1) {
    rows.push(packageRow({ scope: 'many', name: `bulk-${i}`, description: 'bulk item', repo_stars: i }));
  }
  await insertPackages(t.db, rows);
});

describe('GET /api/search (registry-api.md: Search rules; decisions.md: Registry / Search)', () => {
  it('rule 3: empty, missing or blank q gives {results: [], total: 0}', async () => {
    await request(t.app).get('/api/search').expect(200, { results: [], total: 0 });
    await request(t.app).get('/api/search?q=').expect(200, { results: [], total: 0 });
    await request(t.app).get('/api/search?q=%20%20%09').expect(200, { results: [], total: 0 });
  });

  it('q is trimmed; longer than 256 characters (after trimming) is a 400 {error}', async () => {
    await request(t.app)
      .get(`/api/search?q=${encodeURIComponent(`  ${'a'.repeat(256)}  `)}`)
      .expect(200);
    const res = await request(t.app)
      .get(`/api/search?q=${'a'.repeat(257)}`)
      .expect(400);
    expect(res.body).toEqual({ error: 'q must be at most 256 characters' });
  });

  it('rule 1: covers names, scopes and descriptions; results match the contract', async () => {
    const byName = await request(t.app).get('/api/search?q=viewer').expect(200);
    expect(names(byName.body)).toEqual(['acme/pdf-viewer']);
    SearchResponseSchema.parse(byName.body);
    const byScope = await request(t.app).get('/api/search?q=pdfkit').expect(200);
    expect(names(byScope.body)).toEqual(['pdfkit/merge-files']);
    const byDescription = await request(t.app).get('/api/search?q=annotate').expect(200);
    expect(names(byDescription.body)).toEqual(['acme/pdf-editor']);
    expect(byDescription.body.results[0]).toEqual({
      scope: 'acme',
      name: 'pdf-editor',
      description: 'Edit and annotate documents',
      kind: 'skill',
      category: 'development',
      sourceRepo: 'acme/skills',
      tokenCount: 120,
      verified: false,
      risk: null,
    });
  });

  it('rule 4: every term is a prefix; two partial words find the hyphenated name', async () => {
    const res = await request(t.app).get('/api/search?q=pdf%20edi').expect(200);
    expect(names(res.body)).toEqual(['acme/pdf-editor']);
    const single = await request(t.app).get('/api/search?q=edi').expect(200);
    expect(names(single.body)).toContain('acme/pdf-editor');
    const hyphenated = await request(t.app).get('/api/search?q=pdf-edi').expect(200);
    expect(names(hyphenated.body)).toEqual(['acme/pdf-editor']);
  });

  it('rule 4: English tokenization for descriptions (an inflected word finds its stem)', async () => {
    const res = await request(t.app).get('/api/search?q=runs').expect(200);
    expect(names(res.body)).toContain('acme/runner');
    const stem = await request(t.app).get('/api/search?q=running').expect(200);
    expect(names(stem.body)).toEqual(['acme/runner']);
  });

  it('ranks name matches above scope above description, then by repoStars', async () => {
    const res = await request(t.app).get('/api/search?q=pdf').expect(200);
    expect(names(res.body)).toEqual([
      // name matches, by stars
      'acme/pdf-viewer',
      'acme/pdf-editor',
      'acme/pdf-legacy',
      // scope match
      'pdfkit/merge-files',
      // description match only (most stars of all, still last)
      'tools/docx-helper',
    ]);
    expect(res.body.total).toBe(5);
  });

  it('hides delisted packages and shows deprecated ones (decisions.md: Registry / Status)', async () => {
    const res = await request(t.app).get('/api/search?q=pdf').expect(200);
    expect(names(res.body)).not.toContain('acme/pdf-hidden');
    expect(names(res.body)).toContain('acme/pdf-legacy');
  });

  it('rule 2: at most 50 results, total counts every match', async () => {
    const res = await request(t.app).get('/api/search?q=bulk').expect(200);
    expect(res.body.results).toHaveLength(50);
    expect(res.body.total).toBe(60);
    // Ranked by stars within the tier: bulk-59 first, bulk-10 last of 50.
    expect(res.body.results[0].name).toBe('bulk-59');
    expect(res.body.results[49].name).toBe('bulk-10');
  });

  it('unicode terms match', async () => {
    const res = await request(t.app)
      .get(`/api/search?q=${encodeURIComponent('café')}`)
      .expect(200);
    expect(names(res.body)).toEqual(['acme/café-tool']);
    const desc = await request(t.app)
      .get(`/api/search?q=${encodeURIComponent('über')}`)
      .expect(200);
    expect(names(desc.body)).toEqual(['acme/café-tool']);
  });

  it('stop words do not break search ("the" is a stop word in english, a prefix in simple)', async () => {
    await request(t.app).get('/api/search?q=the').expect(200);
    const res = await request(t.app).get('/api/search?q=the%20pdf%20editor').expect(200);
    expect(res.body.total).toBeGreaterThanOrEqual(0);
  });

  const nasty = [
    "'",
    '"',
    '\\',
    '&',
    '|',
    '!',
    '!!!',
    '<->',
    '<2>',
    ':*',
    'pdf:*',
    'pdf & editor',
    'pdf | editor',
    '!pdf',
    '(pdf',
    'pdf)',
    "pdf' | 'x",
    "'; drop table packages; --",
    '%',
    '%00',
    '\u0000',
    '\u0000pdf',
    '\ud800',
    '😀',
    '😀pdf',
    'a'.repeat(256),
    'a '.repeat(128).trim(),
    '中文搜索',
    'ÅÄÖ',
    'e\u0301',
    '\u200b',
    'the a an of',
    '*',
    '?',
    '#',
    '$1',
    '{}',
    '[]',
    'pdf::A',
    'pdf:A*',
    '\'\'""\\\\',
    'NULL',
    'undefined',
    '-1',
    '1e9999',
  ];
  it.each(nasty)('never a 5xx for q=%j (decisions.md: Registry / Search)', async (q) => {
    const res = await request(t.app).get('/api/search').query({ q });
    expect(res.status).toBeLessThan(500);
    if (res.status === 200) SearchResponseSchema.parse(res.body);
    else expect(res.body).toEqual({ error: expect.any(String) });
  });

  it('q sent twice is a 400 {error}, not a 5xx', async () => {
    const res = await request(t.app).get('/api/search?q=a&q=b').expect(400);
    expect(res.body.error).toMatch(/^q/);
  });

  it('operators in q are plain text: "pdf | viewer" means pdf AND viewer', async () => {
    const res = await request(t.app).get('/api/search').query({ q: 'pdf | viewer' }).expect(200);
    expect(names(res.body)).toEqual(['acme/pdf-viewer']);
  });
});

describe('search plans (docs/decisions.md: Registry search at 1M packages)', () => {
  // Force the broad plan (ranking-ordered slices) on this small table and check it answers like the
  // selective plan: same ranking, same cap, exact total once it has read the whole table.
  const broad = { ...DEFAULT_SEARCH_PLAN, selectiveMaxDocs: -1, slices: [3, 5, 1000], minWindow: 1000 };

  it('broad plan ranks name > scope > description, then stars, like the selective plan', async () => {
    const viaBroad = await searchPackages(t.db, 'pdf', broad);
    const viaSelective = await searchPackages(t.db, 'pdf');
    expect(names(viaBroad)).toEqual(names(viaSelective));
    expect(viaBroad.total).toBe(5);
  });

  it('broad plan caps at 50 with the exact total when it read everything', async () => {
    const res = await searchPackages(t.db, 'bulk', broad);
    expect(res.results).toHaveLength(50);
    expect(res.total).toBe(60);
    expect(res.results[0]?.name).toBe('bulk-59');
  });

  it('broad plan stops early once 50 name matches are certain and extrapolates total', async () => {
    const early = { ...broad, slices: [55, 1000], minWindow: 0 };
    const res = await searchPackages(t.db, 'bulk', early);
    expect(res.results).toHaveLength(50);
    expect(res.total).toBeGreaterThan(0);
  });

  it('broad plan sizes its first slice by the term density and answers as if it read everything', async () => {
    // `bulk` is in ~60 of ~70 packages: aiming at 10 matches, the first slice is 12 rows, then 40 more.
    const sized = { ...broad, slices: [40, 1000], minWindow: 0, firstSliceMatches: 10, minFirstSlice: 5 };
    const viaSized = await searchPackages(t.db, 'bulk', sized);
    const viaAll = await searchPackages(t.db, 'bulk', broad);
    expect(names(viaSized)).toEqual(names(viaAll));
    expect(viaSized.results).toHaveLength(50);
    // Aiming at more matches than slices[0] holds: the slices up to minWindow (3 + 5 rows) go at once.
    const together = { ...broad, slices: [3, 5, 1000], minWindow: 8, firstSliceMatches: 1000 };
    for (const q of ['bulk', 'pdf', 'files']) {
      expect(await searchPackages(t.db, q, together)).toEqual(await searchPackages(t.db, q, broad));
    }
  });

  it('broad plan rounds read in parallel runs answer as one run does (decisions.md: Registry search)', async () => {
    // Runs of one row and up: every boundary between two runs is crossed, and none may drop or repeat
    // a row (the total, exact once the table is read, would move).
    for (const parallel of [2, 3, 7]) {
      const split = { ...broad, parallel, minChunk: 1 };
      for (const q of ['bulk', 'pdf', 'files', 'bulk item']) {
        expect(await searchPackages(t.db, q, split)).toEqual(await searchPackages(t.db, q, broad));
      }
      expect((await searchPackages(t.db, 'bulk', split)).total).toBe(60);
    }
    // A later round reads at once what the density seen says the page needs: `bulk` is in most rows, so
    // after the first 3 the next round goes straight to the end of the 50-row slice (row 63), not through
    // the 10-row one first: two statements on package_search_docs, and the same page.
    const slices: string[] = [];
    const logged = loggedDb(t.db, (text) => {
      if (text.includes('as name_matches')) slices.push(text); // matchesInSlice's statements
    });
    const jumping = { ...broad, slices: [3, 10, 50, 1000], minWindow: 0, parallel: 1 };
    const res = await searchPackages(logged, 'bulk', jumping);
    expect(names(res)).toEqual(names(await searchPackages(t.db, 'bulk', broad)));
    expect(slices).toHaveLength(2);
  });

  it('broad plan honours a delisting since the search tables were rebuilt (decisions.md: Registry / Status)', async () => {
    await t.db.updateTable('packages').set({ status: 'delisted' }).where('name', '=', 'bulk-59').execute();
    try {
      const res = await searchPackages(t.db, 'bulk', broad);
      expect(names(res)).not.toContain('many/bulk-59');
      // It was one of the 50 the slices chose, so until the refresher rebuilds (seconds) the page is one
      // short rather than re-read: the next 49 in order.
      expect(res.results).toHaveLength(49);
      expect(res.results[0]?.name).toBe('bulk-58');
      expect(res.results[48]?.name).toBe('bulk-10');
      // Same with a window that ends short of the table: 50+ matches were read, so the page stays one
      // short instead of falling back to the index query (which, for a common term, is the whole table).
      const windowed = await searchPackages(t.db, 'bulk', { ...broad, slices: [55], minWindow: 0 });
      expect(windowed.results).toHaveLength(49);
      expect(windowed.results[0]?.name).toBe('bulk-58');
    } finally {
      await t.db.updateTable('packages').set({ status: 'active' }).where('name', '=', 'bulk-59').execute();
    }
  });

  it('prefix statistics from package_search_prefixes match summing package_search_lexemes', async () => {
    // 2-4 characters and its own stem: read from the table; `runn` (stem `runn`) and `editor`: summed.
    const prefixes = ['pd', 'pdf', 'bulk', 'bu', 'ed', 'editor', 'runs', 'zz'];
    const stats = await prefixStats(t.db, prefixes, 2);
    for (const [i, prefix] of prefixes.entries()) {
      const stem = prefix === 'runs' ? 'run' : prefix;
      const truth = await sql<{ docs: string; n: number }>`
        select coalesce(sum(ndoc), 0) as docs, count(*)::int as n from package_search_lexemes
        where (lexeme >= ${prefix} and lexeme < ${prefix} || chr(1114111))
           or (lexeme >= ${stem} and lexeme < ${stem} || chr(1114111))`.execute(t.db);
      const row = truth.rows[0];
      expect({ prefix, docs: stats[i]?.docs, expansions: stats[i]?.expansions }).toEqual({
        prefix,
        docs: Number(row?.docs),
        expansions: Math.min(row?.n ?? 0, 3),
      });
      expect(stats[i]?.lexemes.length).toBe((row?.n ?? 0) <= 2 ? row?.n : 0);
    }
  });

  // maxExpansions 0: every term the statistics know is "broad", so the index query is prefix keys only.
  const keysOnly = { ...DEFAULT_SEARCH_PLAN, maxExpansions: 0 };

  it('broad terms reach the index as prefix keys (first 2-4 characters, stem too) and answer exactly', async () => {
    expect(names(await searchPackages(t.db, 'pdf edi', keysOnly))).toEqual(['acme/pdf-editor']);
    // Longer than 4 characters: the key `edit` is a superset, the re-check keeps `edito` exact (a
    // package with `pdf` and `editing` holds the key but does not match).
    await t.db
      .insertInto('packages')
      .values(packageRow({ scope: 'tmp', name: 'pdf-editing' }))
      .execute();
    try {
      expect(names(await searchPackages(t.db, 'pdf edito', keysOnly))).toEqual(['acme/pdf-editor']);
    } finally {
      await t.db.deleteFrom('packages').where('scope', '=', 'tmp').execute();
    }
    expect(names(await searchPackages(t.db, 'pdf editx', keysOnly))).toEqual([]);
    // `running` is found through its english stem `run` (description "Running the test suites").
    expect(names(await searchPackages(t.db, 'running', keysOnly))).toEqual(['acme/runner']);
    for (const q of ['pdf', 'docu conv', 'bulk item', 'café', 'pdf-edi']) {
      expect(await searchPackages(t.db, q, keysOnly)).toEqual(await searchPackages(t.db, q));
    }
  });

  it('a rare combination of common terms ranked past the rows read is still found (the index answers)', async () => {
    // The broad plan reads the two best-starred packages only; `pdfkit/merge-files` ranks further down.
    const shortWindow = { ...keysOnly, selectiveMaxDocs: -1, slices: [2], minWindow: 0 };
    const res = await searchPackages(t.db, 'merge files', shortWindow);
    expect(names(res)).toEqual(['pdfkit/merge-files']);
    expect(res.total).toBe(1);
  });

  it('the broad plan stops reading once the window cannot fill the page, and the index answers', async () => {
    // `merge` and `files` are each in many packages but together in one, ranked further down. After the
    // first 10 rows with no match, 20 more rows cannot hold 50 (even at 3 matches per 10 rows): the
    // index query answers right away instead of after the rest of the window.
    const docsStatements: string[] = [];
    const logged = loggedDb(t.db, (text) => {
      if (text.includes('as name_matches')) docsStatements.push(text); // matchesInSlice's statements
    });
    const plan = { ...keysOnly, selectiveMaxDocs: -1, slices: [10, 10, 10], minWindow: 0, parallel: 1 };
    const res = await searchPackages(logged, 'merge files', plan);
    expect(names(res)).toEqual(['pdfkit/merge-files']);
    expect(res.total).toBe(1);
    expect(docsStatements).toHaveLength(1);
    // With a term outside the index query (`p`: one character, so no key, and no other term starts
    // with it) there is no exact answer to fall back on, so the window is read to its end.
    docsStatements.length = 0;
    await searchPackages(logged, 'merge files p', plan);
    expect(docsStatements).toHaveLength(2);
  });

  it('a term in nearly every package stays out of the index query and is still applied', async () => {
    // `bulk` is in 60 of ~70 packages: its postings would cost more than the candidates it removes from
    // `42`'s one, so the GIN scan gets `42` alone, and the re-check still requires `bulk`.
    const indexQueries: unknown[] = [];
    // The index query is the one parameter of exact operands (the re-check's are prefixes, `:*`).
    const exact = (v: unknown) => typeof v === 'string' && v.includes("'42'") && !v.includes(':*');
    const logged = loggedDb(t.db, (text, parameters) => {
      if (text.includes('pkgreg_search_keys(p.search_vector) @@'))
        indexQueries.push(...parameters.filter(exact));
    });
    const res = await searchPackages(logged, 'bulk 42');
    expect(names(res)).toEqual(['many/bulk-42']);
    expect(indexQueries).toEqual(["('42')"]);
    // Every term in the index query (a posting as dear as a candidate): the same answer.
    indexQueries.length = 0;
    const all = await searchPackages(logged, 'bulk 42', {
      ...DEFAULT_SEARCH_PLAN,
      postingsPerCandidate: 1e9,
    });
    expect(all).toEqual(res);
    expect(indexQueries).toHaveLength(1);
    expect(indexQueries[0]).toContain("'bulk'");
    // Left out of the GIN scan is not left out of the answer: `bulk` must still match.
    expect(names(await searchPackages(logged, 'bulky 42'))).toEqual([]);
  });

  it('narrow terms only: the candidates are the matches, and the re-check is left out', async () => {
    const statements: string[] = [];
    const logged = loggedDb(t.db, (text) => {
      if (text.includes('with candidates as materialized')) statements.push(text);
    });
    expect(names(await searchPackages(logged, 'pdf edi'))).toEqual(['acme/pdf-editor']);
    expect(statements).toHaveLength(1);
    expect(statements[0]).not.toContain("to_tsquery('english'");
    // A prefix key (keys only) reaches other words, so the re-check stays.
    statements.length = 0;
    expect(names(await searchPackages(logged, 'pdf edi', keysOnly))).toEqual(['acme/pdf-editor']);
    expect(statements[0]).toContain("to_tsquery('english'");
  });

  it('a word newer than the lexeme statistics is still found (prefix operand, read live)', async () => {
    await t.db
      .insertInto('packages')
      .values(packageRow({ scope: 'fresh', name: 'zyxwv-tool' }))
      .execute();
    const res = await request(t.app).get('/api/search?q=zyx').expect(200);
    expect(names(res.body)).toEqual(['fresh/zyxwv-tool']);
  });
});

describe('searchLexemes (splits like the generated column)', () => {
  it('splits on whitespace and every non-alphanumeric, lowercases, dedupes', () => {
    expect(searchLexemes(' PDF-Edi  pdf_x.y@z/w ')).toEqual(['pdf', 'edi', 'x', 'y', 'z', 'w']);
    expect(searchLexemes("'&|!:*()<->")).toEqual([]);
    expect(searchLexemes('café über')).toEqual(['café', 'über']);
  });

  it('leaves out English stop words (registry-api.md rule 4: English tokenization) but the last term', () => {
    expect(searchLexemes('end-to-end tests')).toEqual(['end', 'tests']);
    expect(searchLexemes('convert documents to pdf')).toEqual(['convert', 'documents', 'pdf']);
    // The last term may be a prefix being typed ("to" on the way to "tool"); a query of stop words only stays.
    expect(searchLexemes('pdf to')).toEqual(['pdf', 'to']);
    expect(searchLexemes('the')).toEqual(['the']);
    expect(searchLexemes('how to')).toEqual(['how', 'to']);
  });

  it('finds a description through a query phrased with a stop word (rule 1: descriptions)', async () => {
    // "and" is in no name, scope or (English-indexed) description: kept as a term it would match nothing.
    const res = await request(t.app).get('/api/search?q=edit%20and%20annotate').expect(200);
    expect(names(res.body)).toEqual(['acme/pdf-editor']);
  });
});
