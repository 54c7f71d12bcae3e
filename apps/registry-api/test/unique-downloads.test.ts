// Issue 26, "Download counts that rankings can trust": downloadCount keeps adding one per accepted
// track, while sort=downloads, trending and the downloads per day count unique downloaders per package
// and UTC day (an address, IPv6 by /64, as an HMAC digest under a key that is random per day; nothing
// raw stored); POST …/track has a per-address limit (429 + Retry-After). Through the real app, database
// and Redis; addresses come as a trusted proxy's X-Forwarded-For (TRUST_PROXY's default trusts loopback,
// where supertest connects from) unless a test says otherwise.
import type { RequestListener } from 'node:http';
import { PackageDetailSchema } from '@pkgreg/contracts';
import { until } from '@pkgreg/testing';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import pino from 'pino';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { foldAllDownloadDeltas, startDownloadFlusher } from '../src/downloads/download-flusher.js';
import { createDownloadRecorder } from '../src/downloads/download-recorder.js';
import { loadEnv } from '../src/env.js';
import { refreshPopularity } from '../src/packages/derived-tables-refresher.js';
import { insertPackages, packageRow, silentLogger, useTestRegistry } from './fixtures.js';

const t = useTestRegistry({ DETAIL_CACHE_TTL_MS: '0' });

const NAMES = [
  'same-address',
  'many-addresses',
  'ipv6',
  'client-ids',
  'untrusted',
  'hops',
  'limited',
  'limited-days',
  'no-redis',
  'midnight',
  'batch-days',
  'raw',
  'two-processes',
  'hype',
  'real',
];

beforeAll(async () => {
  await insertPackages(
    t.db,
    NAMES.map((name) => packageRow({ scope: 'dl', name })),
  );
});

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const today = () => dayOf(Date.now());

/** One track call to @dl/<name>, from `from` (a trusted proxy's X-Forwarded-For) when given. */
function track(app: RequestListener, name: string, from?: string, headers: Record<string, string> = {}) {
  const call = request(app).post(`/api/packages/@dl/${name}/track`);
  if (from !== undefined) call.set('X-Forwarded-For', from);
  for (const [header, value] of Object.entries(headers)) call.set(header, value);
  return call;
}

/** After a fold: the package's calls (downloadCount), its unique downloaders, and those per day. */
async function counts(name: string) {
  await foldAllDownloadDeltas(t.db);
  const row = await t.db
    .selectFrom('packages')
    .select(['id', 'download_count', 'unique_download_count'])
    .where('scope', '=', 'dl')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  const days = await sql<{ day: string; count: number }>`
    select to_char(day, 'YYYY-MM-DD') as day, count from package_downloads_daily
    where package_id = ${row.id} order by day`.execute(t.db);
  return {
    calls: Number(row.download_count),
    unique: Number(row.unique_download_count),
    days: Object.fromEntries(days.rows.map((r) => [r.day, Number(r.count)])),
  };
}

/** The digests stored for a package, per day (read as text: createDb's int8 parser would round them). */
async function digests(name: string) {
  const result = await sql<{ day: string; downloader: string }>`
    select to_char(d.day, 'YYYY-MM-DD') as day, d.downloader::text as downloader
    from package_downloaders d join packages p on p.id = d.package_id
    where p.scope = 'dl' and p.name = ${name} order by 1, 2`.execute(t.db);
  return result.rows;
}

/** An app of its own on this file's database and Redis, with `env` and optionally a clock. */
function appWith(env: Record<string, string>, options: { now?: () => number; redis?: Redis } = {}) {
  return createApp({
    db: t.db,
    redis: options.redis ?? t.redis,
    logger: silentLogger,
    env: loadEnv({ DETAIL_CACHE_TTL_MS: '0', ...env }),
    ...(options.now ? { now: options.now } : {}),
  });
}

