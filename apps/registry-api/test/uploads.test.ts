import { generateKeyPairSync } from 'node:crypto';
import type { RequestListener } from 'node:http';
import { gzipSync } from 'node:zlib';
import { UploadResultSchema } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import {
  attestPendingVersions,
  BUILD_TYPE_CI_UPLOAD,
  buildArchive,
  type DsseEnvelope,
  type ManifestFile,
  registerSigningKey,
  signerFromPem,
  sriSha512,
  verifyAttestation,
} from '@pkgreg/registry';
import { createLogger } from '@pkgreg/server-kit';
import { actionsClaims, gitlabClaims, type OidcIssuer, startOidcIssuer } from '@pkgreg/testing';
import { Redis } from 'ioredis';
import request from 'supertest';
import { pack } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { createTokenAs, signInAs } from './account-helpers.js';
import { expectRefused } from './publishing-helpers.js';

// docs/publishing.md, "Uploading (hosted packages)" and "Trusted publishers": PUT of a skill folder's
// tar.gz with a publish token, a session or a trusted publisher's CI OIDC token; every refusal (a bad
// archive, a bad version, the wrong credentials) answers its reason and stores nothing.

const PUBLIC_URL = 'http://registry.test';
const ORIGIN = PUBLIC_URL;
const database = useTestDatabase();
const prefix = testKeyPrefix('uploads');
let redis: Redis;
let app: RequestListener;
let github: OidcIssuer;
let gitlab: OidcIssuer;
const logger = createLogger('uploads-test', 'silent');

beforeAll(async () => {
  [github, gitlab] = await Promise.all([startOidcIssuer(), startOidcIssuer()]);
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}:` });
  const env = loadEnv({
    REGISTRY_PUBLIC_URL: PUBLIC_URL,
    DEV_SIGN_IN: 'true',
    DETAIL_CACHE_TTL_MS: '0',
    PUBLISHES_PER_HOUR: '10000',
    TRUSTED_PUBLISHING_ISSUERS: `${github.issuer},${gitlab.issuer}`,
    UPLOAD_MAX_BYTES: '200000',
    INDEX_MAX_FILE_BYTES: '20000',
  });
  app = createApp({ db: database.db, redis, logger, env });
});

afterAll(async () => {
  redis?.disconnect();
  await Promise.all([github?.close(), gitlab?.close()]);
});

/** Every row an upload could write: a refusal leaves each count as it was. */
async function footprint() {
  const counts: Record<string, number> = {};
  for (const table of [
    'packages',
    'package_versions',
    'package_version_files',
    'content_blobs',
    'scope_settings',
    'account_audit_events',
    'version_ci_uploads',
  ] as const) {
    const row = await database.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    counts[table] = Number(row.n);
  }
  return counts;
}

function skillMd(name: string, extra = ''): string {
  return `---\nname: ${name}\ndescription: Does ${name} things for tests.\n${extra}---\n\n# ${name}\n\nSteps.\n`;
}

type Entry = { path: string; content: string | Buffer; linkTarget?: string; executable?: boolean };

/** A tar.gz as the registry's own archives are made (versioning.ts buildArchive). */
async function archive(folder: string, entries: Entry[]): Promise<Buffer> {
  const bytes = new Map(entries.map((e) => [e.path, Buffer.from(e.content)]));
  const files: ManifestFile[] = entries.map((e) => ({
    path: e.path,
    mode: e.linkTarget ? '120000' : e.executable ? '100755' : '100644',
    sha256: '',
    gitSha1: '',
    size: 0,
    linkTarget: e.linkTarget ?? null,
  }));
  return buildArchive(folder, files, (f) => bytes.get(f.path) as Buffer);
}

/** A tar.gz with raw headers, for entries buildArchive never writes (fifos, hard links, odd names). */
async function rawArchive(headers: Array<Record<string, unknown> & { name: string }>): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c) => chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve) => p.on('end', () => resolve()));
  for (const header of headers) {
    const { body, ...rest } = header;
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (typeof body === 'string') p.entry(rest as never, body, done);
      else p.entry(rest as never, done);
    });
  }
  p.finalize();
  await ended;
  return gzipSync(notUtf8(Buffer.concat(chunks)));
}

