// Bench data generator: N realistic packages in ONE `INSERT ... SELECT generate_series` (seconds, not
// minutes). Words follow a Zipf-like law (index = floor(e^(U*ln V)) - 1, so P(k) ~ 1/(k+1)): a few
// head words ("data", "code", "test") are everywhere, a long tail of synthetic words is rare. Names are
// 2-3 hyphenated words plus a per-scope suffix word, so (scope, name) is unique by construction.

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

/** One INSERT ... SELECT of `count` packages (ids `from`..`from+count-1`), 8 packages per scope. */
export function generatorInsert(from, count) {
  return `
    insert into packages (scope, name, description, kind, category, tags, compatibility, language, version,
      source_repo, source_path, source_ref, repo_url, repo_owner, author, repo_stars, license, skill_md_raw,
      frontmatter, allowed_tools, token_count, file_count, progressive_disclosure, verified, featured,
      status, hosted, first_indexed_at, last_indexed_at, last_commit_sha)
    select scope, name, description,
      (array['skill','skill','skill','composite','workflow','app'])[1 + (i % 6)],
      case when i % 5 = 0 then null else (array['development','data','productivity','design','devops'])[1 + (i % 5)] end,
      array[w1, w2], array['claude-code','codex'], 'en', '1.' || (i % 10) || '.0',
      repo, case when i % 4 = 0 then '' else 'skills/' || name end, 'main', 'https://github.com/' || repo,
      scope, scope, floor(power(random(), 6) * 50000)::int, (array['MIT','Apache-2.0',null])[1 + (i % 3)],
      '---' || chr(10) || 'name: ' || name || chr(10) || 'description: ' || description || chr(10) || '---' || chr(10)
        || '# ' || name || chr(10) || repeat(description || chr(10), 8),
      jsonb_build_object('name', name, 'description', description),
      array['Read','Write'], 200 + (i % 3000), 1 + (i % 7), i % 3 = 0, i % 50 = 0, i % 997 = 0,
      case when i % 200 = 0 then 'deprecated' when i % 501 = 0 then 'delisted' else 'active' end,
      false, now() - (i % 1000) * interval '1 hour', now() - ((i::bigint * 7919) % 100000) * interval '1 minute',
      md5(i::text) || substr(md5(name), 1, 8)
    from (
      select i, scope, w1, w2, w1 || '-' || w2 || case when i % 3 = 0 then '-' || pg_temp.bench_zword() else '' end
          || '-' || (${sqlArray(SUFFIXES)})[1 + (i % 8)] as name,
        scope || '/' || w1 || '-skills' as repo,
        'A skill that helps with ' || w1 || ' and ' || w2 || ' using ' || pg_temp.bench_zword() || ' '
          || pg_temp.bench_zword() || ' ' || pg_temp.bench_zword() || ' for ' || pg_temp.bench_zword() || ' '
          || pg_temp.bench_zword() || ' ' || pg_temp.bench_zword() || ' and ' || pg_temp.bench_zword() || '.'
          as description
      from (
        select i, pg_temp.bench_zword() as w1, pg_temp.bench_zword() as w2,
          pg_temp.bench_word(200 + (i / 8) % 19000) || (i / 8) as scope
        from generate_series(${from}, ${from + count - 1}) as i
      ) words
    ) rows`;
}
