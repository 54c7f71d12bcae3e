import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDb, type Db } from '@pkgreg/db';
import { until } from '@pkgreg/testing';
import { sql } from 'kysely';
import { callTool, http } from './apps.js';

// A mixed load over a stack (track on the registry; memory put, system info and invoke on the edge),
// recording the answer of every request, and the checks that every success is accounted for afterwards:
// each track 200 counted, each accepted memory write readable, each accepted task finished.

export type LoadKind = 'track' | 'memory.put' | 'system.info' | 'invoke';
export const LOAD_KINDS: readonly LoadKind[] = ['track', 'memory.put', 'system.info', 'invoke'];

export interface LoadOutcome {
  kind: LoadKind;
  /** HTTP status, when an answer came. */
  status?: number;
  /** A success of the documented shape: track 200 `{ok: true}`, a tool result without error. */
  ok: boolean;
  /** The transport error's code when no answer came (ECONNREFUSED, UND_ERR_SOCKET, …). */
  error?: string;
  /** The JSON-RPC reject reason or the REST error, when refused. */
  reason?: string;
  entryId?: string;
  taskId?: string;
  /** What a memory put wrote (also a secret for the log check). */
  content?: string;
  /** When the request was sent (ms since epoch). */
  sentAt: number;
  /** How long the answer (or the transport error) took, ms. */
  ms?: number;
  /** A refusal's Retry-After header. */
  retryAfter?: string;
  /** A refusal of the documented shape: REST `{error: string}`, JSON-RPC `error.code` + `data.reason`. */
  shaped?: boolean;
}

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export interface LoadTargets {
  /** Read at each request, so a restarted or replaced process is picked up. */
  apiUrl: () => string;
  edgeUrl: () => string;
  token: string;
  namespace: string;
  /** The package tracks go to (`@scope/name`). */
  pkg: { scope: string; name: string };
}

export interface Load {
  /** Answers (or transport errors) so far. */
  readonly answered: number;
  readonly outcomes: readonly LoadOutcome[];
  /** Resolves once `n` requests have been answered (or failed). */
  whenAnswered(n: number): Promise<void>;
  done: Promise<LoadOutcome[]>;
}

function errorCode(error: unknown): string {
  const e = error as { code?: string; cause?: { code?: string }; name?: string };
  return e.code ?? e.cause?.code ?? e.name ?? 'error';
}

/** One request of `kind`; its answer (or transport error) as an outcome, never thrown. */
export async function sendOne(targets: LoadTargets, kind: LoadKind, marker: string): Promise<LoadOutcome> {
  const sentAt = Date.now();
  try {
    if (kind === 'track') {
      const res = await http(
        `${targets.apiUrl()}/api/packages/@${targets.pkg.scope}/${targets.pkg.name}/track`,
        {
          method: 'POST',
        },
      );
      const body = res.body as { ok?: boolean; error?: unknown };
      const ok = res.status === 200 && body.ok === true;
      const outcome: LoadOutcome = { kind, status: res.status, ok, sentAt, ms: Date.now() - sentAt };
      if (!ok) {
        outcome.reason = JSON.stringify(res.body);
        outcome.shaped = typeof body.error === 'string' && Object.keys(body).length === 1;
        const retryAfter = header(res.headers['retry-after']);
        if (retryAfter) outcome.retryAfter = retryAfter;
      }
      return outcome;
    }
    const edge = { url: targets.edgeUrl() };
    const content = kind === 'memory.put' ? `stack memory ${marker}` : undefined;
    const res =
      kind === 'memory.put'
        ? await callTool(edge, targets.token, 'pkgreg.memory.v1.put', {
            namespace: targets.namespace,
            tier: 'stm',
            content,
            tags: ['stack-load'],
          })
        : kind === 'system.info'
          ? await callTool(edge, targets.token, 'pkgreg.system.v1.info')
          : await callTool(edge, targets.token, 'pkgreg.agents.v1.invoke', {
              agentId: 'engineering.workflow',
              input: { type: 'text', text: `Design the schema, then write the tests (${marker}).` },
              memory: { namespace: targets.namespace, readTiers: [], writeTiers: ['stm'] },
              executionMode: 'async',
            });
    const result = res.body.result;
    const ok = res.status === 200 && result !== undefined && !res.body.error && result.isError !== true;
    const outcome: LoadOutcome = { kind, status: res.status, ok, sentAt, ms: Date.now() - sentAt };
    if (content) outcome.content = content;
    if (!ok) {
      const error = res.body.error;
      outcome.reason = error?.data?.reason ?? error?.message ?? 'tool error';
      outcome.shaped =
        res.body.jsonrpc === '2.0' &&
        typeof error?.code === 'number' &&
        typeof error.message === 'string' &&
        typeof error.data?.reason === 'string';
      const retryAfter = header(res.headers['retry-after']);
      if (retryAfter) outcome.retryAfter = retryAfter;
    }
    if (ok && kind === 'memory.put') outcome.entryId = (result?.entry as { entryId?: string })?.entryId;
    if (ok && kind === 'invoke') outcome.taskId = (result?.task as { taskId?: string })?.taskId;
    return outcome;
  } catch (error) {
    const outcome: LoadOutcome = {
      kind,
      ok: false,
      error: errorCode(error),
      sentAt,
      ms: Date.now() - sentAt,
    };
    if (kind === 'memory.put') outcome.content = `stack memory ${marker}`;
    return outcome;
  }
}

