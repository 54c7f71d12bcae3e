import { RejectError } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createLimiter, type Limiter } from '../src/admission/limits.js';

// decisions.md, Quotas: fixed one-minute windows per namespace (all tokens of a client) for invoke and compact, and a
// per-tool request rate. The checks of one event-loop turn that share their keys are counted in the
// script with one INCRBY; these tests hold that to what one INCR per request, in order, would decide.

const redis = new Redis(TEST_REDIS_URL, { keyPrefix: `${testKeyPrefix('limits')}:` });
afterAll(() => redis.disconnect());

// A fixed clock in the middle of a window, so no test straddles a minute boundary.
const at = Date.UTC(2026, 10, 24, 12, 0, 30);
const limiter = (rate: number, quotas = { invoke: 3, compact: 2 }, tokenRate: Record<string, number> = {}) =>
  createLimiter(
    redis,
    {
      ratePerMinute: rate,
      rateOverrides: tokenRate,
      invokePerMinute: quotas.invoke,
      compactPerMinute: quotas.compact,
    },
    () => at,
  );

type Verdict = 'ok' | 'rate_limited' | 'quota_exceeded';
/** Starts every check in the same turn (one script call) and reads each one's verdict. */
async function verdicts(l: Limiter, checks: Parameters<Limiter['check']>[0][]): Promise<Verdict[]> {
  const settled = await Promise.allSettled(checks.map((c) => l.check(c)));
  return settled.map((s) => {
    if (s.status === 'fulfilled') return 'ok';
    expect(s.reason).toBeInstanceOf(RejectError);
    return (s.reason as RejectError).reason as Verdict;
  });
}

const window = Math.floor(at / 60_000);
let n = 0;
const subject = () => ({ namespace: `app:${(++n).toString(16).padStart(64, '0')}` });

