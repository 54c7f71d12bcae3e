import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '@pkgreg/db';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  demoRepositories,
  GitSource,
  type IndexFailure,
  IndexingError,
  indexSource,
  listKnownSources,
  reindexAll,
  seedDemo,
} from '../src/index.js';
import {
  blobShaOf,
  commitFiles,
  createRepo,
  removeDir,
  skillMd,
  tempDir,
  testKysely,
} from '../src/testing.js';

// decisions.md: Registry / Indexing, with a local git repository as the source.

let t: TestDatabase;
let db: Db;
let root: string;

beforeAll(async () => {
  t = await createTestDatabase();
  db = testKysely(t.url);
  root = realpathSync(tempDir('git'));
});
afterAll(async () => {
  await db?.destroy();
  await t?.destroy();
  if (root) removeDir(root);
});

function pkg(scope: string, name: string) {
  return db
    .selectFrom('packages')
    .selectAll()
    .where('scope', '=', scope)
    .where('name', '=', name)
    .executeTakeFirst();
}

const codeReview = skillMd(
  [
    'name: code-review',
    'description: Reviews pull requests.',
    'allowed-tools: Read Grep',
    'compatibility: claude-code, codex',
    'metadata:',
    '  kind: composite',
    '  category: quality',
    '  tags: review, pr',
    '  version: 1.2.0',
    '  author: Jane',
    '  language: en',
  ],
  '# Code review\n\nFollow the [checklist](checklist.md).\n',
);

describe('indexing a local git repository', () => {
  let repo: string;

  beforeAll(() => {
    repo = createRepo(
      root,
      'Zeta_Labs',
      'skills',
      {
        'README.md': '# skills\n',
        'SKILL.md': skillMd(['name: root-skill', 'description: The root skill.']),
        'skills/code-review/SKILL.md': codeReview,
        'skills/code-review/checklist.md': '- correctness\n',
        'skills/code-review/deep/notes.md': 'notes\n',
        'skills/code-review/nested/SKILL.md': skillMd(['name: nested', 'description: A nested skill.']),
        'skills/code-review/nested/scripts/run.sh': 'echo hi\n',
        'skills/Bad_Dir/SKILL.md': skillMd(['description: no name and an invalid directory']),
        'skills/no-desc/SKILL.md': skillMd(['name: no-desc']),
      },
      'trunk',
    );
  });

  it('indexes every valid SKILL.md with the decisions.md field rules', async () => {
    const summary = await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(summary).toMatchObject({
      status: 'succeeded',
      kind: 'git',
      locator: repo,
      sourceRepo: 'zeta-labs/skills',
      indexed: 3,
      updated: 0,
      unchanged: 0,
      delisted: 0,
      rejected: 2,
    });
    const row = await pkg('zeta-labs', 'code-review');
    expect(row).toMatchObject({
      description: 'Reviews pull requests.',
      kind: 'composite',
      category: 'quality',
      tags: ['review', 'pr'],
      compatibility: ['claude-code', 'codex'],
      allowed_tools: ['Read', 'Grep'],
      version: '1.2.0',
      author: 'Jane',
      language: 'en',
      source_repo: 'zeta-labs/skills',
      source_path: 'skills/code-review',
      source_ref: 'trunk',
      repo_owner: 'zeta-labs',
      repo_stars: 0,
      repo_url: null,
      license: null,
      skill_md_raw: codeReview,
      status: 'active',
      hosted: false,
      download_count: 0,
      // SKILL.md, checklist.md, deep/notes.md; the nested skill's files are its own.
      file_count: 3,
      progressive_disclosure: true,
      last_commit_sha: blobShaOf(repo, 'skills/code-review/SKILL.md'),
    });
    expect(row?.frontmatter).toMatchObject({ name: 'code-review', metadata: { kind: 'composite' } });
    expect(row?.token_count).toBeGreaterThan(30);

    const nested = await pkg('zeta-labs', 'nested');
    expect(nested).toMatchObject({ file_count: 2, progressive_disclosure: true, kind: 'skill' });
    const rootSkill = await pkg('zeta-labs', 'root-skill');
    expect(rootSkill).toMatchObject({ source_path: '', progressive_disclosure: false });
  });

  it('records each rejected SKILL.md with its reason, in the summary and in indexing_rejections', async () => {
    const summary = await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(summary.rejections).toEqual([
      {
        path: 'skills/Bad_Dir/SKILL.md',
        reason: expect.stringMatching(/name is missing and the directory name/),
      },
      { path: 'skills/no-desc/SKILL.md', reason: 'description is missing' },
    ]);
    const stored = await db
      .selectFrom('indexing_rejections')
      .select(['path', 'reason'])
      .where('run_id', '=', summary.runId as string)
      .orderBy('path')
      .execute();
    expect(stored).toEqual(summary.rejections);
    const run = await db
      .selectFrom('indexing_runs')
      .selectAll()
      .where('id', '=', summary.runId as string)
      .executeTakeFirstOrThrow();
    expect(run).toMatchObject({ status: 'succeeded', rejected: 2, unchanged: 3, locator: repo });
    expect(run.finished_at).not.toBeNull();
    expect(await pkg('zeta-labs', 'no-desc')).toBeUndefined();
  });

  it('a SKILL.md whose YAML escapes make what Postgres cannot store is rejected; the rest of the repository is indexed', async () => {
    // Before: the lone surrogate reached the jsonb insert and failed the whole repository's run.
    const odd = createRepo(root, 'odd-labs', 'mixed', {
      'fine/SKILL.md': skillMd(['name: fine', 'description: Works.']),
      'half/SKILL.md': skillMd(['name: half', 'description: "a lone \\uD800 surrogate"']),
      'nul/SKILL.md': skillMd(['name: nul', 'description: Meta.', 'metadata:', '  k: "a\\0b"']),
    });
    const summary = await indexSource({ db }, { kind: 'git', locator: odd });
    expect(summary).toMatchObject({ status: 'succeeded', indexed: 1, rejected: 2 });
    expect(summary.rejections).toEqual([
      {
        path: 'half/SKILL.md',
        reason: 'frontmatter contains a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape)',
      },
      { path: 'nul/SKILL.md', reason: 'frontmatter contains a NUL character' },
    ]);
    expect(await pkg('odd-labs', 'fine')).toBeDefined();
  });

  it('remembers the source for scheduled re-indexing', async () => {
    const sources = await listKnownSources(db);
    const mine = sources.find((s) => s.locator === repo);
    expect(mine).toMatchObject({
      kind: 'git',
      sourceRepo: 'zeta-labs/skills',
      defaultBranch: 'trunk',
      listedPackages: 3,
      lastRun: { status: 'succeeded', counts: { unchanged: 3, rejected: 2 } },
    });
  });
});

