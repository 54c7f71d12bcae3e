import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  PackageDetailSchema,
  VersionDetailSchema,
  VersionListResponseSchema,
  type VersionSummary,
} from '@pkgreg/contracts';
import { indexSource } from '@pkgreg/indexer';
import { commitFiles, createRepo, git, removeDir, skillMd, tempDir } from '@pkgreg/indexer/testing';
import { removePackage } from '@pkgreg/registry';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quarantinePackage, releasePackage } from '../src/moderation/moderation.repository.js';
import { useTestRegistry } from './fixtures.js';

// docs/versions.md, "API": every version of a skill folder, its files and its archive, indexed from a
// real git repository by the real indexer.

const t = useTestRegistry({ DETAIL_CACHE_TTL_MS: '0' });
let root: string;
let repo: string;

// A PNG's first bytes, then bytes that are not UTF-8: a binary asset must arrive byte for byte.
const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from([0, 255, 254, 1, 2, 3])]);
const PDF_SKILL = skillMd(
  ['name: pdf', 'description: Fill PDF forms.', 'license: MIT'],
  '# PDF\n\nRun `scripts/fill.py` and read [forms](forms.md).\n',
);

const index = () => indexSource({ db: t.db }, { kind: 'git', locator: repo, owner: 'acme' });
const base = '/api/packages/@acme/pdf';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const sha512 = (bytes: Buffer) => `sha512-${createHash('sha512').update(bytes).digest('base64')}`;

/** supertest reads unknown types as text; these answers are bytes (superagent hands the raw stream). */
function binary(res: request.Response, callback: (error: Error | null, body: Buffer) => void): void {
  const stream = res as unknown as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => callback(null, Buffer.concat(chunks)));
}

/** Every file under `dir`: relative path -> bytes (a link: its target) and whether it is executable. */
function tree(dir: string): Record<string, { bytes: string; executable: boolean; link: boolean }> {
  const out: Record<string, { bytes: string; executable: boolean; link: boolean }> = {};
  const walk = (at: string) => {
    for (const entry of readdirSync(at)) {
      const path = join(at, entry);
      const stat = lstatSync(path);
      if (stat.isDirectory()) walk(path);
      else if (stat.isSymbolicLink())
        out[relative(dir, path)] = { bytes: readlinkSync(path), executable: false, link: true };
      else
        out[relative(dir, path)] = {
          bytes: readFileSync(path).toString('base64'),
          executable: (stat.mode & 0o100) !== 0,
          link: false,
        };
    }
  };
  walk(dir);
  return out;
}

beforeAll(async () => {
  root = realpathSync(tempDir('versions'));
  repo = createRepo(root, 'acme', 'skills', {
    'skills/pdf/SKILL.md': PDF_SKILL,
    'skills/pdf/forms.md': '# Forms\n\nField by field.\n',
    'skills/pdf/scripts/fill.py': { content: '#!/usr/bin/env python3\nprint("filled")\n', executable: true },
    'skills/pdf/assets/logo.png': PNG,
    'skills/pdf/assets/page.html': '<script>alert(1)</script>\n',
    'skills/pdf/docs/forms-link.md': { symlink: '../forms.md' },
    'skills/pdf/docs/escape.md': { symlink: '../../../README.md' },
    'README.md': '# acme skills\n',
  });
  const summary = await index();
  expect(summary).toMatchObject({ status: 'succeeded', indexed: 1, rejected: 0 });
}, 60_000);

afterAll(() => {
  if (root) removeDir(root);
});

