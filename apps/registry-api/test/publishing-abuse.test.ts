import { randomUUID } from 'node:crypto';
import type { RequestListener } from 'node:http';
import { PublishAcceptedSchema, QUEUES, WebhookResponseSchema } from '@pkgreg/contracts';
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
  type WebhookRepository,
} from '@pkgreg/testing';
import { Redis } from 'ioredis';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { expectRefused, publishingFootprint } from './publishing-helpers.js';

// docs/publishing.md against a hostile publisher (issue 26): a webhook secret proves its own repository
// and nothing else, a delivery or an OIDC token is taken once, and publishes and deliveries are rate
// limited. Local servers speak GitHub's REST API and its OIDC issuer; the registry's code is unmocked
// and its jobs land in a real BullMQ queue (what the worker then does is in runtime-worker's tests).

const PUBLIC_URL = 'https://registry.example';
const database = useTestDatabase();
const prefix = testKeyPrefix('publishing-abuse');
let gh: FakeGitHub;
let issuer: OidcIssuer;
let queue: RuntimeQueue;
let redis: Redis;
let app: RequestListener;
const logger = createLogger('publishing-abuse-test', 'silent');

const repo = (owner: string, name: string): FakeRepo => ({
  owner,
  name,
  defaultBranch: 'main',
  stars: 1,
  license: 'MIT',
  homepage: null,
  files: { [`${name}/SKILL.md`]: skillMd([`name: ${name}`, 'description: A skill.']) },
});

function env(extra: Record<string, string> = {}) {
  return loadEnv({
    OIDC_ISSUER: issuer.issuer,
    REGISTRY_PUBLIC_URL: PUBLIC_URL,
    GITHUB_API_URL: gh.apiUrl,
    GITHUB_WEB_URL: 'https://github.example',
    DETAIL_CACHE_TTL_MS: '0',
    ...extra,
  });
}