describe('incremental re-index', () => {
  let repo: string;
  const a = skillMd(['name: alpha', 'description: Alpha skill.']);
  const b = skillMd(['name: beta', 'description: Beta skill.']);

  beforeAll(() => {
    repo = createRepo(root, 'inc-owner', 'repo', { 'alpha/SKILL.md': a, 'beta/SKILL.md': b });
  });

  it('unchanged blobs are not rewritten; changed ones are updated; downloadCount and firstIndexedAt survive', async () => {
    const first = await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(first).toMatchObject({ indexed: 2, updated: 0, unchanged: 0 });
    await db.updateTable('packages').set({ download_count: 7 }).where('name', '=', 'alpha').execute();
    const before = await pkg('inc-owner', 'alpha');

    const second = await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(second).toMatchObject({ indexed: 0, updated: 0, unchanged: 2, delisted: 0 });
    const same = await pkg('inc-owner', 'alpha');
    // row_version is bumped by trigger on any UPDATE: equal means no write happened.
    expect(same?.row_version).toBe(before?.row_version);

    const a2 = skillMd(['name: alpha', 'description: Alpha skill, second edition.']);
    commitFiles(repo, { 'alpha/SKILL.md': a2 });
    const third = await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(third).toMatchObject({ indexed: 0, updated: 1, unchanged: 1 });
    const after = await pkg('inc-owner', 'alpha');
    expect(after).toMatchObject({
      description: 'Alpha skill, second edition.',
      skill_md_raw: a2,
      last_commit_sha: blobShaOf(repo, 'alpha/SKILL.md'),
      download_count: 7,
    });
    expect(after?.last_commit_sha).not.toBe(before?.last_commit_sha);
    expect(after?.first_indexed_at.getTime()).toBe(before?.first_indexed_at.getTime());
  });

  it('a change in the skill directory (new references/) updates the package though SKILL.md is the same', async () => {
    commitFiles(repo, { 'beta/references/guide.md': '# guide\n' });
    const summary = await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(summary).toMatchObject({ updated: 1, unchanged: 1 });
    expect(await pkg('inc-owner', 'beta')).toMatchObject({ file_count: 2, progressive_disclosure: true });
  });

  it('a vanished SKILL.md is delisted; when it reappears it is active again with its counters', async () => {
    const before = await pkg('inc-owner', 'alpha');
    commitFiles(repo, { 'alpha/SKILL.md': null });
    const gone = await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(gone).toMatchObject({ delisted: 1, unchanged: 1, indexed: 0 });
    expect(await pkg('inc-owner', 'alpha')).toMatchObject({ status: 'delisted', download_count: 7 });

    const again = await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(again).toMatchObject({ delisted: 0, unchanged: 1 });

    commitFiles(repo, { 'alpha/SKILL.md': skillMd(['name: alpha', 'description: Back again.']) });
    const back = await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(back).toMatchObject({ indexed: 1, delisted: 0, unchanged: 1 });
    const row = await pkg('inc-owner', 'alpha');
    expect(row).toMatchObject({ status: 'active', description: 'Back again.', download_count: 7 });
    expect(row?.id).toBe(before?.id);
    expect(row?.first_indexed_at.getTime()).toBe(before?.first_indexed_at.getTime());
  });

  it('a SKILL.md that stops passing the rules is rejected and its package delisted', async () => {
    commitFiles(repo, { 'beta/SKILL.md': skillMd(['name: beta', 'description: ""']) });
    const summary = await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(summary).toMatchObject({ rejected: 1, delisted: 1 });
    expect(summary.rejections).toEqual([{ path: 'beta/SKILL.md', reason: 'description is empty' }]);
    expect(await pkg('inc-owner', 'beta')).toMatchObject({ status: 'delisted' });
  });

  it('deprecation in frontmatter (metadata.status) is applied and lifted', async () => {
    commitFiles(repo, {
      'beta/SKILL.md': skillMd(['name: beta', 'description: Old.', 'metadata:', '  status: deprecated']),
    });
    const summary = await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(summary).toMatchObject({ indexed: 1 });
    expect(await pkg('inc-owner', 'beta')).toMatchObject({ status: 'deprecated' });
    commitFiles(repo, { 'beta/SKILL.md': skillMd(['name: beta', 'description: Fresh.']) });
    await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(await pkg('inc-owner', 'beta')).toMatchObject({ status: 'active' });
  });
});