describe('unique downloaders per package and UTC day (sort=downloads, trending, downloads per day)', () => {
  it('one address many times: downloadCount adds every call, the day one downloader', async () => {
    for (let i = 0; i < 12; i += 1)
      await track(t.app, 'same-address', '192.0.2.10').expect(200, { ok: true });
    expect(await counts('same-address')).toEqual({ calls: 12, unique: 1, days: { [today()]: 1 } });
    // More of the same later that day add to the calls only, and the detail says so.
    for (let i = 0; i < 3; i += 1) await track(t.app, 'same-address', '192.0.2.10').expect(200);
    expect(await counts('same-address')).toEqual({ calls: 15, unique: 1, days: { [today()]: 1 } });
    const detail = PackageDetailSchema.parse(
      (await request(t.app).get('/api/packages/@dl/same-address').expect(200)).body,
    );
    expect(detail).toMatchObject({ downloadCount: 15, downloadsLast7Days: 1, downloadsLast30Days: 1 });
    expect(detail.dailyDownloads?.counts.at(-1)).toBe(1);
  });

  it('many addresses: each counts once, whatever it repeats', async () => {
    const addresses = [
      ...Array.from({ length: 20 }, (_, i) => `198.51.100.${i + 1}`),
      ...Array.from({ length: 5 }, (_, i) => `2001:db8:${i + 1}::1`),
    ];
    await Promise.all(addresses.map((a) => track(t.app, 'many-addresses', a).expect(200)));
    await Promise.all(addresses.map((a) => track(t.app, 'many-addresses', a).expect(200)));
    expect(await counts('many-addresses')).toEqual({ calls: 50, unique: 25, days: { [today()]: 25 } });
  });

  it('IPv6: one /64 is one downloader, every spelling of an address the same; IPv4-mapped is IPv4', async () => {
    const oneSlash64 = [
      '2001:db8:a:b::1',
      '2001:db8:a:b:ffff:ffff:ffff:ffff',
      '2001:DB8:A:B:0:0:0:1',
      '2001:0db8:000a:000b::2',
      '2001:db8:a:b:1234:5678:9abc:def0',
    ];
    for (const address of oneSlash64) await track(t.app, 'ipv6', address).expect(200);
    expect((await counts('ipv6')).unique).toBe(1);
    // The next /64 over, and another one sharing only the /48, are downloaders of their own.
    await track(t.app, 'ipv6', '2001:db8:a:c::1').expect(200);
    await track(t.app, 'ipv6', '2001:db8:a:ffff::1').expect(200);
    expect((await counts('ipv6')).unique).toBe(3);
    // An IPv4 client seen through an IPv6 socket is that IPv4 client.
    await track(t.app, 'ipv6', '192.0.2.44').expect(200);
    await track(t.app, 'ipv6', '::ffff:192.0.2.44').expect(200);
    await track(t.app, 'ipv6', '::ffff:c000:22c').expect(200);
    expect(await counts('ipv6')).toEqual({ calls: 10, unique: 4, days: { [today()]: 4 } });
  });

  it('a client id the caller declares never makes a downloader, nor merges two addresses', async () => {
    // No pkgreg client sends an id (the CLI sends its User-Agent, the web UI nothing), and one a caller
    // picks could be new on every call: whatever it sends, one address is one downloader.
    const declared: Array<Record<string, string>> = [
      { 'X-Client-Id': 'a' },
      { 'X-Client-Id': 'b' },
      { 'X-Pkgreg-Client-Id': 'c' },
      { 'User-Agent': 'pkgreg/9.9.9 node/24' },
      { 'User-Agent': 'curl/8' },
      { Cookie: 'client=d' },
      { 'X-Request-Id': 'e' },
      // Other headers that name addresses are not X-Forwarded-For: never believed.
      { 'X-Real-IP': '203.0.113.1' },
      { 'True-Client-IP': '203.0.113.2' },
      { 'CF-Connecting-IP': '203.0.113.3' },
      { Forwarded: 'for=203.0.113.4' },
    ];
    for (const headers of declared) await track(t.app, 'client-ids', '192.0.2.20', headers).expect(200);
    expect((await counts('client-ids')).unique).toBe(1);
    // One declared id from two addresses: two downloaders.
    await track(t.app, 'client-ids', '192.0.2.21', { 'X-Client-Id': 'a' }).expect(200);
    expect(await counts('client-ids')).toEqual({ calls: 12, unique: 2, days: { [today()]: 2 } });
  });

  it('X-Forwarded-For is believed only from the peers TRUST_PROXY trusts', async () => {
    // Loopback not trusted: every forwarded address is the peer's own (one downloader).
    const untrusting = appWith({ TRUST_PROXY: '10.0.0.0/8' });
    for (let i = 0; i < 6; i += 1) await track(untrusting, 'untrusted', `198.51.100.${i + 1}`).expect(200);
    await track(untrusting, 'untrusted', '2001:db8:ff::1, 198.51.100.99').expect(200);
    expect(await counts('untrusted')).toEqual({ calls: 7, unique: 1, days: { [today()]: 1 } });
    const noHops = appWith({ TRUST_PROXY: '0' });
    for (let i = 0; i < 3; i += 1) await track(noHops, 'untrusted', `198.51.100.${i + 1}`).expect(200);
    expect((await counts('untrusted')).unique).toBe(1);

    // One trusted hop: the client is the address that hop appended (the rightmost); what the client
    // wrote to the left of it is not.
    const oneHop = appWith({ TRUST_PROXY: '1' });
    for (let i = 0; i < 5; i += 1) await track(oneHop, 'hops', `10.9.9.${i}, 203.0.113.50`).expect(200);
    expect((await counts('hops')).unique).toBe(1);
    await track(oneHop, 'hops', '203.0.113.50, 203.0.113.51').expect(200);
    expect(await counts('hops')).toEqual({ calls: 6, unique: 2, days: { [today()]: 2 } });
  });

  it('two API processes make the same digest for one address (the day key is shared)', async () => {
    const other = appWith({});
    await track(t.app, 'two-processes', '192.0.2.30').expect(200);
    await track(other, 'two-processes', '192.0.2.30').expect(200);
    await track(other, 'two-processes', '192.0.2.31').expect(200);
    expect(await counts('two-processes')).toEqual({ calls: 3, unique: 2, days: { [today()]: 2 } });
  });

  it('sort=downloads and trending rank unique downloaders; downloadCount still counts every call', async () => {
    for (let i = 0; i < 30; i += 1) await track(t.app, 'hype', '192.0.2.40').expect(200);
    for (let i = 0; i < 6; i += 1) await track(t.app, 'real', `203.0.113.${100 + i}`).expect(200);
    await foldAllDownloadDeltas(t.db);
    await refreshPopularity(t.db);
    const order = async (sort: string) =>
      (await request(t.app).get(`/api/packages?owner=dl&sort=${sort}&order=desc&pageSize=100`).expect(200))
        .body.data as Array<{ name: string }>;
    const ranked = (list: Array<{ name: string }>) =>
      list.map((p) => p.name).filter((n) => n === 'hype' || n === 'real');
    expect(ranked(await order('downloads'))).toEqual(['real', 'hype']);
    expect(ranked(await order('trending'))).toEqual(['real', 'hype']);
    const detail = async (name: string) =>
      PackageDetailSchema.parse((await request(t.app).get(`/api/packages/@dl/${name}`).expect(200)).body);
    expect((await detail('hype')).downloadCount).toBe(30);
    expect((await detail('real')).downloadCount).toBe(6);
    expect((await detail('hype')).downloadsLast7Days).toBe(1);
    expect((await detail('real')).downloadsLast7Days).toBe(6);
  });
});

