import type { Db } from '@pkgreg/db';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  GitHubClient,
  type GitHubSourceOptions,
  gitBlobSha,
  type IndexFailure,
  IndexingError,
  indexSource,
  normalizeGitHubLocator,
  reindexAll,
} from '../src/index.js';
import { skillMd, testKysely } from '../src/testing.js';
import { FakeGitHub, type FakeRepo } from '@pkgreg/testing';

// decisions.md: Registry / Indexing ("GitHub's API and web base URLs are configurable (GitHub
// Enterprise)"), against a local server speaking GitHub's REST shapes.

let t: TestDatabase;
let db: Db;
let gh: FakeGitHub;
let options: GitHubSourceOptions;

beforeAll(async () => {
  t = await createTestDatabase();
  db = testKysely(t.url);
  // GitHub Enterprise layout: the REST API lives under /api/v3 of the host.
  gh = new FakeGitHub('/api/v3', 'https://ghe.example');
  await gh.start();
  options = { apiUrl: gh.apiUrl, webUrl: 'https://ghe.example', token: 'ghs_test_token_123' };
});
afterAll(async () => {
  await db?.destroy();
  await gh?.stop();
  await t?.destroy();
});
afterEach(() => {
  gh.rateLimit = null;
  gh.remaining = 5000;
  gh.resetAt = Math.floor(Date.now() / 1000) + 3600;
});

function pkg(scope: string, name: string) {
  return db
    .selectFrom('packages')
    .selectAll()
    .where('scope', '=', scope)
    .where('name', '=', name)
    .executeTakeFirst();
}

const pdf = skillMd(
  ['name: pdf-tools', 'description: Work with PDF files.', 'metadata:', '  kind: app'],
  'Read [forms](forms.md).\n',
);
const repo: FakeRepo = {
  owner: 'Octo-Org',
  name: 'Skills',
  defaultBranch: 'develop',
  stars: 1234,
  license: 'Apache-2.0',
  homepage: 'https://octo.example',
  files: {
    'README.md': '# skills\n',
    'pdf-tools/SKILL.md': pdf,
    'pdf-tools/forms.md': '# forms\n',
    'writer/SKILL.md': skillMd(['name: writer', 'description: Writes prose.', 'license: MIT']),
    'broken/SKILL.md': skillMd(['name: Broken Name', 'description: d']),
  },
};