describe('concurrency and collisions', () => {
  it('two concurrent runs of one repository index each package exactly once', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 8; i += 1)
      files[`s${i}/SKILL.md`] = skillMd([`name: s${i}`, `description: Skill ${i}.`]);
    const repo = createRepo(root, 'conc-owner', 'repo', files);
    const [x, y] = await Promise.all([
      indexSource({ db: db }, { kind: 'git', locator: repo }),
      indexSource({ db: db }, { kind: 'git', locator: repo }),
    ]);
    expect([x.indexed, y.indexed].sort()).toEqual([0, 8]);
    expect([x.unchanged, y.unchanged].sort()).toEqual([0, 8]);
    expect(x.rejected + y.rejected).toBe(0);
    const count = await db
      .selectFrom('packages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('scope', '=', 'conc-owner')
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(8);
    const sources = await db.selectFrom('indexed_sources').selectAll().where('locator', '=', repo).execute();
    expect(sources).toHaveLength(1);
  });

  it('the same scope/name from a second repository is rejected with a reason; duplicates within one too', async () => {
    const first = createRepo(root, 'coll-owner', 'first', {
      'tool/SKILL.md': skillMd(['name: tool', 'description: First.']),
    });
    const second = createRepo(root, 'coll-owner', 'second', {
      'tool/SKILL.md': skillMd(['name: tool', 'description: Second.']),
      'a/dup/SKILL.md': skillMd(['name: dup', 'description: One.']),
      'b/dup/SKILL.md': skillMd(['name: dup', 'description: Two.']),
    });
    await indexSource({ db: db }, { kind: 'git', locator: first });
    const summary = await indexSource({ db: db }, { kind: 'git', locator: second });
    expect(summary).toMatchObject({ indexed: 1, rejected: 2 });
    expect(summary.rejections).toEqual(
      expect.arrayContaining([
        {
          path: 'tool/SKILL.md',
          reason: 'name collision: @coll-owner/tool is already provided by coll-owner/first',
        },
        { path: 'b/dup/SKILL.md', reason: 'duplicate name "dup": also defined by a/dup/SKILL.md' },
      ]),
    );
    expect(await pkg('coll-owner', 'tool')).toMatchObject({
      description: 'First.',
      source_repo: 'coll-owner/first',
    });
  });
});

