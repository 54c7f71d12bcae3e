import { expect } from 'vitest';
import { describeOutage } from '../src/outage.js';
import { startPostgres } from '../src/services.js';

// issue 22, Trust it: PostgreSQL stopped for a few seconds (a fast shutdown: every session cut, as in a
// restart or failover) and started again during a mixed load. Before this, track and memory.put
// answered 500 and logged a stack per request. Now: 503 + Retry-After (JSON-RPC: service_unavailable),
// the outage logged once per process, every track 200 counted once, every acknowledged memory write
// readable, every accepted task completed, and the apps recover without a restart.

describeOutage({
  dependency: 'postgres',
  start: startPostgres,
  stackOn: (postgres) => ({ adminDatabaseUrl: () => postgres().adminUrl }),
  expectRound(kinds, summary) {
    // The outage was real: track and memory writes need PostgreSQL, and were refused meanwhile.
    expect(kinds.track.refused, summary).toBeGreaterThan(0);
    expect(kinds['memory.put'].refused, summary).toBeGreaterThan(0);
  },
});