describe('GET /versions and /versions/{version}', () => {
  let first: VersionSummary;

  it('lists the versions newest first, each with digest, integrity, counts and warnings', async () => {
    const res = await request(t.app).get(`${base}/versions`).expect(200);
    const body = VersionListResponseSchema.parse(res.body);
    expect(body).toMatchObject({ total: 1, page: 1, pageSize: 20 });
    first = body.data[0] as VersionSummary;
    expect(first).toMatchObject({
      fileCount: 6,
      sourceCommit: git(repo, 'rev-parse', 'HEAD').trim(),
      warnings: ['symlink docs/escape.md points outside the skill folder; left out'],
    });
    // No version declared: a pseudo-version.
    expect(first.version).toMatch(/^0\.0\.0-\d{14}-[0-9a-f]{12}$/);
    expect(first.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('detail of a version lists every file as the repository holds it', async () => {
    const res = await request(t.app).get(`${base}/versions/${first.version}`).expect(200);
    // Its metadata moves (yanked, risk): revalidated like `latest`; its bytes are the immutable part.
    expect(res.headers['cache-control']).toBe('public, max-age=60, must-revalidate');
    const detail = VersionDetailSchema.parse(res.body);
    const blob = (path: string) => git(repo, 'rev-parse', `HEAD:skills/pdf/${path}`).trim();
    expect(detail.files.map((f) => f.path)).toEqual([
      'SKILL.md',
      'assets/logo.png',
      'assets/page.html',
      'docs/forms-link.md',
      'forms.md',
      'scripts/fill.py',
    ]);
    for (const file of detail.files) expect(file.gitBlobSha).toBe(blob(file.path));
    expect(detail.files.find((f) => f.path === 'scripts/fill.py')).toMatchObject({ executable: true });
    expect(detail.files.find((f) => f.path === 'assets/logo.png')).toMatchObject({
      executable: false,
      size: PNG.length,
      sha256: sha256(PNG),
      linkTarget: null,
    });
    expect(detail.files.find((f) => f.path === 'docs/forms-link.md')).toMatchObject({
      linkTarget: '../forms.md',
    });
    const latest = await request(t.app).get(`${base}/versions/latest`).expect(200);
    expect(latest.body).toEqual(res.body);
    expect(latest.headers['cache-control']).toBe('public, max-age=60, must-revalidate');
  });

  it('detail of the package says the version, the file count and the warnings', async () => {
    const res = await request(t.app).get(base).expect(200);
    expect(PackageDetailSchema.parse(res.body)).toMatchObject({
      version: first.version,
      fileCount: 6,
      license: 'MIT',
      warnings: ['symlink docs/escape.md points outside the skill folder; left out'],
    });
  });
});

describe('GET /versions/{version}/files/{path}', () => {
  it('serves the bytes with a type from the name, an ETag from the hash, and no way to run as us', async () => {
    const res = await request(t.app)
      .get(`${base}/versions/latest/files/assets/logo.png`)
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(Buffer.compare(res.body as Buffer, PNG)).toBe(0);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers.etag).toBe(`"${sha256(PNG)}"`);
    const html = await request(t.app).get(`${base}/versions/latest/files/assets/page.html`).expect(200);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.headers['x-content-type-options']).toBe('nosniff');
    expect(html.headers['content-security-policy']).toBe("sandbox; default-src 'none'");
    const md = await request(t.app).get(`${base}/versions/latest/files/SKILL.md`).expect(200);
    expect(md.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(md.text).toBe(PDF_SKILL);
  });

  it('answers 304 to a matching If-None-Match, and HEAD without a body', async () => {
    const path = `${base}/versions/latest/files/forms.md`;
    const first = await request(t.app).get(path).expect(200);
    await request(t.app)
      .get(path)
      .set('If-None-Match', first.headers.etag as string)
      .expect(304);
    const head = await request(t.app).head(path).expect(200);
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength('# Forms\n\nField by field.\n')));
  });

  it.each([
    ['a dot-dot segment', `${base}/versions/latest/files/scripts/..%2F..%2FREADME.md`, 400],
    ['an encoded dot-dot', `${base}/versions/latest/files/%2E%2E/README.md`, 400],
    ['a backslash', `${base}/versions/latest/files/scripts%5Cfill.py`, 400],
    ['a folder', `${base}/versions/latest/files/scripts`, 404],
    ['a file left out (link outside)', `${base}/versions/latest/files/docs/escape.md`, 404],
    ['a file outside the folder', `${base}/versions/latest/files/README.md`, 404],
  ])('refuses %s (%s)', async (_label, path, status) => {
    const res = await request(t.app).get(path).expect(status);
    expect(res.body).toEqual({ error: expect.any(String) });
  });
});

