import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createDb, type Db } from '@pkgreg/db';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import {
  appendToLog,
  checkpoint,
  consistencyProof,
  inclusionProof,
  latestCheckpoint,
  leafHash,
  logEntries,
  logEntryText,
  logOrigin,
  logPendingVersions,
  logRoot,
  logSize,
  noteKeyHash,
  noteVerifierKey,
  openCheckpointNote,
  publicKeyFromVerifierKey,
  signerFromPem,
  subtreesOf,
  unloggedVersions,
  verifyConsistency,
  verifyInclusion,
} from '../src/index.js';

// The transparency log's storage (docs/provenance.md, "Transparency log"): appends in seq order under
// the log's lock, checkpoints as signed notes, proofs from the stored subtree hashes, and a history the
// database refuses to rewrite, across a restart and a crash.

const t = useTestDatabase();
const signer = signerFromPem(
  generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
);
const ORIGIN = logOrigin('https://registry.example');
const others: Db[] = [];
afterAll(async () => {
  for (const db of others) await db.destroy();
});

/** A package (public unless said) with `count` versions 1.0.0, 1.0.1, …, as the indexer stores them. */
async function addPackage(name: string, count: number, visibility: 'public' | 'private' = 'public') {
  const pkg = await t.db
    .insertInto('packages')
    .values({
      scope: 'acme',
      name,
      source_repo: 'acme/skills',
      repo_owner: 'acme',
      skill_md_raw: `---\nname: ${name}\n---\n`,
      frontmatter: '{}',
      visibility,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const sha = randomUUID();
    await t.db
      .insertInto('content_blobs')
      .values({ sha256: sha, git_sha1: sha, size: 1, bytes: Buffer.from('x') })
      .execute();
    const version = await t.db
      .insertInto('package_versions')
      .values({
        package_id: pkg.id,
        version: `1.0.${i}`,
        digest: `sha256:${sha}`,
        integrity: `sha512-${Buffer.from(sha).toString('base64')}`,
        archive_sha256: sha,
        file_count: 1,
        total_bytes: 1,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.push(version.id);
  }
  return { packageId: pkg.id, versionIds: ids };
}

const expectedEntries = async () =>
  (
    await t.db
      .selectFrom('package_versions as v')
      .innerJoin('packages as p', 'p.id', 'v.package_id')
      .select(['p.scope', 'p.name', 'v.version', 'v.integrity'])
      .where('p.private', '=', false)
      .orderBy('v.seq')
      .execute()
  ).map((v) => logEntryText(v.scope, v.name, v.version, v.integrity));

describe('an empty log', () => {
  it('has size 0, no checkpoint, and checkpoint() signs nothing', async () => {
    expect(await logSize(t.db)).toBe(0);
    expect(await checkpoint(t.db, signer, ORIGIN)).toBeUndefined();
    expect(await latestCheckpoint(t.db)).toBeUndefined();
    expect(await logPendingVersions(t.db)).toBe(0);
  });
});

describe('appending', () => {
  it('logs every public version once, in creation order; private packages stay out', async () => {
    await addPackage('pdf', 3);
    await addPackage('secret', 2, 'private');
    await addPackage('notes', 2);
    expect(logEntryText('acme', 'pdf', '1.0.0', 'sha512-AAAA')).toBe('@acme/pdf@1.0.0 sha512-AAAA');
    expect(await logPendingVersions(t.db, { limit: 4 })).toBe(4);
    expect(await logPendingVersions(t.db, { limit: 4 })).toBe(1);
    expect(await logPendingVersions(t.db)).toBe(0);
    const entries = await logEntries(t.db, 0, 100, await logSize(t.db));
    expect(entries.map((e) => e.entry)).toEqual(await expectedEntries());
    expect(entries.map((e) => e.index)).toEqual([0, 1, 2, 3, 4]);
    expect(entries.some((e) => e.entry.includes('secret'))).toBe(false);
    const leaves = await t.db.selectFrom('log_leaves').select(['entry', 'leaf_hash']).execute();
    for (const leaf of leaves) expect(leaf.leaf_hash.equals(leafHash(leaf.entry))).toBe(true);
  });

  it('a checkpoint is a signed note of origin, size and root that verifies with the key', async () => {
    const made = await checkpoint(t.db, signer, ORIGIN);
    expect(made).toMatchObject({ size: 5 });
    const root = await logRoot(t.db, 5);
    expect(made?.rootHash.equals(root)).toBe(true);
    const lines = made?.note.split('\n') ?? [];
    expect(lines.slice(0, 4)).toEqual(['registry.example/log', '5', root.toString('base64'), '']);
    expect(lines[4]).toMatch(/^\u2014 registry\.example\/log [A-Za-z0-9+/]+=*$/);
    expect(lines[5]).toBe('');
    const signature = Buffer.from(lines[4]?.split(' ')[2] ?? '', 'base64');
    expect(signature.subarray(0, 4)).toEqual(noteKeyHash(ORIGIN, signer.publicKey));
    expect(signature).toHaveLength(68);
    expect(openCheckpointNote(made?.note ?? '', ORIGIN, signer.publicKey)).toEqual({
      ok: true,
      checkpoint: { origin: ORIGIN, size: 5, rootHash: root },
    });
    // Not grown: the same checkpoint, nothing new signed.
    expect(await checkpoint(t.db, signer, ORIGIN)).toEqual(made);
    expect(await t.db.selectFrom('log_checkpoints').select('size').execute()).toEqual([{ size: 5 }]);
  });

  it('a note tampered with, of another log or by another key does not open', async () => {
    const { note } = (await latestCheckpoint(t.db)) ?? { note: '' };
    const other = signerFromPem(
      generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
    expect(openCheckpointNote(note.replace('\n5\n', '\n6\n'), ORIGIN, signer.publicKey)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('does not verify'),
    });
    expect(openCheckpointNote(note, 'elsewhere.example/log', signer.publicKey)).toMatchObject({ ok: false });
    expect(openCheckpointNote(note, ORIGIN, other.publicKey)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('not signed by the log key'),
    });
  });

  it("verifier keys (Go's note form) name the key and round-trip, whatever `+` their base64 holds", () => {
    for (let i = 0; i < 40; i++) {
      const { publicKey } = generateKeyPairSync('ed25519');
      const vkey = noteVerifierKey(ORIGIN, publicKey);
      expect(vkey).toMatch(/^registry\.example\/log\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
      const parsed = publicKeyFromVerifierKey(vkey);
      expect(parsed?.name).toBe(ORIGIN);
      expect(parsed?.publicKey.equals(publicKey)).toBe(true);
      expect(publicKeyFromVerifierKey(vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+'))).toBeUndefined();
    }
  });

  it('a transaction that fails after appending leaves nothing behind (a crash mid-append)', async () => {
    const { versionIds } = await addPackage('crashed', 2);
    await expect(
      t.db.transaction().execute(async (trx) => {
        const indexes = await appendToLog(
          trx,
          versionIds.map((id) => ({ versionId: id, entry: `entry ${id}` })),
        );
        expect(indexes).toEqual([5, 6]);
        throw new Error('the process died');
      }),
    ).rejects.toThrow('the process died');
    expect(await logSize(t.db)).toBe(5);
    expect(
      Number(
        (
          await t.db
            .selectFrom('log_nodes')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirst()
        )?.n,
      ),
    ).toBe(5 + 2 + 1);
    await expect(appendToLog(t.db, [{ versionId: versionIds[0] as string, entry: 'x' }])).rejects.toThrow(
      'inside a transaction',
    );
    expect(await logPendingVersions(t.db)).toBe(2);
  });

  it('two passes at once never take the same index nor log a version twice', async () => {
    await addPackage('busy', 40);
    const done = await Promise.all([
      logPendingVersions(t.db, { limit: 15 }),
      logPendingVersions(t.db, { limit: 15 }),
      logPendingVersions(t.db, { limit: 15 }),
    ]);
    expect(done.reduce((a, b) => a + b, 0)).toBe(40);
    const size = await logSize(t.db);
    expect(size).toBe(47);
    const entries = await logEntries(t.db, 0, 1000, size);
    expect(entries.map((e) => e.index)).toEqual([...Array(size).keys()]);
    expect(entries.map((e) => e.entry)).toEqual(await expectedEntries());
  });
});

describe('proofs after many appends, and after a restart', () => {
  it('every inclusion and consistency proof verifies against the stored roots', async () => {
    for (let i = 0; i < 5; i++) {
      await addPackage(`many-${i}`, 23);
      await logPendingVersions(t.db, { limit: 17 });
      await checkpoint(t.db, signer, ORIGIN);
    }
    await logPendingVersions(t.db);
    const size = await logSize(t.db);
    expect(size).toBe(47 + 5 * 23);
    const entries = await logEntries(t.db, 0, 1000, size);
    const roots = new Map<number, Buffer>();
    const rootOf = async (n: number) => {
      if (!roots.has(n)) roots.set(n, await logRoot(t.db, n));
      return roots.get(n) as Buffer;
    };
    for (const n of [1, 2, 3, 31, 32, 33, 64, 100, size])
      for (const index of [0, 1, n >> 1, n - 2, n - 1].filter((i) => i >= 0 && i < n)) {
        const proof = await inclusionProof(t.db, index, n);
        const leaf = leafHash(entries[index]?.entry ?? '');
        expect({ index, n, ok: verifyInclusion(index, n, leaf, proof, await rootOf(n)) }).toEqual({
          index,
          n,
          ok: true,
        });
      }
    const checkpoints = await t.db
      .selectFrom('log_checkpoints')
      .select(['size', 'root_hash'])
      .orderBy('size')
      .execute();
    expect(checkpoints.length).toBeGreaterThanOrEqual(5);
    for (const [a, b] of checkpoints.slice(1).map((c, i) => [checkpoints[i], c] as const)) {
      if (!a) continue;
      const proof = await consistencyProof(t.db, a.size, b.size);
      expect(verifyConsistency(a.size, b.size, proof, a.root_hash, b.root_hash)).toBe(true);
    }
    await expect(inclusionProof(t.db, 0, size + 1)).rejects.toThrow(RangeError);
    await expect(consistencyProof(t.db, 3, size + 1)).rejects.toThrow(RangeError);
  });

  it('a new connection (a restarted process) sees the same log and extends it consistently', async () => {
    const before = await latestCheckpoint(t.db);
    if (!before) throw new Error('no checkpoint');
    const restarted = createDb(t.url, { max: 2 });
    others.push(restarted);
    expect(await latestCheckpoint(restarted)).toEqual(before);
    expect((await logRoot(restarted, before.size)).equals(before.rootHash)).toBe(true);
    await addPackage('after-restart', 3);
    expect(await logPendingVersions(restarted)).toBe(3);
    const after = await checkpoint(restarted, signer, ORIGIN);
    if (!after) throw new Error('no checkpoint');
    expect(after.size).toBeGreaterThan(before.size);
    const proof = await consistencyProof(restarted, before.size, after.size);
    expect(verifyConsistency(before.size, after.size, proof, before.rootHash, after.rootHash)).toBe(true);
  });
});

describe('history is never rewritten', () => {
  it('UPDATE, DELETE and TRUNCATE of leaves, nodes and checkpoints are refused', async () => {
    const keys = { log_leaves: 'idx', log_nodes: 'idx', log_checkpoints: 'size' } as const;
    for (const [table, key] of Object.entries(keys)) {
      await expect(
        sql`update ${sql.table(table)} set ${sql.ref(key)} = ${sql.ref(key)}`.execute(t.db),
      ).rejects.toThrow(`${table} is append-only`);
      await expect(sql`delete from ${sql.table(table)}`.execute(t.db)).rejects.toThrow(
        `${table} is append-only`,
      );
      await expect(sql`truncate ${sql.table(table)}`.execute(t.db)).rejects.toThrow(
        `${table} is append-only`,
      );
    }
    await expect(
      t.db
        .updateTable('log_nodes')
        .set({ hash: Buffer.alloc(32) })
        .execute(),
    ).rejects.toThrow('log_nodes is append-only');
    await expect(t.db.updateTable('log_leaves').set({ entry: 'changed' }).execute()).rejects.toThrow(
      'log_leaves is append-only',
    );
  });

  it('a logged version can no longer be deleted with its package', async () => {
    const pdf = await t.db
      .selectFrom('packages')
      .select('id')
      .where('name', '=', 'pdf')
      .executeTakeFirstOrThrow();
    await expect(t.db.deleteFrom('packages').where('id', '=', pdf.id).execute()).rejects.toThrow(
      /log_leaves/,
    );
  });

  it('the --db check finds versions missing from the log, logged after the checkpoint, or altered', async () => {
    const size = (await latestCheckpoint(t.db))?.size ?? 0;
    const later = new Date(Date.now() + 60_000);
    expect(await unloggedVersions(t.db, { size, createdBefore: later })).toEqual({ count: 0, sample: [] });
    await addPackage('unlogged', 1);
    expect(await unloggedVersions(t.db, { size, createdBefore: later })).toMatchObject({
      count: 1,
      sample: [{ scope: 'acme', name: 'unlogged', version: '1.0.0', problem: 'missing' }],
    });
    // Within the grace (created after the cut-off): not reported yet.
    expect(await unloggedVersions(t.db, { size, createdBefore: new Date(Date.now() - 60_000) })).toEqual({
      count: 0,
      sample: [],
    });
    await logPendingVersions(t.db);
    expect(await unloggedVersions(t.db, { size, createdBefore: later })).toMatchObject({
      count: 1,
      sample: [{ name: 'unlogged', problem: 'after-checkpoint' }],
    });
  });

  it('checkpoint() refuses to sign when the stored tree no longer hashes to the last checkpoint', async () => {
    await checkpoint(t.db, signer, ORIGIN);
    await addPackage('one-more', 1);
    await logPendingVersions(t.db);
    const before = await latestCheckpoint(t.db);
    // The largest subtree of the last checkpoint's tree: rewritten, that tree would hash to another root.
    const [top] = subtreesOf(0, before?.size ?? 0);
    if (!top) throw new Error('no checkpoint');
    const at = () =>
      t.db.updateTable('log_nodes').where('level', '=', top.level).where('idx', '=', top.index);
    const node = await t.db
      .selectFrom('log_nodes')
      .select('hash')
      .where('level', '=', top.level)
      .where('idx', '=', top.index)
      .executeTakeFirstOrThrow();
    await sql`alter table log_nodes disable trigger log_nodes_append_only`.execute(t.db);
    try {
      await at()
        .set({ hash: Buffer.alloc(32, 7) })
        .execute();
      await expect(checkpoint(t.db, signer, ORIGIN)).rejects.toThrow('refusing to sign');
      expect(await latestCheckpoint(t.db)).toEqual(before);
      await at().set({ hash: node.hash }).execute();
    } finally {
      await sql`alter table log_nodes enable trigger log_nodes_append_only`.execute(t.db);
    }
    expect(await checkpoint(t.db, signer, ORIGIN)).toMatchObject({ size: await logSize(t.db) });
  });
});
