// `pnpm --filter @pkgreg/registry-api bench:accounts` (docs/benchmarks.md, "Registry: accounts and private
// packages"): the 1M-package bench database with a share of it private, a member of a large organisation
// holding a read token, and the same requests anonymous and authenticated in alternating rounds. Targets
// (issue 28): authenticated detail and search within 0.8x of anonymous; search p95 within 15 ms for both.
// Options: --size 1000000 --duration <s> --rounds 3. Holds /tmp/pkgreg-bench.lock.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateToken } from '@pkgreg/accounts';
import { createDb } from '@pkgreg/db';
import { sql } from 'kysely';
import { refreshDerivedTables } from '../dist/packages/derived-tables-refresher.js';
import { prepareBenchDatabase } from './bench-db.mjs';
import {
  fmt,
  holdBenchLock,
  load,
  median,
  medianOfRounds,
  replaceSection,
  startProcess,
  stopProcess,
  waitFor,
} from './harness.mjs';
import { benchServerEnv } from './server-env.mjs';

holdBenchLock();
const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const size = Number(arg('size', '1000000'));
const duration = Number(arg('duration', '5'));
const ROUNDS = Number(arg('rounds', '3'));
const adminUrl = arg('database-url', 'postgres://postgres@127.0.0.1:5432/postgres');
const PORT = 4792;

const url = await prepareBenchDatabase(adminUrl, size);
const db = createDb(url, { max: 2, applicationName: 'pkgreg-bench-accounts' });
const LARGE_ORG = 'bench-large-org';
const OTHERS = 'bench-other-orgs';

// The private share, once per database: ten organisation scopes (~1,000 packages each at 1M) belong to the
// member's organisation, and one small scope in 25 to organisations the member is not in (~4%).
const { rows: held } =
  await sql`select count(*)::int as n from scope_settings where organization_id in (${LARGE_ORG}, ${OTHERS})`.execute(
    db,
  );
if (held[0].n === 0) {
  const started = Date.now();
  await sql`insert into auth_organization ("id", "name", "slug", "createdAt") values
    (${LARGE_ORG}, 'Bench large org', ${LARGE_ORG}, now()), (${OTHERS}, 'Bench others', ${OTHERS}, now())
    on conflict do nothing`.execute(db);
  await sql`insert into scope_settings (scope, organization_id, visibility)
    select scope, ${LARGE_ORG}, 'private' from (select distinct scope from packages where scope like 'org-%' order by scope limit 10) s
    on conflict (scope) do nothing`.execute(db);
  await sql`insert into scope_settings (scope, organization_id, visibility)
    select distinct scope, ${OTHERS}, 'private' from packages where scope not like 'org-%' and abs(hashtext(scope)) % 25 = 0
    on conflict (scope) do nothing`.execute(db);
  await refreshDerivedTables(db);
  await sql`vacuum analyze packages`.execute(db);
  console.log(
    `made a share private and rebuilt the derived tables in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}
const share = (
  await sql`select count(*) filter (where private)::int as p, count(*)::int as n,
  count(*) filter (where private and scope in (select scope from scope_settings where organization_id = ${LARGE_ORG}))::int as mine
  from packages`.execute(db)
).rows[0];
console.log(
  `${share.p} of ${share.n} packages private (${fmt((100 * share.p) / share.n)}%); the member reads ${share.mine} of them`,
);

// The member: a reader of the large organisation, with a read token (made afresh each run).
await sql`insert into auth_user ("id", "name", "email", "emailVerified", "updatedAt") values
  ('bench-member', 'bench member', 'member@bench.invalid', true, now()) on conflict do nothing`.execute(db);
await sql`insert into auth_member ("id", "organizationId", "userId", "role", "createdAt") values
  ('bench-member-large', ${LARGE_ORG}, 'bench-member', 'reader', now()) on conflict do nothing`.execute(db);
await sql`delete from access_tokens where account_id = 'bench-member'`.execute(db);
const { token, hash, prefix } = generateToken();
await db
  .insertInto('access_tokens')
  .values({
    account_id: 'bench-member',
    name: 'bench',
    token_hash: hash,
    prefix,
    permission: 'read',
    expires_at: new Date(Date.now() + 86_400_000),
  })
  .execute();
const auth = { authorization: `Bearer ${token}` };

const sample = (
  await sql`select scope, name from packages where status <> 'delisted' and not private and quarantined_at is null order by random() limit 1000`.execute(
    db,
  )
).rows.map((r) => `/api/packages/@${r.scope}/${r.name}`);
const privateSample = (
  await sql`select p.scope, p.name from packages p join scope_settings s on s.scope = p.scope and s.organization_id = ${LARGE_ORG}
    where p.status <> 'delisted' order by random() limit 1`.execute(db)
).rows.map((r) => `/api/packages/@${r.scope}/${r.name}`);
const rare = (
  await sql`select lexeme from package_search_lexemes where ndoc between 3 and 30 and lexeme ~ '^[a-z]{6,}$' order by lexeme limit 1`.execute(
    db,
  )
).rows[0]?.lexeme;
await db.destroy();

const server = startProcess(process.execPath, [path.join(here, '../dist/index.js')], {
  ...benchServerEnv(url, PORT),
  POPULARITY_REFRESH_INTERVAL_MS: '3600000',
});
const base = `http://127.0.0.1:${PORT}`;
const rows = [];
const pairs = [];
try {
  await waitFor(`${base}/healthz`);
  const check = await fetch(`${base}${privateSample[0]}`, { headers: auth });
  if (check.status !== 200) throw new Error(`the member cannot read ${privateSample[0]}: ${check.status}`);
  if ((await fetch(`${base}${privateSample[0]}`)).status !== 404)
    throw new Error('a private package answered anonymously');
  load(base, sample, { connections: 4, seconds: 2 });
  load(base, sample, { connections: 4, seconds: 2, headers: auth });

  const scenarios = [
    { key: 'detail', label: 'detail (1000 public packages)', paths: sample, connections: 50 },
    { key: 'detailHit', label: 'detail, cache hits (one package)', paths: [sample[0]], connections: 50 },
    { key: 'searchData', label: 'search common "data"', paths: ['/api/search?q=data'], connections: 1 },
    { key: 'searchRare', label: `search rare "${rare}"`, paths: [`/api/search?q=${rare}`], connections: 1 },
    { key: 'search2', label: 'search 2-char "da"', paths: ['/api/search?q=da'], connections: 1 },
    {
      key: 'searchTwo',
      label: 'search two terms "code review"',
      paths: ['/api/search?q=code%20review'],
      connections: 1,
    },
    { key: 'list', label: 'list page 1', paths: ['/api/packages?page=1'], connections: 1 },
  ];
  const runs = {};
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const sc of scenarios) {
      // The order alternates by round: a VM whose speed drifts over the run favours neither caller.
      for (const who of round % 2 === 0 ? ['anonymous', 'member'] : ['member', 'anonymous']) {
        const r = load(base, sc.paths, {
          connections: sc.connections,
          seconds: duration,
          headers: who === 'member' ? auth : undefined,
        });
        const key = `${sc.key}:${who}`;
        runs[key] = [...(runs[key] ?? []), r];
        console.log(
          `round ${round + 1} ${sc.label.padEnd(34)} ${who.padEnd(9)} rps ${fmt(r.rps, 0).padStart(6)}  p95 ${fmt(r.p95)} ms  non2xx ${r.non2xx}`,
        );
      }
    }
  }
  for (const sc of scenarios) {
    const anon = medianOfRounds(runs[`${sc.key}:anonymous`]);
    const member = medianOfRounds(runs[`${sc.key}:member`]);
    rows.push({ label: sc.label, who: 'anonymous', connections: sc.connections, ...anon });
    rows.push({ label: sc.label, who: 'member (read token)', connections: sc.connections, ...member });
    // Each round runs the two back to back: the median of the rounds' ratios, so a round in which the
    // VM slowed down weighs on one ratio, not on one side of every ratio.
    const anonRuns = runs[`${sc.key}:anonymous`];
    const ratios = runs[`${sc.key}:member`].map((r, i) => ({ ratio: r.rps / anonRuns[i].rps }));
    pairs.push({
      label: sc.label,
      ratio: median(ratios, 'ratio'),
      anonP95: anon.p95,
      memberP95: member.p95,
      search: sc.key.startsWith('search'),
      // Issue 28 sets the 0.8x target for detail and search; a member's list is recorded beside them.
      target: sc.key !== 'list',
    });
  }
} finally {
  await stopProcess(server);
}

