import { randomUUID } from 'node:crypto';
import type { RequestListener } from 'node:http';
import {
  PackageDetailSchema,
  PublishAcceptedSchema,
  PublishRunSchema,
  QUEUES,
  VersionDetailSchema,
  VersionListResponseSchema,
  WebhookResponseSchema,
  YankStateSchema,
} from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { indexSource } from '@pkgreg/indexer';
import { skillMd } from '@pkgreg/indexer/testing';
import { createLogger } from '@pkgreg/server-kit';
import { createRuntimeQueue, type RuntimeQueue } from '@pkgreg/tasks';
import {
  actionsClaims,
  FakeGitHub,
  type FakeRepo,
  type OidcIssuer,
  pingEvent,
  pushEvent,
  signWebhook,
  startOidcIssuer,
} from '@pkgreg/testing';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { expectRefused, publishingFootprint } from './publishing-helpers.js';

// docs/publishing.md against local servers speaking the real protocols (@pkgreg/testing): an OIDC issuer
// with its JWKS, and GitHub's REST API with accounts, user tokens and permissions. The registry's own
// code runs unmocked; jobs land in a real BullMQ queue (the worker's side is in runtime-worker's tests).

const PUBLIC_URL = 'https://registry.example';
const database = useTestDatabase();
const prefix = testKeyPrefix('publishing');
let gh: FakeGitHub;
let issuer: OidcIssuer;
let queue: RuntimeQueue;
let redis: Redis;
let app: RequestListener;

/** Every line the registry logs, at debug level, to check that no proof ever reaches a log. */
const logged: string[] = [];
const logger = createLogger('publishing-test', 'debug', { write: (line: string) => void logged.push(line) });

const skills = (owner: string, name: string, extra: Record<string, string> = {}): FakeRepo => ({
  owner,
  name,
  defaultBranch: 'main',
  stars: 3,
  license: 'MIT',
  homepage: null,
  files: {
    'pdf/SKILL.md': skillMd(['name: pdf', 'description: Fill PDF forms.']),
    'writer/SKILL.md': skillMd(['name: writer', 'description: Writes prose.']),
    ...extra,
  },
});