describe('per-address limit on POST …/track (TRACK_PER_MINUTE)', () => {
  it('past the limit: 429 {error} with Retry-After, and the call counts nothing', async () => {
    const limited = appWith({ TRACK_PER_MINUTE: '5' });
    for (let i = 0; i < 5; i += 1) await track(limited, 'limited', '192.0.2.50').expect(200);
    for (let i = 0; i < 3; i += 1) {
      const res = await track(limited, 'limited', '192.0.2.50').expect(429);
      expect(res.body).toEqual({ error: expect.stringMatching(/^Too many downloads from this address/) });
      expect(Object.keys(res.body)).toEqual(['error']);
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['x-request-id']).toBeTruthy();
    }
    // The limit is per address over every package: a missing package counts toward it too.
    await track(limited, 'no-such-package', '192.0.2.50').expect(429);
    expect(await counts('limited')).toEqual({ calls: 5, unique: 1, days: { [today()]: 1 } });
  });

  it('each address has its own window; addresses of one IPv6 /64 share one', async () => {
    const limited = appWith({ TRACK_PER_MINUTE: '2' });
    await track(limited, 'limited', '192.0.2.51').expect(200);
    await track(limited, 'limited', '192.0.2.51').expect(200);
    await track(limited, 'limited', '192.0.2.51').expect(429);
    await track(limited, 'limited', '192.0.2.52').expect(200);
    await track(limited, 'limited', '::ffff:192.0.2.52').expect(200);
    await track(limited, 'limited', '192.0.2.52').expect(429);
    await track(limited, 'limited', '2001:db8:5:5::1').expect(200);
    await track(limited, 'limited', '2001:db8:5:5::2').expect(200);
    await track(limited, 'limited', '2001:db8:5:5:ffff::9').expect(429);
    await track(limited, 'limited', '2001:db8:5:6::1').expect(200);
    expect((await counts('limited')).calls).toBe(5 + 2 + 2 + 2 + 1);
  });

  it('an untrusted peer cannot leave its window by naming other addresses', async () => {
    const limited = appWith({ TRACK_PER_MINUTE: '3', TRUST_PROXY: '10.0.0.0/8' });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1)
      statuses.push((await track(limited, 'limited', `198.51.100.${60 + i}`)).status);
    // The peer (127.0.0.1) may already have used some of its window in other tests of this file.
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(3);
    expect(statuses.slice(3)).toEqual([429, 429, 429]);
  });

  it('two API processes share one window (Redis): a process new to an address asks Redis first', async () => {
    const first = appWith({ TRACK_PER_MINUTE: '3' });
    const second = appWith({ TRACK_PER_MINUTE: '3' });
    for (let i = 0; i < 3; i += 1) await track(first, 'limited', '192.0.2.54').expect(200);
    await track(second, 'limited', '192.0.2.54').expect(429);
    await track(second, 'limited', '192.0.2.54').expect(429);
    await track(first, 'limited', '192.0.2.54').expect(429);
    await track(second, 'limited', '192.0.2.55').expect(200);
    expect((await counts('limited')).calls).toBe(5 + 2 + 2 + 2 + 1 + 3 + 1);
  });

  it('the window is per UTC day too: a new day is a new digest, so a new window', async () => {
    let clock = Date.parse(`${dayOf(Date.now() - DAY_MS)}T23:59:59.000Z`);
    const limited = appWith({ TRACK_PER_MINUTE: '2' }, { now: () => clock });
    await track(limited, 'limited-days', '192.0.2.53').expect(200);
    await track(limited, 'limited-days', '192.0.2.53').expect(200);
    await track(limited, 'limited-days', '192.0.2.53').expect(429);
    clock += 2000;
    await track(limited, 'limited-days', '192.0.2.53').expect(200);
    expect((await counts('limited-days')).calls).toBe(3);
  });

  it('Redis away: track still counts (unique downloaders too), without the limit', async () => {
    const away = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    away.on('error', () => {});
    try {
      const noRedis = appWith({ TRACK_PER_MINUTE: '1' }, { redis: away });
      for (let i = 0; i < 3; i += 1) await track(noRedis, 'no-redis', '192.0.2.60').expect(200);
      await track(noRedis, 'no-redis', '192.0.2.61').expect(200);
      expect(await counts('no-redis')).toEqual({ calls: 4, unique: 2, days: { [today()]: 2 } });
    } finally {
      away.disconnect();
    }
  });
});