/** Turns the name `NOT-UTF8` in a tar's headers into bytes no UTF-8 decoder accepts (checksum fixed). */
function notUtf8(tar: Buffer): Buffer {
  for (let at = 0; at + 512 <= tar.length; at += 512) {
    const block = tar.subarray(at, at + 512);
    const found = block.subarray(0, 100).indexOf('NOT-UTF8');
    if (found === -1) continue;
    block.set([0xff, 0xfe, 0xc3, 0x28], found);
    block.fill(0x20, 148, 156);
    const sum = block.reduce((a, b) => a + b, 0);
    block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  }
  return tar;
}

const skill = (name: string, extra = '') =>
  archive(name, [{ path: 'SKILL.md', content: skillMd(name, extra) }]);

function put(path: string, body: Buffer, auth?: string) {
  const req = request(app).put(path).set('Content-Type', 'application/gzip');
  return (auth ? req.set('Authorization', `Bearer ${auth}`) : req).send(body);
}

const signIn = (handle: string) => signInAs(app, ORIGIN, handle);

const newToken = (agent: request.Agent, body: Record<string, unknown> = {}) =>
  createTokenAs(agent, ORIGIN, { permission: 'publish', ...body });

let ada: request.Agent;
let adaToken: string;

beforeAll(async () => {
  ada = await signIn('ada');
  adaToken = (await newToken(ada)).token;
});

describe('uploading with a publish token', () => {
  it('stores a hosted version exactly like an indexed one and claims the unclaimed scope', async () => {
    const tgz = await archive('tool', [
      { path: 'SKILL.md', content: skillMd('tool') },
      { path: 'scripts/run.sh', content: '#!/bin/sh\necho hi\n', executable: true },
    ]);
    const res = await put('/api/packages/@ada/tool/versions/1.0.0', tgz, adaToken);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const result = UploadResultSchema.parse(res.body);
    expect(result).toMatchObject({
      name: '@ada/tool',
      version: '1.0.0',
      hosted: true,
      private: false,
      proof: 'token',
      claimedScope: true,
      fileCount: 2,
      risk: expect.any(String),
      // A token names no commit: nothing for an attestation to name.
      ciSource: null,
    });

    const detail = await request(app).get('/api/packages/@ada/tool');
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({
      hosted: true,
      version: '1.0.0',
      sourceRepo: '@ada/tool',
      sourcePath: '',
      repoUrl: null,
      repoOwner: 'ada',
      verified: true,
    });
    // No code host to send anyone to: the source is the registry's own copy.
    const source = await request(app).get('/api/packages/@ada/tool/source');
    expect(source.status).toBe(302);
    expect(source.headers.location).toBe('/api/packages/@ada/tool/versions/1.0.0/files/SKILL.md');
    const version = await request(app).get('/api/packages/@ada/tool/versions/1.0.0');
    expect(version.status).toBe(200);
    expect(version.body.integrity).toBe(result.integrity);
    expect(version.body.files.map((f: { path: string }) => f.path)).toEqual(['SKILL.md', 'scripts/run.sh']);
    const bytes = await request(app)
      .get('/api/packages/@ada/tool/versions/1.0.0/archive.tgz')
      .buffer(true)
      .parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(sriSha512(bytes.body as Buffer)).toBe(result.integrity);

    const claim = await database.db
      .selectFrom('scope_settings')
      .innerJoin('auth_user', 'auth_user.id', 'scope_settings.account_id')
      .select(['auth_user.email', 'scope_settings.visibility'])
      .where('scope', '=', 'ada')
      .executeTakeFirstOrThrow();
    expect(claim).toEqual({ email: 'ada@dev.pkgreg.invalid', visibility: 'public' });
    const audit = await database.db
      .selectFrom('account_audit_events')
      .select(['action', 'target', 'details'])
      .where('action', '=', 'version.upload')
      .execute();
    expect(audit).toEqual([
      {
        action: 'version.upload',
        target: '@ada/tool@1.0.0',
        details: expect.objectContaining({ proof: 'token', claimedScope: 'ada' }),
      },
    ]);
  });

  it('re-uploading an existing version is 409; the same files under a new version too; new files are a new version', async () => {
    await expectRefused(
      footprint,
      async () =>
        put('/api/packages/@ada/tool/versions/1.0.0', await skill('tool', 'license: MIT\n'), adaToken),
      409,
      /@ada\/tool@1\.0\.0 already exists/,
    );
    const again = await archive('tool', [
      { path: 'SKILL.md', content: skillMd('tool') },
      { path: 'scripts/run.sh', content: '#!/bin/sh\necho hi\n', executable: true },
    ]);
    await expectRefused(
      footprint,
      () => put('/api/packages/@ada/tool/versions/1.0.1', again, adaToken),
      409,
      /same files as the latest version 1\.0\.0/,
    );
    const next = await put(
      '/api/packages/@ada/tool/versions/1.1.0',
      await skill('tool', 'version: 1.1.0\n'),
      adaToken,
    );
    expect(next.status, JSON.stringify(next.body)).toBe(201);
    expect(next.body).toMatchObject({ version: '1.1.0', claimedScope: false });
    const listed = await request(app).get('/api/packages/@ada/tool/versions');
    expect(listed.body.data.map((v: { version: string }) => v.version)).toEqual(['1.1.0', '1.0.0']);
  });

  it('a session (the web UI) uploads like a publish token', async () => {
    const res = await ada
      .put('/api/packages/@ada/from-web/versions/0.1.0')
      .set('Origin', ORIGIN)
      .set('Content-Type', 'application/gzip')
      .send(await skill('from-web'));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ proof: 'session', name: '@ada/from-web' });
  });

  it("a private scope's upload is private from its first version", async () => {
    const settings = await ada
      .put('/api/scopes/ada/settings')
      .set('Origin', ORIGIN)
      .send({ visibility: 'private' });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    try {
      const res = await put('/api/packages/@ada/secret/versions/1.0.0', await skill('secret'), adaToken);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.private).toBe(true);
      const row = await database.db
        .selectFrom('packages')
        .select(['private', 'hosted'])
        .where('scope', '=', 'ada')
        .where('name', '=', 'secret')
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ private: true, hosted: true });
      // Someone else cannot tell it (or the private scope) exists.
      const eve = await newToken(await signIn('eve-private'));
      await expectRefused(
        footprint,
        async () => put('/api/packages/@ada/secret/versions/2.0.0', await skill('secret'), eve.token),
        404,
        /not found/i,
      );
      await expectRefused(
        footprint,
        async () => put('/api/packages/@ada/unborn/versions/1.0.0', await skill('unborn'), eve.token),
        404,
        /not found/i,
      );
    } finally {
      await ada.put('/api/scopes/ada/settings').set('Origin', ORIGIN).send({ visibility: 'public' });
    }
  });
});

