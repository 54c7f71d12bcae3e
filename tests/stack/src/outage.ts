import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { ALL_SCOPES } from '@pkgreg/contracts';
import { createDb } from '@pkgreg/db';
import { until } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppProcess,
  assertLogsClean,
  edgeClient,
  errorLines,
  memoryNamespaceOf,
  parseLine,
  seedPackages,
} from './apps.js';
import { account, downloadsOf, type LoadKind, type LoadOutcome, type LoadTargets, sendOne } from './load.js';
import { type ModelServer, startModelServer } from './model.js';
import type { FaultService } from './services.js';
import { type FileStack, type StackOptions, useStack } from './vitest.js';

// A mixed load that runs through a dependency outage (issue 22, Trust it): every request's answer, how
// long it took and what a refusal looked like, so a test can check that nothing accepted was lost, that
// every refusal had the documented shape and that none hung, and record how soon each kind of request
// succeeded again once the service was back.

const FULL = process.env.PKGREG_FAULTS === 'full';

/** The bounded form (CI) and the full one (`pnpm test:faults`). */
export const OUTAGE_PLAN = FULL
  ? { outageMs: 10_000, rounds: 2, lanes: 12, beforeMs: 2_000, afterMs: 4_000, pauseMs: 5 }
  : { outageMs: 3_000, rounds: 1, lanes: 6, beforeMs: 1_000, afterMs: 2_000, pauseMs: 20 };

/**
 * The longest any request may take, outage or not: generous for a loaded 2-core machine, far below a
 * hang (the apps' own bounds are a few seconds: Redis command and connect timeouts, pg's connect wait).
 */
export const REQUEST_BOUND_MS = 20_000;

const KINDS: readonly LoadKind[] = ['track', 'memory.put', 'system.info', 'invoke'];

/** An answer during an outage run: how long it took is always known. */
export type OutageOutcome = LoadOutcome & { ms: number };

export interface OutageRun {
  outcomes: OutageOutcome[];
  /** When the service was stopped and when it answered again (ms since epoch). */
  stoppedAt: number;
  backAt: number;
}

/**
 * Runs `lanes` clients, each cycling through the four kinds, for `beforeMs`, then stops `service` for
 * `outageMs`, starts it again and keeps the load going for `afterMs` (at least until every kind has
 * succeeded again). Refusals and transport errors are recorded, never thrown.
 */
export async function loadThroughOutage(
  targets: LoadTargets,
  service: FaultService,
  plan: { outageMs: number; lanes: number; beforeMs: number; afterMs: number; pauseMs: number },
): Promise<OutageRun> {
  const outcomes: OutageOutcome[] = [];
  const run = randomBytes(6).toString('hex');
  let stop = false;
  let n = 0;
  const lane = async (index: number) => {
    for (let i = index; !stop; i += plan.lanes) {
      const kind = KINDS[i % KINDS.length] as LoadKind;
      outcomes.push((await sendOne(targets, kind, `${run}-${n++}`)) as OutageOutcome);
      await sleep(plan.pauseMs);
    }
  };
  const lanes = Promise.all(Array.from({ length: plan.lanes }, (_, i) => lane(i)));
  await sleep(plan.beforeMs);
  await service.stop();
  const stoppedAt = Date.now();
  await sleep(plan.outageMs);
  await service.start();
  const backAt = Date.now();
  const deadline = backAt + plan.afterMs + REQUEST_BOUND_MS;
  const recovered = () =>
    KINDS.every((kind) => outcomes.some((o) => o.kind === kind && o.ok && o.sentAt >= backAt));
  await sleep(plan.afterMs);
  while (!recovered() && Date.now() < deadline) await sleep(100);
  stop = true;
  await lanes;
  return { outcomes, stoppedAt, backAt };
}

export interface KindFigures {
  accepted: number;
  refused: number;
  /** No answer at all (a transport error): must stay 0, the apps never went away. */
  unanswered: number;
  /** Service back → the first success of a request sent after it, ms (null: none). */
  recoveryMs: number | null;
  maxMs: number;
}

/** Per kind: accepted, refused, unanswered, recovery time and the slowest answer. */
export function figures(run: OutageRun): Record<LoadKind, KindFigures> {
  const out = {} as Record<LoadKind, KindFigures>;
  for (const kind of KINDS) {
    const mine = run.outcomes.filter((o) => o.kind === kind);
    const firstBack = mine
      .filter((o) => o.ok && o.sentAt >= run.backAt)
      .map((o) => o.sentAt + o.ms - run.backAt)
      .sort((a, b) => a - b)[0];
    out[kind] = {
      accepted: mine.filter((o) => o.ok).length,
      refused: mine.filter((o) => !o.ok && o.status !== undefined).length,
      unanswered: mine.filter((o) => o.error !== undefined).length,
      recoveryMs: firstBack ?? null,
      maxMs: Math.max(0, ...mine.map((o) => o.ms)),
    };
  }
  return out;
}