describe('the day boundary and the daily key', () => {
  it('a downloader counts again on a new day under a new, unlinkable digest; past keys are deleted', async () => {
    const yesterday = dayOf(Date.now() - DAY_MS);
    const now = today();
    const tomorrow = dayOf(Date.now() + DAY_MS);
    let clock = Date.parse(`${yesterday}T23:59:59.900Z`);
    const app = appWith({}, { now: () => clock });
    await track(app, 'midnight', '192.0.2.70').expect(200);
    await track(app, 'midnight', '192.0.2.70').expect(200);
    clock = Date.parse(`${now}T00:00:00.100Z`);
    await track(app, 'midnight', '192.0.2.70').expect(200);
    await track(app, 'midnight', '192.0.2.70').expect(200);
    expect(await counts('midnight')).toEqual({ calls: 4, unique: 2, days: { [yesterday]: 1, [now]: 1 } });

    // One address, two days, two digests that share nothing; each day's key is its own.
    const stored = await digests('midnight');
    expect(stored.map((d) => d.day)).toEqual([yesterday, now]);
    expect(stored[0]?.downloader).not.toBe(stored[1]?.downloader);
    const keys = await sql<{ day: string; key: Buffer }>`
      select to_char(day, 'YYYY-MM-DD') as day, key from download_day_keys
      where day in (${yesterday}::date, ${now}::date) order by day`.execute(t.db);
    expect(keys.rows.map((k) => k.day)).toEqual([yesterday, now]);
    expect(keys.rows[0]?.key.length).toBe(32);
    expect(keys.rows[0]?.key.equals(keys.rows[1]?.key as Buffer)).toBe(false);

    // The flusher's first tick of a day deletes the past days' keys; yesterday's downloaders stay a
    // day (a batch received before midnight may be folded after it), then go too.
    const keyDays = async () =>
      (
        await sql<{ day: string }>`select to_char(day, 'YYYY-MM-DD') as day from download_day_keys`.execute(
          t.db,
        )
      ).rows.map((r) => r.day);
    let flusher = startDownloadFlusher(t.db, silentLogger, 10, () => clock);
    await until(async () => !(await keyDays()).includes(yesterday), "yesterday's key deleted");
    await flusher.stop();
    expect(await keyDays()).toContain(now);
    expect((await digests('midnight')).map((d) => d.day)).toEqual([yesterday, now]);

    clock = Date.parse(`${tomorrow}T00:00:01.000Z`);
    flusher = startDownloadFlusher(t.db, silentLogger, 10, () => clock);
    await until(
      async () => !(await digests('midnight')).some((d) => d.day === yesterday),
      'downloaders before yesterday deleted',
    );
    await flusher.stop();
    expect((await digests('midnight')).map((d) => d.day)).toEqual([now]);
    // Today's key went with the day too; tomorrow's repeat is a new downloader of tomorrow.
    expect(await keyDays()).not.toContain(now);
    await track(app, 'midnight', '192.0.2.70').expect(200);
    expect(await counts('midnight')).toEqual({
      calls: 5,
      unique: 3,
      days: { [yesterday]: 1, [now]: 1, [tomorrow]: 1 },
    });
  });

  it('calls of two days in one moment go in two batch rows, each counted on its own day', async () => {
    const yesterday = dayOf(Date.now() - DAY_MS);
    const now = today();
    const recorder = createDownloadRecorder(t.db);
    await foldAllDownloadDeltas(t.db);
    const results = await Promise.all([
      recorder.record('dl', 'batch-days', { day: yesterday, digest: '42' }),
      recorder.record('dl', 'batch-days', { day: yesterday, digest: '42' }),
      recorder.record('dl', 'batch-days', { day: now, digest: '42' }),
      recorder.record('dl', 'batch-days', { day: now, digest: '-7' }),
    ]);
    expect(results).toEqual([true, true, true, true]);
    const rows = await sql<{ day: string }>`
      select to_char(day, 'YYYY-MM-DD') as day from package_download_batches order by id`.execute(t.db);
    expect(rows.rows.map((r) => r.day)).toEqual([yesterday, now]);
    expect(await counts('batch-days')).toEqual({ calls: 4, unique: 3, days: { [yesterday]: 1, [now]: 2 } });
  });
});