describe('GitHub source', () => {
  beforeAll(() => gh.addRepo(repo));

  it('indexes through the configured GHE API base with the token, mapping repository facts', async () => {
    const summary = await indexSource(
      { db: db, github: options },
      { kind: 'github', locator: 'Octo-Org/Skills' },
    );
    expect(summary).toMatchObject({
      status: 'succeeded',
      locator: 'octo-org/skills',
      sourceRepo: 'Octo-Org/Skills',
      indexed: 2,
      rejected: 1,
      notModified: false,
    });
    expect(summary.rejections).toEqual([
      {
        path: 'broken/SKILL.md',
        reason: 'invalid name "Broken Name": 1-64 of a-z 0-9 -, no leading, trailing or double -',
      },
    ]);
    expect(await pkg('octo-org', 'pdf-tools')).toMatchObject({
      kind: 'app',
      source_repo: 'Octo-Org/Skills',
      source_path: 'pdf-tools',
      source_ref: 'develop',
      repo_owner: 'Octo-Org',
      repo_stars: 1234,
      repo_url: 'https://ghe.example/Octo-Org/Skills',
      homepage_url: 'https://octo.example',
      // No license in the frontmatter: the repository's SPDX id.
      license: 'Apache-2.0',
      skill_md_raw: pdf,
      last_commit_sha: gitBlobSha(pdf),
      file_count: 2,
      progressive_disclosure: true,
    });
    expect(await pkg('octo-org', 'writer')).toMatchObject({ license: 'MIT' });

    // Every request went to the GHE prefix, with the token as a Bearer Authorization header.
    expect(gh.requests.length).toBeGreaterThanOrEqual(4);
    for (const r of gh.requests) {
      expect(
        r.path.startsWith('/api/v3/repos/Octo-Org/Skills') ||
          r.path.startsWith('/api/v3/repos/octo-org/skills'),
      ).toBe(true);
      expect(r.headers.authorization).toBe('Bearer ghs_test_token_123');
      expect(r.headers.accept).toBe('application/vnd.github+json');
    }
    // The head commit of the default branch, then its tree by SHA, once each.
    expect(gh.seen('/repos/Octo-Org/Skills/branches/develop')).toHaveLength(1);
    expect(gh.seen('/repos/Octo-Org/Skills/git/trees/')).toHaveLength(1);
  });

  it('re-index sends If-None-Match; 304s mean unchanged, no blob is fetched and rejections carry over', async () => {
    const before = gh.requests.length;
    const summary = await indexSource(
      { db: db, github: options },
      { kind: 'github', locator: 'octo-org/skills' },
    );
    const mine = gh.requests.slice(before);
    expect(mine).toHaveLength(2);
    for (const r of mine) expect(r.headers['if-none-match']).toMatch(/^W\/"/);
    expect(summary).toMatchObject({ notModified: true, unchanged: 2, indexed: 0, updated: 0, rejected: 1 });
    expect(summary.rejections).toEqual([expect.objectContaining({ path: 'broken/SKILL.md' })]);
  });

  it('a new commit: the tree is read again but only the changed blob is fetched', async () => {
    const writer2 = skillMd(['name: writer', 'description: Writes better prose.', 'license: MIT']);
    repo.files['writer/SKILL.md'] = writer2;
    const before = gh.requests.length;
    const summary = await indexSource(
      { db: db, github: options },
      { kind: 'github', locator: 'octo-org/skills' },
    );
    const blobs = gh.requests.slice(before).filter((r) => r.path.includes('/git/blobs/'));
    // Only the changed SKILL.md: every other blob (the rejected SKILL.md too) is in the content store.
    expect(blobs.map((r) => r.path.split('/').pop())).toEqual([gitBlobSha(writer2)]);
    expect(summary).toMatchObject({ notModified: false, updated: 1, unchanged: 1 });
    expect(await pkg('octo-org', 'writer')).toMatchObject({ description: 'Writes better prose.' });
  });

  it('changed repository facts (stars) refresh every package', async () => {
    repo.stars = 2000;
    const summary = await indexSource(
      { db: db, github: options },
      { kind: 'github', locator: 'octo-org/skills' },
    );
    expect(summary).toMatchObject({ updated: 2, unchanged: 0 });
    expect(await pkg('octo-org', 'pdf-tools')).toMatchObject({ repo_stars: 2000 });
  });

  it('a truncated tree never delists', async () => {
    const files = { ...repo.files };
    repo.files = { 'writer/SKILL.md': files['writer/SKILL.md'] as string };
    repo.truncated = true;
    try {
      const summary = await indexSource(
        { db: db, github: options },
        { kind: 'github', locator: 'octo-org/skills' },
      );
      expect(summary).toMatchObject({ truncated: true, delisted: 0 });
      expect(await pkg('octo-org', 'pdf-tools')).toMatchObject({ status: 'active' });
    } finally {
      repo.files = files;
      repo.truncated = false;
    }
  });

  it('a renamed repository (301 to /repositories/{id}) keeps its packages under the new name', async () => {
    gh.addRepo({
      owner: 'Octo-Org',
      name: 'old-name',
      defaultBranch: 'main',
      stars: 5,
      license: 'MIT',
      homepage: null,
      files: { 'mover/SKILL.md': skillMd(['name: mover', 'description: Moves.']) },
    });
    await indexSource({ db, github: options }, { kind: 'github', locator: 'octo-org/old-name' });
    await db.updateTable('packages').set({ download_count: 3 }).where('name', '=', 'mover').execute();
    const before = await pkg('octo-org', 'mover');
    gh.rename('octo-org/old-name', 'new-name');

    const summary = await indexSource(
      { db, github: options },
      { kind: 'github', locator: 'octo-org/old-name' },
    );
    expect(summary).toMatchObject({
      status: 'succeeded',
      sourceRepo: 'Octo-Org/new-name',
      updated: 1,
      delisted: 0,
    });
    expect(gh.requests.some((r) => r.path.startsWith('/api/v3/repositories/'))).toBe(true);
    const after = await pkg('octo-org', 'mover');
    expect(after).toMatchObject({
      id: before?.id,
      source_repo: 'Octo-Org/new-name',
      repo_url: 'https://ghe.example/Octo-Org/new-name',
      download_count: 3,
      status: 'active',
    });
  });

  it('without a token no Authorization header is sent', async () => {
    gh.addRepo({
      ...repo,
      owner: 'anon',
      name: 'pub',
      files: { 'SKILL.md': skillMd(['name: pub', 'description: d']) },
    });
    const before = gh.requests.length;
    await indexSource({ db: db, github: { apiUrl: gh.apiUrl } }, { kind: 'github', locator: 'anon/pub' });
    const mine = gh.requests.slice(before);
    expect(mine.length).toBeGreaterThan(0);
    for (const r of mine) expect(r.headers.authorization).toBeUndefined();
  });

  it('an unknown repository fails permanently as not_found', async () => {
    const error = (await indexSource(
      { db: db, github: options },
      { kind: 'github', locator: 'nobody/nothing' },
    ).catch((e) => e)) as IndexFailure;
    expect(error).toBeInstanceOf(IndexingError);
    expect(error).toMatchObject({ code: 'not_found', permanent: true });
    expect(error.summary.status).toBe('failed');
  });

  it('locators: owner/repo or a URL, lowercased; anything else is refused', () => {
    expect(normalizeGitHubLocator('Octo-Org/Skills')).toBe('octo-org/skills');
    expect(normalizeGitHubLocator('https://github.com/Octo-Org/Skills.git')).toBe('octo-org/skills');
    expect(() => normalizeGitHubLocator('../etc/passwd')).toThrow(IndexingError);
    expect(() => normalizeGitHubLocator('a/b/c')).toThrow(IndexingError);
  });
});

describe('GitHub rate limits', () => {
  beforeAll(() =>
    gh.addRepo({
      owner: 'rl',
      name: 'repo',
      defaultBranch: 'main',
      stars: 1,
      license: null,
      homepage: null,
      files: { 'one/SKILL.md': skillMd(['name: one', 'description: d']) },
    }),
  );

  it('a 403 rate-limited answer with a near reset is waited out, then the run succeeds', async () => {
    gh.rateLimit = { count: 1, status: 403, resetInSeconds: 1 };
    const started = Date.now();
    const summary = await indexSource({ db: db, github: options }, { kind: 'github', locator: 'rl/repo' });
    expect(summary.status).toBe('succeeded');
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });

  it('a far reset fails the run as rate_limited (retryable, with retryAt) after a single request', async () => {
    gh.rateLimit = { count: 5, status: 403, resetInSeconds: 3600 };
    const before = gh.requests.length;
    const error = (await indexSource(
      { db: db, github: options },
      { kind: 'github', locator: 'rl/repo' },
    ).catch((e) => e)) as IndexFailure;
    expect(error).toMatchObject({ code: 'rate_limited', permanent: false });
    expect(error.retryAt?.getTime()).toBeGreaterThan(Date.now() + 3000_000);
    expect(gh.requests.length - before).toBe(1);
    expect(error.summary.error?.retryAt).toBeTruthy();
  });

  it('a 429 with a long retry-after is reported, not retried', async () => {
    gh.rateLimit = { count: 5, status: 429, retryAfter: 600 };
    const before = gh.requests.length;
    await expect(
      indexSource({ db: db, github: options }, { kind: 'github', locator: 'rl/repo' }),
    ).rejects.toMatchObject({ code: 'rate_limited' });
    expect(gh.requests.length - before).toBe(1);
  });

  it('an exhausted budget announced by x-ratelimit-remaining stops requests before they are sent', async () => {
    const client = new GitHubClient(options);
    gh.remaining = 1; // the repository answer brings it to 0, with the reset an hour away
    repoStarsBump();
    const before = gh.requests.length;
    await expect(
      indexSource({ db: db, githubClient: client }, { kind: 'github', locator: 'rl/repo' }),
    ).rejects.toMatchObject({ code: 'rate_limited' });
    // Only the repository request went out; the branch request was never sent.
    expect(gh.requests.length - before).toBe(1);
  });

  it('reindexAll skips the remaining GitHub sources once rate limited', async () => {
    gh.rateLimit = { count: 100, status: 403, resetInSeconds: 3600 };
    const before = gh.requests.length;
    const summaries = await reindexAll({ db: db, github: options });
    const github = summaries.filter((s) => s.kind === 'github');
    expect(github.length).toBeGreaterThanOrEqual(3);
    expect(github.every((s) => s.status === 'failed' && s.error?.code === 'rate_limited')).toBe(true);
    expect(github.filter((s) => s.error?.message.startsWith('skipped:')).length).toBe(github.length - 1);
    expect(gh.requests.length - before).toBe(1);
  });
});

function repoStarsBump(): void {
  // Force a 200 (not a 304) for the repository so the fake charges the budget.
  const r = gh.repos.get('rl/repo');
  if (r) r.stars += 1;
}
