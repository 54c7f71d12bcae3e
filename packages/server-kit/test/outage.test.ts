import { createPool } from '@pkgreg/db';
import { captureLogs } from '@pkgreg/testing';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  createLogger,
  createOutageMonitor,
  dependencyOutageOf,
  requestRedisOptions,
  startPeriodic,
} from '../src/index.js';
import { outageMonitorOf } from '../src/outage.js';

function capturedLogger(level = 'debug') {
  const logs = captureLogs();
  return { logger: createLogger('test', level, logs.destination), lines: logs.records };
}

const messages = (lines: ReadonlyArray<Record<string, unknown>>) => lines.map((l) => l.msg);

/** An error shaped as pg raises one from the server (SQLSTATE in `code`). */
const pgServerError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('dependencyOutageOf', () => {
  it('names PostgreSQL for shutdowns, broken connections and refused connects', () => {
    expect(
      dependencyOutageOf(pgServerError('57P01', 'terminating connection due to administrator command')),
    ).toBe('postgres');
    expect(dependencyOutageOf(pgServerError('57P03', 'the database system is starting up'))).toBe('postgres');
    expect(dependencyOutageOf(pgServerError('08006', 'connection failure'))).toBe('postgres');
    expect(dependencyOutageOf(new Error('Connection terminated unexpectedly'))).toBe('postgres');
    expect(dependencyOutageOf(new Error('timeout exceeded when trying to connect'))).toBe('postgres');
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(dependencyOutageOf(refused)).toBe('postgres');
    expect(dependencyOutageOf(new AggregateError([refused], 'all addresses failed'))).toBe('postgres');
  });

  it('names Redis for what ioredis raises instead of waiting', () => {
    const maxRetries = Object.assign(new Error('Reached the max retries per request limit (which is 1).'), {
      name: 'MaxRetriesPerRequestError',
    });
    expect(dependencyOutageOf(maxRetries)).toBe('redis');
    expect(dependencyOutageOf(new Error('Connection is closed.'))).toBe('redis');
    expect(dependencyOutageOf(new Error('Command timed out'))).toBe('redis');
    expect(dependencyOutageOf(new Error('LOADING Redis is loading the dataset in memory'))).toBe('redis');
    // Wrapped by a service that says what it could not do.
    expect(dependencyOutageOf(new Error('queue unavailable', { cause: maxRetries }))).toBe('redis');
  });

  it('leaves every other error alone, and a refused HTTP service is not PostgreSQL', () => {
    expect(dependencyOutageOf(new Error('boom'))).toBeUndefined();
    expect(dependencyOutageOf(pgServerError('23505', 'duplicate key value'))).toBeUndefined();
    expect(dependencyOutageOf(undefined)).toBeUndefined();
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    expect(dependencyOutageOf(new TypeError('fetch failed', { cause: refused }))).toBeUndefined();
  });

  it('classifies what a real pg pool and a real ioredis client raise against a closed port, within bounds', async () => {
    const pool = createPool('postgres://postgres@127.0.0.1:1/none', { connectionTimeoutMs: 2_000 });
    const pgError = await pool.query('select 1').then(
      () => undefined,
      (error: unknown) => error,
    );
    await pool.end();
    expect(dependencyOutageOf(pgError)).toBe('postgres');

    const redis = new Redis('redis://127.0.0.1:1', { ...requestRedisOptions(2_000), lazyConnect: true });
    redis.on('error', () => {});
    const redisError = await redis.get('k').then(
      () => undefined,
      (error: unknown) => error,
    );
    redis.disconnect();
    expect(dependencyOutageOf(redisError)).toBe('redis');
    // No offline queue: refused at once by the client, which says so, not after the queue's twenty
    // reconnect attempts (a max-retries error) nor by the command timeout ("Command timed out").
    expect((redisError as Error).message).toMatch(/enableOfflineQueue/);
  });
});

describe('createOutageMonitor', () => {
  it('logs an outage once when it starts and once when it ends, whatever the number of failures', () => {
    const { logger, lines } = capturedLogger();
    const monitor = createOutageMonitor(logger, { settleMs: 0 });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (let i = 0; i < 50; i++) expect(monitor.failed(refused)).toBe('postgres');
    expect(monitor.isDown('postgres')).toBe(true);
    expect(monitor.failed(new Error('a bug'))).toBeUndefined();
    monitor.answered('postgres');
    monitor.answered('postgres');
    monitor.answered('redis'); // never down: says nothing
    expect(messages(lines)).toEqual(['postgres unavailable', 'postgres recovered']);
    expect(lines[0]).toMatchObject({ level: 40, dependency: 'postgres', reason: 'ECONNREFUSED' });
    expect(lines[0]).not.toHaveProperty('err');
    expect(lines[1]).toMatchObject({ level: 30, dependency: 'postgres' });
    expect(typeof lines[1]?.downMs).toBe('number');
    // A second outage is a second pair.
    monitor.failed(new Error('Connection is closed.'));
    monitor.answered('redis');
    expect(messages(lines).slice(2)).toEqual(['redis unavailable', 'redis recovered']);
  });

  it('a failure just after a recovery is an outage to the caller, not a new one in the log', () => {
    const { logger, lines } = capturedLogger();
    const monitor = createOutageMonitor(logger, { settleMs: 60_000 });
    monitor.failed(new Error('Connection is closed.'));
    monitor.answered('redis');
    // A connection that reconnects later than the first still fails for a moment.
    expect(monitor.failed(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe(
      'redis',
    );
    expect(messages(lines)).toEqual(['redis unavailable', 'redis recovered']);
  });

  it('sees PostgreSQL back by probing a watched pool while it is down', async () => {
    const { logger, lines } = capturedLogger();
    const monitor = createOutageMonitor(logger, { probeIntervalMs: 10 });
    let answers = false;
    const listeners: Array<() => void> = [];
    monitor.watchPostgres({
      on: (_event, listener) => listeners.push(listener),
      query: async () => {
        if (!answers) throw new Error('Connection terminated unexpectedly');
      },
    });
    monitor.failed(new Error('Connection terminated unexpectedly'));
    answers = true;
    await expect
      .poll(() => messages(lines), { timeout: 10_000 })
      .toEqual(['postgres unavailable', 'postgres recovered']);
  });

  it('quiets startPeriodic: a loop failing on every tick through an outage logs it once', async () => {
    const { logger, lines } = capturedLogger('warn');
    let ticks = 0;
    const task = startPeriodic(
      async () => {
        ticks += 1;
        throw Object.assign(new Error('terminating connection'), { code: '57P01' });
      },
      { intervalMs: 5, logger, failureMessage: 'fold failed' },
    );
    await expect.poll(() => ticks, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    await task.stop();
    expect(messages(lines)).toEqual(['postgres unavailable']);
    expect(outageMonitorOf(logger).isDown('postgres')).toBe(true);
  });
});
