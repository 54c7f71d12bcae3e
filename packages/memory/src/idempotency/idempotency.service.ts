import { setTimeout as sleep } from 'node:timers/promises';
import { RejectError } from '@pkgreg/contracts';
import type { DbOrTx } from '../db.js';
import { requestHash } from './canonical-json.js';
import {
  claimKey,
  completeClaim,
  findRecord,
  type IdempotencyKeyRef,
  releaseClaim,
} from './idempotency.repository.js';

/** decisions.md, MCP edge / Idempotency: a key is remembered for 24 h. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

export interface IdempotencyRequest {
  /** The subject (its namespace): keys never collide across subjects. */
  namespace: string;
  toolName: string;
  /** No key: `run` simply runs. */
  key: string | undefined;
  /** The parsed tool arguments; compared by the sha256 of their canonical JSON. */
  args: unknown;
}

export interface IdempotencyOptions {
  /** How long a key is remembered; defaults to 24 h. */
  ttlSeconds?: number;
  /** How long a second caller waits for a first call with the same key still running; defaults to 10 s. */
  waitMs?: number;
  /** A placeholder older than this without a result was left by a crashed process and is taken over; defaults to 2 min. */
  staleAfterMs?: number;
}

export const IDEMPOTENCY_REUSED_MESSAGE = 'idempotencyKey reused with different arguments';
export const IDEMPOTENCY_IN_PROGRESS_MESSAGE =
  'A call with this idempotencyKey is still running; retry shortly';

function inProgress(): RejectError {
  return new RejectError('rate_limited', IDEMPOTENCY_IN_PROGRESS_MESSAGE, { retryAfterSeconds: 1 });
}

/**
 * Runs `run` once per (namespace, toolName, key) within the TTL and replays its stored result to every
 * later call with the same arguments (decisions.md: Idempotency). Concurrent first calls race on an
 * `insert … on conflict do nothing` placeholder: one runs, the others wait for its result and, past
 * `waitMs`, get a retryable `rate_limited` (the only documented reason that tells a client to retry).
 * A failing `run` releases the key so a retry runs again. Results must be JSON objects.
 *
 * Pass the pool-backed db, not a transaction: a placeholder inside an open transaction is invisible to
 * the other callers, which then block on its row instead of polling.
 */
export async function withIdempotency<R extends object>(
  db: DbOrTx,
  request: IdempotencyRequest,
  run: () => Promise<R>,
  options: IdempotencyOptions = {},
): Promise<R> {
  if (request.key === undefined) return run();
  const ref: IdempotencyKeyRef = {
    namespace: request.namespace,
    toolName: request.toolName,
    key: request.key,
  };
  const hash = requestHash(request.args);
  const ttlSeconds = options.ttlSeconds ?? IDEMPOTENCY_TTL_SECONDS;
  const deadline = Date.now() + (options.waitMs ?? 10_000);
  const staleAfterMs = options.staleAfterMs ?? 120_000;
  let delayMs = 20;

  for (;;) {
    const claim = await claimKey(db, ref, hash, ttlSeconds);
    if (claim !== undefined) {
      let result: R;
      try {
        result = await run();
      } catch (error) {
        // Best effort: in an aborted caller transaction this fails, and the rollback removes the claim anyway.
        await releaseClaim(db, ref, claim).catch(() => undefined);
        throw error;
      }
      await completeClaim(db, ref, claim, result);
      return result;
    }

    const record = await findRecord(db, ref);
    if (record === undefined) {
      // Released between our insert and this read: claim again (bounded, should it keep flapping).
      if (Date.now() >= deadline) throw inProgress();
      continue;
    }
    if (record.expired) {
      await releaseClaim(db, ref, record.claim);
      continue;
    }
    if (record.requestHash !== hash) {
      throw new RejectError('request_schema_invalid', IDEMPOTENCY_REUSED_MESSAGE);
    }
    if (record.result !== null) return record.result as R;
    if (record.ageMs > staleAfterMs) {
      await releaseClaim(db, ref, record.claim);
      continue;
    }
    if (Date.now() >= deadline) {
      throw inProgress();
    }
    await sleep(delayMs);
    delayMs = Math.min(delayMs * 2, 250);
  }
}