describe('sources', () => {
  it('a configured owner becomes the scope (sanitized) and sticks on re-index', async () => {
    const repo = createRepo(root, 'whatever', 'owned', {
      'x/SKILL.md': skillMd(['name: x', 'description: X.']),
    });
    const summary = await indexSource({ db: db }, { kind: 'git', locator: repo, owner: 'Team_Blue' });
    expect(summary.sourceRepo).toBe('team-blue/owned');
    expect(await pkg('team-blue', 'x')).toBeDefined();
    const again = await indexSource({ db: db }, { kind: 'git', locator: repo });
    expect(again).toMatchObject({ sourceRepo: 'team-blue/owned', unchanged: 1, delisted: 0 });
  });

  it('a path that is not a git repository fails permanently and the failed run is recorded', async () => {
    const plain = join(root, 'not-a-repo');
    mkdirSync(plain, { recursive: true });
    const error = (await indexSource({ db: db }, { kind: 'git', locator: plain }).catch(
      (e) => e,
    )) as IndexFailure;
    expect(error).toBeInstanceOf(IndexingError);
    expect(error.code).toBe('invalid_locator');
    expect(error.permanent).toBe(true);
    expect(error.summary).toMatchObject({ status: 'failed', error: { code: 'invalid_locator' } });
    const run = await db
      .selectFrom('indexing_runs')
      .selectAll()
      .where('id', '=', error.summary.runId as string)
      .executeTakeFirstOrThrow();
    expect(run).toMatchObject({ status: 'failed', locator: plain });
    expect(run.error).toMatch(/git rev-parse failed/);
  });

  it('bulk blob reads (git cat-file --batch) return each blob byte for byte', async () => {
    const files = {
      'a.md': 'ünïcödé ✓ — no trailing newline',
      'b.md': '',
      'c.md': 'line\n\n\nwith blank lines\n',
    };
    const repo = createRepo(root, 'blob-owner', 'blobs', files);
    const source = await GitSource.open(repo);
    const shas = Object.keys(files).map((path) => blobShaOf(repo, path));
    const bulk = await source.readBlobs(shas);
    for (const [i, content] of Object.values(files).entries()) {
      expect(bulk.get(shas[i] as string)?.toString('utf8')).toBe(content);
    }
    await expect(source.readBlobs(['0'.repeat(40)])).rejects.toMatchObject({ code: 'source_error' });
  });

  it('a relative path is refused', async () => {
    await expect(indexSource({ db: db }, { kind: 'git', locator: 'some/dir' })).rejects.toMatchObject({
      code: 'invalid_locator',
    });
  });

  it('reindexAll re-runs every known source and reports failures as summaries', async () => {
    const summaries = await reindexAll({ db: db });
    const known = await listKnownSources(db);
    expect(summaries.map((s) => s.locator).sort()).toEqual(known.map((s) => s.locator).sort());
    expect(summaries.every((s) => s.status === 'succeeded')).toBe(true);
    expect(summaries.reduce((n, s) => n + s.indexed + s.updated, 0)).toBe(0);
  });
});

describe('demo seed', () => {
  it('creates the demo repositories and indexes them; a second run changes nothing', async () => {
    const dir = join(root, 'demo');
    const first = await seedDemo({ db: db }, dir);
    expect(first.repositories).toHaveLength((await demoRepositories()).length);
    // Four owners: three public, one the demo organisation's private scope (docs/accounts.md).
    expect(first.repositories).toHaveLength(4);
    expect(first.summaries.flatMap((s) => s.rejections)).toEqual([]);
    expect(first.summaries.every((s) => s.status === 'succeeded')).toBe(true);
    const indexed = first.summaries.reduce((n, s) => n + s.indexed, 0);
    expect(indexed).toBeGreaterThanOrEqual(12);

    const rows = await db
      .selectFrom('packages')
      .select(['kind', 'status', 'progressive_disclosure'])
      .where(
        'source_repo',
        'in',
        first.summaries.map((s) => s.sourceRepo as string),
      )
      .execute();
    expect(new Set(rows.map((r) => r.kind))).toEqual(new Set(['skill', 'composite', 'workflow', 'app']));
    expect(rows.some((r) => r.status === 'deprecated')).toBe(true);
    expect(rows.some((r) => r.progressive_disclosure)).toBe(true);

    const before = await sql<{ v: string }>`select sum(row_version)::text as v from packages`.execute(db);
    const second = await seedDemo({ db: db }, dir);
    expect(second.summaries.reduce((n, s) => n + s.unchanged, 0)).toBe(indexed);
    expect(second.summaries.reduce((n, s) => n + s.indexed + s.updated + s.delisted, 0)).toBe(0);
    const after = await sql<{ v: string }>`select sum(row_version)::text as v from packages`.execute(db);
    expect(after.rows[0]?.v).toBe(before.rows[0]?.v);
  });
});