describe('GET /versions/{version}/archive.tgz', () => {
  it('serves the stored archive: its integrity holds, twice the same bytes, and tar unpacks the folder', async () => {
    const list = VersionListResponseSchema.parse((await request(t.app).get(`${base}/versions`)).body);
    const version = list.data[0] as VersionSummary;
    const path = `${base}/versions/${version.version}/archive.tgz`;
    const one = await request(t.app).get(path).buffer(true).parse(binary).expect(200);
    const two = await request(t.app).get(path).buffer(true).parse(binary).expect(200);
    expect(sha512(one.body as Buffer)).toBe(version.integrity);
    expect(Buffer.compare(one.body as Buffer, two.body as Buffer)).toBe(0);
    expect(one.headers['content-type']).toBe('application/gzip');
    expect(one.headers['content-disposition']).toBe(`attachment; filename="acme-pdf-${version.version}.tgz"`);
    expect(one.headers.etag).toBe(`"${version.integrity}"`);

    const out = tempDir('unpacked');
    try {
      execFileSync('tar', ['-xzf', '-', '-C', out], { input: one.body as Buffer });
      const source = tree(join(repo, 'skills/pdf'));
      delete source['docs/escape.md'];
      expect(tree(join(out, 'pdf'))).toEqual(source);
    } finally {
      removeDir(out);
    }
  });
});

describe('a new upstream commit', () => {
  let versions: VersionSummary[];

  beforeAll(async () => {
    commitFiles(repo, { 'skills/pdf/forms.md': '# Forms\n\nField by field, then sign.\n' });
    const summary = await index();
    expect(summary).toMatchObject({ updated: 1 });
    versions = VersionListResponseSchema.parse((await request(t.app).get(`${base}/versions`)).body).data;
  });

  it('is a second version; the first keeps its bytes', async () => {
    expect(versions).toHaveLength(2);
    const [newer, older] = versions as [VersionSummary, VersionSummary];
    expect(newer.digest).not.toBe(older.digest);
    const old = await request(t.app).get(`${base}/versions/${older.version}/files/forms.md`).expect(200);
    expect(old.text).toBe('# Forms\n\nField by field.\n');
    const now = await request(t.app).get(`${base}/versions/latest/files/forms.md`).expect(200);
    expect(now.text).toBe('# Forms\n\nField by field, then sign.\n');
  });

  it('an unchanged re-index creates no version', async () => {
    const summary = await index();
    expect(summary).toMatchObject({ unchanged: 1, versions: [] });
    expect((await request(t.app).get(`${base}/versions`)).body.total).toBe(2);
  });

  it('pages the list', async () => {
    const res = await request(t.app).get(`${base}/versions?page=2&pageSize=1`).expect(200);
    expect(res.body).toMatchObject({ total: 2, page: 2, pageSize: 1 });
    expect(res.body.data.map((v: VersionSummary) => v.version)).toEqual([versions[1]?.version]);
  });
});

