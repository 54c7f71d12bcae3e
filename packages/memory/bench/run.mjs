// Memory service against a real Postgres: search latency at 1k, 20k and 100k entries in one namespace
// (target: p95 <= 20 ms at 100k for any query of two or more characters), and writes per second of
// put against the bare INSERT of the same row.
// Run: pnpm --filter @pkgreg/memory build && flock /tmp/pkgreg-bench.lock pnpm --filter @pkgreg/memory bench
// Options: --samples N (per query kind and size, default 200), --sizes 1000,20000,100000,
// --window N (MEMORY_SEARCH_WINDOW, default 1000)
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createTestDatabase } from '@pkgreg/db/testing';
import { sql } from 'kysely';
import { putEntry, searchEntries, searchSettings } from '../dist/index.js';

const { values: opts } = parseArgs({
  options: {
    samples: { type: 'string', default: '200' },
    sizes: { type: 'string', default: '1000,20000,100000' },
    window: { type: 'string', default: '1000' },
  },
});
const SAMPLES = Number(opts.samples);
const SIZES = opts.sizes.split(',').map(Number);
const settings = searchSettings({ windowSize: Number(opts.window) });
const WRITES = 2000;
const WRITE_CONCURRENCY = 4;
const TARGET_P95_MS = 20;
const YEAR_MS = 365 * 24 * 3600 * 1000;

const ns = (label) => `app:${createHash('sha256').update(label).digest('hex')}`;
let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
// 3,000 words w<base36><letter>ord, skewed: the first is in ~40% of entries, the last in ~0.5%. Every
// word starts with "w" and most with "w1" or "w2": "w1" is a prefix of nearly every entry.
const vocab = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}${'abcdefgh'[i % 8]}ord`);
const word = () => vocab[Math.floor(rand() ** 2 * vocab.length)];
const words = (n) => Array.from({ length: n }, word).join(' ');
const RARE = vocab[vocab.length - 1];
// In every 10,007th entry only: 10 entries at 100k.
const VERY_RARE = 'quasar';

/** `count` entries of 30 words and one tag, written over the past year in time order (raw INSERT). */
async function seedNamespace(db, namespace, count) {
  const now = Date.now();
  for (let done = 0; done < count; done += 1000) {
    const n = Math.min(1000, count - done);
    const rows = Array.from({ length: n }, (_, j) => {
      const i = done + j;
      return {
        tier: rand() < 0.5 ? 'stm' : 'ltm',
        content: i % 10_007 === 3 ? `${words(29)} ${VERY_RARE}` : words(30),
        tag: vocab[Math.floor(rand() * 50)],
        at: new Date(now - YEAR_MS + (YEAR_MS * i) / count).toISOString(),
      };
    });
    await sql`
      insert into memory_entries (namespace, tier, content, tags, created_at, updated_at)
      select ${namespace}, r.tier, r.content, array[r.tag], r.at, r.at
      from unnest(${rows.map((r) => r.tier)}::text[], ${rows.map((r) => r.content)}::text[],
        ${rows.map((r) => r.tag)}::text[], ${rows.map((r) => r.at)}::timestamptz[]) as r(tier, content, tag, at)`.execute(
      db,
    );
  }
}

function quantiles(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { p50: q(0.5), p95: q(0.95), p99: q(0.99) };
}

/** Runs fn(i) n times from `concurrency` loops; per-call latencies and calls per second. */
async function measure(n, concurrency, fn) {
  const times = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const t0 = performance.now();
        await fn(i);
        times.push(performance.now() - t0);
      }
    }),
  );
  return { ...quantiles(times), perSecond: n / ((performance.now() - started) / 1000) };
}

const QUERIES = [
  { kind: '2-letter prefix of nearly every entry ("w1")', query: () => 'w1' },
  {
    kind: 'random 2-letter prefix ("w" + a-z0-9)',
    query: () => `w${'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(rand() * 36)]}`,
  },
  { kind: 'random 3-letter prefix', query: () => word().slice(0, 3) },
  { kind: `common word ("${vocab[0]}", ~40% of entries)`, query: () => vocab[0] },
  { kind: `rare word ("${RARE}", ~0.5%)`, query: () => RARE },
  { kind: `very rare word ("${VERY_RARE}", 1 in 10,007)`, query: () => VERY_RARE },
  { kind: '1 random word', query: () => words(1) },
  { kind: '2 random words', query: () => words(2) },
  { kind: '3 random words', query: () => words(3) },
  { kind: 'common word + rare word', query: () => `${vocab[0]} ${RARE}` },
  { kind: '"w1" + random word', query: () => `w1 ${word()}` },
];