beforeAll(async () => {
  gh = new FakeGitHub('', 'https://github.example');
  await gh.start();
  for (const [owner, name] of [
    ['alice', 'skills'],
    ['alice', 'unpublished'],
    ['victim', 'skills'],
    ['carol', 'kit'],
    ['erin', 'tools'],
    ['rita', 'renamed'],
    ['lim', 'one'],
    ['lim', 'two'],
    ['jay', 'kit'],
  ] as const) {
    gh.addRepo(repo(owner, name));
    gh.addUser(`ghu_${owner}`, owner);
  }
  gh.addUser('ghu_dave', 'dave');
  gh.addUser('ghu_frank', 'frank');
  issuer = await startOidcIssuer();
  queue = createRuntimeQueue({ connection: TEST_REDIS_URL, prefix });
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}:` });
  app = createApp({ db: database.db, redis, logger, env: env(), queue });
});

afterAll(async () => {
  await queue?.queue(QUEUES.indexing).obliterate({ force: true });
  await queue?.close();
  redis?.disconnect();
  await gh?.stop();
  await issuer?.close();
});

/** Each scenario its own client address (loopback is a trusted proxy), so the limits stay apart. */
// A new documentation address per call: a random one repeats (birthday odds over ~30 calls), and a
// repeat spends another test's per-address budget.
const TEST_NETS = ['198.51.100', '203.0.113', '192.0.2'];
let addresses = 0;
const address = () => {
  addresses += 1;
  return `${TEST_NETS[Math.floor(addresses / 254) % TEST_NETS.length]}.${(addresses % 254) + 1}`;
};

function publish(target: RequestListener, token: string | null, body: unknown, from = address()) {
  const req = request(target)
    .post('/api/publish')
    .set('Content-Type', 'application/json')
    .set('X-Forwarded-For', from);
  return (token === null ? req : req.set('Authorization', `Bearer ${token}`)).send(JSON.stringify(body));
}

interface Deliver {
  event?: string;
  payload: unknown;
  secret?: string;
  deliveryId?: string;
  from?: string;
  target?: RequestListener;
}

/** A delivery as GitHub sends it: the event, a delivery GUID and the signature of the raw body. */
function deliver({ event = 'push', payload, secret, deliveryId, from, target = app }: Deliver) {
  const body = JSON.stringify(payload);
  const req = request(target)
    .post('/api/hooks/github')
    .set('Content-Type', 'application/json')
    .set('X-GitHub-Event', event)
    .set('X-GitHub-Delivery', deliveryId ?? randomUUID())
    .set('X-Forwarded-For', from ?? address());
  return (secret === undefined ? req : req.set('X-Hub-Signature-256', signWebhook(secret, body))).send(body);
}

const hookRepo = (owner: string, name: string, overrides: Partial<WebhookRepository> = {}) => ({
  fullName: `${owner}/${name}`,
  id: gh.repoId(owner, name),
  ownerId: gh.accountId(owner),
  ...overrides,
});

/** Everything a request could leave behind: rows and queued jobs. */
const footprint = () => publishingFootprint(database.db, queue);

/** Asserts a refusal: its status, its `{error}` message, and that nothing was written or queued. */
const refused = (call: () => PromiseLike<request.Response>, status: number, message: RegExp) =>
  expectRefused(footprint, call, status, message);

const jobOf = async (runId: string | null) =>
  (await queue.queue(QUEUES.indexing).getJob(`publish-${runId}`))?.data;

/** Publishes with the owner's user token and returns the webhook secret it makes (a new one each time). */
async function secretOf(owner: string, name: string): Promise<string> {
  const res = await publish(app, `ghu_${owner}`, {
    repository: `${owner}/${name}`,
    rotateWebhookSecret: true,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const secret = PublishAcceptedSchema.parse(res.body).webhook?.secret;
  if (!secret) throw new Error('no secret shown');
  return secret;
}

async function oidcToken(repository: string, options: { jti?: string | false; audience?: string } = {}) {
  const [owner = '', name = ''] = repository.split('/');
  const claims = actionsClaims({
    repository,
    ownerId: gh.accountId(owner),
    repositoryId: gh.repoId(owner, name),
  });
  return issuer.issue(claims, {
    audience: options.audience ?? PUBLIC_URL,
    ...(options.jti !== undefined ? { jti: options.jti } : {}),
  });
}

describe('a webhook secret proves its own repository, by id, and nothing else', () => {
  let alice: string;
  beforeAll(async () => {
    alice = await secretOf('alice', 'skills');
    await secretOf('victim', 'skills');
  });

  it("a payload naming another repository (any spelling) queues the secret's own repository only", async () => {
    const own = { id: gh.repoId('alice', 'skills'), ownerId: gh.accountId('alice') };
    for (const fullName of ['victim/skills', 'VICTIM/Skills', 'victim/skills.git', '../victim', 'x']) {
      const res = await deliver({ payload: pushEvent({ ...own, fullName }), secret: alice });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      const body = WebhookResponseSchema.parse(res.body);
      expect(await jobOf(body.runId)).toEqual({
        kind: 'github',
        locator: 'alice/skills',
        proof: 'webhook',
        ownerId: gh.accountId('alice'),
        repositoryId: gh.repoId('alice', 'skills'),
        publishRunId: body.runId,
      });
      const run = await request(app).get(`/api/publish/${body.runId}`).expect(200);
      expect(run.body).toMatchObject({ repository: 'alice/skills', scope: 'alice', proof: 'webhook' });
    }
    const victimRuns = await database.db
      .selectFrom('publish_runs')
      .select('id')
      .where('locator', '=', 'victim/skills')
      .where('proof', '=', 'webhook')
      .execute();
    expect(victimRuns).toEqual([]);
  });

  it("a payload naming another owner (its id, its login) is refused: the secret is for alice's account", async () => {
    const repositoryId = gh.repoId('alice', 'skills');
    for (const [fullName, ownerId] of [
      ['victim/skills', gh.accountId('victim')],
      ['alice/skills', gh.accountId('victim')],
      ['alice/skills', 1],
    ] as const) {
      await refused(
        () => deliver({ payload: pushEvent({ fullName, id: repositoryId, ownerId }), secret: alice }),
        403,
        new RegExp(
          `issued to the repository's owner account ${gh.accountId('alice')}.*names account ${ownerId}`,
        ),
      );
    }
  });

  it("another repository's id is another secret: signed with alice's, it does not verify", async () => {
    for (const id of [
      gh.repoId('victim', 'skills'), // published: its own secret
      gh.repoId('alice', 'unpublished'), // alice's too, but never published: no secret at all
      424_242_424, // no such repository
    ]) {
      for (const fullName of ['alice/skills', 'victim/skills']) {
        await refused(
          () =>
            deliver({ payload: pushEvent({ fullName, id, ownerId: gh.accountId('alice') }), secret: alice }),
          401,
          /X-Hub-Signature-256 does not match/,
        );
      }
    }
    // The same answer for a ping: nothing tells a repository with a secret from one without.
    const ping = await deliver({
      event: 'ping',
      payload: pingEvent({ fullName: 'x/y', id: gh.repoId('victim', 'skills'), ownerId: 1 }),
      secret: alice,
    });
    const none = await deliver({
      event: 'ping',
      payload: pingEvent({ fullName: 'x/y', id: 424_242_424, ownerId: 1 }),
      secret: alice,
    });
    expect([ping.status, ping.body]).toEqual([none.status, none.body]);
  });

  it('a renamed repository: its deliveries (new name) still name the repository by its id', async () => {
    const secret = await secretOf('rita', 'renamed');
    gh.rename('rita/renamed', 'moved');
    const res = await deliver({ payload: pushEvent(hookRepo('rita', 'moved')), secret }).expect(202);
    expect(await jobOf(res.body.runId)).toMatchObject({
      locator: 'rita/renamed',
      repositoryId: gh.repoId('rita', 'moved'),
      ownerId: gh.accountId('rita'),
    });
  });

  it('a transferred repository: refused until its new owner publishes it; the old secret then dies', async () => {
    const before = await secretOf('carol', 'kit');
    gh.transfer('carol/kit', 'dave');
    // GitHub keeps the hook across the transfer and signs with the old secret, naming the new owner.
    await refused(
      () => deliver({ payload: pushEvent(hookRepo('dave', 'kit')), secret: before }),
      403,
      /publish the repository again/,
    );
    const republished = await publish(app, 'ghu_dave', { repository: 'dave/kit' }).expect(202);
    const after = PublishAcceptedSchema.parse(republished.body).webhook?.secret ?? '';
    expect(after).toMatch(/^whsec_/);
    expect(after).not.toBe(before);
    await refused(
      () => deliver({ payload: pushEvent(hookRepo('dave', 'kit')), secret: before }),
      401,
      /does not match/,
    );
    const ok = await deliver({ payload: pushEvent(hookRepo('dave', 'kit')), secret: after }).expect(202);
    expect(await jobOf(ok.body.runId)).toMatchObject({
      ownerId: gh.accountId('dave'),
      repositoryId: gh.repoId('dave', 'kit'),
    });
  });

  it('a transferred repository published by its new owner from CI: the old secret is dropped, none shown', async () => {
    const before = await secretOf('erin', 'tools');
    gh.transfer('erin/tools', 'frank');
    const oidc = await publish(app, await oidcToken('frank/tools'), { repository: 'frank/tools' });
    expect(oidc.status, JSON.stringify(oidc.body)).toBe(202);
    expect(oidc.body.webhook).toBeNull();
    await refused(
      () => deliver({ payload: pushEvent(hookRepo('frank', 'tools')), secret: before }),
      401,
      /does not match/,
    );
    // Its owner's user token makes a new one.
    const token = await publish(app, 'ghu_frank', { repository: 'frank/tools' }).expect(202);
    expect(token.body.webhook?.secret).toMatch(/^whsec_/);
  });
});