describe('a quarantined package (docs/risk-scan.md): its manifest is readable, its bytes are 410', () => {
  let versions: VersionSummary[];
  const paths = () => {
    const [newer, older] = versions.map((v) => v.version);
    return [
      `${base}/versions/${newer}/archive.tgz`,
      `${base}/versions/${older}/archive.tgz`,
      `${base}/versions/latest/archive.tgz`,
      `${base}/versions/${older}/files/SKILL.md`,
      `${base}/versions/latest/files/forms.md`,
      `${base}/versions/latest/files/scripts/fill.py`,
      `${base}/versions/latest/files/assets/logo.png`,
      `${base}/versions/latest/files/docs/forms-link.md`,
    ];
  };

  beforeAll(async () => {
    versions = VersionListResponseSchema.parse((await request(t.app).get(`${base}/versions`)).body).data;
    expect(versions).toHaveLength(2);
    expect(await quarantinePackage(t.db, { scope: 'acme', name: 'pdf' }, 'reported: sends tokens away')).toBe(
      true,
    );
  });

  afterAll(async () => {
    // The tests below this block read the package's bytes: never leave it quarantined.
    await releasePackage(t.db, { scope: 'acme', name: 'pdf' });
  });

  it('every archive and file, exact or latest, GET or HEAD, answers 410 with the reason and no bytes', async () => {
    for (const path of paths()) {
      const res = await request(t.app).get(path).expect(410);
      expect(res.body, path).toEqual({
        error: '@acme/pdf is quarantined by the registry operator: reported: sends tokens away',
      });
      expect(res.headers['cache-control'], path).toBe('no-store');
      expect(res.headers['content-type'], path).toMatch(/^application\/json/);
      await request(t.app).head(path).expect(410);
    }
  });

  it('a file that does not exist is 410 too: nothing about the bytes is told', async () => {
    await request(t.app).get(`${base}/versions/latest/files/nothing.md`).expect(410);
  });

  it('the version list and each version record stay readable (no-store) so a report can be checked', async () => {
    for (const path of [
      `${base}/versions`,
      `${base}/versions/latest`,
      `${base}/versions/${versions[1]?.version}`,
    ]) {
      const res = await request(t.app).get(path).expect(200);
      expect(res.headers['cache-control'], path).toBe('no-store');
    }
    const detail = VersionDetailSchema.parse((await request(t.app).get(`${base}/versions/latest`)).body);
    expect(detail.files.map((f) => f.path)).toContain('forms.md');
  });

  it('released, the bytes are served again', async () => {
    expect(await releasePackage(t.db, { scope: 'acme', name: 'pdf' })).toBe(true);
    for (const path of paths()) await request(t.app).get(path).expect(200);
  });
});

describe('bad requests', () => {
  it.each([
    ['an unknown version', `${base}/versions/9.9.9`, 404, 'Version not found'],
    ['a version that is not semver', `${base}/versions/not-a-version`, 400, undefined],
    ['an unknown package', '/api/packages/@acme/nothing/versions', 404, 'Package not found'],
    ['an invalid package path', '/api/packages/acme/pdf/versions', 400, undefined],
    ['a bad page', `${base}/versions?page=0`, 400, 'page must be an integer, minimum 1'],
    ['an unknown version archive', `${base}/versions/9.9.9/archive.tgz`, 404, 'Version not found'],
  ])('%s', async (_label, path, status, message) => {
    const res = await request(t.app).get(path).expect(status);
    expect(res.body).toEqual({ error: message ?? expect.any(String) });
  });
});

describe('visibility', () => {
  let exact: string;

  beforeAll(async () => {
    exact = (await request(t.app).get(`${base}/versions/latest`)).body.version;
    commitFiles(repo, { 'skills/pdf/SKILL.md': null });
    expect(await index()).toMatchObject({ delisted: 1 });
  });

  it('a delisted package: its exact versions stay fetchable, the list and latest do not', async () => {
    await request(t.app).get(`${base}/versions/${exact}`).expect(200);
    await request(t.app).get(`${base}/versions/${exact}/archive.tgz`).expect(200);
    await request(t.app).get(`${base}/versions/${exact}/files/forms.md`).expect(200);
    await request(t.app).get(`${base}/versions`).expect(404);
    await request(t.app).get(`${base}/versions/latest`).expect(404);
    await request(t.app).get(base).expect(404);
  });

  it('an operator removal makes every version 410 with its reason, and re-indexing never relists it', async () => {
    commitFiles(repo, { 'skills/pdf/SKILL.md': PDF_SKILL });
    expect(await removePackage(t.db, { scope: 'acme', name: 'pdf' }, 'ships malware')).toBe(true);
    for (const path of [
      `${base}/versions/${exact}`,
      `${base}/versions/${exact}/archive.tgz`,
      `${base}/versions`,
    ]) {
      const res = await request(t.app).get(path).expect(410);
      expect(res.body).toEqual({ error: '@acme/pdf was removed from the registry: ships malware' });
    }
    const summary = await index();
    expect(summary.rejections).toEqual([
      { path: 'skills/pdf/SKILL.md', reason: '@acme/pdf was removed by the registry operator' },
    ]);
    await request(t.app).get(base).expect(404);
    await request(t.app).get(`${base}/versions/${exact}`).expect(410);
  });
});
