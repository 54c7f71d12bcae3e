import { realpathSync } from 'node:fs';
import type { Db } from '@pkgreg/db';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { refreshDependencyState } from '@pkgreg/registry';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexSource } from '../src/index.js';
import { commitFiles, createRepo, removeDir, skillMd, tempDir, testKysely } from '../src/testing.js';

// docs/versions.md, Dependencies: `metadata.dependencies` recorded per version, warnings for what cannot
// be read or is not in the registry, and dep_count / dependant_count kept true on both sides, from real
// git repositories on a real Postgres.

let t: TestDatabase;
let db: Db;
let root: string;

beforeAll(async () => {
  t = await createTestDatabase();
  db = testKysely(t.url);
  root = realpathSync(tempDir('dependencies'));
});
afterAll(async () => {
  await db?.destroy();
  await t?.destroy();
  if (root) removeDir(root);
});

function skill(name: string, dependencies?: string, extra: string[] = []): string {
  const meta = dependencies === undefined ? [] : ['metadata:', `  dependencies: "${dependencies}"`];
  return skillMd([`name: ${name}`, `description: The ${name} skill.`, ...extra, ...meta]);
}

async function row(scope: string, name: string) {
  return db
    .selectFrom('packages')
    .select(['id', 'version', 'status', 'dep_count', 'dependant_count', 'warnings', 'row_version'])
    .where('scope', '=', scope)
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
}

