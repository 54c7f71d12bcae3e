// Bench data generator: N realistic packages in ONE `INSERT ... SELECT generate_series` (seconds, not
// minutes). Words follow a Zipf-like law (index = floor(e^(U*ln V)) - 1, so P(k) ~ 1/(k+1)): a few
// head words ("data", "code", "test") are everywhere, a long tail of synthetic words is rare. Names are
// 2-3 hyphenated words plus a per-scope suffix word, so (scope, name) is unique by construction.
//
// The columns filters and popularity sorts read (issue 20) follow what skill directories show: 70%
// skills; a dozen categories with a head; tags are the name's words (Zipf, so a few common, a long tail);
// Claude Code in 85% of compatibility lists, Codex 45%, Cursor 30% and a tail; MIT 45%, Apache-2.0 22%,
// none 15% and a tail of licenses; 6% verified; risk none 80%, low 11%, medium 6%, high 2%, unscanned
// 1%; 2% deprecated, 1% delisted, 0.05% quarantined. Owners: 8 packages per scope for most, 40
// organisations of ~1,000 packages and one of ~10,000. Downloads are log-uniform up to 200k (a long
// tail near 0), unique downloaders (the downloads order, issue 26) a third of them; the most downloaded
// 11% have per-day rows on about half of the last 30 days.

const HEAD_WORDS = `data code test api docs pdf git review agent file web search build deploy debug
format lint chart image text json yaml sql query cloud server client auth token cache queue stream
log metric trace alert report table sheet excel csv markdown html css react vue node python rust go
java kotlin swift shell bash docker kubernetes terraform aws azure gcp slack email calendar notes
task project issue ticket commit branch merge release version package module plugin skill workflow
editor viewer parser compiler runner scanner checker planner writer reader helper manager builder
generator converter extractor analyzer optimizer formatter validator translator summarizer
security privacy compliance audit backup restore migrate sync export import upload download
design figma sketch diagram mermaid graph map geo weather finance invoice payment stripe crypto
research paper citation latex math stats model train prompt eval benchmark dataset vector embed
chat voice audio video podcast music photo camera screen browser scrape crawl fetch http rest
graphql grpc socket event webhook cron schedule job batch pipeline etl warehouse lake spark kafka
redis postgres mysql mongo sqlite index schema types lang i18n locale time date color theme font
layout component ui ux mobile ios android desktop cli tui terminal vim emacs vscode jetbrains`
  .split(/\s+/)
  .filter(Boolean);
const SYLLABLES =
  'ka lo mi nu pe ri sa to vu ze ba de fi go hu ja ke li mo na po qu ra si tu va wo xi yu zo'.split(' ');
const SUFFIXES = ['kit', 'tool', 'helper', 'skill', 'agent', 'pro', 'lite', 'core'];

const sqlText = (s) => `'${s.replaceAll("'", "''")}'`;
const sqlArray = (items) => `array[${items.map(sqlText).join(',')}]::text[]`;

/** SQL that creates the helper functions the generator uses (dropped afterwards). */
export function generatorFunctions(vocabularySize = 20000) {
  return [
    `create or replace function pg_temp.bench_word(i int) returns text language sql immutable as $$
       select case when i < ${HEAD_WORDS.length} then (${sqlArray(HEAD_WORDS)})[i + 1]
         else (${sqlArray(SYLLABLES)})[i % 30 + 1] || (${sqlArray(SYLLABLES)})[(i / 30) % 30 + 1]
           || (${sqlArray(SYLLABLES)})[(i / 900) % 30 + 1] end $$`,
    `create or replace function pg_temp.bench_zipf() returns int language sql volatile as $$
       select least(floor(exp(random() * ln(${vocabularySize} + 1)))::int - 1, ${vocabularySize - 1}) $$`,
    `create or replace function pg_temp.bench_zword() returns text language sql volatile as $$
       select pg_temp.bench_word(pg_temp.bench_zipf()) $$`,
  ];
}

const pick = (items) => sqlArray(items);
const CATEGORIES = [
  ['development', 25],
  ['data', 15],
  ['productivity', 12],
  ['devops', 10],
  ['design', 8],
  ['writing', 6],
  ['research', 5],
  ['security', 4],
  ['testing', 4],
  ['finance', 2],
  ['education', 2],
];
const LICENSES = [
  ['MIT', 45],
  ['Apache-2.0', 22],
  ['BSD-3-Clause', 5],
  ['GPL-3.0', 4],
  ['ISC', 3],
  ['MPL-2.0', 2],
  ['Unlicense', 2],
  ['CC-BY-4.0', 2],
];
const AGENTS = [
  ['claude-code', 85],
  ['codex', 45],
  ['cursor', 30],
  ['gemini-cli', 20],
  ['github-copilot', 15],
  ['opencode', 8],
  ['windsurf', 6],
  ['amp', 3],
];

