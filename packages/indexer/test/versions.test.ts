import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import type { Db } from '@pkgreg/db';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { createPgContentStore, writePreparedVersions } from '@pkgreg/registry';
import { FakeGitHub } from '@pkgreg/testing';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubClient, hostedSourceRepo, indexSource, prepareUploadedSkill } from '../src/index.js';
import { commitFiles, createRepo, git, removeDir, skillMd, tempDir, testKysely } from '../src/testing.js';

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
  /** Commits `body` at 12:00:0`second` in UTC+02:00 on 2026-07-01, authored a day earlier. */
  const commitAt = (version: string | null, body: string, second: number) => {
    commitFiles(repo, { 'dated/SKILL.md': skill(version, body) }, body, {
      committer: `2026-07-01T12:00:0${second}+02:00`,
      author: `2026-06-30T09:00:0${second}Z`,
    });
    return `2026070110000${second}-${git(repo, 'rev-parse', 'HEAD').slice(0, 12)}`;
  };

  beforeAll(() => {
    repo = createRepo(root, 'semver', 'kit', {});
  });

  it('follow the declared semver when it is new, else pseudo-versions of the commit after the last declared one', async () => {
    const names: string[] = [];
    for (const [second, version, body] of [
      [1, null, 'one'],
      [2, '1.2', 'two'],
      [3, '1.2', 'three'],
      [4, null, 'four'],
      [5, '2.0.0-beta.1', 'five'],
      [6, '2.0.0-beta.1', 'six'],
    ] as const) {
      names.push(commitAt(version, body, second));
      await index();
    }
    const versions = (await versionsOf('semver', 'dated')).map((v) => v.version).reverse();
    // The committer's time in UTC and the commit's hash: not the author's time, not the run's.
    expect(versions).toEqual([
      `0.0.0-${names[0]}`,
      '1.2.0',
      `1.2.1-0.${names[2]}`,
      `1.2.1-0.${names[3]}`,
      '2.0.0-beta.1',
      `2.0.0-beta.1.0.${names[5]}`,
    ]);
    expect((await pkg('semver', 'dated'))?.version).toBe(versions[5]);
  });
});