/** Log lines of `lines` whose message is `msg` (pino JSON). */
export function countLog(lines: readonly string[], msg: string): number {
  return lines.filter((line) => parseLine(line)?.msg === msg).length;
}

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

/** Writes a run's figures to tests/stack/results/<name>.json (gitignored), read by scripts/faults-summary.mjs. */
export async function writeResult(name: string, result: Record<string, unknown>): Promise<void> {
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(
    `${RESULTS_DIR}${name}.json`,
    `${JSON.stringify({ at: new Date().toISOString(), form: FULL ? 'full' : 'bounded', ...result }, null, 2)}\n`,
  );
}

/**
 * What every outage run must show, whatever the service: each request answered (the apps never went
 * away), none slower than REQUEST_BOUND_MS, each refusal a 503 with Retry-After in the documented shape
 * (REST `{error}`, JSON-RPC `data.reason` service_unavailable), and every kind succeeding again once the
 * service is back.
 */
export function expectOutageHandled(run: OutageRun): void {
  const summary = JSON.stringify(figures(run));
  for (const o of run.outcomes) {
    const what = `${o.kind} sent ${o.sentAt - run.stoppedAt} ms after the stop: ${o.status ?? o.error} ${o.reason ?? ''} (${summary})`;
    expect(o.error, what).toBeUndefined();
    expect(o.ms, what).toBeLessThan(REQUEST_BOUND_MS);
    if (o.ok) continue;
    expect(o.status, what).toBe(503);
    expect(o.retryAfter, what).toMatch(/^[1-9][0-9]*$/);
    expect(o.shaped, what).toBe(true);
    if (o.kind !== 'track') expect(o.reason, what).toBe('service_unavailable');
  }
  for (const [kind, f] of Object.entries(figures(run))) {
    expect(f.recoveryMs, `${kind} never succeeded after the restart (${summary})`).not.toBeNull();
  }
}

export interface OutageStack {
  readonly stack: FileStack;
  readonly api: AppProcess;
  readonly edge: AppProcess;
  readonly worker: AppProcess;
  /** Tokens, client secrets and memory contents: none may reach a log line. */
  readonly secrets: string[];
  targets(): LoadTargets;
  /** The package's folded download count, once every delta is folded. */
  foldedDownloads(): Promise<number>;
}

/**
 * A registry API, an edge and a worker (with a model that answers after a short wait, so runs are in
 * flight when the service goes away) on `options`' services, and an OAuth client with every scope.
 */
export function useOutageStack(label: string, options: StackOptions): OutageStack {
  const stack = useStack(label, options);
  const pkg = { scope: 'outage', name: `${label}-tracked` };
  let model: ModelServer | undefined;
  let api: AppProcess | undefined;
  let edge: AppProcess | undefined;
  let worker: AppProcess | undefined;
  let token = '';
  let namespace = '';
  const secrets: string[] = [];
  beforeAll(async () => {
    model = await startModelServer(100);
    await seedPackages(stack.services.databaseUrl, [pkg]);
    api = await stack.spawn('registry-api');
    edge = await stack.spawn('mcp-edge', {
      REGISTRY_URL: api.url ?? '',
      EDGE_RATE_LIMIT_PER_MINUTE: '1000000',
      EDGE_INVOKE_PER_MINUTE: '1000000',
    });
    worker = await stack.spawn('runtime-worker', {
      REGISTRY_URL: api.url ?? '',
      MODEL_BASE_URL: model.url,
      WORKER_CONCURRENCY: '4',
    });
    const client = await edgeClient(stack.services, edge, ALL_SCOPES);
    secrets.push(client.clientSecret, client.accessToken);
    token = client.accessToken;
    namespace = memoryNamespaceOf(client);
  });
  afterAll(async () => {
    await model?.close();
    // Every process's lines beside the figures, for whoever reads a failure.
    await mkdir(RESULTS_DIR, { recursive: true });
    await writeFile(`${RESULTS_DIR}${label}.log`, `${stack.lines().join('\n')}\n`);
  });
  const started = (p: AppProcess | undefined): AppProcess => {
    if (!p) throw new Error('the outage stack starts in beforeAll');
    return p;
  };
  return {
    stack,
    get api() {
      return started(api);
    },
    get edge() {
      return started(edge);
    },
    get worker() {
      return started(worker);
    },
    secrets,
    targets: () => ({
      apiUrl: () => started(api).url ?? '',
      edgeUrl: () => started(edge).url ?? '',
      token,
      namespace,
      pkg,
    }),
    async foldedDownloads() {
      const db = createDb(stack.services.databaseUrl, { max: 1 });
      try {
        await until(async () => (await downloadsOf(db, pkg)).pending === 0, 'track deltas folded', 30_000);
        return (await downloadsOf(db, pkg)).folded;
      } finally {
        await db.destroy();
      }
    },
  };
}

