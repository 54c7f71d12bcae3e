import type { PublishProof, PublishResult } from '@pkgreg/contracts';
import type { Database } from '@pkgreg/db';
import { type Kysely, type Selectable, sql } from 'kysely';

// SQL of publish runs (docs/publishing.md): the record the API answers 202 with and the worker
// completes. Plain functions taking the database first.

type Conn = Kysely<Database>;
export type PublishRunRow = Selectable<Database['publish_runs']>;

export interface NewPublishRun {
  repository: string;
  locator: string;
  scope: string;
  ref: string | null;
  proof: PublishProof;
  /** The verified OIDC token's claims (an OIDC publish only): its version's attestation names the run. */
  oidc?: {
    workflowRef: string | null;
    ref: string | null;
    runId: string | null;
    runAttempt: string | null;
    sha: string | null;
    eventName: string | null;
  };
}

export async function createPublishRun(db: Conn, run: NewPublishRun): Promise<PublishRunRow> {
  return db
    .insertInto('publish_runs')
    .values({
      repository: run.repository,
      locator: run.locator,
      scope: run.scope,
      ref: run.ref,
      proof: run.proof,
      ...(run.oidc
        ? {
            oidc_workflow_ref: run.oidc.workflowRef,
            oidc_ref: run.oidc.ref,
            oidc_run_id: run.oidc.runId,
            oidc_run_attempt: run.oidc.runAttempt,
            oidc_sha: run.oidc.sha,
            oidc_event_name: run.oidc.eventName,
          }
        : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findPublishRun(db: Conn, id: string): Promise<PublishRunRow | undefined> {
  return db.selectFrom('publish_runs').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * queued (or running, on a redelivery) -> running. False when the run already ended: a late or
 * duplicate delivery then does nothing.
 */
export async function startPublishRun(db: Conn, id: string): Promise<boolean> {
  const row = await db
    .updateTable('publish_runs')
    .set({ status: 'running', started_at: sql<Date>`coalesce(started_at, clock_timestamp())` })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function finishPublishRun(
  db: Conn,
  id: string,
  outcome:
    | { status: 'succeeded'; result: PublishResult; indexingRunId: string | null }
    | { status: 'failed'; error: string; indexingRunId: string | null },
): Promise<void> {
  await db
    .updateTable('publish_runs')
    .set({
      status: outcome.status,
      result: outcome.status === 'succeeded' ? JSON.stringify(outcome.result) : null,
      error: outcome.status === 'failed' ? outcome.error : null,
      indexing_run_id: outcome.indexingRunId,
      started_at: sql<Date>`coalesce(started_at, clock_timestamp())`,
      finished_at: sql<Date>`clock_timestamp()`,
    })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .execute();
}