describe('versions named from their commit', () => {
  const gh = new FakeGitHub();
  const registries: TestDatabase[] = [];
  const dbs: Db[] = [];
  let root2: string;

  beforeAll(async () => {
    await gh.start();
    root2 = realpathSync(tempDir('commit-named'));
    for (let i = 0; i < 2; i += 1) {
      const database = await createTestDatabase();
      registries.push(database);
      dbs.push(testKysely(database.url));
    }
  });
  afterAll(async () => {
    await gh.stop();
    for (const each of dbs) await each.destroy();
    for (const database of registries) await database.destroy();
    if (root2) removeDir(root2);
  });

  async function versionStrings(on: Db, scope: string, name: string): Promise<string[]> {
    const rows = await on
      .selectFrom('package_versions as v')
      .innerJoin('packages as p', 'p.id', 'v.package_id')
      .select('v.version')
      .where('p.scope', '=', scope)
      .where('p.name', '=', name)
      .orderBy('v.seq', 'asc')
      .execute();
    return rows.map((r) => r.version);
  }

  const report = (version: string | null) =>
    skillMd(['name: report', 'description: Reports.', ...(version ? [`version: "${version}"`] : [])]);

  it('a local repository: the commit time in UTC and 12 hex of the commit, the same in two registries', async () => {
    const repo = createRepo(root2, 'dated', 'kit', {});
    const names: string[] = [];
    for (const [committer, version, body] of [
      ['2026-03-02T23:59:58-05:00', null, 'one'],
      ['2026-03-10T08:00:00Z', '1.2.3', 'two'],
      ['2026-03-11T08:00:00Z', null, 'three'],
    ] as const) {
      commitFiles(repo, { 'report/SKILL.md': report(version), 'report/notes.md': `${body}\n` }, body, {
        committer,
      });
      const head = git(repo, 'rev-parse', 'HEAD').trim();
      names.push(head);
      for (const each of dbs) {
        const summary = await indexSource({ db: each }, { kind: 'git', locator: repo, owner: 'dated' });
        expect(summary).toMatchObject({ status: 'succeeded', commit: head });
      }
    }
    const expected = [
      `0.0.0-20260303045958-${names[0]?.slice(0, 12)}`,
      '1.2.3',
      // The next commit without a declared version comes after the release it follows.
      `1.2.4-0.20260311080000-${names[2]?.slice(0, 12)}`,
    ];
    for (const each of dbs) expect(await versionStrings(each, 'dated', 'report')).toEqual(expected);
  });

  it("GitHub: the branch's committer date and commit, also when the branch answers 304", async () => {
    gh.addRepo({
      owner: 'hosted',
      name: 'kit',
      defaultBranch: 'main',
      stars: 1,
      license: null,
      homepage: null,
      files: {
        'report/SKILL.md': report(null),
        '.agents/skills/copy/SKILL.md': skillMd(['name: copy', 'description: An installed copy.']),
      },
      committedAt: '2026-07-14T12:21:07Z',
    });
    const run = (on: Db, includeHidden = false) =>
      indexSource(
        { db: on, githubClient: new GitHubClient({ apiUrl: gh.apiUrl }) },
        { kind: 'github', locator: 'hosted/kit', includeHidden },
      );
    const first = await run(dbs[0] as Db);
    const commit = first.commit as string;
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    const named = `0.0.0-20260714122107-${commit.slice(0, 12)}`;
    expect(first.versions).toEqual([{ name: '@hosted/report', version: named }]);
    expect(await run(dbs[1] as Db)).toMatchObject({ versions: [{ name: '@hosted/report', version: named }] });

    // Same commit, answered 304 from the kept ETag; a new star makes the run read the tree again, and
    // the installed copy, now asked for, is named from the commit time the source kept.
    const repo = gh.repos.get('hosted/kit');
    if (repo) repo.stars = 2;
    const before = gh.requests.length;
    const again = await run(dbs[0] as Db, true);
    const branchRequest = gh.requests.slice(before).find((r) => r.path.includes('/branches/'));
    expect(branchRequest?.headers['if-none-match']).toBeDefined();
    expect(again).toMatchObject({ commit, versions: [{ name: '@hosted/copy', version: named }] });

    // A release, then a commit that declares none: after the release, at the new commit.
    if (repo) {
      repo.files['report/SKILL.md'] = report('1.2.3');
      repo.committedAt = '2026-07-20T08:00:00Z';
    }
    expect((await run(dbs[0] as Db)).versions).toEqual([{ name: '@hosted/report', version: '1.2.3' }]);
    if (repo) {
      repo.files['report/SKILL.md'] = `${report(null)}\nMore.\n`;
      repo.committedAt = '2026-07-21T09:30:15Z';
    }
    const next = await run(dbs[0] as Db);
    expect(next.versions).toEqual([
      { name: '@hosted/report', version: `1.2.4-0.20260721093015-${(next.commit as string).slice(0, 12)}` },
    ]);
  });

  it('without a known commit time (an upload, a publish naming only a commit): the run time and the digest', async () => {
    const store = createPgContentStore(dbs[0] as Db);
    const write = async (name: string, snapshotCommit: string | null) => {
      const outcome = await prepareUploadedSkill({
        store,
        scope: 'uploaded',
        name,
        files: [
          {
            path: 'SKILL.md',
            bytes: Buffer.from(skillMd([`name: ${name}`, 'description: Uploaded.'])),
            executable: false,
          },
        ],
        latestDigest: undefined,
      });
      if (!outcome.ok) throw new Error(outcome.reason);
      const start = new Date();
      const written = await (dbs[0] as Db).transaction().execute((trx) =>
        writePreparedVersions(trx, {
          names: [hostedSourceRepo('uploaded', name)],
          prepared: [outcome.skill],
          rejections: [],
          snapshotCommit,
          truncated: true,
          proven: true,
        }),
      );
      const end = new Date();
      return { version: written.versions[0]?.version, digest: outcome.skill.digest, start, end };
    };
    const stamp = (time: Date) => time.toISOString().replace(/[-:T]/g, '').slice(0, 14);
    for (const [name, commit] of [
      ['plain', null],
      ['commit-only', 'a'.repeat(40)],
    ] as const) {
      const { version, digest, start, end } = await write(name, commit);
      const match = /^0\.0\.0-(\d{14})-([0-9a-f]{12})$/.exec(version ?? '');
      expect(match?.[2]).toBe(digest.slice('sha256:'.length, 'sha256:'.length + 12));
      const time = match?.[1] ?? '';
      expect(time >= stamp(start) && time <= stamp(end)).toBe(true);
    }
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

  it('a skill holding a path with a control character is rejected, naming the path', async () => {
    const repo = createRepo(root, 'ctl', 'kit', {
      'forged/SKILL.md': skillMd(['name: forged', 'description: A line break in a name.']),
      'forged/é\n17 path=SKILL.md': 'not the SKILL.md',
      'fine/SKILL.md': skillMd(['name: fine', 'description: Fine.']),
    });
    const summary = await indexSource({ db }, { kind: 'git', locator: repo, owner: 'ctl' });
    expect(summary).toMatchObject({ indexed: 1, rejected: 1 });
    expect(summary.rejections).toEqual([
      {
        path: 'forged/SKILL.md',
        reason:
          '"é\\n17 path=SKILL.md" is not a path a skill may hold (no control characters or backslashes)',
      },
    ]);
    expect(await pkg('ctl', 'forged')).toBeUndefined();
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