/** The recorded dependencies of a package's newest version (or of `version`), in declared order. */
async function recorded(scope: string, name: string, version?: string) {
  const v = await db
    .selectFrom('package_versions as v')
    .innerJoin('packages as p', 'p.id', 'v.package_id')
    .select(['v.id', 'v.warnings'])
    .where('p.scope', '=', scope)
    .where('p.name', '=', name)
    .$call((q) => (version ? q.where('v.version', '=', version) : q))
    .orderBy('v.seq', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  const rows = await db
    .selectFrom('package_version_dependencies')
    .select(['position', 'scope', 'name', 'range'])
    .where('version_id', '=', v.id)
    .orderBy('position')
    .execute();
  return { id: v.id, warnings: v.warnings, rows };
}

describe('indexing records dependencies and keeps the counts true on both sides', () => {
  let tools: string;
  let later: string;
  const indexTools = () => indexSource({ db }, { kind: 'git', locator: tools, owner: 'acme' });
  const indexLater = () => indexSource({ db }, { kind: 'git', locator: later, owner: 'late' });

  it('records each version’s dependencies, warns about unknown packages and invalid entries', async () => {
    tools = createRepo(root, 'acme', 'tools', {
      'pdf/SKILL.md': skill('pdf', undefined, ['version: 1.0.0']),
      'report/SKILL.md': skill('report', '@acme/pdf@^1, @late/csv@^2, Bad/Name'),
    });
    const summary = await indexTools();
    expect(summary.status).toBe('succeeded');
    expect(summary.rejections).toEqual([]);

    const report = await recorded('acme', 'report');
    expect(report.rows).toEqual([
      { position: 0, scope: 'acme', name: 'pdf', range: '^1' },
      { position: 1, scope: 'late', name: 'csv', range: '^2' },
    ]);
    const unknown = 'dependency @late/csv is not in the registry; it resolves once that package is indexed';
    const invalid = 'dependency "Bad/Name" is not @scope/name[@range] (lowercase a-z 0-9 -); it was ignored';
    // The sibling in the same run is known; the other repository's package is not (yet).
    expect(report.warnings).toEqual([invalid, unknown]);
    expect((await row('acme', 'report')).warnings).toEqual([invalid, unknown]);
    expect(summary.skills.find((s) => s.name === '@acme/report')?.warnings).toEqual([invalid, unknown]);

    expect(await row('acme', 'report')).toMatchObject({ dep_count: 2, dependant_count: 0 });
    expect(await row('acme', 'pdf')).toMatchObject({ dep_count: 0, dependant_count: 1 });
  });

  it('a package indexed after its dependants is counted then, and their detail rows move', async () => {
    const before = await row('acme', 'report');
    later = createRepo(root, 'late', 'data', {
      'csv/SKILL.md': skill('csv', undefined, ['version: 2.1.0']),
    });
    await indexLater();
    expect(await row('late', 'csv')).toMatchObject({ dep_count: 0, dependant_count: 1 });
    // report's `resolves` reads csv: its row version (the detail ETag) moved though report did not change.
    const after = await row('acme', 'report');
    expect(after.row_version).toBeGreaterThan(before.row_version);
    expect(after).toMatchObject({ dep_count: 2, dependant_count: 0, version: before.version });

    // The next run of report's repository drops the warning from the package (the version keeps it).
    const again = await indexTools();
    expect(again.skills.find((s) => s.name === '@acme/report')?.outcome).toBe('unchanged');
    expect((await row('acme', 'report')).warnings).toEqual([
      'dependency "Bad/Name" is not @scope/name[@range] (lowercase a-z 0-9 -); it was ignored',
    ]);
    expect((await recorded('acme', 'report')).warnings).toHaveLength(2);
  });

  it('only the latest version counts: a new version that drops a dependency uncounts it', async () => {
    const oldVersion = (await row('acme', 'report')).version as string;
    commitFiles(tools, { 'report/SKILL.md': skill('report', '@late/csv@^2') });
    await indexTools();
    expect(await row('acme', 'report')).toMatchObject({ dep_count: 1 });
    expect(await row('acme', 'pdf')).toMatchObject({ dependant_count: 0 });
    expect(await row('late', 'csv')).toMatchObject({ dependant_count: 1 });
    // The old version keeps what it declared.
    expect((await recorded('acme', 'report', oldVersion)).rows.map((r) => r.name)).toEqual(['pdf', 'csv']);
    expect((await recorded('acme', 'report')).rows).toEqual([
      { position: 0, scope: 'late', name: 'csv', range: '^2' },
    ]);
  });

  it('a second dependant from another repository counts too; a delisted one does not', async () => {
    commitFiles(later, { 'viewer/SKILL.md': skill('viewer', '@late/csv, @acme/pdf@>=1') });
    await indexLater();
    expect(await row('late', 'csv')).toMatchObject({ dependant_count: 2 });
    expect(await row('acme', 'pdf')).toMatchObject({ dependant_count: 1 });
    expect(await row('late', 'viewer')).toMatchObject({ dep_count: 2 });

    commitFiles(tools, { 'report/SKILL.md': null });
    await indexTools();
    expect(await row('acme', 'report')).toMatchObject({ status: 'delisted' });
    expect(await row('late', 'csv')).toMatchObject({ dependant_count: 1 });

    // Relisted: counted again.
    commitFiles(tools, { 'report/SKILL.md': skill('report', '@late/csv@^2') });
    await indexTools();
    expect(await row('late', 'csv')).toMatchObject({ dependant_count: 2 });
  });

  it('a delisted dependency uncounts nothing but its dependants’ detail rows move', async () => {
    const viewer = await row('late', 'viewer');
    commitFiles(tools, { 'pdf/SKILL.md': null });
    await indexTools();
    expect(await row('acme', 'pdf')).toMatchObject({ status: 'delisted', dependant_count: 1 });
    expect((await row('late', 'viewer')).row_version).toBeGreaterThan(viewer.row_version);
    commitFiles(tools, { 'pdf/SKILL.md': skill('pdf', undefined, ['version: 1.0.0']) });
    await indexTools();
  });

  it('a version created before dependencies were recorded gets them when its SKILL.md is read again', async () => {
    const viewer = await recorded('late', 'viewer');
    await db.deleteFrom('package_version_dependencies').where('version_id', '=', viewer.id).execute();
    // As a registry from before dependencies were recorded would have it: no rows, no counts.
    await refreshDependencyState(db, {
      packageIds: [(await row('late', 'viewer')).id, (await row('late', 'csv')).id],
    });
    expect(await row('late', 'viewer')).toMatchObject({ dep_count: 0 });
    expect(await row('late', 'csv')).toMatchObject({ dependant_count: 1 });

    const summary = await indexLater();
    expect(summary.skills.find((s) => s.name === '@late/viewer')?.outcome).toBe('unchanged');
    expect((await recorded('late', 'viewer')).rows.map((r) => `${r.scope}/${r.name}`)).toEqual([
      'late/csv',
      'acme/pdf',
    ]);
    expect(await row('late', 'viewer')).toMatchObject({ dep_count: 2 });
    expect(await row('late', 'csv')).toMatchObject({ dependant_count: 2 });
  });

  it('a yank that moves the latest version back moves the counts with it (refreshDependencyState)', async () => {
    // report's versions: [pdf, csv] (first), [csv] (second, latest). Yank the latest, as the API does.
    const pkg = await row('acme', 'report');
    const versions = await db
      .selectFrom('package_versions')
      .select(['id', 'version'])
      .where('package_id', '=', pkg.id)
      .orderBy('seq', 'asc')
      .execute();
    const [first, second] = versions;
    await db.transaction().execute(async (trx) => {
      await sql`insert into package_version_yanks (version_id, reason) values (${second?.id}, 'test')`.execute(
        trx,
      );
      await trx.updateTable('packages').set({ version: first?.version }).where('id', '=', pkg.id).execute();
      await refreshDependencyState(trx, { packageIds: [pkg.id], changedIds: [pkg.id] });
    });
    expect(await row('acme', 'report')).toMatchObject({ dep_count: 2 });
    expect(await row('acme', 'pdf')).toMatchObject({ dependant_count: 2 });
  });

  it('concurrent runs of two repositories never lose a dependant', async () => {
    const a = createRepo(root, 'race', 'a', { 'one/SKILL.md': skill('one', '@race/two') });
    const b = createRepo(root, 'race', 'b', { 'two/SKILL.md': skill('two', '@race/one') });
    const [x, y] = await Promise.all([
      indexSource({ db }, { kind: 'git', locator: a, owner: 'race' }),
      indexSource({ db }, { kind: 'git', locator: b, owner: 'race' }),
    ]);
    expect([x.status, y.status]).toEqual(['succeeded', 'succeeded']);
    expect(await row('race', 'one')).toMatchObject({ dep_count: 1, dependant_count: 1 });
    expect(await row('race', 'two')).toMatchObject({ dep_count: 1, dependant_count: 1 });
  });
});