beforeAll(async () => {
  gh = new FakeGitHub('', 'https://github.example');
  await gh.start();
  gh.addRepo(skills('octo', 'skills'));
  gh.addRepo(skills('octo', 'other'));
  gh.addRepo(skills('acme', 'tools'));
  gh.addUser('ghu_octo', 'octo');
  gh.addUser('ghu_pusher', 'pusher', { 'octo/skills': 'push' });
  gh.addUser('ghu_maintainer', 'maintainer', { 'octo/skills': 'maintain' });
  gh.addUser('ghu_reader', 'reader', { 'octo/skills': 'pull' });
  gh.addUser('ghu_revoked', 'revoked', { 'octo/skills': 'admin' });
  gh.revoked.add('ghu_revoked');
  gh.addUser('ghu_acme', 'acme');
  issuer = await startOidcIssuer();
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix });
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}:` });
  const env = loadEnv({
    OIDC_ISSUER: issuer.issuer,
    REGISTRY_PUBLIC_URL: PUBLIC_URL,
    GITHUB_API_URL: gh.apiUrl,
    GITHUB_WEB_URL: 'https://github.example',
    DETAIL_CACHE_TTL_MS: '0',
  });
  app = createApp({ db: database.db, redis, logger, env, queue });
});

afterAll(async () => {
  await queue?.queue(QUEUES.indexing).obliterate({ force: true });
  await queue?.close();
  redis?.disconnect();
  await gh?.stop();
  await issuer?.close();
});

function oidcToken(
  repository: string,
  options: Parameters<OidcIssuer['issue']>[1] & { ref?: string; claims?: Record<string, unknown> } = {
    audience: PUBLIC_URL,
  },
) {
  const [owner = '', name = ''] = repository.split('/');
  const claims = actionsClaims({
    repository,
    ownerId: gh.accountId(owner),
    repositoryId: gh.repoId(owner, name),
    ...(options.ref ? { ref: options.ref } : {}),
  });
  return issuer.issue({ ...claims, ...options.claims }, options);
}

const publish = (token: string | null, body: unknown) => {
  const req = request(app).post('/api/publish').set('Content-Type', 'application/json');
  return (token === null ? req : req.set('Authorization', `Bearer ${token}`)).send(JSON.stringify(body));
};

/** Everything a request could leave behind: rows and queued jobs. */
const footprint = () => publishingFootprint(database.db, queue);

/** Asserts a refusal: its status, its `{error}` message, and that nothing was written or queued. */
const refused = (call: () => PromiseLike<request.Response>, status: number, message: RegExp) =>
  expectRefused(footprint, call, status, message);

const jobOf = (runId: string) => queue.queue(QUEUES.indexing).getJob(`publish-${runId}`);

describe('POST /api/publish: happy paths', () => {
  it('an OIDC token from the repository workflow: 202, a queued run, a job without the token, the scope bound', async () => {
    const token = await oidcToken('octo/skills');
    const res = await publish(token, { repository: 'octo/skills' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const accepted = PublishAcceptedSchema.parse(res.body);
    expect(accepted).toMatchObject({
      status: 'queued',
      repository: 'octo/skills',
      scope: 'octo',
      proof: 'oidc',
      ref: null,
      statusUrl: `/api/publish/${accepted.runId}`,
      // A CI log may be public: no webhook secret is ever shown to an OIDC publish.
      webhook: null,
    });
    const job = await jobOf(accepted.runId);
    expect(job?.name).toBe('registry.index');
    expect(job?.data).toEqual({
      kind: 'github',
      locator: 'octo/skills',
      ref: null,
      proof: 'oidc',
      ownerId: gh.accountId('octo'),
      repositoryId: gh.repoId('octo', 'skills'),
      publishRunId: accepted.runId,
    });
    expect(JSON.stringify(job?.data)).not.toContain(token.slice(0, 20));
    const owner = await database.db
      .selectFrom('scope_owners')
      .selectAll()
      .where('scope', '=', 'octo')
      .executeTakeFirst();
    expect(owner).toMatchObject({ owner_id: gh.accountId('octo'), owner_login: 'octo', bound_by: 'publish' });
    // The workflow run the token vouched for, kept for the versions' attestations (docs/provenance.md).
    const claims = await database.db
      .selectFrom('publish_runs')
      .select(['oidc_workflow_ref', 'oidc_run_id', 'oidc_sha', 'oidc_event_name'])
      .where('id', '=', accepted.runId)
      .executeTakeFirstOrThrow();
    expect(claims).toEqual({
      oidc_workflow_ref: expect.stringMatching(/^octo\/skills\/\.github\/workflows\/publish\.yml@/),
      oidc_run_id: '4242',
      oidc_sha: 'a'.repeat(40),
      oidc_event_name: 'push',
    });

    const run = await request(app).get(accepted.statusUrl).expect(200);
    expect(PublishRunSchema.parse(run.body)).toMatchObject({
      runId: accepted.runId,
      status: 'queued',
      result: null,
    });
  });

  it('a branch named: the token must come from a run on it', async () => {
    const token = await oidcToken('octo/skills', { audience: PUBLIC_URL, ref: 'refs/heads/release' });
    const res = await publish(token, { repository: 'octo/skills', ref: 'release' }).expect(202);
    expect((await jobOf(res.body.runId))?.data).toMatchObject({ ref: 'release' });
  });

  it('a user token with push access: 202 and the webhook secret, once', async () => {
    const first = await publish('ghu_pusher', { repository: 'octo/skills' }).expect(202);
    const accepted = PublishAcceptedSchema.parse(first.body);
    expect(accepted.proof).toBe('token');
    expect(accepted.webhook).toEqual({
      url: `${PUBLIC_URL}/api/hooks/github`,
      secret: expect.stringMatching(/^whsec_[0-9a-f]{64}$/),
      contentType: 'application/json',
      events: ['push'],
    });
    // Not stored: only the salt it is derived from.
    const row = await database.db.selectFrom('source_webhooks').selectAll().executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(accepted.webhook?.secret.slice(6));

    const again = await publish('ghu_maintainer', { repository: 'octo/skills' }).expect(202);
    expect(again.body.webhook).toBeNull();
    const owner = await publish('ghu_octo', { repository: 'OCTO/Skills' }).expect(202);
    expect(owner.body).toMatchObject({ repository: 'octo/skills', webhook: null });

    const rotated = await publish('ghu_octo', {
      repository: 'octo/skills',
      rotateWebhookSecret: true,
    }).expect(202);
    expect(rotated.body.webhook.secret).not.toBe(accepted.webhook?.secret);
  });
});

describe('POST /api/publish: refused proofs leave nothing behind', () => {
  it('no Authorization: 401 with a Bearer challenge', async () => {
    const res = await refused(
      () => publish(null, { repository: 'acme/tools' }),
      401,
      /Authorization: Bearer/,
    );
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="pkgreg", error="invalid_token"/);
  });

  it('an expired OIDC token', async () => {
    const token = await oidcToken('acme/tools', { audience: PUBLIC_URL, expiresIn: -120 });
    await refused(() => publish(token, { repository: 'acme/tools' }), 401, /OIDC token refused: expired at /);
  });

  it('an OIDC token for another audience', async () => {
    const token = await oidcToken('acme/tools', { audience: 'https://elsewhere.example' });
    await refused(
      () => publish(token, { repository: 'acme/tools' }),
      401,
      /wrong audience: it is for "https:\/\/elsewhere.example"; request it for https:\/\/registry.example/,
    );
  });

  it('an OIDC token of another repository', async () => {
    const token = await oidcToken('octo/other');
    await refused(
      () => publish(token, { repository: 'acme/tools' }),
      403,
      /OIDC token is for repository octo\/other, not acme\/tools/,
    );
  });

  it('an OIDC token signed with a key the issuer never published', async () => {
    const token = await oidcToken('acme/tools', { audience: PUBLIC_URL, signWith: 'foreign' });
    await refused(() => publish(token, { repository: 'acme/tools' }), 401, /unknown signing key "foreign-/);
  });

  it("an OIDC token under the issuer's key id but signed with another key", async () => {
    const token = await oidcToken('acme/tools', { audience: PUBLIC_URL, signWith: 'forged' });
    await refused(() => publish(token, { repository: 'acme/tools' }), 401, /signature does not verify/);
  });

  it('an OIDC token from another issuer', async () => {
    const token = await oidcToken('acme/tools', { audience: PUBLIC_URL, issuer: 'https://evil.example' });
    await refused(() => publish(token, { repository: 'acme/tools' }), 401, /wrong issuer: .*evil.example/);
  });

  it('an OIDC token from a run on another branch than the one named', async () => {
    const token = await oidcToken('acme/tools', { audience: PUBLIC_URL, ref: 'refs/heads/feature' });
    await refused(
      () => publish(token, { repository: 'acme/tools', ref: 'main' }),
      403,
      /issued to a run on refs\/heads\/feature, not refs\/heads\/main/,
    );
  });

  it('an OIDC token without the GitHub claims', async () => {
    const token = await oidcToken('acme/tools', {
      audience: PUBLIC_URL,
      claims: { repository_owner_id: undefined },
    });
    await refused(() => publish(token, { repository: 'acme/tools' }), 401, /"repository_owner_id" claim/);
  });

  it('a JWT-shaped token that is no JWT', async () => {
    const fake = `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.e30.c2ln`;
    await refused(() => publish(fake, { repository: 'acme/tools' }), 401, /wrong issuer|well-formed/);
  });

  it('a revoked user token; a user who may only read; a repository the token cannot see', async () => {
    await refused(
      () => publish('ghu_revoked', { repository: 'octo/skills' }),
      401,
      /GitHub refused the token/,
    );
    await refused(
      () => publish('ghu_reader', { repository: 'octo/skills' }),
      403,
      /cannot push to octo\/skills: push or admin access is required/,
    );
    await refused(() => publish('ghu_reader', { repository: 'octo/nothing' }), 404, /not found on GitHub/);
  });

  it('a bad body is a 400 before any proof is asked for', async () => {
    await refused(
      () => publish('ghu_octo', { repository: 'not a repo' }),
      400,
      /repository: repository must be/,
    );
    await refused(
      () => publish('ghu_octo', { repository: 'octo/skills', ref: '../x' }),
      400,
      /ref must be a branch/,
    );
  });

  it('rotating the webhook secret from CI is refused (a CI log is no place for a secret)', async () => {
    const token = await oidcToken('acme/tools');
    await refused(
      () => publish(token, { repository: 'acme/tools', rotateWebhookSecret: true }),
      400,
      /needs a user token/,
    );
  });

  it('GET /api/publish/{runId}: 400 for a malformed id, 404 for an unknown one', async () => {
    await request(app).get('/api/publish/nope').expect(400, { error: 'runId must be a UUID' });
    await request(app)
      .get('/api/publish/6f1c1a4e-0000-4000-8000-000000000000')
      .expect(404, { error: 'Publish run not found' });
  });
});

describe('scope ownership', () => {
  it('a renamed account keeps its scope; a new account on the freed login gets nothing', async () => {
    gh.addRepo(skills('sam', 'kit'));
    gh.addUser('ghu_sam', 'sam');
    const first = await publish('ghu_sam', { repository: 'sam/kit' }).expect(202);
    expect(first.body.scope).toBe('sam');

    gh.renameOwner('sam', 'samuel');
    const renamed = await publish('ghu_sam', { repository: 'samuel/kit' }).expect(202);
    expect(renamed.body).toMatchObject({ repository: 'samuel/kit', scope: 'sam' });
    const oidc = await oidcToken('samuel/kit');
    expect((await publish(oidc, { repository: 'samuel/kit' }).expect(202)).body.scope).toBe('sam');

    // Someone registers the freed login and a repository of the same name.
    gh.takeLogin('sam');
    gh.addRepo(skills('sam', 'kit'));
    gh.addUser('ghu_impostor', 'sam');
    await refused(
      () => publish('ghu_impostor', { repository: 'sam/kit' }),
      403,
      /scope @sam belongs to the code-host account with id \d+ \(last seen as "samuel"\); "sam" is now account \d+/,
    );
    const impostorOidc = await oidcToken('sam/kit');
    await refused(() => publish(impostorOidc, { repository: 'sam/kit' }), 403, /scope @sam belongs to/);
  });

  it('a repository the operator indexes from a local clone cannot be published too (409)', async () => {
    await database.db
      .insertInto('indexed_sources')
      .values({
        kind: 'git',
        locator: '/srv/clones/acme-tools',
        source_repo: 'acme/tools',
        etags: '{}',
        repo_meta: '{}',
        ref: null,
        repository_id: null,
      })
      .execute();
    await refused(() => publish('ghu_acme', { repository: 'acme/tools' }), 409, /indexed from a local clone/);
    await database.db.deleteFrom('indexed_sources').where('kind', '=', 'git').execute();
  });
});

describe('POST /api/hooks/github', () => {
  let secret: string;
  const hookRepo = () => ({
    fullName: 'acme/tools',
    id: gh.repoId('acme', 'tools'),
    ownerId: gh.accountId('acme'),
  });

  beforeAll(async () => {
    const res = await publish('ghu_acme', { repository: 'acme/tools' }).expect(202);
    secret = res.body.webhook.secret;
  });

  const deliver = (event: string, payload: unknown, signature?: string) => {
    const body = JSON.stringify(payload);
    const req = request(app)
      .post('/api/hooks/github')
      .set('Content-Type', 'application/json')
      .set('X-GitHub-Event', event)
      // A new GUID per delivery, as GitHub gives them (a repeated one is a replay: see below).
      .set('X-GitHub-Delivery', randomUUID());
    return (signature === undefined ? req : req.set('X-Hub-Signature-256', signature)).send(body);
  };
  const signed = (event: string, payload: unknown) =>
    deliver(event, payload, signWebhook(secret, JSON.stringify(payload)));

  it('ping is answered 200 pong', async () => {
    const res = await signed('ping', pingEvent(hookRepo())).expect(200);
    expect(WebhookResponseSchema.parse(res.body)).toMatchObject({ event: 'ping', action: 'pong' });
  });

  it('a push to the default branch queues a re-index with the webhook as proof', async () => {
    const res = await signed('push', pushEvent(hookRepo())).expect(202);
    const body = WebhookResponseSchema.parse(res.body);
    expect(body.action).toBe('queued');
    const job = await jobOf(body.runId ?? '');
    expect(job?.data).toMatchObject({ kind: 'github', locator: 'acme/tools', proof: 'webhook' });
    expect(job?.data).not.toHaveProperty('ref');
    const run = await request(app).get(`/api/publish/${body.runId}`).expect(200);
    expect(run.body).toMatchObject({ proof: 'webhook', scope: 'acme', status: 'queued' });
  });

  it('a push to another branch and other events are answered 200 and ignored', async () => {
    const other = await signed('push', pushEvent(hookRepo(), 'refs/heads/feature')).expect(200);
    expect(other.body).toMatchObject({
      action: 'ignored',
      reason: expect.stringMatching(/refs\/heads\/main/),
    });
    const issues = await signed('issues', { ...pingEvent(hookRepo()), action: 'opened' }).expect(200);
    expect(issues.body).toMatchObject({ action: 'ignored' });
  });

  it('a missing or wrong signature is 401 and changes nothing', async () => {
    const payload = pushEvent(hookRepo());
    await refused(() => deliver('push', payload), 401, /X-Hub-Signature-256 is required/);
    await refused(
      () => deliver('push', payload, signWebhook('whsec_not-the-secret', JSON.stringify(payload))),
      401,
      /does not match/,
    );
    // Signed over other bytes than those sent (a re-serialised body).
    await refused(
      () => deliver('push', payload, signWebhook(secret, JSON.stringify(payload, null, 2))),
      401,
      /does not match/,
    );
    await refused(() => deliver('push', payload, 'sha256=zz'), 401, /does not match/);
    const unknown = { ...hookRepo(), id: 424242 };
    await refused(() => signed('push', pushEvent(unknown)), 401, /does not match/);
  });

  it('a body that is no delivery is 400', async () => {
    await refused(() => deliver('push', { hello: 'world' }, 'sha256=00'), 400, /names no repository/);
  });
});

describe('owners: deprecate and yank', () => {
  const base = '/api/packages/@octo/pdf';
  const github = () => ({ apiUrl: gh.apiUrl, webUrl: 'https://github.example' });
  const crawl = () =>
    indexSource({ db: database.db, github: github() }, { kind: 'github', locator: 'octo/skills' });

  beforeAll(async () => {
    await crawl();
    const repo = gh.repos.get('octo/skills') as FakeRepo;
    repo.files['pdf/SKILL.md'] = skillMd(['name: pdf', 'description: Fill PDF forms.', 'version: 1.1.0']);
    await crawl();
    repo.files['pdf/SKILL.md'] = skillMd(['name: pdf', 'description: Fill PDF forms.', 'version: 1.2.0']);
    await crawl();
  });

  it('a crawl leaves packages unverified; a proven run verifies what it writes', async () => {
    const detail = await request(app).get(base).expect(200);
    expect(detail.body.verified).toBe(false);
    await indexSource(
      { db: database.db, github: github() },
      { kind: 'github', locator: 'octo/skills', proof: 'token' },
    );
    expect((await request(app).get(base).expect(200)).body.verified).toBe(true);
  });

  it('deprecate with a message; info shows it; a re-index keeps it; undeprecate lifts it', async () => {
    const put = request(app).put(`${base}/deprecation`).set('Authorization', 'Bearer ghu_pusher');
    const res = await put.send({ message: 'Use @octo/pdf-pro instead' }).expect(200);
    expect(res.body).toEqual({
      scope: 'octo',
      name: 'pdf',
      status: 'deprecated',
      deprecationMessage: 'Use @octo/pdf-pro instead',
    });
    const detail = PackageDetailSchema.parse((await request(app).get(base).expect(200)).body);
    expect(detail).toMatchObject({ status: 'deprecated', deprecationMessage: 'Use @octo/pdf-pro instead' });
    await crawl();
    expect((await request(app).get(base).expect(200)).body.status).toBe('deprecated');

    const lifted = await request(app)
      .delete(`${base}/deprecation`)
      .set('Authorization', 'Bearer ghu_octo')
      .expect(200);
    expect(lifted.body).toMatchObject({ status: 'active', deprecationMessage: null });
    expect((await request(app).get(base).expect(200)).body).toMatchObject({
      status: 'active',
      deprecationMessage: null,
    });
  });

  it('yank: exact stays fetchable, latest and the detail move to the newest not yanked; unyank undoes', async () => {
    const yanked = await request(app)
      .put(`${base}/versions/1.2.0/yank`)
      .set('Authorization', `Bearer ${await oidcToken('octo/skills')}`)
      .send({ reason: 'broke forms' })
      .expect(200);
    expect(YankStateSchema.parse(yanked.body)).toEqual({
      scope: 'octo',
      name: 'pdf',
      version: '1.2.0',
      yanked: true,
      yankReason: 'broke forms',
      latest: '1.1.0',
    });
    const latest = VersionDetailSchema.parse(
      (await request(app).get(`${base}/versions/latest`).expect(200)).body,
    );
    expect(latest.version).toBe('1.1.0');
    const exact = VersionDetailSchema.parse(
      (await request(app).get(`${base}/versions/1.2.0`).expect(200)).body,
    );
    expect(exact).toMatchObject({ yanked: true, yankReason: 'broke forms' });
    await request(app).get(`${base}/versions/1.2.0/archive.tgz`).expect(200);
    const list = VersionListResponseSchema.parse(
      (await request(app).get(`${base}/versions`).expect(200)).body,
    );
    expect(list.data.map((v) => [v.version, v.yanked])).toEqual([
      ['1.2.0', true],
      ['1.1.0', false],
      [expect.stringMatching(/^0\.0\.0-/), false],
    ]);
    expect((await request(app).get(base).expect(200)).body.version).toBe('1.1.0');
    // A re-index of the same folder makes no new version and keeps the yank.
    await crawl();
    expect((await request(app).get(base).expect(200)).body.version).toBe('1.1.0');

    const undone = await request(app)
      .delete(`${base}/versions/1.2.0/yank`)
      .set('Authorization', 'Bearer ghu_octo')
      .expect(200);
    expect(undone.body).toMatchObject({ yanked: false, latest: '1.2.0' });
    expect((await request(app).get(`${base}/versions/latest`).expect(200)).body.version).toBe('1.2.0');
  });

  it('every version yanked: latest is a 404 that says so', async () => {
    const auth = { Authorization: 'Bearer ghu_octo' };
    const versions = (await request(app).get('/api/packages/@octo/writer/versions').expect(200)).body.data;
    for (const v of versions)
      await request(app)
        .put(`/api/packages/@octo/writer/versions/${v.version}/yank`)
        .set(auth)
        .send({})
        .expect(200);
    await request(app)
      .get('/api/packages/@octo/writer/versions/latest')
      .expect(404, { error: 'Version not found: every version of @octo/writer is yanked' });
    for (const v of versions)
      await request(app)
        .delete(`/api/packages/@octo/writer/versions/${v.version}/yank`)
        .set(auth)
        .expect(200);
  });

  it('refusals: no proof, read-only user, other repository, latest or a range, unknown version', async () => {
    await request(app).put(`${base}/deprecation`).send({}).expect(401);
    const reader = await request(app)
      .put(`${base}/deprecation`)
      .set('Authorization', 'Bearer ghu_reader')
      .send({});
    expect(reader.status).toBe(403);
    const other = await request(app)
      .put(`${base}/versions/1.2.0/yank`)
      .set('Authorization', `Bearer ${await oidcToken('octo/other')}`)
      .send({});
    expect(other.status).toBe(403);
    expect(other.body.error).toMatch(/is for repository octo\/other, not octo\/skills/);
    const auth = { Authorization: 'Bearer ghu_octo' };
    await request(app).put(`${base}/versions/latest/yank`).set(auth).send({}).expect(400);
    await request(app).put(`${base}/versions/%5E1.2/yank`).set(auth).send({}).expect(400);
    await request(app)
      .put(`${base}/versions/9.9.9/yank`)
      .set(auth)
      .send({})
      .expect(404, { error: 'Version not found' });
    await request(app).put('/api/packages/@octo/nope/deprecation').set(auth).send({}).expect(404);
    const detail = (await request(app).get(base).expect(200)).body;
    expect(detail.status).toBe('active');
  });
});

describe('proofs are never kept', () => {
  it('no token, OIDC or user, reaches a log line, a stored row or a job', async () => {
    const oidc = await oidcToken('octo/skills');
    await publish(oidc, { repository: 'octo/skills' }).expect(202);
    await publish('ghu_octo', { repository: 'octo/skills' }).expect(202);
    await publish('ghu_reader', { repository: 'octo/skills' }).expect(403);
    await publish(`${oidc.slice(0, -4)}AAAA`, { repository: 'octo/skills' }).expect(401);
    expect(logged.length).toBeGreaterThan(0);
    const stored = JSON.stringify(
      await Promise.all(
        (['publish_runs', 'scope_owners', 'source_webhooks', 'indexed_sources'] as const).map((table) =>
          database.db.selectFrom(table).selectAll().execute(),
        ),
      ),
    );
    const jobs = JSON.stringify(
      (await queue.queue(QUEUES.indexing).getJobs(['waiting', 'delayed', 'active'])).map((job) => job.data),
    );
    for (const secret of [oidc.split('.')[2] ?? oidc, 'ghu_octo', 'ghu_reader', 'ghu_pusher']) {
      for (const place of [logged.join('\n'), stored, jobs]) expect(place).not.toContain(secret);
    }
  });
});
