import { agentLimitsFromEnv, DEFAULT_AGENT_LIMITS } from '@pkgreg/contracts';
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

describe('the sign-in settings (docs/mcp-oauth.md)', () => {
  it('EDGE_COOKIE_KEYS: required in production, 32+ characters each, newest first', () => {
    expect(() => loadEnv({ NODE_ENV: 'production' })).toThrow(/EDGE_COOKIE_KEYS: required in production/);
    expect(() => loadEnv({ EDGE_COOKIE_KEYS: 'short' })).toThrow(/EDGE_COOKIE_KEYS/);
    const keys = loadEnv({
      NODE_ENV: 'production',
      EDGE_COOKIE_KEYS: `${'a'.repeat(32)}, ${'b'.repeat(40)}`,
    });
    expect(keys.EDGE_COOKIE_KEYS).toEqual(['a'.repeat(32), 'b'.repeat(40)]);
    expect(loadEnv({}).EDGE_COOKIE_KEYS).toEqual([]);
  });

  it('REGISTRY_PUBLIC_URL: the registry for browsers, REGISTRY_URL when unset', () => {
    expect(loadEnv({ REGISTRY_URL: 'http://registry:4000/' }).REGISTRY_PUBLIC_URL).toBe(
      'http://registry:4000',
    );
    expect(loadEnv({ REGISTRY_PUBLIC_URL: 'https://pkgreg.example/' }).REGISTRY_PUBLIC_URL).toBe(
      'https://pkgreg.example',
    );
  });
});

describe("AGENT_MAX_* (the runtime worker's limits, shown by system info)", () => {
  it('default to the agent limits the worker runs with, and a value the worker refuses is refused', () => {
    expect(agentLimitsFromEnv(loadEnv({}))).toEqual(DEFAULT_AGENT_LIMITS);
    expect(loadEnv({ AGENT_MAX_STEPS: '12' }).AGENT_MAX_STEPS).toBe(12);
    expect(() => loadEnv({ AGENT_MAX_STEPS: '51' })).toThrow(/AGENT_MAX_STEPS/);
    expect(() => loadEnv({ AGENT_MAX_SKILL_BYTES: '1000' })).toThrow(/AGENT_MAX_SKILL_BYTES/);
  });
});