describe('a malformed, oversized or escaping upload is refused with its reason and stores nothing', () => {
  const path = '/api/packages/@ada/bad/versions/1.0.0';
  const cases: Array<[string, () => Promise<Buffer>, number, RegExp]> = [
    ['not gzip', async () => Buffer.from('plain text, not gzip'), 400, /not a gzip file/],
    [
      'gzip, not tar',
      async () => gzipSync(Buffer.from('x'.repeat(2000))),
      400,
      /not a tar\.gz archive|holds no files/,
    ],
    [
      'a path escaping with ..',
      () =>
        archive('bad', [
          { path: 'SKILL.md', content: skillMd('bad') },
          { path: '../x', content: 'x' },
        ]),
      400,
      /would escape the skill folder/,
    ],
    ['an absolute path', () => rawArchive([{ name: '/etc/passwd', body: 'x' }]), 400, /absolute path/],
    [
      'a symbolic link',
      () =>
        archive('bad', [
          { path: 'SKILL.md', content: skillMd('bad') },
          { path: 'link', content: 'SKILL.md', linkTarget: 'SKILL.md' },
        ]),
      400,
      /link is a symbolic link/,
    ],
    [
      'a hard link',
      () =>
        rawArchive([
          { name: 'bad/SKILL.md', body: skillMd('bad') },
          { name: 'bad/hard', type: 'link', linkname: 'bad/SKILL.md' },
        ]),
      400,
      /hard is a hard link/,
    ],
    [
      'a fifo',
      () =>
        rawArchive([
          { name: 'bad/SKILL.md', body: skillMd('bad') },
          { name: 'bad/pipe', type: 'fifo' },
        ]),
      400,
      /pipe is a fifo entry/,
    ],
    [
      'a path given twice',
      () =>
        rawArchive([
          { name: 'bad/SKILL.md', body: skillMd('bad') },
          { name: 'bad/SKILL.md', body: skillMd('bad') },
        ]),
      400,
      /holds SKILL\.md twice/,
    ],
    [
      'entries outside <name>/',
      () => archive('other', [{ path: 'SKILL.md', content: skillMd('bad') }]),
      400,
      /is not under bad\//,
    ],
    [
      'a name that is not UTF-8',
      () =>
        rawArchive([
          { name: 'bad/SKILL.md', body: skillMd('bad') },
          { name: 'bad/NOT-UTF8', body: 'x' },
        ]),
      400,
      /is not valid UTF-8/,
    ],
    ['no SKILL.md', () => archive('bad', [{ path: 'README.md', content: '# hi' }]), 400, /no bad\/SKILL\.md/],
    [
      'SKILL.md naming another skill',
      () => archive('bad', [{ path: 'SKILL.md', content: skillMd('good') }]),
      400,
      /names the skill "good"/,
    ],
    [
      'SKILL.md without a description',
      () => archive('bad', [{ path: 'SKILL.md', content: '---\nname: bad\n---\n' }]),
      400,
      /description is missing/,
    ],
    [
      'a declared version that is not the upload’s',
      () => skill('bad', 'version: 2.0.0\n'),
      400,
      /declares version 2\.0\.0, but the upload is for 1\.0\.0/,
    ],
    [
      'a file past INDEX_MAX_FILE_BYTES',
      () =>
        archive('bad', [
          { path: 'SKILL.md', content: skillMd('bad') },
          { path: 'big.bin', content: Buffer.alloc(30_000, 1) },
        ]),
      413,
      /big\.bin is .* the limit is/,
    ],
    ['a body past UPLOAD_MAX_BYTES', async () => Buffer.alloc(250_000, 7), 413, /too large/],
  ];
  it.each(cases)('%s', async (_what, make, status, message) => {
    const body = await make();
    await expectRefused(footprint, () => put(path, body, adaToken), status, message);
  });

  it('a version that is not exact semver: 400 before anything is read', async () => {
    for (const version of ['v1.0.0', '1.0', 'latest', '^1.0.0']) {
      await expectRefused(
        footprint,
        async () =>
          put(`/api/packages/@ada/bad/versions/${encodeURIComponent(version)}`, await skill('bad'), adaToken),
        400,
        /exact semver version|Invalid version/,
      );
    }
  });
});

