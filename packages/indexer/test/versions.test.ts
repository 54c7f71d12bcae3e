import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import type { Db } from '@pkgreg/db';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgContentStore, GitHubClient, indexSource } from '../src/index.js';
import { commitFiles, createRepo, git, removeDir, skillMd, tempDir, testKysely } from '../src/testing.js';
import { FakeGitHub } from '@pkgreg/testing';

// docs/versions.md: whole skill folders as immutable versions, indexed from real git repositories and
// from the local server that speaks GitHub's REST API.

let t: TestDatabase;
let db: Db;
let root: string;

beforeAll(async () => {
  t = await createTestDatabase();
  db = testKysely(t.url);
  root = realpathSync(tempDir('versions'));
});
afterAll(async () => {
  await db?.destroy();
  await t?.destroy();
  if (root) removeDir(root);
});

async function versionsOf(scope: string, name: string) {
  return db
    .selectFrom('package_versions as v')
    .innerJoin('packages as p', 'p.id', 'v.package_id')
    .select([
      'v.id',
      'v.version',
      'v.declared_version',
      'v.digest',
      'v.integrity',
      'v.archive_sha256',
      'v.file_count',
    ])
    .where('p.scope', '=', scope)
    .where('p.name', '=', name)
    .orderBy('v.seq', 'desc')
    .execute();
}

async function filesOf(versionId: string) {
  return db
    .selectFrom('package_version_files')
    .select(['path', 'executable', 'link_target', 'git_sha1', 'sha256'])
    .where('version_id', '=', versionId)
    .orderBy(sql`path collate "C"`)
    .execute();
}

