import { expect } from 'vitest';
import { describeOutage } from '../src/outage.js';
import { startRedis } from '../src/services.js';

// issue 22, Trust it: Redis stopped for a few seconds and started again during a mixed load (track,
// memory put, system info, invoke). The apps recover by themselves; everything accepted before, during
// and after is accounted for; what is refused gets 503 + Retry-After in the documented shape, never a
// hang; each process logs the outage once. Redis is the file's own (services.ts), with its append-only
// file, as a production Redis keeps BullMQ's jobs across a restart.

describeOutage({
  dependency: 'redis',
  start: startRedis,
  stackOn: (redis) => ({ redisUrl: () => redis().url }),
  expectRound(kinds, summary) {
    // Track needs no Redis: every call is a 200.
    expect(kinds.track.refused, summary).toBe(0);
    // The outage was real: the edge refused what needs Redis (admission's limits, the queue).
    expect(kinds['memory.put'].refused + kinds.invoke.refused, summary).toBeGreaterThan(0);
  },
});