describe('who may upload', () => {
  it('no credentials 401, a revoked token 401, a read token 403, an outsider 403', async () => {
    const body = await skill('tool', 'version: 9.0.0\n');
    const path = '/api/packages/@ada/tool/versions/9.0.0';
    const res = await expectRefused(footprint, () => put(path, body), 401, /Authorization: Bearer/);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="pkgreg"/);

    const revoked = await newToken(ada, { name: 'revoked' });
    expect((await ada.delete(`/api/tokens/${revoked.id}`).set('Origin', ORIGIN)).status).toBe(200);
    await expectRefused(footprint, () => put(path, body, revoked.token), 401, /revoked/i);

    const reader = await newToken(ada, { name: 'read-only', permission: 'read' });
    await expectRefused(footprint, () => put(path, body, reader.token), 403, /may only read/);

    const eve = await newToken(await signIn('eve'));
    await expectRefused(footprint, () => put(path, body, eve.token), 403, /cannot publish to @ada\/tool/);
    // A token limited to another scope does not reach this one, even for its own account.
    const limited = await newToken(ada, { name: 'limited', scopes: ['elsewhere'] });
    await expectRefused(
      footprint,
      () => put(path, body, limited.token),
      403,
      /cannot publish to @ada\/tool|limited/,
    );
    await expectRefused(
      footprint,
      async () => put('/api/packages/@newscope/thing/versions/1.0.0', await skill('thing'), limited.token),
      403,
      /limited to other scopes; it cannot claim @newscope/,
    );
  });

  it("an organisation's reader may not upload; its publisher may", async () => {
    const owner = await signIn('crew-owner');
    const org = await owner
      .post('/api/auth/organization/create')
      .set('Origin', ORIGIN)
      .send({ name: 'crew', slug: 'crew' });
    expect(org.status, JSON.stringify(org.body)).toBe(200);
    const claimed = await owner
      .put('/api/scopes/crew/settings')
      .set('Origin', ORIGIN)
      .send({ organizationId: org.body.id });
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    const members: Record<string, string> = {};
    for (const role of ['reader', 'publisher']) {
      const member = await signIn(`crew-${role}`);
      const invited = await owner
        .post('/api/auth/organization/invite-member')
        .set('Origin', ORIGIN)
        .send({ email: `crew-${role}@dev.pkgreg.invalid`, role, organizationId: org.body.id });
      expect(invited.status, JSON.stringify(invited.body)).toBe(200);
      const accepted = await member
        .post('/api/auth/organization/accept-invitation')
        .set('Origin', ORIGIN)
        .send({ invitationId: invited.body.id });
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
      members[role] = (await newToken(member)).token;
    }
    const body = await skill('kit');
    await expectRefused(
      footprint,
      () => put('/api/packages/@crew/kit/versions/1.0.0', body, members.reader),
      403,
      /needs the publisher role; yours is reader/,
    );
    const ok = await put('/api/packages/@crew/kit/versions/1.0.0', body, members.publisher);
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.claimedScope).toBe(false);
    const event = await database.db
      .selectFrom('account_audit_events')
      .select('organization_id')
      .where('target', '=', '@crew/kit@1.0.0')
      .executeTakeFirstOrThrow();
    expect(event.organization_id).toBe(org.body.id);
  });

  it('a package indexed from a repository is not uploaded to (409)', async () => {
    await database.db
      .insertInto('packages')
      .values({
        scope: 'ada',
        name: 'indexed',
        source_repo: 'ada/skills',
        repo_owner: 'ada',
        skill_md_raw: skillMd('indexed'),
        frontmatter: '{}',
        first_indexed_at: new Date(),
        last_indexed_at: new Date(),
        last_commit_sha: null,
        version: null,
        category: null,
        language: null,
        repo_url: null,
        homepage_url: null,
        author: null,
        license: null,
      })
      .execute();
    await expectRefused(
      footprint,
      async () => put('/api/packages/@ada/indexed/versions/1.0.0', await skill('indexed'), adaToken),
      409,
      /indexed from its repository ada\/skills/,
    );
  });

  it('owners deprecate and yank a hosted package with a publish token; a read token may not', async () => {
    const dep = await request(app)
      .put('/api/packages/@ada/tool/deprecation')
      .set('Authorization', `Bearer ${adaToken}`)
      .send({ message: 'use @ada/other' });
    expect(dep.status, JSON.stringify(dep.body)).toBe(200);
    expect(dep.body).toMatchObject({ status: 'deprecated', deprecationMessage: 'use @ada/other' });
    const yank = await request(app)
      .put('/api/packages/@ada/tool/versions/1.1.0/yank')
      .set('Authorization', `Bearer ${adaToken}`)
      .send({ reason: 'broken' });
    expect(yank.status, JSON.stringify(yank.body)).toBe(200);
    expect(yank.body).toMatchObject({ yanked: true, latest: '1.0.0' });
    const reader = await newToken(ada, { name: 'reader-2', permission: 'read' });
    const refused = await request(app)
      .delete('/api/packages/@ada/tool/versions/1.1.0/yank')
      .set('Authorization', `Bearer ${reader.token}`);
    expect(refused.status).toBe(403);
    const eve = await newToken(await signIn('eve-2'));
    const outsider = await request(app)
      .delete('/api/packages/@ada/tool/deprecation')
      .set('Authorization', `Bearer ${eve.token}`);
    expect(outsider.status).toBe(403);
    expect(
      (
        await request(app)
          .delete('/api/packages/@ada/tool/deprecation')
          .set('Authorization', `Bearer ${adaToken}`)
      ).status,
    ).toBe(200);
    expect(
      (
        await request(app)
          .delete('/api/packages/@ada/tool/versions/1.1.0/yank')
          .set('Authorization', `Bearer ${adaToken}`)
      ).status,
    ).toBe(200);
  });
});

