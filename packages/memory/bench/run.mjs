// Memory service latency against a real Postgres: put (append), put with idempotency key, search.
// Run: pnpm --filter @pkgreg/memory build && flock /tmp/pkgreg-bench.lock pnpm --filter @pkgreg/memory bench
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createTestDatabase } from '@pkgreg/db/testing';
import { insertEntries, putEntry, searchEntries, withIdempotency } from '../dist/index.js';

const BIG = 20_000;
const SMALL_NAMESPACES = 20;
const SMALL = 1_000;
const SAMPLES = 400;
const CONCURRENCY = 4;

const ns = (label) => `app:${createHash('sha256').update(label).digest('hex')}`;
let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const vocab = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}${'abcdefgh'[i % 8]}ord`);
const words = (n) => Array.from({ length: n }, () => vocab[Math.floor(rand() ** 2 * vocab.length)]).join(' ');

async function seedNamespace(db, namespace, count) {
  for (let done = 0; done < count; done += 500) {
    const batch = Array.from({ length: Math.min(500, count - done) }, () => ({
      content: words(30),
      tags: [vocab[Math.floor(rand() * 50)]],
    }));
    await insertEntries(db, namespace, rand() < 0.5 ? 'stm' : 'ltm', batch);
  }
}

async function measure(label, n, fn) {
  const times = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        const t0 = performance.now();
        await fn(i);
        times.push(performance.now() - t0);
      }
    }),
  );
  const wall = performance.now() - started;
  times.sort((a, b) => a - b);
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(1);
  console.log(
    `${label.padEnd(34)} n=${n} c=${CONCURRENCY} p50=${q(0.5)}ms p95=${q(0.95)}ms p99=${q(0.99)}ms ${(n / (wall / 1000)).toFixed(0)}/s`,
  );
}

const t = await createTestDatabase();
try {
  const big = ns('bench-big');
  const t0 = performance.now();
  await seedNamespace(t.db, big, BIG);
  for (let i = 0; i < SMALL_NAMESPACES; i++) await seedNamespace(t.db, ns(`bench-${i}`), SMALL);
  await t.db.executeQuery({ sql: 'analyze memory_entries', parameters: [], query: { kind: 'RawNode' } });
  console.log(
    `seeded ${BIG + SMALL_NAMESPACES * SMALL} entries in ${((performance.now() - t0) / 1000).toFixed(1)}s`,
  );

  const small = ns('bench-3');
  await measure('put append', SAMPLES, () =>
    putEntry(t.db, small, {
      namespace: small,
      tier: 'stm',
      content: words(20),
      mode: 'append',
      tags: [],
      metadata: {},
    }),
  );
  await measure('put with idempotencyKey (first)', SAMPLES, (i) => {
    const args = {
      namespace: small,
      tier: 'stm',
      content: words(20),
      mode: 'append',
      tags: [],
      metadata: {},
    };
    return withIdempotency(t.db, { namespace: small, toolName: 'bench', key: `k${i}`, args }, () =>
      putEntry(t.db, small, args),
    );
  });
  await measure('search 2 terms, 20k-entry namespace', SAMPLES, () =>
    searchEntries(t.db, big, { query: words(2), tiers: ['stm', 'ltm'], topK: 10 }),
  );
  await measure('search 2 terms, 1k-entry namespace', SAMPLES, () =>
    searchEntries(t.db, small, { query: words(2), tiers: ['stm', 'ltm'], topK: 10 }),
  );
  await measure('search prefix "w1", 20k namespace', SAMPLES / 4, () =>
    searchEntries(t.db, big, { query: 'w1', tiers: ['stm', 'ltm'], topK: 50 }),
  );
  await measure('blank query (recent), 20k namespace', SAMPLES, () =>
    searchEntries(t.db, big, { query: '', tiers: ['stm'], topK: 10 }),
  );
} finally {
  await t.destroy();
}