/** CASE over a uniform [0, 100) value: each item for its share, else `otherwise`. */
function weighted(value, items, otherwise = 'null') {
  let at = 0;
  const arms = items.map(([item, share]) => {
    at += share;
    return `when ${value} < ${at} then ${sqlText(item)}`;
  });
  return `case ${arms.join(' ')} else ${otherwise} end`;
}

/** One INSERT ... SELECT of `count` packages (ids `from`..`from+count-1`), 8 packages per scope. */
export function generatorInsert(from, count) {
  return `
    insert into packages (scope, name, description, kind, category, tags, compatibility, language, version,
      source_repo, source_path, source_ref, repo_url, repo_owner, author, repo_stars, license, skill_md_raw,
      frontmatter, allowed_tools, token_count, file_count, progressive_disclosure, verified, featured,
      status, hosted, first_indexed_at, last_indexed_at, last_commit_sha, risk, quarantined_at,
      quarantine_reason, download_count, unique_download_count)
    select scope, name, description,
      case when u1 < 70 then 'skill' when u1 < 80 then 'composite' when u1 < 92 then 'workflow' else 'app' end,
      ${weighted('u2', CATEGORIES)},
      array[w1, w2],
      array(select a from unnest(${pick(AGENTS.map(([a]) => a))}::text[], array[${AGENTS.map(([, share]) => share).join(',')}]) x(a, share)
        where (random() + 0 * i) * 100 < x.share),
      'en', '1.' || (i % 10) || '.0',
      repo, case when i % 4 = 0 then '' else 'skills/' || name end, 'main', 'https://github.com/' || repo,
      scope, scope, floor(power(random(), 6) * 50000)::int, ${weighted('u3', LICENSES)},
      '---' || chr(10) || 'name: ' || name || chr(10) || 'description: ' || description || chr(10) || '---' || chr(10)
        || '# ' || name || chr(10) || repeat(description || chr(10), 8),
      jsonb_build_object('name', name, 'description', description),
      array['Read','Write'], 200 + (i % 3000), 1 + (i % 7), i % 3 = 0, u4 < 6, i % 997 = 0,
      case when u5 < 2 then 'deprecated' when u5 < 3 then 'delisted' else 'active' end,
      false, now() - (i % 1000) * interval '1 hour', now() - ((i::bigint * 7919) % 100000) * interval '1 minute',
      md5(i::text) || substr(md5(name), 1, 8),
      case when u6 < 80 then 'none' when u6 < 91 then 'low' when u6 < 97 then 'medium' when u6 < 99 then 'high' end,
      case when i % 2000 = 7 then now() end, case when i % 2000 = 7 then 'reported' end,
      downloads, downloads / 3
    from (
      select i, scope, w1, w2, w1 || '-' || w2 || case when i % 3 = 0 then '-' || pg_temp.bench_zword() else '' end
          || '-' || (${sqlArray(SUFFIXES)})[1 + (i % 8)] || case when big then '-' || i else '' end as name,
        scope || '/' || w1 || '-skills' as repo,
        'A skill that helps with ' || w1 || ' and ' || w2 || ' using ' || pg_temp.bench_zword() || ' '
          || pg_temp.bench_zword() || ' ' || pg_temp.bench_zword() || ' for ' || pg_temp.bench_zword() || ' '
          || pg_temp.bench_zword() || ' ' || pg_temp.bench_zword() || ' and ' || pg_temp.bench_zword() || '.'
          as description,
        random() * 100 as u1, random() * 100 as u2, random() * 100 as u3, random() * 100 as u4,
        random() * 100 as u5, random() * 100 as u6, floor(exp(random() * ln(200001)))::bigint - 1 as downloads
      from (
        select i, pg_temp.bench_zword() as w1, pg_temp.bench_zword() as w2, i % 100 < 5 as big,
          case when i % 100 < 4 then 'org-' || pg_temp.bench_word(100 + (i / 100) % 40)
            when i % 100 = 4 then 'megacorp'
            else pg_temp.bench_word(200 + (i / 8) % 19000) || (i / 8) end as scope
        from generate_series(${from}, ${from + count - 1}) as i
      ) words
    ) rows`;
}

/**
 * Downloads per day for the most downloaded packages (download_count >= 50k, about 11%): each of the
 * last 30 UTC days with probability one half, a share of the package's downloads.
 */
export function generatorDownloads() {
  return `
    insert into package_downloads_daily (package_id, day, count)
    select p.id, (now() at time zone 'UTC')::date - d, 1 + floor(random() * p.download_count / 2000)::bigint
    from packages p cross join generate_series(0, 29) d
    where p.download_count >= 50000 and random() < 0.5`;
}
