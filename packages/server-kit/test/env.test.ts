import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  booleanFlag,
  commonEnvShape,
  httpServerEnvShape,
  parseEnv,
  port,
  redisKeyOptions,
  redisKeysEnvShape,
} from '../src/index.js';

// STYLE.md §5: one env.ts per app, parsed once; boolean flags parsed explicitly
// (z.coerce.boolean() turns "false" into true).

const schema = z.object({
  ...commonEnvShape,
  PORT: port(4000),
  PKGREG_FEATURE_X: booleanFlag(true),
  PKGREG_FEATURE_Y: booleanFlag(false),
  PKGREG_CLIENT_SECRET: z.string().min(32),
});

const SECRET = 'short-but-very-private';

describe('parseEnv (STYLE.md §5)', () => {
  it('returns typed values with defaults', () => {
    const env = parseEnv(schema, { PKGREG_CLIENT_SECRET: 'x'.repeat(32) });
    expect(env).toEqual({
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/pkgreg',
      REDIS_URL: 'redis://127.0.0.1:6379',
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
      OTEL_TRACES_SAMPLER_ARG: 1,
      OTEL_SDK_DISABLED: false,
      PORT: 4000,
      PKGREG_FEATURE_X: true,
      PKGREG_FEATURE_Y: false,
      PKGREG_CLIENT_SECRET: 'x'.repeat(32),
    });
  });

  it('ignores variables outside the schema', () => {
    const env = parseEnv(schema, { PKGREG_CLIENT_SECRET: 'x'.repeat(32), HOME: '/root' });
    expect(env).not.toHaveProperty('HOME');
  });

  it('names every bad variable in one error and never prints a value', () => {
    let message = '';
    try {
      parseEnv(schema, {
        NODE_ENV: `staging-${SECRET}`,
        DATABASE_URL: `not a url ${SECRET}`,
        PORT: `${SECRET}`,
        PKGREG_FEATURE_X: `maybe-${SECRET}`,
        PKGREG_CLIENT_SECRET: SECRET,
        LOG_LEVEL: 'info',
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^invalid environment:/);
    for (const name of ['NODE_ENV', 'DATABASE_URL', 'PORT', 'PKGREG_FEATURE_X', 'PKGREG_CLIENT_SECRET']) {
      expect(message).toContain(`${name}:`);
    }
    expect(message).not.toContain('LOG_LEVEL');
    expect(message).not.toContain(SECRET);
  });

  it('reports a missing required variable', () => {
    expect(() => parseEnv(schema, {})).toThrow(/PKGREG_CLIENT_SECRET/);
  });
});

describe('booleanFlag (STYLE.md §5: "false" must not become true)', () => {
  const flag = (fallback: boolean) => z.object({ F: booleanFlag(fallback) });

  it.each([
    ['false', false],
    ['0', false],
    ['no', false],
    ['true', true],
    ['1', true],
    ['yes', true],
  ])('"%s" → %s whatever the fallback', (value, expected) => {
    expect(parseEnv(flag(true), { F: value }).F).toBe(expected);
    expect(parseEnv(flag(false), { F: value }).F).toBe(expected);
  });

  it('unset → fallback', () => {
    expect(parseEnv(flag(true), {}).F).toBe(true);
    expect(parseEnv(flag(false), {}).F).toBe(false);
    expect(parseEnv(flag(false), { F: undefined }).F).toBe(false);
  });

  it.each(['maybe', 'enabled', 'on', '2', ' true'])('rejects garbage "%s"', (value) => {
    expect(() => parseEnv(flag(false), { F: value })).toThrow(/F:/);
  });
});

describe('port', () => {
  const s = z.object({ PORT: port(4100) });

  it('coerces a number and falls back when unset', () => {
    expect(parseEnv(s, { PORT: '8080' }).PORT).toBe(8080);
    expect(parseEnv(s, { PORT: '0' }).PORT).toBe(0);
    expect(parseEnv(s, {}).PORT).toBe(4100);
  });

  it('an empty value means unset, not port 0', () => {
    expect(parseEnv(s, { PORT: '' }).PORT).toBe(4100);
  });

  it.each(['65536', '-1', '80.5', 'http'])('rejects %s', (value) => {
    expect(() => parseEnv(s, { PORT: value })).toThrow(/PORT:/);
  });
});

describe('TRUST_PROXY', () => {
  const trust = (value?: string) =>
    parseEnv(z.object(httpServerEnvShape), value === undefined ? {} : { TRUST_PROXY: value }).TRUST_PROXY;

  it('defaults to loopback; a number is a hop count; a list is split for Express', () => {
    expect(trust()).toEqual(['loopback']);
    expect(trust('1')).toBe(1);
    expect(trust('10.0.0.0/8, uniquelocal')).toEqual(['10.0.0.0/8', 'uniquelocal']);
  });

  it('refuses anything else, naming the variable', () => {
    expect(() => trust('10.0.0.0/8; rm -rf')).toThrow(/TRUST_PROXY/);
    expect(() => trust('')).toThrow(/TRUST_PROXY/);
  });
});

describe('REDIS_KEY_PREFIX', () => {
  const keys = (value?: string) =>
    parseEnv(z.object(redisKeysEnvShape), value === undefined ? {} : { REDIS_KEY_PREFIX: value });

  it('is empty by default, and then no ioredis prefix at all', () => {
    expect(keys()).toEqual({ REDIS_KEY_PREFIX: '' });
    expect(redisKeyOptions(keys())).toEqual({});
  });

  it("is the keys' prefix when set", () => {
    expect(redisKeyOptions(keys('eu-1:pkgreg.'))).toEqual({ keyPrefix: 'eu-1:pkgreg.' });
  });

  it('refuses spaces, glob characters and control characters, naming the variable', () => {
    for (const bad of ['a b', 'pkgreg*', 'x\ny', 'k'.repeat(101)]) {
      expect(() => keys(bad)).toThrow(/REDIS_KEY_PREFIX/);
    }
  });
});