describe('a webhook secret from before owners were recorded', () => {
  it('is refused until a proven publish names its owner, which it then keeps (no new secret)', async () => {
    gh.addRepo(repo('olga', 'legacy'));
    gh.addUser('ghu_olga', 'olga');
    const secret = await secretOf('olga', 'legacy');
    const id = gh.repoId('olga', 'legacy');
    // As the migration leaves a row whose repository was never indexed.
    await database.db
      .updateTable('source_webhooks')
      .set({ owner_id: null })
      .where('repository_id', '=', id)
      .execute();
    await refused(
      () => deliver({ payload: pushEvent(hookRepo('olga', 'legacy')), secret }),
      403,
      /issued to the repository's owner account \(unknown\)/,
    );
    const again = await publish(app, await oidcToken('olga/legacy'), { repository: 'olga/legacy' }).expect(
      202,
    );
    expect(again.body.webhook).toBeNull();
    const row = await database.db
      .selectFrom('source_webhooks')
      .select('owner_id')
      .where('repository_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.owner_id).toBe(gh.accountId('olga'));
    await deliver({ payload: pushEvent(hookRepo('olga', 'legacy')), secret }).expect(202);
  });
});

describe('a delivery is taken once', () => {
  let secret: string;
  const jay = () => hookRepo('jay', 'kit');
  beforeAll(async () => {
    secret = await secretOf('jay', 'kit');
  });

  it('the same delivery again, under another id, or its id with another body: duplicate, nothing done', async () => {
    const payload = pushEvent(jay());
    const deliveryId = randomUUID();
    const first = await deliver({ payload, secret, deliveryId }).expect(202);
    expect(first.body.action).toBe('queued');
    const replays: Deliver[] = [
      { payload, secret, deliveryId }, // GitHub's redelivery, or a replay as captured
      { payload, secret, deliveryId: randomUUID() }, // the id is not signed: a replay under a new one
      { payload, secret, deliveryId: deliveryId.toUpperCase() },
      { payload: pushEvent(jay()), secret, deliveryId }, // a new push under a used id
      { payload, secret, deliveryId, from: address() }, // from elsewhere
    ];
    for (const replay of replays) {
      const before = await footprint();
      const res = await deliver(replay).expect(200);
      expect(WebhookResponseSchema.parse(res.body)).toEqual({
        event: 'push',
        action: 'duplicate',
        runId: null,
        reason: expect.stringMatching(/received before/),
      });
      expect(await footprint()).toEqual(before);
    }
    const ping = pingEvent(jay());
    await deliver({ event: 'ping', payload: ping, secret, deliveryId: 'ping-1' }).expect(200, {
      event: 'ping',
      action: 'pong',
      runId: null,
      reason: null,
    });
    const again = await deliver({ event: 'ping', payload: ping, secret, deliveryId: 'ping-1' }).expect(200);
    expect(again.body.action).toBe('duplicate');
  });

  it('an unsigned or badly signed request cannot use up a delivery id or a body', async () => {
    const payload = pushEvent(jay());
    const deliveryId = randomUUID();
    await refused(() => deliver({ payload, deliveryId }), 401, /is required/);
    await refused(() => deliver({ payload, deliveryId, secret: 'whsec_wrong' }), 401, /does not match/);
    const real = await deliver({ payload, secret, deliveryId }).expect(202);
    expect(real.body.action).toBe('queued');
  });

  it('a delivery without X-GitHub-Delivery, or with one that is no GUID, is a 400', async () => {
    const payload = pushEvent(jay());
    for (const deliveryId of ['', 'a b', 'x'.repeat(129), '../../etc', 'id;1']) {
      await refused(() => deliver({ payload, secret, deliveryId }), 400, /X-GitHub-Delivery is required/);
    }
    const body = JSON.stringify(payload);
    await refused(
      () =>
        request(app)
          .post('/api/hooks/github')
          .set('Content-Type', 'application/json')
          .set('X-GitHub-Event', 'push')
          .set('X-Hub-Signature-256', signWebhook(secret, body))
          .send(body),
      400,
      /X-GitHub-Delivery is required/,
    );
  });
});

describe('an OIDC token is accepted once (its jti)', () => {
  it('the same token twice: the second is refused and changes nothing', async () => {
    const token = await oidcToken('alice/skills');
    await publish(app, token, { repository: 'alice/skills' }).expect(202);
    const res = await refused(
      () => publish(app, token, { repository: 'alice/skills' }),
      401,
      /OIDC token refused: it was used before .*request a new token/,
    );
    expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    // Nor for an owner action, from anywhere.
    await indexSource(
      { db: database.db, github: { apiUrl: gh.apiUrl, webUrl: 'https://github.example' } },
      { kind: 'github', locator: 'alice/skills' },
    );
    const yank = await request(app)
      .put('/api/packages/@alice/skills/deprecation')
      .set('X-Forwarded-For', address())
      .set('Authorization', `Bearer ${token}`)
      .send({});
    expect([yank.status, yank.body.error]).toEqual([401, expect.stringMatching(/used before/)]);
  });

  it('another token carrying a used jti is refused; a token without one is refused', async () => {
    const jti = randomUUID();
    await publish(app, await oidcToken('alice/skills', { jti }), { repository: 'alice/skills' }).expect(202);
    await refused(
      async () => publish(app, await oidcToken('victim/skills', { jti }), { repository: 'victim/skills' }),
      401,
      /used before/,
    );
    await refused(
      async () =>
        publish(app, await oidcToken('alice/skills', { jti: false }), { repository: 'alice/skills' }),
      401,
      /the "jti" claim is missing or malformed/,
    );
  });

  it('a token refused for another reason (another repository) is still good for its own', async () => {
    const token = await oidcToken('alice/skills');
    await refused(
      () => publish(app, token, { repository: 'victim/skills' }),
      403,
      /is for repository alice\/skills, not victim\/skills/,
    );
    await publish(app, token, { repository: 'alice/skills' }).expect(202);
  });
});

describe('rate limits', () => {
  let limited: RequestListener;
  let limitedRedis: Redis;
  beforeAll(() => {
    // Its own counters: another key prefix, and small limits.
    limitedRedis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}-limits:` });
    limited = createApp({
      db: database.db,
      redis: limitedRedis,
      logger,
      queue,
      env: env({
        PUBLISHES_PER_HOUR: '2',
        WEBHOOK_DELIVERIES_PER_HOUR: '3',
        WEBHOOK_DELIVERIES_PER_REPOSITORY_PER_HOUR: '2',
      }),
    });
  });
  afterAll(() => limitedRedis?.disconnect());

  const tooMany = (res: request.Response, message: RegExp) => {
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: expect.stringMatching(message) });
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3000);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(res.body.error).toContain(`try again in ${retryAfter} s`);
  };

  it('publishes and owner actions per client address: 429 with Retry-After, the code host never asked', async () => {
    const from = address();
    await publish(limited, 'ghu_lim', { repository: 'lim/one' }, from).expect(202);
    await publish(limited, 'ghu_lim', { repository: 'lim/nothing' }, from).expect(404);
    const asked = gh.requests.length;
    tooMany(
      await refused(
        () => publish(limited, 'ghu_lim', { repository: 'lim/one' }, from),
        429,
        /Too many publishes/,
      ),
      /Too many publishes and owner actions from this address/,
    );
    const token = await oidcToken('lim/one');
    await refused(() => publish(limited, token, { repository: 'lim/one' }, from), 429, /Too many/);
    for (const [method, path] of [
      ['put', '/api/packages/@lim/one/deprecation'],
      ['delete', '/api/packages/@lim/one/deprecation'],
      ['put', '/api/packages/@lim/one/versions/1.0.0/yank'],
      ['delete', '/api/packages/@lim/one/versions/1.0.0/yank'],
    ] as const) {
      const res = await request(limited)
        [method](path)
        .set('X-Forwarded-For', from)
        .set('Authorization', 'Bearer ghu_lim')
        .send({});
      tooMany(res, /Too many publishes/);
    }
    expect(gh.requests.length).toBe(asked);
    // The token was not spent: it still publishes from another address.
    await publish(limited, token, { repository: 'lim/one' }, address()).expect(202);
    // Waiting on a run is not limited.
    const other = address();
    const run = await publish(limited, 'ghu_lim', { repository: 'lim/one' }, other).expect(202);
    for (let i = 0; i < 5; i++) await request(limited).get(`/api/publish/${run.body.runId}`).expect(200);
  });

  it('a client behind an untrusted peer cannot choose its address to escape the limit', async () => {
    const untrusting = createApp({
      db: database.db,
      redis: limitedRedis,
      logger,
      queue,
      env: env({ PUBLISHES_PER_HOUR: '2', TRUST_PROXY: '10.0.0.0/8' }),
    });
    await publish(untrusting, null, { repository: 'lim/one' }, address()).expect(401);
    await publish(untrusting, null, { repository: 'lim/one' }, address()).expect(401);
    tooMany(await publish(untrusting, null, { repository: 'lim/one' }, address()), /Too many publishes/);
  });

  it('webhook deliveries per client address, counted before the signature is read', async () => {
    const from = address();
    const payload = pushEvent(hookRepo('lim', 'two'));
    for (let i = 0; i < 3; i++)
      await deliver({ payload, secret: 'whsec_wrong', from, target: limited }).expect(401);
    const res = await refused(
      () => deliver({ payload, secret: 'whsec_wrong', from, target: limited }),
      429,
      /Too many webhook deliveries from this address/,
    );
    tooMany(res, /from this address/);
    // Not even a body that is no delivery is read.
    tooMany(
      await request(limited)
        .post('/api/hooks/github')
        .set('X-Forwarded-For', from)
        .set('Content-Type', 'application/json')
        .send('{'),
      /from this address/,
    );
    await deliver({ payload, secret: 'whsec_wrong', target: limited }).expect(401);
  });

  it('signed deliveries per repository, from any address; unsigned ones never use its budget', async () => {
    const secret = await secretOf('lim', 'two');
    const other = await secretOf('lim', 'one');
    const two = hookRepo('lim', 'two');
    // Forged deliveries naming the repository, from many addresses: refused, not counted against it.
    for (let i = 0; i < 4; i++) {
      await deliver({ payload: pushEvent(two), secret: 'whsec_forged', target: limited }).expect(401);
    }
    await deliver({ payload: pushEvent(two), secret, target: limited }).expect(202);
    await deliver({ event: 'ping', payload: pingEvent(two), secret, target: limited }).expect(200);
    const payload = pushEvent(two);
    const deliveryId = randomUUID();
    tooMany(
      await refused(
        () => deliver({ payload, secret, deliveryId, target: limited }),
        429,
        /Too many webhook deliveries for this repository/,
      ),
      /for this repository/,
    );
    // Refused, so not remembered: GitHub's redelivery of it is refused by the limit again, not taken
    // for a duplicate.
    tooMany(await deliver({ payload, secret, deliveryId, target: limited }), /for this repository/);
    // Another repository has its own budget.
    await deliver({ payload: pushEvent(hookRepo('lim', 'one')), secret: other, target: limited }).expect(202);
  });
});