const fmt = (ms) => ms.toFixed(1);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
console.log(
  `memory bench ${new Date().toISOString()} load ${load()} samples ${SAMPLES} window ${settings.windowSize}`,
);

const t = await createTestDatabase();
try {
  const t0 = performance.now();
  const spaces = SIZES.map((size) => ({ size, namespace: ns(`bench-${size}`) }));
  for (const { size, namespace } of spaces) await seedNamespace(t.db, namespace, size);
  await sql`vacuum analyze memory_entries`.execute(t.db);
  console.log(`seeded ${SIZES.join(' + ')} entries in ${((performance.now() - t0) / 1000).toFixed(1)}s`);

  const rows = [];
  for (const { size, namespace } of spaces) {
    for (const { kind, query } of QUERIES) {
      const search = () =>
        searchEntries(t.db, namespace, { query: query(), tiers: ['stm', 'ltm'], topK: 10 });
      for (let i = 0; i < 10; i++) await search();
      let exact = 0;
      const r = await measure(SAMPLES, 1, async () => {
        const result = await search();
        if (result.ranking?.exact) exact++;
      });
      rows.push({ size, kind, ...r, exact: exact / SAMPLES });
      console.log(
        `search ${String(size).padStart(6)} ${kind.padEnd(48)} p50=${fmt(r.p50)}ms p95=${fmt(r.p95)}ms p99=${fmt(r.p99)}ms exact=${Math.round((100 * exact) / SAMPLES)}%`,
      );
    }
  }
  const worst = rows.filter((r) => r.size === Math.max(...SIZES)).reduce((a, b) => (b.p95 > a.p95 ? b : a));
  console.log(
    `worst p95 at ${worst.size}: ${fmt(worst.p95)} ms (${worst.kind}); target ${TARGET_P95_MS} ms: ${worst.p95 <= TARGET_P95_MS ? 'met' : 'missed'}`,
  );

  // Writes: put (transaction, namespace lock, quarantine check, insert returning the entry) against the
  // bare INSERT of the same row, into the same table and indexes, in turns of 250 so load hits both.
  const writeNs = ns('bench-writes');
  const args = () => ({
    namespace: writeNs,
    tier: 'stm',
    content: words(30),
    mode: 'append',
    tags: [word()],
    metadata: {},
  });
  const put = [];
  const insert = [];
  for (let round = 0; round < WRITES / 250; round++) {
    put.push(await measure(250, WRITE_CONCURRENCY, () => putEntry(t.db, writeNs, args())));
    insert.push(
      await measure(250, WRITE_CONCURRENCY, () => {
        const a = args();
        return sql`insert into memory_entries (namespace, tier, content, tags, metadata)
          values (${a.namespace}, ${a.tier}, ${a.content}, ${a.tags}::text[], ${JSON.stringify(a.metadata)}::jsonb)`.execute(
          t.db,
        );
      }),
    );
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const putRate = median(put.map((r) => r.perSecond));
  const insertRate = median(insert.map((r) => r.perSecond));
  console.log(
    `writes c=${WRITE_CONCURRENCY}: put ${putRate.toFixed(0)}/s (p50 ${fmt(median(put.map((r) => r.p50)))}ms), bare INSERT ${insertRate.toFixed(0)}/s (p50 ${fmt(median(insert.map((r) => r.p50)))}ms), put/INSERT ${(putRate / insertRate).toFixed(2)} (medians of ${put.length} rounds)`,
  );
  console.log(`done ${new Date().toISOString()} load ${load()}`);
} finally {
  await t.destroy();
}