async function pkg(scope: string, name: string) {
  return db
    .selectFrom('packages')
    .selectAll()
    .where('scope', '=', scope)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** Entry names and modes of a stored archive, read by the system's tar. */
async function archiveListing(sha256: string): Promise<string[]> {
  const bytes = (await createPgContentStore(db).get([sha256])).get(sha256) as Buffer;
  return execFileSync('tar', ['-tvzf', '-'], { input: bytes, encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => {
      // "<mode> <owner> <size> <date> <time> <name>[ -> <target>]"
      const [mode, owner, , date, time, ...rest] = line.split(/\s+/);
      return `${mode} ${owner} ${date} ${time} ${rest.join(' ')}`;
    });
}

describe('a version is the whole folder', () => {
  let repo: string;
  const index = () => indexSource({ db }, { kind: 'git', locator: repo, owner: 'acme' });

  beforeAll(async () => {
    repo = createRepo(root, 'acme', 'kit', {
      'tool/SKILL.md': skillMd(['name: tool', 'description: A tool.']),
      'tool/scripts/run.sh': { content: '#!/bin/sh\necho run\n', executable: true },
      'tool/references/guide.md': '# Guide\n',
      'tool/assets/blob.bin': Buffer.from([0, 1, 2, 255]),
      'tool/nested/SKILL.md': skillMd(['name: nested', 'description: Nested skill.']),
      'tool/nested/notes.md': 'nested notes\n',
      'tool/.claude/skills/copy/SKILL.md': skillMd(['name: copy', 'description: Installed copy.']),
      'tool/link.md': { symlink: 'references/guide.md' },
    });
    expect(await index()).toMatchObject({ status: 'succeeded', indexed: 2, rejected: 0 });
  });

  it('records every file with its mode and hashes; nested skills and installed copies are cut out', async () => {
    const [version] = await versionsOf('acme', 'tool');
    expect(version).toMatchObject({ file_count: 5 });
    const files = await filesOf(version?.id as string);
    expect(files.map((f) => [f.path, f.executable, f.link_target])).toEqual([
      ['SKILL.md', false, null],
      ['assets/blob.bin', false, null],
      ['link.md', false, 'references/guide.md'],
      ['references/guide.md', false, null],
      ['scripts/run.sh', true, null],
    ]);
    for (const file of files)
      expect(file.git_sha1).toBe(git(repo, 'rev-parse', `HEAD:tool/${file.path}`).trim());
    const bin = files.find((f) => f.path === 'assets/blob.bin');
    expect(bin?.sha256).toBe(
      createHash('sha256')
        .update(Buffer.from([0, 1, 2, 255]))
        .digest('hex'),
    );
    expect(await pkg('acme', 'tool')).toMatchObject({ file_count: 5, version: version?.version });
    // The installed copy under .claude/ is no package; the nested skill is its own.
    expect(await pkg('acme', 'copy')).toBeUndefined();
    expect(await versionsOf('acme', 'nested')).toHaveLength(1);
  });

  it('stores a reproducible archive: sorted, under <name>/, owner 0, fixed time, modes kept', async () => {
    const [version] = await versionsOf('acme', 'tool');
    const listing = await archiveListing(version?.archive_sha256 as string);
    expect(listing).toEqual([
      '-rw-r--r-- 0/0 1985-10-26 08:15 tool/SKILL.md',
      '-rw-r--r-- 0/0 1985-10-26 08:15 tool/assets/blob.bin',
      'lrwxrwxrwx 0/0 1985-10-26 08:15 tool/link.md -> references/guide.md',
      '-rw-r--r-- 0/0 1985-10-26 08:15 tool/references/guide.md',
      '-rwxr-xr-x 0/0 1985-10-26 08:15 tool/scripts/run.sh',
    ]);
    const bytes = (await createPgContentStore(db).get([version?.archive_sha256 as string])).get(
      version?.archive_sha256 as string,
    ) as Buffer;
    expect(version?.integrity).toBe(`sha512-${createHash('sha512').update(bytes).digest('base64')}`);
    expect(gunzipSync(bytes).length % 512).toBe(0);
  });

  it('an unchanged folder creates no version, even after an unrelated commit', async () => {
    commitFiles(repo, { 'README.md': 'unrelated\n' });
    const summary = await index();
    expect(summary).toMatchObject({ unchanged: 2, versions: [] });
    expect(await versionsOf('acme', 'tool')).toHaveLength(1);
  });

  it('a changed executable bit alone is a new version', async () => {
    const before = await versionsOf('acme', 'tool');
    git(repo, 'update-index', '--chmod=-x', 'tool/scripts/run.sh');
    git(repo, 'commit', '--quiet', '-m', 'not executable');
    const summary = await index();
    expect(summary.versions.map((v) => v.name)).toEqual(['@acme/tool']);
    const after = await versionsOf('acme', 'tool');
    expect(after).toHaveLength(2);
    expect(after[0]?.digest).not.toBe(before[0]?.digest);
    const files = await filesOf(after[0]?.id as string);
    expect(files.find((f) => f.path === 'scripts/run.sh')?.executable).toBe(false);
  });

  it('a file shared by versions and skills is stored once', async () => {
    commitFiles(repo, { 'tool/nested/copy-of-guide.md': '# Guide\n' });
    await index();
    const rows = await db
      .selectFrom('content_blobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('git_sha1', '=', git(repo, 'rev-parse', 'HEAD:tool/references/guide.md').trim())
      .executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(1);
  });
});

describe('version strings', () => {
  let repo: string;
  const index = () => indexSource({ db }, { kind: 'git', locator: repo, owner: 'semver' });
  const skill = (version: string | null, body: string) =>
    skillMd(['name: dated', 'description: Versions.', ...(version ? [`version: "${version}"`] : [])], body);

  beforeAll(() => {
    repo = createRepo(root, 'semver', 'kit', { 'dated/SKILL.md': skill(null, 'one') });
  });

  it('follow the declared semver when it is new, else pseudo-versions after the last declared one', async () => {
    await index();
    commitFiles(repo, { 'dated/SKILL.md': skill('1.2', 'two') });
    await index();
    commitFiles(repo, { 'dated/SKILL.md': skill('1.2', 'three') });
    await index();
    commitFiles(repo, { 'dated/SKILL.md': skill(null, 'four') });
    await index();
    commitFiles(repo, { 'dated/SKILL.md': skill('2.0.0-beta.1', 'five') });
    await index();
    commitFiles(repo, { 'dated/SKILL.md': skill('2.0.0-beta.1', 'six') });
    await index();
    const versions = (await versionsOf('semver', 'dated')).map((v) => v.version).reverse();
    const hash = '-[0-9a-f]{12}$';
    expect(versions[0]).toMatch(new RegExp(`^0\\.0\\.0-\\d{14}${hash}`));
    expect(versions[1]).toBe('1.2.0');
    expect(versions[2]).toMatch(new RegExp(`^1\\.2\\.1-0\\.\\d{14}${hash}`));
    expect(versions[3]).toMatch(new RegExp(`^1\\.2\\.1-0\\.\\d{14}${hash}`));
    expect(versions[4]).toBe('2.0.0-beta.1');
    expect(versions[5]).toMatch(new RegExp(`^2\\.0\\.0-beta\\.1\\.0\\.\\d{14}${hash}`));
    expect(new Set(versions).size).toBe(6);
    expect((await pkg('semver', 'dated'))?.version).toBe(versions[5]);
  });
});

describe('what is indexed', () => {
  it('hidden folders and node_modules hold installed copies, indexed only when asked (and remembered)', async () => {
    const repo = createRepo(root, 'hidden', 'kit', {
      'real/SKILL.md': skillMd(['name: real', 'description: Authored.']),
      '.agents/skills/agent-copy/SKILL.md': skillMd(['name: agent-copy', 'description: Copy.']),
      'node_modules/dep/skills/dep-skill/SKILL.md': skillMd(['name: dep-skill', 'description: Dep.']),
    });
    expect(await indexSource({ db }, { kind: 'git', locator: repo, owner: 'hidden' })).toMatchObject({
      indexed: 1,
    });
    expect(await pkg('hidden', 'agent-copy')).toBeUndefined();
    const asked = await indexSource(
      { db },
      { kind: 'git', locator: repo, owner: 'hidden', includeHidden: true },
    );
    expect(asked).toMatchObject({ indexed: 2 });
    // A later run without the flag (the scheduled re-index) keeps them.
    expect(await indexSource({ db }, { kind: 'git', locator: repo })).toMatchObject({
      unchanged: 3,
      delisted: 0,
    });
  });

  it('a link is followed through other links: one that leaves the folder that way is left out', async () => {
    const repo = createRepo(root, 'links', 'kit', {
      'linky/SKILL.md': skillMd(['name: linky', 'description: Links.']),
      'linky/d/file.md': 'inside\n',
      'linky/d/up': { symlink: '..' },
      'linky/ok': { symlink: 'd/up/d/file.md' },
      'linky/escape': { symlink: 'd/up/../SECRET' },
    });
    const summary = await indexSource({ db }, { kind: 'git', locator: repo, owner: 'links' });
    expect(summary).toMatchObject({ indexed: 1 });
    const [version] = await versionsOf('links', 'linky');
    expect((await filesOf(version?.id as string)).map((f) => f.path)).toEqual([
      'SKILL.md',
      'd/file.md',
      'd/up',
      'ok',
    ]);
    expect((await pkg('links', 'linky'))?.warnings).toEqual([
      'symlink escape points outside the skill folder; left out',
    ]);
  });

  it('a skill past a limit is rejected with a reason that names the limit', async () => {
    const repo = createRepo(root, 'limits', 'kit', {
      'many/SKILL.md': skillMd(['name: many', 'description: Many files.']),
      'many/a.md': 'a',
      'many/b.md': 'b',
      'many/c.md': 'c',
      'big/SKILL.md': skillMd(['name: big', 'description: A big file.']),
      'big/data.bin': Buffer.alloc(2000, 7),
      'total/SKILL.md': skillMd(['name: total', 'description: Big in total.']),
      'total/a.bin': Buffer.alloc(900, 1),
      'total/b.bin': Buffer.alloc(900, 2),
      'fine/SKILL.md': skillMd(['name: fine', 'description: Fine.']),
    });
    const summary = await indexSource(
      { db, limits: { maxSkillFiles: 3, maxFileBytes: 1000, maxSkillBytes: 1500 } },
      { kind: 'git', locator: repo, owner: 'limits' },
    );
    expect(summary).toMatchObject({ indexed: 1, rejected: 3 });
    expect(summary.rejections).toEqual([
      { path: 'big/SKILL.md', reason: 'data.bin is 0 MiB; the limit is 0 MiB a file' },
      { path: 'many/SKILL.md', reason: 'the skill has 4 files; the limit is 3 files a skill' },
      {
        path: 'total/SKILL.md',
        reason: expect.stringMatching(/^the skill's files add up to .*; the limit is .* a skill$/),
      },
    ]);
    expect(await pkg('limits', 'big')).toBeUndefined();
  });

  it('license: declared, else the folder LICENSE, else the root LICENSE; an unknown own text is null', async () => {
    const mit =
      'MIT License\n\nCopyright (c) 2026 Acme\n\nPermission is hereby granted, free of charge, to any person obtaining a copy of this software and associated documentation files (the "Software"), to deal in the Software without restriction, including without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is furnished to do so, subject to the following conditions:\n\nThe above copyright notice and this permission notice shall be included in all copies or substantial portions of the Software.\n\nTHE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.\n';
    const repo = createRepo(root, 'lic', 'kit', {
      LICENSE: mit,
      'declared/SKILL.md': skillMd(['name: declared', 'description: d', 'license: Apache 2']),
      'inherits/SKILL.md': skillMd(['name: inherits', 'description: d', 'license: See LICENSE']),
      'own/SKILL.md': skillMd(['name: own', 'description: d']),
      'own/LICENSE.txt': 'All rights reserved. Ask us before you use this.\n',
    });
    await indexSource({ db }, { kind: 'git', locator: repo, owner: 'lic' });
    expect((await pkg('lic', 'declared'))?.license).toBe('Apache-2.0');
    expect(await pkg('lic', 'inherits')).toMatchObject({
      license: 'MIT',
      frontmatter: expect.objectContaining({ license: 'See LICENSE' }),
    });
    expect((await pkg('lic', 'own'))?.license).toBeNull();
  });

  it('a clone of a hosted repository is named after it (origin), whatever its folder', async () => {
    const repo = createRepo(root, 'some-folder', 'my-checkout', {
      'skills/brainstorm/SKILL.md': skillMd(['name: brainstorm', 'description: Ideas.']),
    });
    git(repo, 'remote', 'add', 'origin', 'git@github.example:Obra/SuperPowers.git');
    const summary = await indexSource(
      { db, github: { webUrl: 'https://github.example' } },
      { kind: 'git', locator: repo },
    );
    expect(summary).toMatchObject({ sourceRepo: 'Obra/SuperPowers', indexed: 1 });
    expect(await pkg('obra', 'brainstorm')).toMatchObject({
      repo_owner: 'Obra',
      repo_url: 'https://github.example/Obra/SuperPowers',
    });
    // --owner still decides the scope.
    const other = createRepo(root, 'x', 'y', { 'SKILL.md': skillMd(['name: y', 'description: d']) });
    git(other, 'remote', 'add', 'origin', 'https://github.example/acme/tools.git');
    const owned = await indexSource(
      { db, github: { webUrl: 'https://github.example' } },
      { kind: 'git', locator: other, owner: 'mine' },
    );
    expect(owned).toMatchObject({ sourceRepo: 'mine/tools' });
  });
});

describe('from GitHub', () => {
  const gh = new FakeGitHub('/api/v3', 'https://ghe.example');
  beforeAll(() => gh.start());
  afterAll(() => gh.stop());

  it('many new blobs come in one tarball; the download host never sees the token; re-runs cost two requests', async () => {
    const files: Record<string, string | { content: string; mode: '100755' }> = {};
    for (let i = 0; i < 12; i += 1)
      files[`skills/s${i}/SKILL.md`] = skillMd([`name: s${i}`, `description: Skill ${i}.`]);
    files['skills/s0/run.sh'] = { content: '#!/bin/sh\n', mode: '100755' };
    gh.addRepo({
      owner: 'tar',
      name: 'ball',
      defaultBranch: 'main',
      stars: 1,
      license: null,
      homepage: null,
      files,
    });
    const options = { apiUrl: gh.apiUrl, token: 'ghs_secret', webUrl: 'https://ghe.example' };
    const before = gh.requests.length;
    const summary = await indexSource(
      { db, githubClient: new GitHubClient(options) },
      { kind: 'github', locator: 'tar/ball' },
    );
    expect(summary).toMatchObject({ status: 'succeeded', indexed: 12 });
    const mine = gh.requests.slice(before);
    expect(mine.filter((r) => r.path.includes('/git/blobs/'))).toHaveLength(0);
    const downloads = mine.filter((r) => r.path.startsWith('/_codeload/'));
    expect(downloads).toHaveLength(1);
    expect(downloads[0]?.headers.authorization).toBeUndefined();
    expect(mine.filter((r) => r.path.includes('/tarball/'))[0]?.headers.authorization).toBe(
      'Bearer ghs_secret',
    );
    const [version] = await versionsOf('tar', 's0');
    expect((await filesOf(version?.id as string)).find((f) => f.path === 'run.sh')?.executable).toBe(true);

    const again = gh.requests.length;
    expect(
      await indexSource(
        { db, githubClient: new GitHubClient(options) },
        { kind: 'github', locator: 'tar/ball' },
      ),
    ).toMatchObject({ notModified: true, unchanged: 12 });
    expect(gh.requests.length - again).toBe(2);
  });
});