/**
 * Sends `total` requests, `concurrency` at a time, cycling through `kinds`. Refusals and transport errors
 * are recorded, never thrown: the test decides which are allowed.
 */
export function startLoad(
  targets: LoadTargets,
  options: {
    total: number;
    concurrency: number;
    kinds?: readonly LoadKind[];
    pauseMs?: number;
    /** A lane waits this long after a transport error, as a client backs off (default 100 ms). */
    errorPauseMs?: number;
  },
): Load {
  const kinds = options.kinds ?? LOAD_KINDS;
  const outcomes: LoadOutcome[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const run = randomBytes(6).toString('hex');
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < options.total; i = next++) {
      const outcome = await sendOne(targets, kinds[i % kinds.length] as LoadKind, `${run}-${i}`);
      outcomes.push(outcome);
      for (const w of waiters.filter((w) => outcomes.length >= w.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      if (outcome.error) await sleep(options.errorPauseMs ?? 100);
      else if (options.pauseMs) await sleep(options.pauseMs);
    }
  };
  const done = Promise.all(Array.from({ length: options.concurrency }, lane)).then(() => {
    for (const w of waiters.splice(0)) w.resolve();
    return outcomes;
  });
  return {
    get answered() {
      return outcomes.length;
    },
    outcomes,
    whenAnswered(n) {
      if (outcomes.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    done,
  };
}

/** Successes, refusals and transport errors per kind, for a test's message and the record. */
export function tally(outcomes: readonly LoadOutcome[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const o of outcomes) {
    const row = out[o.kind] ?? {};
    out[o.kind] = row;
    const key = o.ok ? 'ok' : o.error ? `error:${o.error}` : `${o.status}:${o.reason ?? ''}`;
    row[key] = (row[key] ?? 0) + 1;
  }
  return out;
}

/** The package's downloads: folded into download_count plus deltas still waiting for the fold. */
export async function downloadsOf(
  db: Db,
  pkg: { scope: string; name: string },
): Promise<{ folded: number; pending: number }> {
  const row = await db
    .selectFrom('packages')
    .select(['id', 'download_count'])
    .where('scope', '=', pkg.scope)
    .where('name', '=', pkg.name)
    .executeTakeFirstOrThrow();
  const pending = await sql<{ n: string | null }>`
    select sum(u.n) as n from package_download_batches b
    cross join lateral unnest(b.package_ids, b.counts) as u(package_id, n)
    where u.package_id = ${row.id}`.execute(db);
  return { folded: Number(row.download_count), pending: Number(pending.rows[0]?.n ?? 0) };
}

export interface Accounting {
  /** Track 200s, and what the package counts once every delta is folded. */
  tracks: { ok: number; unanswered: number; counted: number };
  memory: { ok: number; readable: number };
  tasks: { ok: number; completed: number; failed: number };
}

/**
 * Waits until every delta is folded and every accepted task has ended, then reads what the successes left:
 * the download count, the memory entries and the tasks' ends. `countBefore` is the package's count before
 * the load.
 */
export async function account(
  databaseUrl: string,
  pkg: { scope: string; name: string },
  outcomes: readonly LoadOutcome[],
  options: { countBefore?: number; taskTimeoutMs?: number } = {},
): Promise<Accounting> {
  const db = createDb(databaseUrl, { max: 2 });
  try {
    await until(async () => (await downloadsOf(db, pkg)).pending === 0, 'every track delta folded', 30_000);
    const counted = (await downloadsOf(db, pkg)).folded - (options.countBefore ?? 0);
    const tracks = outcomes.filter((o) => o.kind === 'track');
    const puts = outcomes.filter((o) => o.kind === 'memory.put' && o.ok);
    const entryIds = puts.map((o) => o.entryId ?? '');
    const readable = entryIds.length
      ? await db
          .selectFrom('memory_entries')
          .select(['entry_id', 'content'])
          .where('entry_id', 'in', entryIds)
          .where('status', '=', 'active')
          .execute()
      : [];
    const contentOf = new Map(readable.map((r) => [r.entry_id, r.content]));
    const taskIds = outcomes.filter((o) => o.kind === 'invoke' && o.ok).map((o) => o.taskId ?? '');
    const ended = async () =>
      taskIds.length
        ? await db
            .selectFrom('tasks')
            .select(['task_id', 'status'])
            .where('task_id', 'in', taskIds)
            .where('status', 'in', ['completed', 'failed'])
            .execute()
        : [];
    await until(
      async () => (await ended()).length === taskIds.length,
      'every accepted task ended',
      options.taskTimeoutMs ?? 60_000,
    );
    const ends = await ended();
    return {
      tracks: {
        ok: tracks.filter((o) => o.ok).length,
        unanswered: tracks.filter((o) => o.error).length,
        counted,
      },
      memory: {
        ok: puts.length,
        readable: puts.filter((o) => contentOf.get(o.entryId ?? '') === o.content).length,
      },
      tasks: {
        ok: taskIds.length,
        completed: ends.filter((t) => t.status === 'completed').length,
        failed: ends.filter((t) => t.status === 'failed').length,
      },
    };
  } finally {
    await db.destroy();
  }
}