const table = [
  '| measurement | caller | connections | rps | p50 ms | p95 ms | p99 ms | non-2xx |',
  '|---|---|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.label} | ${r.who} | ${r.connections} | ${fmt(r.rps, 0)} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${fmt(r.p99)} | ${r.non2xx} |`,
  ),
].join('\n');
const notes = pairs.map(
  (p) =>
    `- ${p.label}: member/anonymous rps ${fmt(p.ratio, 2)} (${p.target ? `target >= 0.8: ${p.ratio >= 0.8 ? 'met' : 'MISSED'}` : 'no target set'})` +
    (p.search
      ? `; p95 anonymous ${fmt(p.anonP95)} ms, member ${fmt(p.memberP95)} ms (target <= 15: ${Math.max(p.anonP95, p.memberP95) <= 15 ? 'met' : 'MISSED'})`
      : ''),
);
console.log(`\n${table}\n\n${notes.join('\n')}`);
const section = `## Registry: accounts and private packages

Command: \`pnpm --filter @pkgreg/registry-api bench:accounts\` (after \`pnpm bench:registry\` has generated the
${size.toLocaleString('en')}-package database). Run ${new Date().toISOString()} on ${os.cpus().length} cores (1-min load average
${os.loadavg()[0].toFixed(2)} at the end). ${share.p.toLocaleString('en')} of ${share.n.toLocaleString('en')} packages are private (${fmt((100 * share.p) / share.n)}%): ten organisation
scopes belong to the member's organisation (${share.mine.toLocaleString('en')} packages it reads), one small scope in 25 to
organisations it is not in. The member sends a read token on every request (read once, then kept by the access
cache until access changes; expiry and address checked each time); anonymous requests send nothing. Each pair runs in the same rounds (${ROUNDS}, ${duration} s each, medians; a ratio is the median of the rounds' ratios);
server on core 0, autocannon on core 1.

${table}

${notes.join('\n')}
`;
const docPath = path.join(repoRoot, 'docs/benchmarks.md');
writeFileSync(
  docPath,
  replaceSection(readFileSync(docPath, 'utf8'), '## Registry: accounts and private packages', section),
);