describe('limiter: checks of one turn with the same keys', () => {
  it('let through exactly the rate, in the order they arrived, and count every one', async () => {
    const who = subject();
    const got = await verdicts(
      limiter(5),
      Array.from({ length: 8 }, () => ({ ...who, tool: 'pkgreg.system.v1.info' })),
    );
    expect(got).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'rate_limited', 'rate_limited', 'rate_limited']);
    // As eight INCRs: refused requests count too; the key lives for the window (+5 s).
    const key = `edge:rate:${who.namespace}:pkgreg.system.v1.info:${window}`;
    expect(await redis.get(key)).toBe('8');
    expect(await redis.ttl(key)).toBeGreaterThan(60);
    // A later turn continues from the count: the window is spent.
    expect(await verdicts(limiter(5), [{ ...who, tool: 'pkgreg.system.v1.info' }])).toEqual(['rate_limited']);
  });

  it('take the quota only for checks the rate let through, and refuse the rest by quota', async () => {
    const who = subject();
    const invoke = { ...who, tool: 'pkgreg.agents.v1.invoke', quota: 'invoke' as const };
    // Rate 5, invoke quota 3: three admitted, two over the quota, one over the rate.
    const got = await verdicts(
      limiter(5),
      Array.from({ length: 6 }, () => invoke),
    );
    expect(got).toEqual(['ok', 'ok', 'ok', 'quota_exceeded', 'quota_exceeded', 'rate_limited']);
    // One INCR per rate-passed check on the quota key, as the check-by-check script counted them.
    expect(await redis.get(`edge:quota:${who.namespace}:invoke:${window}`)).toBe('5');
    expect(await redis.get(`edge:rate:${who.namespace}:pkgreg.agents.v1.invoke:${window}`)).toBe('6');
  });

  it('keep groups apart: other tools, other namespaces and the quota kinds each have their own count', async () => {
    const a = subject();
    const b = subject();
    const info = (w: typeof a) => ({ ...w, tool: 'pkgreg.system.v1.info' });
    const compact = (w: typeof a) => ({ ...w, tool: 'pkgreg.memory.v1.compact', quota: 'compact' as const });
    const got = await verdicts(limiter(2), [
      info(a),
      compact(a),
      info(b),
      info(a),
      compact(a),
      info(a),
      compact(a),
      info(b),
    ]);
    expect(got).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'rate_limited', 'rate_limited', 'ok']);
    // A per-tool override applies to its tool alone.
    const c = subject();
    const overridden = await verdicts(limiter(1, undefined, { 'pkgreg.agents.v1.list': 3 }), [
      { ...c, tool: 'pkgreg.agents.v1.list' },
      { ...c, tool: 'pkgreg.agents.v1.list' },
      { ...c, tool: 'pkgreg.system.v1.info' },
      { ...c, tool: 'pkgreg.system.v1.info' },
    ]);
    expect(overridden).toEqual(['ok', 'ok', 'ok', 'rate_limited']);
  });

  it('split a very busy turn over several script calls without losing or double-counting a check', async () => {
    // 300 namespaces, 2 checks each: more groups than one call takes (256).
    const whos = Array.from({ length: 300 }, subject);
    const checks = whos.flatMap((w) => [
      { ...w, tool: 'pkgreg.system.v1.info' },
      { ...w, tool: 'pkgreg.system.v1.info' },
    ]);
    const got = await verdicts(limiter(1), checks);
    expect(got.filter((v) => v === 'ok')).toHaveLength(300);
    expect(got.every((v, i) => v === (i % 2 === 0 ? 'ok' : 'rate_limited'))).toBe(true);
    const counts = await Promise.all(
      whos.map((w) => redis.get(`edge:rate:${w.namespace}:pkgreg.system.v1.info:${window}`)),
    );
    expect(counts.every((c) => c === '2')).toBe(true);
  });

  it('lease a hot key units that later checks take with no round trip, counted in Redis as used', async () => {
    // docs/decisions.md, "Rate-limit leases". The fixed clock makes every call of a key "hot".
    const conn = new Redis(TEST_REDIS_URL, { keyPrefix: `${testKeyPrefix('limits-lease')}:` });
    try {
      const l = createLimiter(
        conn,
        { ratePerMinute: 1_000_000, rateOverrides: {}, invokePerMinute: 1, compactPerMinute: 1 },
        () => at,
      );
      const who = subject();
      const info = { ...who, tool: 'pkgreg.system.v1.info' };
      const key = `edge:rate:${who.namespace}:pkgreg.system.v1.info:${window}`;
      // Turn after turn of 10 checks: the first calls lease nothing, then each spent lease doubles.
      let checks = 0;
      for (let turn = 0; turn < 12; turn++) {
        expect(
          await verdicts(
            l,
            Array.from({ length: 10 }, () => info),
          ),
        ).toEqual(Array(10).fill('ok'));
        checks += 10;
      }
      const counted = Number(await conn.get(key));
      // Redis counted every check plus the units leased and not yet handed out.
      expect(counted).toBeGreaterThan(checks);
      const held = counted - checks;
      // Those units admit checks while Redis is unreachable: no round trip for them.
      conn.disconnect();
      const fromLease = await verdicts(
        l,
        Array.from({ length: held }, () => info),
      );
      expect(fromLease).toEqual(Array(held).fill('ok'));
      // The next one needs Redis again, and fails as an error, not a verdict.
      await expect(l.check(info)).rejects.not.toBeInstanceOf(RejectError);
    } finally {
      conn.disconnect();
    }
  });

  it('with leases, one edge admits exactly the rate and two edges never more than it', async () => {
    const rate = 2000;
    const make = () => limiter(rate);
    const who = subject();
    const info = { ...who, tool: 'pkgreg.system.v1.info' };
    // One edge: 3000 checks in turns of 25; exactly the first 2000 pass.
    const one = make();
    const got: Verdict[] = [];
    for (let turn = 0; turn < 120; turn++)
      got.push(
        ...(await verdicts(
          one,
          Array.from({ length: 25 }, () => info),
        )),
      );
    expect(got.filter((v) => v === 'ok')).toHaveLength(rate);
    expect(got.slice(0, rate).every((v) => v === 'ok')).toBe(true);

    // Two edges taking turns on one key: together exactly the rate, as both go on until refused.
    const both = subject();
    const a = make();
    const b = make();
    let admitted = 0;
    for (let turn = 0; turn < 100; turn++) {
      for (const l of [a, b]) {
        const v = await verdicts(
          l,
          Array.from({ length: 20 }, () => ({ ...both, tool: 'pkgreg.system.v1.info' })),
        );
        admitted += v.filter((x) => x === 'ok').length;
      }
    }
    expect(admitted).toBe(rate);

    // An edge that stops while it holds a lease leaves the other all but those units, at most an eighth of what was left.
    const third = subject();
    const c = make();
    const d = make();
    const key = `edge:rate:${third.namespace}:pkgreg.system.v1.info:${window}`;
    let byC = 0;
    let counted = 0;
    // 20 turns or more, until c is left holding units (a lease can end exactly with a turn).
    for (let turn = 0; turn < 20 || counted === byC; turn++) {
      byC += (
        await verdicts(
          c,
          Array.from({ length: 20 }, () => ({ ...third, tool: 'pkgreg.system.v1.info' })),
        )
      ).filter((x) => x === 'ok').length;
      counted = Number(await redis.get(key));
    }
    const heldByC = counted - byC;
    expect(heldByC).toBeGreaterThan(0);
    // Turns run one after the other, so what c holds is its last call's lease, at most an eighth of what
    // was left after that call's group: lease <= (rate - (counted - lease)) / 8.
    expect(heldByC * 7).toBeLessThanOrEqual(rate - counted);
    let byD = 0;
    for (let turn = 0; turn < 200; turn++) {
      byD += (
        await verdicts(
          d,
          Array.from({ length: 20 }, () => ({ ...third, tool: 'pkgreg.system.v1.info' })),
        )
      ).filter((x) => x === 'ok').length;
    }
    expect(byC + byD).toBe(rate - heldByC);
  });

  it('lease nothing to keys that call Redis less often than hot, nor with a quota', async () => {
    let clock = at;
    const l = createLimiter(
      redis,
      { ratePerMinute: 1000, rateOverrides: {}, invokePerMinute: 1000, compactPerMinute: 1 },
      () => clock,
    );
    const who = subject();
    for (let i = 0; i < 20; i++) {
      expect(await verdicts(l, [{ ...who, tool: 'pkgreg.system.v1.info' }])).toEqual(['ok']);
      clock += 150; // slower than one call per LEASE_HOT_MS
    }
    expect(await redis.get(`edge:rate:${who.namespace}:pkgreg.system.v1.info:${window}`)).toBe('20');
    clock = at;
    for (let i = 0; i < 20; i++) {
      await verdicts(l, [{ ...who, tool: 'pkgreg.agents.v1.invoke', quota: 'invoke' as const }]);
    }
    expect(await redis.get(`edge:rate:${who.namespace}:pkgreg.agents.v1.invoke:${window}`)).toBe('20');
    expect(await redis.get(`edge:quota:${who.namespace}:invoke:${window}`)).toBe('20');
  });

  it('reject every waiter of the call when Redis fails, as an error and not a verdict', async () => {
    const broken = new Redis(TEST_REDIS_URL, { keyPrefix: `${testKeyPrefix('limits-broken')}:` });
    try {
      const l = createLimiter(broken, {
        ratePerMinute: 5,
        rateOverrides: {},
        invokePerMinute: 1,
        compactPerMinute: 1,
      });
      const who = subject();
      expect(await verdicts(l, [{ ...who, tool: 't' }])).toEqual(['ok']);
      broken.disconnect();
      const failed = await Promise.allSettled([
        l.check({ ...who, tool: 't' }),
        l.check({ ...who, tool: 't' }),
      ]);
      expect(failed.map((f) => f.status)).toEqual(['rejected', 'rejected']);
      expect(failed.some((f) => f.status === 'rejected' && f.reason instanceof RejectError)).toBe(false);
    } finally {
      broken.disconnect();
    }
  });
});
