import { describe, expect, it } from 'vitest';
import { loadEnv } from '../src/env.js';

// Settings derived from others at start (env.ts).

describe('SHUTDOWN_GRACE_MS', () => {
  it('outlasts the sync threshold when unset or empty, so a sync invoke open at SIGTERM is answered', () => {
    expect(loadEnv({}).SHUTDOWN_GRACE_MS).toBe(15_000);
    expect(loadEnv({ EDGE_SYNC_THRESHOLD_MS: '20000', SHUTDOWN_GRACE_MS: '' }).SHUTDOWN_GRACE_MS).toBe(
      25_000,
    );
  });

  it('is used as given when set, and refused when not a duration', () => {
    expect(loadEnv({ SHUTDOWN_GRACE_MS: '30000' }).SHUTDOWN_GRACE_MS).toBe(30_000);
    expect(() => loadEnv({ SHUTDOWN_GRACE_MS: 'soon' })).toThrow(/SHUTDOWN_GRACE_MS/);
  });
});