export interface RoundRecord extends Record<string, unknown> {
  kinds: Record<LoadKind, KindFigures>;
}

/**
 * One round: the load through an outage of `service`, the checks every outage must pass
 * (expectOutageHandled), and every success accounted for: each track 200 counted exactly once, each
 * acknowledged memory write readable, each accepted task completed. Returns the round's figures.
 */
export async function outageRound(
  s: OutageStack,
  service: FaultService,
): Promise<{ run: OutageRun; record: RoundRecord; since: number[] }> {
  const since = [s.api, s.edge, s.worker].map((p) => p.lines.length);
  const countBefore = await s.foldedDownloads();
  const run = await loadThroughOutage(s.targets(), service, OUTAGE_PLAN);
  for (const o of run.outcomes) if (o.content) s.secrets.push(o.content);
  const kinds = figures(run);
  const summary = JSON.stringify(kinds);
  expectOutageHandled(run);
  const acc = await account(s.stack.services.databaseUrl, s.targets().pkg, run.outcomes, { countBefore });
  expect(acc.tracks.counted, summary).toBe(acc.tracks.ok);
  expect(acc.memory.readable, summary).toBe(acc.memory.ok);
  expect(acc.tasks, summary).toEqual({ ok: acc.tasks.ok, completed: acc.tasks.ok, failed: 0 });
  const record: RoundRecord = {
    outageMs: OUTAGE_PLAN.outageMs,
    stoppedToBackMs: run.backAt - run.stoppedAt,
    kinds,
    lost: {
      track: acc.tracks.ok - acc.tracks.counted,
      memory: acc.memory.ok - acc.memory.readable,
      tasks: acc.tasks.ok - acc.tasks.completed,
    },
  };
  return { run, record, since };
}

/** Each process logged `dependency`'s outage once and its recovery once, and nothing at error level. */
export async function expectLoggedOnce(
  s: OutageStack,
  dependency: 'postgres' | 'redis',
  since: number[],
): Promise<void> {
  const processes = [s.api, s.edge, s.worker];
  await until(
    async () => processes.every((p, i) => countLog(p.lines.slice(since[i]), `${dependency} recovered`) === 1),
    `every process to log that ${dependency} is back`,
    20_000,
  );
  for (const [i, p] of processes.entries()) {
    const lines = p.lines.slice(since[i]);
    expect(countLog(lines, `${dependency} unavailable`), `${p.label} logs the outage once`).toBe(1);
    expect(countLog(lines, `${dependency} recovered`), `${p.label} logs the recovery once`).toBe(1);
    expect(errorLines(lines), `${p.label} logged no error (no stack per request)`).toEqual([]);
  }
}

/**
 * A whole outage file: its own `start()`ed service (started before the stack, torn down after it), the
 * stack on it, then OUTAGE_PLAN.rounds rounds of outageRound with `expectRound`'s service-specific
 * checks and the once-per-process log check, the figures written to results/outage-<dependency>.json,
 * and the log check for secrets.
 */
export function describeOutage<S extends FaultService>(options: {
  dependency: 'postgres' | 'redis';
  start: () => Promise<S>;
  stackOn: (service: () => S) => StackOptions;
  expectRound: (kinds: Record<LoadKind, KindFigures>, summary: string) => void;
}): void {
  const { dependency } = options;
  let service: S | undefined;
  const current = (): S => {
    if (!service) throw new Error('the service starts in beforeAll');
    return service;
  };
  // Registered before the stack's hooks: the stack is created on this service, and removed before it.
  beforeAll(async () => {
    service = await options.start();
  });
  afterAll(async () => {
    await service?.teardown();
  });
  const s = useOutageStack(`outage-${dependency}`, options.stackOn(current));

  describe(`${dependency} stopped and started again during a mixed load`, () => {
    it('every accepted request is accounted for; refusals are 503 + Retry-After; logged once per process', async () => {
      const rounds: RoundRecord[] = [];
      for (let round = 0; round < OUTAGE_PLAN.rounds; round++) {
        const { record, since } = await outageRound(s, current());
        options.expectRound(record.kinds, JSON.stringify(record.kinds));
        await expectLoggedOnce(s, dependency, since);
        rounds.push(record);
      }
      await writeResult(`outage-${dependency}`, { service: dependency, rounds });
    });

    it('logged no token, client secret or memory content', () => {
      expect(s.secrets.length).toBeGreaterThan(2);
      assertLogsClean(s.stack.lines(), s.secrets);
    });
  });
}
