import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

// docs/versions.md, what keeps a version immutable: the 2026-11-28T2200-immutable-versions triggers.

let t: TestDatabase;
let packageId: string;
let versionId: string;

async function seedVersion(name: string): Promise<{ packageId: string; versionId: string }> {
  const pkg = await t.db
    .insertInto('packages')
    .values({
      scope: 'acme',
      name,
      source_repo: 'acme/skills',
      repo_owner: 'acme',
      skill_md_raw: '---\nname: x\n---\n',
      frontmatter: '{}',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const sha = `${name}-sha256`;
  await t.db
    .insertInto('content_blobs')
    .values({ sha256: sha, git_sha1: `${name}-git`, size: 1, bytes: Buffer.from('x') })
    .execute();
  const version = await t.db
    .insertInto('package_versions')
    .values({
      package_id: pkg.id,
      version: '1.0.0',
      digest: `sha256:${name}`,
      integrity: 'sha512-x',
      archive_sha256: sha,
      file_count: 1,
      total_bytes: 1,
      risk: 'none',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await t.db
    .insertInto('package_version_files')
    .values({ version_id: version.id, path: 'SKILL.md', size: 1, sha256: sha, git_sha1: `${name}-git` })
    .execute();
  await t.db
    .insertInto('package_version_dependencies')
    .values({ version_id: version.id, position: 0, scope: 'acme', name: 'other', range: '^1' })
    .execute();
  return { packageId: pkg.id, versionId: version.id };
}

beforeAll(async () => {
  t = await createTestDatabase();
  ({ packageId, versionId } = await seedVersion('kept'));
});
afterAll(async () => {
  await t?.destroy();
});

const version = () =>
  t.db.selectFrom('package_versions').selectAll().where('id', '=', versionId).executeTakeFirstOrThrow();

describe('a version row', () => {
  it('refuses an UPDATE of what the version is (digest, version string, archive, creation time)', async () => {
    const before = await version();
    for (const set of [
      { digest: 'sha256:other' },
      { version: '1.0.1' },
      { archive_sha256: 'kept-sha256', integrity: 'sha512-y' },
      { created_at: sql<Date>`now() - interval '1 day'` },
      { warnings: JSON.stringify(['late']) },
    ]) {
      await expect(
        t.db.updateTable('package_versions').set(set).where('id', '=', versionId).execute(),
      ).rejects.toThrow(/package_versions are immutable: \w+.* of version/);
    }
    expect(await version()).toEqual(before);
  });

  it('names the columns that may not change, and refuses even when a scan column changes with them', async () => {
    await expect(
      t.db
        .updateTable('package_versions')
        .set({ risk: 'low', file_count: 2, total_bytes: 2 })
        .where('id', '=', versionId)
        .execute(),
    ).rejects.toThrow('package_versions are immutable: file_count, total_bytes of version');
    expect((await version()).risk).toBe('none');
  });

  it('lets the scan columns change (a rescan), and a no-op update pass', async () => {
    const finding = { rule: 'remote-code-execution', severity: 'high', file: 'SKILL.md', line: 1 };
    await t.db
      .updateTable('package_versions')
      .set({ risk: 'high', findings: JSON.stringify([finding]), scanned_at: sql<Date>`now()` })
      .where('id', '=', versionId)
      .execute();
    const after = await version();
    expect(after).toMatchObject({ risk: 'high', findings: [finding] });
    expect(after.scanned_at).toBeInstanceOf(Date);
    await t.db
      .updateTable('package_versions')
      .set({ version: '1.0.0' })
      .where('id', '=', versionId)
      .execute();
  });

  it('is yanked in its own table, never by an update of the row', async () => {
    await t.db
      .insertInto('package_version_yanks')
      .values({ version_id: versionId, reason: 'broken' })
      .execute();
    await t.db.deleteFrom('package_version_yanks').where('version_id', '=', versionId).execute();
  });

  it('refuses a DELETE while its package exists', async () => {
    await expect(t.db.deleteFrom('package_versions').where('id', '=', versionId).execute()).rejects.toThrow(
      /is deleted only with its package/,
    );
    expect((await version()).id).toBe(versionId);
  });
});

describe("a version's files and dependencies", () => {
  it('refuse every UPDATE', async () => {
    await expect(
      t.db
        .updateTable('package_version_files')
        .set({ sha256: 'kept-sha256', executable: true })
        .where('version_id', '=', versionId)
        .execute(),
    ).rejects.toThrow('package_version_files rows are immutable');
    await expect(
      t.db
        .updateTable('package_version_dependencies')
        .set({ range: '^2' })
        .where('version_id', '=', versionId)
        .execute(),
    ).rejects.toThrow('package_version_dependencies rows are immutable');
  });

  it('refuse a DELETE of a file while its version exists', async () => {
    await expect(
      t.db.deleteFrom('package_version_files').where('version_id', '=', versionId).execute(),
    ).rejects.toThrow(
      /package_version_files rows are immutable: SKILL.md of version .* is deleted only with/,
    );
    const files = await t.db
      .selectFrom('package_version_files')
      .select('path')
      .where('version_id', '=', versionId)
      .execute();
    expect(files).toEqual([{ path: 'SKILL.md' }]);
  });
});

describe('deleting the package', () => {
  it('takes its versions, files and dependencies with it', async () => {
    const gone = await seedVersion('gone');
    await t.db.deleteFrom('packages').where('id', '=', gone.packageId).execute();
    const count = async (
      table: 'package_versions' | 'package_version_files' | 'package_version_dependencies',
    ) =>
      Number(
        (
          await t.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await count('package_versions')).toBe(1);
    expect(await count('package_version_files')).toBe(1);
    expect(await count('package_version_dependencies')).toBe(1);
    const left = await t.db.selectFrom('package_versions').select(['id', 'package_id']).execute();
    expect(left).toEqual([{ id: versionId, package_id: packageId }]);
  });
});