describe('trusted publishing', () => {
  const run = { repository: 'ada-gh/tool-src', ownerId: 7001, repositoryId: 7002 };

  async function trust(pkg: string, body: Record<string, unknown>) {
    const res = await ada
      .post(`/api/packages/@ada/${pkg}/trusted-publishers`)
      .set('Origin', ORIGIN)
      .send(body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }

  beforeAll(async () => {
    await trust('tool', {
      issuer: github.issuer,
      repository: 'Ada-GH/Tool-Src',
      workflow: 'publish.yml',
      environment: 'release',
    });
  });

  const actions = (overrides: Record<string, unknown> = {}, options: Record<string, unknown> = {}) =>
    github.issue(
      { ...actionsClaims({ ...run, environment: 'release' }), ...overrides },
      { audience: PUBLIC_URL, ...options },
    );

  it('a GitHub Actions token of the trusted repository, workflow and environment uploads', async () => {
    const token = await actions();
    const res = await put(
      '/api/packages/@ada/tool/versions/2.0.0?sourcePath=skills/tool',
      await skill('tool', 'version: 2.0.0\n'),
      token,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ proof: 'oidc', version: '2.0.0' });
    // What its attestation will name: the token's repository (on the issuer's origin, as GitHub
    // Enterprise Server's), the commit the job ran on, the folder the uploader named, the run.
    expect(UploadResultSchema.parse(res.body).ciSource).toEqual({
      repository: `${github.issuer}/ada-gh/tool-src`,
      commit: 'a'.repeat(40),
      path: 'skills/tool',
      run: `${github.issuer}/ada-gh/tool-src/actions/runs/4242/attempts/1`,
    });
    const event = await database.db
      .selectFrom('account_audit_events')
      .select(['actor_id', 'details'])
      .where('target', '=', '@ada/tool@2.0.0')
      .executeTakeFirstOrThrow();
    expect(event.actor_id).toBeNull();
    expect(event.details).toMatchObject({
      proof: 'oidc',
      issuer: github.issuer,
      repository: 'ada-gh/tool-src',
      workflow: '.github/workflows/publish.yml',
      environment: 'release',
    });
    // The same token again: refused as a replay, nothing stored.
    await expectRefused(
      footprint,
      async () =>
        put('/api/packages/@ada/tool/versions/2.0.1', await skill('tool', 'version: 2.0.1\n'), token),
      401,
      /used before/,
    );
  });

  it('another workflow, no environment, another repository: 403 naming the identity; nothing stored', async () => {
    const body = await skill('tool', 'version: 3.0.0\n');
    const path = '/api/packages/@ada/tool/versions/3.0.0';
    const wrongWorkflow = await github.issue(
      actionsClaims({ ...run, environment: 'release', workflowFile: 'ci.yml' }),
      { audience: PUBLIC_URL },
    );
    await expectRefused(
      footprint,
      () => put(path, body, wrongWorkflow),
      403,
      /ci\.yml.* is not a trusted publisher of @ada\/tool/,
    );
    const noEnvironment = await github.issue(actionsClaims(run), { audience: PUBLIC_URL });
    await expectRefused(footprint, () => put(path, body, noEnvironment), 403, /not a trusted publisher/);
    const otherRepo = await github.issue(
      actionsClaims({ ...run, repository: 'mallory/tool-src', environment: 'release' }),
      { audience: PUBLIC_URL },
    );
    await expectRefused(
      footprint,
      () => put(path, body, otherRepo),
      403,
      /mallory\/tool-src.*not a trusted publisher/,
    );
    // A reusable workflow of another repository named publish.yml does not stand in for the trusted one.
    const reusable = await actions({
      workflow_ref: `${run.repository}/.github/workflows/ci.yml@refs/heads/main`,
      job_workflow_ref: 'mallory/shared/.github/workflows/publish.yml@refs/heads/main',
    });
    await expectRefused(footprint, () => put(path, body, reusable), 403, /not a trusted publisher/);
  });

  it('wrong audience, unknown issuer, forged signature: 401; nothing stored', async () => {
    const body = await skill('tool', 'version: 3.1.0\n');
    const path = '/api/packages/@ada/tool/versions/3.1.0';
    await expectRefused(
      footprint,
      async () => put(path, body, await actions({}, { audience: 'https://elsewhere.example' })),
      401,
      /wrong audience/,
    );
    await expectRefused(
      footprint,
      async () => put(path, body, await actions({}, { issuer: 'https://evil.example' })),
      401,
      /wrong issuer/,
    );
    await expectRefused(
      footprint,
      async () => put(path, body, await actions({}, { signWith: 'forged' })),
      401,
      /signature does not verify/,
    );
    await expectRefused(
      footprint,
      async () => put(path, body, await actions({}, { expiresIn: -120 })),
      401,
      /expired/,
    );
    await expectRefused(
      footprint,
      async () => put(path, body, await actions({}, { jti: false })),
      401,
      /"jti" claim/,
    );
  });

  it("the signer attests a CI upload from its token's source; a token upload has none to attest", async () => {
    const signer = signerFromPem(
      generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
    await registerSigningKey(database.db, signer);
    await attestPendingVersions(database.db, signer, { builderId: PUBLIC_URL });
    const attestations = async (ref: string) =>
      (await request(app).get(`/api/packages/@ada/${ref}/attestations`).expect(200)).body
        .attestations as Array<{
        envelope: DsseEnvelope;
      }>;
    const [attestation] = await attestations('tool/versions/2.0.0');
    const detail = (await request(app).get('/api/packages/@ada/tool/versions/2.0.0').expect(200)).body;
    const check = verifyAttestation(
      attestation?.envelope as DsseEnvelope,
      new Map([[signer.keyId, signer.publicKey]]),
      {
        scope: 'ada',
        name: 'tool',
        version: '2.0.0',
        integrity: detail.integrity,
        repository: 'ada-gh/tool-src',
        commit: 'a'.repeat(40),
      },
    );
    expect(check.ok, check.ok ? '' : check.problem).toBe(true);
    if (check.ok) {
      expect(check.statement.predicate.buildDefinition.buildType).toBe(BUILD_TYPE_CI_UPLOAD);
      expect(check.statement.predicate.buildDefinition.externalParameters).toMatchObject({
        path: 'skills/tool',
        workflow: { repository: 'ada-gh/tool-src', path: '.github/workflows/publish.yml' },
      });
    }
    // Ada's token upload of 1.0.0 names no source: nothing attests it.
    expect(await attestations('tool/versions/1.0.0')).toEqual([]);
  });

  it('a sourcePath that is not a relative folder: 400 before the body is read; nothing stored', async () => {
    for (const bad of ['../elsewhere', '/abs', 'a/../b', 'a//b', 'x'.repeat(501)]) {
      await expectRefused(
        footprint,
        async () =>
          put(
            `/api/packages/@ada/tool/versions/2.5.0?sourcePath=${encodeURIComponent(bad)}`,
            await skill('tool', 'version: 2.5.0\n'),
            await actions(),
          ),
        400,
        /sourcePath/,
      );
    }
  });

  it('a GitLab CI token from a second issuer, trusted by its project and CI configuration', async () => {
    await trust('tool', {
      issuer: gitlab.issuer,
      repository: 'ada-group/sub/tool',
      workflow: '.gitlab-ci.yml',
    });
    const job = { project: 'ada-group/sub/tool', projectId: 99 };
    const token = await gitlab.issue(gitlabClaims(job), { audience: PUBLIC_URL });
    const res = await put(
      '/api/packages/@ada/tool/versions/4.0.0',
      await skill('tool', 'version: 4.0.0\n'),
      token,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.proof).toBe('oidc');
    // GitLab's repository is the project on the issuing instance; its run is the job.
    expect(res.body.ciSource).toEqual({
      repository: `${gitlab.issuer}/ada-group/sub/tool`,
      commit: 'c'.repeat(40),
      path: '',
      run: `${gitlab.issuer}/ada-group/sub/tool/-/jobs/200`,
    });
    // The GitHub issuer's trusted publisher does not cover a GitLab token of the same name, nor the reverse.
    const otherConfig = await gitlab.issue(gitlabClaims({ ...job, config: 'ci/other.yml' }), {
      audience: PUBLIC_URL,
    });
    await expectRefused(
      footprint,
      async () =>
        put('/api/packages/@ada/tool/versions/4.1.0', await skill('tool', 'version: 4.1.0\n'), otherConfig),
      403,
      /not a trusted publisher/,
    );
  });

  it('a package with no trusted publisher: 403 saying so; the refused token is not spent', async () => {
    const token = await actions();
    await expectRefused(
      footprint,
      async () => put('/api/packages/@ada/from-web/versions/0.2.0', await skill('from-web'), token),
      403,
      /it has none/,
    );
    const used = await put(
      '/api/packages/@ada/tool/versions/5.0.0',
      await skill('tool', 'version: 5.0.0\n'),
      token,
    );
    expect(used.status, JSON.stringify(used.body)).toBe(201);
  });
});