describe('nothing raw is stored (no address in the database, Redis or the logs)', () => {
  it('the addresses of accepted, limited and refused calls appear nowhere', async () => {
    const lines: string[] = [];
    const logged = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
    const app = createApp({
      db: t.db,
      redis: t.redis,
      logger: logged,
      env: loadEnv({ DETAIL_CACHE_TTL_MS: '0', TRACK_PER_MINUTE: '2' }),
    });
    const addresses = ['203.0.113.199', '2001:db8:dead:beef::7'];
    for (const address of addresses) {
      await track(app, 'raw', address).expect(200);
      await track(app, 'raw', address).expect(200);
      await track(app, 'raw', address).expect(429);
    }
    await track(app, 'no-such-package', '198.51.100.201').expect(404);
    await foldAllDownloadDeltas(t.db);
    const needles = ['203.0.113.199', '2001:db8:dead:beef', '2001:db8:dead:beef::/64', '198.51.100.201'];

    const tables = await sql<{ name: string }>`
      select table_name as name from information_schema.tables
      where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(t.db);
    expect(tables.rows.length).toBeGreaterThan(10);
    for (const { name } of tables.rows) {
      for (const needle of needles) {
        const found = await sql<{ n: number }>`
          select count(*)::int as n from ${sql.table(name)} x where x::text ilike ${`%${needle}%`}`.execute(
          t.db,
        );
        expect(found.rows[0]?.n, `${needle} in ${name}`).toBe(0);
      }
    }

    // Redis holds the limit windows, keyed by digest.
    const prefix = t.redis.options.keyPrefix ?? '';
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await t.redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    const windows = keys.filter((k) => k.includes('pkgreg:registry:track:'));
    expect(windows.length).toBeGreaterThan(0);
    for (const key of windows) {
      expect(key).toMatch(/pkgreg:registry:track:-?\d+$/);
      for (const needle of needles) expect(key).not.toContain(needle);
    }

    // The 429s and the 404 were logged, without the address.
    expect(lines.some((l) => l.includes('"status":429'))).toBe(true);
    expect(lines.some((l) => l.includes('"status":404'))).toBe(true);
    for (const line of lines) for (const needle of needles) expect(line).not.toContain(needle);
  });
});
