import { realpathSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '@pkgreg/db';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import {
  collectUnreferencedBlobs,
  createPgContentStore,
  holdBlobWriters,
  releaseBlobWriters,
} from '@pkgreg/registry';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { indexSource } from '../src/index.js';
import { createRepo, removeDir, skillMd, tempDir, testKysely } from '../src/testing.js';

// docs/versions.md, Storage: blobs no version references are collected, never one a version being
// written at the same moment needs (content-store.ts says why).

let t: TestDatabase;
let db: Db;
let root: string;

beforeAll(async () => {
  t = await createTestDatabase();
  db = testKysely(t.url);
  root = realpathSync(tempDir('content-gc'));
  const repo = createRepo(root, 'gc', 'skills', {
    'kit/SKILL.md': skillMd(['name: kit', 'description: Collects.']),
    'kit/scripts/run.sh': { content: '#!/bin/sh\necho run\n', executable: true },
  });
  await indexSource({ db }, { kind: 'git', locator: repo, owner: 'gc' });
});
afterAll(async () => {
  await db?.destroy();
  await t?.destroy();
  if (root) removeDir(root);
});

const blobs = async () =>
  (await db.selectFrom('content_blobs').select('sha256').orderBy('sha256').execute()).map((r) => r.sha256);

/** Waits (no deadline of its own: the test's timeout is one) until a backend waits for an advisory lock. */
async function untilAdvisoryWaiter(mode: 'ExclusiveLock' | 'ShareLock'): Promise<void> {
  for (;;) {
    const rows = await sql<{ n: number }>`
      select count(*)::int as n from pg_locks
      where locktype = 'advisory' and not granted and mode = ${mode} and database = (
        select oid from pg_database where datname = current_database())`.execute(db);
    if ((rows.rows[0]?.n ?? 0) > 0) return;
    await sleep(20);
  }
}

it('collects a blob no version references and keeps every referenced one', async () => {
  const referenced = await blobs();
  // Every file and the archive of the version.
  expect(referenced).toHaveLength(3);
  const orphan = Buffer.from('stored by a run that failed before its versions');
  await createPgContentStore(db).put([orphan]);
  expect(await blobs()).toHaveLength(4);

  expect(await collectUnreferencedBlobs(db)).toEqual({ blobs: 1, bytes: orphan.length, busy: false });
  expect(await blobs()).toEqual(referenced);
  expect(await collectUnreferencedBlobs(db, { batchSize: 1 })).toEqual({ blobs: 0, bytes: 0, busy: false });
});

it('collects in batches until nothing unreferenced is left', async () => {
  const referenced = await blobs();
  await createPgContentStore(db).put(['one', 'two', 'three'].map((s) => Buffer.from(s)));
  expect(await collectUnreferencedBlobs(db, { batchSize: 2 })).toEqual({ blobs: 3, bytes: 11, busy: false });
  expect(await blobs()).toEqual(referenced);
});

it('keeps a blob a writer stores and references while the collector runs', async () => {
  const pkg = await db
    .selectFrom('packages')
    .select('id')
    .where('name', '=', 'kit')
    .executeTakeFirstOrThrow();
  const bytes = Buffer.from('a file of the version being written');
  await db.connection().execute(async (writer) => {
    // What an indexing run holds from its first lookup in the store until its versions commit.
    await holdBlobWriters(writer);
    const [blob] = await createPgContentStore(writer).put([bytes]);
    const sha256 = blob?.sha256 as string;

    // Stored, not referenced yet: a collector that does not wait leaves it alone.
    expect(await collectUnreferencedBlobs(db)).toEqual({ blobs: 0, bytes: 0, busy: true });
    // One that waits starts now and is blocked until the writer is done.
    const collecting = collectUnreferencedBlobs(db, { wait: true });
    await untilAdvisoryWaiter('ExclusiveLock');

    await writer.transaction().execute(async (trx) => {
      const version = await trx
        .insertInto('package_versions')
        .values({
          package_id: pkg.id,
          version: '9.9.9',
          digest: 'sha256:written-while-collecting',
          integrity: 'sha512-x',
          archive_sha256: sha256,
          file_count: 1,
          total_bytes: bytes.length,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('package_version_files')
        .values({
          version_id: version.id,
          path: 'x.md',
          size: bytes.length,
          sha256,
          git_sha1: blob?.gitSha1 as string,
        })
        .execute();
    });
    await releaseBlobWriters(writer);

    expect(await collecting).toEqual({ blobs: 0, bytes: 0, busy: false });
    expect(await blobs()).toContain(sha256);
  });
});

it('an indexing run waits while the collector holds the store, then stores and references its blobs', async () => {
  const repo = createRepo(root, 'late', 'skills', {
    'late/SKILL.md': skillMd(['name: late', 'description: Indexed while collecting.']),
  });
  const before = await blobs();
  let run: Promise<unknown> | undefined;
  await db.transaction().execute(async (collector) => {
    await sql`select pg_advisory_xact_lock(hashtextextended('pkgreg:content-blobs', 0))`.execute(collector);
    run = indexSource({ db }, { kind: 'git', locator: repo, owner: 'late' });
    await untilAdvisoryWaiter('ShareLock');
    // Nothing of the run is stored while the collector holds the store.
    expect(await blobs()).toEqual(before);
  });
  await expect(run).resolves.toMatchObject({ status: 'succeeded', indexed: 1 });
  const version = await db
    .selectFrom('package_versions as v')
    .innerJoin('packages as p', 'p.id', 'v.package_id')
    .select('v.archive_sha256')
    .where('p.name', '=', 'late')
    .executeTakeFirstOrThrow();
  expect(await blobs()).toContain(version.archive_sha256);
  expect(await collectUnreferencedBlobs(db)).toEqual({ blobs: 0, bytes: 0, busy: false });
});
