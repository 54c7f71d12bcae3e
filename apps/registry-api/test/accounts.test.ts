import type { RequestListener } from 'node:http';
import { MeSchema, SessionListSchema, TokenListSchema } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { createLogger } from '@pkgreg/server-kit';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tokenCacheKey } from '../src/accounts/viewer-of.js';
import { createApp, createRegistry, type Registry } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { createTokenAs, signInAs } from './account-helpers.js';
import { packageRow } from './fixtures.js';

// docs/accounts.md: development sign-in, sessions, tokens (create, use, revoke, expire, address ranges),
// organisations through better-auth's endpoints, scope and package settings, the audit log, and the
// security cases of each: no credentials, bad ones, revoked or expired ones, too little role, another
// account's things, cross-site writes.

const PUBLIC_URL = 'http://registry.test';
const ORIGIN = PUBLIC_URL;
const database = useTestDatabase();
const prefix = testKeyPrefix('accounts');
let redis: Redis;
let app: RequestListener;
const logged: string[] = [];
const logger = createLogger('accounts-test', 'debug', { write: (line: string) => void logged.push(line) });

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}:` });
  // The file signs in dozens of accounts from one address: the limit is tested on an app of its own.
  const env = loadEnv({
    REGISTRY_PUBLIC_URL: PUBLIC_URL,
    DEV_SIGN_IN: 'true',
    DETAIL_CACHE_TTL_MS: '0',
    SIGN_IN_PER_MINUTE: '1000',
  });
  app = createApp({ db: database.db, redis, logger, env });
});

afterAll(() => redis?.disconnect());

/** A browser of `handle`: signed in by the development sign-in, its cookies kept. */
const signIn = (handle: string) => signInAs(app, ORIGIN, handle);

const newToken = (agent: request.Agent, body: Record<string, unknown> = {}) =>
  createTokenAs(agent, ORIGIN, { permission: 'read', ...body });

const me = (token: string) => request(app).get('/api/me').set('Authorization', `Bearer ${token}`);

describe('sign-in and sessions', () => {
  it('the development sign-in sets an HttpOnly, SameSite session cookie and /api/me names the account', async () => {
    const res = await request(app)
      .post('/api/auth/dev/sign-in')
      .set('Origin', ORIGIN)
      .send({ handle: 'ada' });
    expect(res.status).toBe(200);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/pkgreg\.session_token=/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    const agent = await signIn('ada');
    const who = await agent.get('/api/me');
    expect(who.status).toBe(200);
    expect(MeSchema.parse(who.body)).toMatchObject({
      account: { email: 'ada@dev.pkgreg.invalid', siteAdmin: false },
      via: 'session',
      token: null,
    });
  });

  it('no credentials, or a cookie the registry does not know: 401 from /api/me', async () => {
    expect((await request(app).get('/api/me')).status).toBe(401);
    const res = await request(app).get('/api/me').set('Cookie', 'pkgreg.session_token=forged.value');
    expect(res.status).toBe(401);
    expect(res.body, res.text + JSON.stringify(res.headers)).toEqual({
      error: expect.stringMatching(/Sign in/),
    });
  });

  it('sessions are listed and revoked; signing out everywhere ends them all', async () => {
    const laptop = await signIn('twodevices');
    const phone = await signIn('twodevices');
    const listed = SessionListSchema.parse((await laptop.get('/api/sessions')).body).data;
    expect(listed).toHaveLength(2);
    expect(listed.filter((s) => s.current)).toHaveLength(1);
    // better-auth's own list would hand every session's token to the page: it is off.
    expect((await laptop.get('/api/auth/list-sessions')).status).toBe(404);
    const phoneSession = listed.find((s) => !s.current);
    const stranger = await signIn('stranger');
    expect((await stranger.delete(`/api/sessions/${phoneSession?.id}`).set('Origin', ORIGIN)).status).toBe(
      404,
    );
    expect((await phone.get('/api/me')).status).toBe(200);
    const ended = await laptop.delete(`/api/sessions/${phoneSession?.id}`).set('Origin', ORIGIN);
    expect(ended.status).toBe(200);
    expect((await phone.get('/api/me')).status).toBe(401);
    expect((await laptop.get('/api/me')).status).toBe(200);
    const phoneAgain = await signIn('twodevices');
    expect((await laptop.post('/api/auth/revoke-sessions').set('Origin', ORIGIN).send({})).status).toBe(200);
    expect((await laptop.get('/api/me')).status).toBe(401);
    expect((await phoneAgain.get('/api/me')).status).toBe(401);
  });

  it('signing out ends the session', async () => {
    const agent = await signIn('leaver');
    expect((await agent.post('/api/auth/sign-out').set('Origin', ORIGIN).send({})).status).toBe(200);
    expect((await agent.get('/api/me')).status).toBe(401);
  });

  it('sign-in is rate limited per client address; X-Forwarded-For only from a trusted proxy', async () => {
    // Its own counters: the sign-ins of the other tests came from the same address.
    const ownRedis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}:limited:` });
    const limited = createApp({
      db: database.db,
      redis: ownRedis,
      logger,
      // No proxy trusted: the peer's address counts, whatever X-Forwarded-For says.
      env: loadEnv({
        REGISTRY_PUBLIC_URL: PUBLIC_URL,
        DEV_SIGN_IN: 'true',
        SIGN_IN_PER_MINUTE: '3',
        TRUST_PROXY: '0',
      }),
    });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const res = await request(limited)
        .post('/api/auth/dev/sign-in')
        .set('Origin', ORIGIN)
        .set('X-Forwarded-For', `203.0.113.${i}`)
        .send({ handle: 'hammer' });
      statuses.push(res.status);
    }
    ownRedis.disconnect();
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });

  it('the development sign-in is refused in production: env will not load', () => {
    expect(() =>
      loadEnv({
        NODE_ENV: 'production',
        DEV_SIGN_IN: 'true',
        REGISTRY_PUBLIC_URL: PUBLIC_URL,
        WEBHOOK_SECRET_KEY: 'k'.repeat(40),
        AUTH_SECRET: 's'.repeat(40),
      }),
    ).toThrow(/DEV_SIGN_IN/);
  });
});

describe('tokens', () => {
  it('created while signed in, shown once, listed by prefix only, used as a bearer, revoked at once', async () => {
    const agent = await signIn('tok');
    const created = await newToken(agent, { name: 'laptop' });
    expect(created.token).toMatch(/^pkgreg_[0-9A-Za-z]{36}$/);
    const list = TokenListSchema.parse((await agent.get('/api/tokens')).body);
    expect(list.data).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(created.token);
    expect(list.data[0]?.prefix).toBe(created.token.slice(0, 11));

    const who = await me(created.token);
    expect(who.status).toBe(200);
    expect(MeSchema.parse(who.body)).toMatchObject({
      via: 'token',
      token: { id: created.id, permission: 'read' },
    });
    const stored = () =>
      database.db
        .selectFrom('access_tokens')
        .selectAll()
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
    expect((await stored()).token_hash.toString('hex')).not.toContain(created.token);
    // The last use is written in the background, off the request's path (tokens.service.ts admitToken).
    await vi.waitFor(async () => expect((await stored()).last_used_at).not.toBeNull(), { timeout: 5000 });

    expect((await agent.delete(`/api/tokens/${created.id}`).set('Origin', ORIGIN)).status).toBe(200);
    const after = await me(created.token);
    expect(after.status).toBe(401);
    expect(after.body.error).toMatch(/revoked/);
    expect(after.headers['www-authenticate']).toMatch(/invalid_token/);
    expect(logged.join('\n')).not.toContain(created.token);
  });

  it('malformed, unknown and expired tokens are 401 with their reason, on any route', async () => {
    const malformed = await request(app).get('/api/packages').set('Authorization', 'Bearer pkgreg_short');
    expect(malformed.status).toBe(401);
    expect(malformed.body.error).toMatch(/malformed/);
    const unknown = await me(`pkgreg_${'a'.repeat(30)}000000`);
    expect(unknown.status).toBe(401);
    const agent = await signIn('expiry');
    const created = await newToken(agent);
    await database.db
      .updateTable('access_tokens')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .where('id', '=', created.id)
      .execute();
    const expired = await me(created.token);
    expect(expired.status).toBe(401);
    expect(expired.body.error).toMatch(/expired/);
  });

  it('a token bound to address ranges is refused from elsewhere', async () => {
    const agent = await signIn('ranges');
    const far = await newToken(agent, { allowedCidrs: ['10.0.0.0/8'] });
    expect((await me(far.token)).body.error).toMatch(/address/);
    const near = await newToken(agent, { allowedCidrs: ['127.0.0.1', '::1/128'] });
    expect((await me(near.token)).status).toBe(200);
  });

  it('bad input: a 400 naming the field, and nothing stored', async () => {
    const agent = await signIn('badinput');
    const before = await database.db
      .selectFrom('access_tokens')
      .select(sql<number>`count(*)`.as('n'))
      .executeTakeFirstOrThrow();
    for (const body of [
      { name: '', permission: 'read', expiresInDays: 1 },
      { name: 'x', permission: 'admin', expiresInDays: 1 },
      { name: 'x', permission: 'read', expiresInDays: 400 },
      { name: 'x', permission: 'read', expiresInDays: 1, allowedCidrs: ['not-an-address'] },
      { name: 'x', permission: 'read', expiresInDays: 1, packages: ['@acme/x'] },
    ]) {
      const res = await agent.post('/api/tokens').set('Origin', ORIGIN).send(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ error: expect.any(String) });
    }
    const after = await database.db
      .selectFrom('access_tokens')
      .select(sql<number>`count(*)`.as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it('tokens are not managed with a read token, nor by a cross-site request, nor across accounts', async () => {
    const agent = await signIn('owner1');
    const created = await newToken(agent);
    const withToken = await request(app)
      .post('/api/tokens')
      .set('Authorization', `Bearer ${created.token}`)
      .send({ name: 'x', permission: 'read', expiresInDays: 1 });
    expect(withToken.status).toBe(403);
    const crossSite = await agent
      .post('/api/tokens')
      .set('Origin', 'https://evil.example')
      .send({ name: 'x', permission: 'read', expiresInDays: 1 });
    expect(crossSite.status).toBe(403);
    const other = await signIn('owner2');
    expect((await other.delete(`/api/tokens/${created.id}`).set('Origin', ORIGIN)).status).toBe(404);
    expect((await me(created.token)).status).toBe(200);
    expect(TokenListSchema.parse((await other.get('/api/tokens')).body).data).toHaveLength(0);
  });
});

describe('what credentials resolve to is kept until access changes', () => {
  // A second registry process on the same database: it hears of changes only through PostgreSQL's
  // notifications, where the process that answered a write drops what it kept before answering.
  let other: Registry;
  beforeAll(() => {
    other = createRegistry({
      db: database.db,
      redis,
      logger,
      env: loadEnv({ REGISTRY_PUBLIC_URL: PUBLIC_URL }),
    });
  });
  afterAll(() => other.close());
  const meThere = (token: string) =>
    request(other.handler).get('/api/me').set('Authorization', `Bearer ${token}`);
  /** Resolves once `token` has been kept by the other process (its LISTEN is up, the row read once more). */
  const keptThere = (token: string) =>
    vi.waitFor(
      async () => {
        expect((await meThere(token)).status).toBe(200);
        expect(other.accessCache.has(tokenCacheKey(token))).toBe(true);
      },
      { timeout: 5000, interval: 50 },
    );
  /** A write no process is told of: triggers off for this statement (what a restore might do). */
  const unannounced = (statement: ReturnType<typeof sql>) =>
    database.db.connection().execute(async (conn) => {
      await sql`set session_replication_role = replica`.execute(conn);
      try {
        await statement.execute(conn);
      } finally {
        await sql`set session_replication_role = origin`.execute(conn);
      }
    });

  it('a revocation: at once where it was made, on the notification everywhere else', async () => {
    const agent = await signIn('kept');
    const created = await newToken(agent);
    await keptThere(created.token);
    expect((await me(created.token)).status).toBe(200);

    // Kept: a revocation the database does not announce is not seen by the other process...
    await unannounced(sql`update access_tokens set revoked_at = now() where id = ${created.id}`);
    expect((await meThere(created.token)).status).toBe(200);
    // ...until a change is announced; then it reads the row again.
    await sql`select pg_notify('pkgreg_access', 'test')`.execute(database.db);
    await vi.waitFor(async () => expect((await meThere(created.token)).status).toBe(401), { timeout: 5000 });

    const second = await newToken(agent);
    await keptThere(second.token);
    expect((await me(second.token)).status).toBe(200);
    expect((await agent.delete(`/api/tokens/${second.id}`).set('Origin', ORIGIN)).status).toBe(200);
    expect((await me(second.token)).status).toBe(401);
    await vi.waitFor(async () => expect((await meThere(second.token)).status).toBe(401), { timeout: 5000 });
  });

  it('a lost LISTEN connection drops everything kept', async () => {
    const agent = await signIn('listen');
    const created = await newToken(agent);
    await keptThere(created.token);
    // End the other process's LISTEN connection (and the test app's); nothing is announced meanwhile.
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and application_name = 'pkgreg-listen-pkgreg_access'`.execute(
      database.db,
    );
    await vi.waitFor(() => expect(other.accessCache.size()).toBe(0), { timeout: 5000 });
    await unannounced(sql`update access_tokens set revoked_at = now() where id = ${created.id}`);
    expect((await meThere(created.token)).status).toBe(401);
  });
});

describe('organisations, scopes and the audit log', () => {
  async function createOrg(agent: request.Agent, slug: string) {
    const res = await agent
      .post('/api/auth/organization/create')
      .set('Origin', ORIGIN)
      .send({ name: slug, slug });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { id: string };
  }

  async function invite(
    owner: request.Agent,
    organizationId: string,
    email: string,
    role: string,
    member: request.Agent,
  ) {
    const invited = await owner
      .post('/api/auth/organization/invite-member')
      .set('Origin', ORIGIN)
      .send({ email, role, organizationId });
    expect(invited.status, JSON.stringify(invited.body)).toBe(200);
    const accepted = await member
      .post('/api/auth/organization/accept-invitation')
      .set('Origin', ORIGIN)
      .send({ invitationId: invited.body.id });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  }

  it('an organisation claims a scope and makes it private; roles decide who may change it; removal takes all at once', async () => {
    const owner = await signIn('orgowner');
    const org = await createOrg(owner, 'team-a');
    const claim = await owner
      .put('/api/scopes/team-a/settings')
      .set('Origin', ORIGIN)
      .send({ organizationId: org.id });
    expect(claim.status, JSON.stringify(claim.body)).toBe(200);
    expect(claim.body).toMatchObject({ scope: 'team-a', visibility: 'public', organization: { id: org.id } });
    await database.db
      .insertInto('packages')
      .values(packageRow({ scope: 'team-a', name: 'runbook' }))
      .execute();
    const priv = await owner
      .put('/api/scopes/team-a/settings')
      .set('Origin', ORIGIN)
      .send({ visibility: 'private' });
    expect(priv.status).toBe(200);
    const row = await database.db
      .selectFrom('packages')
      .select('private')
      .where('scope', '=', 'team-a')
      .executeTakeFirstOrThrow();
    expect(row.private).toBe(true);
    // A package created later in the private scope is private from its first row.
    await database.db
      .insertInto('packages')
      .values(packageRow({ scope: 'team-a', name: 'later' }))
      .execute();
    const later = await database.db
      .selectFrom('packages')
      .select('private')
      .where('name', '=', 'later')
      .executeTakeFirstOrThrow();
    expect(later.private).toBe(true);

    const reader = await signIn('reader1');
    await invite(owner, org.id, 'reader1@dev.pkgreg.invalid', 'reader', reader);
    const readerToken = await newToken(reader);
    expect(MeSchema.parse((await me(readerToken.token)).body).scopes).toEqual([
      { scope: 'team-a', role: 'reader' },
    ]);
    expect(
      (await reader.put('/api/scopes/team-a/settings').set('Origin', ORIGIN).send({ visibility: 'public' }))
        .status,
    ).toBe(403);
    expect((await reader.get('/api/packages/@team-a/runbook/settings')).status).toBe(403);

    const outsider = await signIn('outsider1');
    expect((await outsider.get('/api/scopes/team-a/settings')).status).toBe(404);
    expect(
      (await outsider.put('/api/scopes/team-a/settings').set('Origin', ORIGIN).send({ visibility: 'public' }))
        .status,
    ).toBe(404);
    // Outsiders cannot tell a private package's settings from a missing package's.
    const hidden = await outsider.get('/api/packages/@team-a/runbook/settings');
    const missing = await outsider.get('/api/packages/@team-a/nothing/settings');
    expect([hidden.status, hidden.body]).toEqual([missing.status, missing.body]);

    const members = await owner.get(`/api/auth/organization/list-members?organizationId=${org.id}`);
    const readerMember = (members.body.members as Array<{ id: string; user: { email: string } }>).find(
      (m) => m.user.email === 'reader1@dev.pkgreg.invalid',
    );
    const removed = await owner
      .post('/api/auth/organization/remove-member')
      .set('Origin', ORIGIN)
      .send({ memberIdOrEmail: readerMember?.id, organizationId: org.id });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect(MeSchema.parse((await me(readerToken.token)).body).scopes).toEqual([]);

    const audit = await owner.get('/api/orgs/team-a/audit');
    expect(audit.status).toBe(200);
    const ownerId = MeSchema.parse((await owner.get('/api/me')).body).account.id;
    for (const event of audit.body.data as Array<{ action: string; actorId: string | null }>) {
      if (['organization.create', 'invitation.create', 'member.remove'].includes(event.action))
        expect(event.actorId).toBe(ownerId);
    }
    const actions = (audit.body.data as Array<{ action: string }>).map((event) => event.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'organization.create',
        'scope.move',
        'scope.visibility',
        'invitation.create',
        'member.join',
        'member.remove',
      ]),
    );
    expect((await outsider.get('/api/orgs/team-a/audit')).status).toBe(404);
  });

  it('a package made private by its scope admin; a token limited to another scope reaches nothing here', async () => {
    const owner = await signIn('pkgowner');
    const org = await createOrg(owner, 'team-b');
    await owner.put('/api/scopes/team-b/settings').set('Origin', ORIGIN).send({ organizationId: org.id });
    await database.db
      .insertInto('packages')
      .values(packageRow({ scope: 'team-b', name: 'checklist' }))
      .execute();
    const res = await owner
      .put('/api/packages/@team-b/checklist/settings')
      .set('Origin', ORIGIN)
      .send({ visibility: 'private' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ visibility: 'private', private: true });
    const elsewhere = await newToken(owner, { scopes: ['other-scope'] });
    expect(MeSchema.parse((await me(elsewhere.token)).body).scopes).toEqual([]);
    const here = await newToken(owner, { packages: ['team-b/checklist'] });
    expect(MeSchema.parse((await me(here.token)).body).scopes).toEqual([{ scope: 'team-b', role: 'owner' }]);
  });
});

describe('site administrators', () => {
  it('suspend an account (its sessions end, its tokens are refused) and take over an organisation; others cannot', async () => {
    const admin = await signIn('siteadmin');
    await database.db
      .updateTable('auth_user')
      .set({ role: 'admin' })
      .where('email', '=', 'siteadmin@dev.pkgreg.invalid')
      .execute();
    const victim = await signIn('suspendme');
    const victimToken = await newToken(victim);
    const victimId = MeSchema.parse((await victim.get('/api/me')).body).account.id;

    const notAdmin = await signIn('notadmin');
    const refused = await notAdmin
      .post('/api/auth/admin/ban-user')
      .set('Origin', ORIGIN)
      .send({ userId: victimId, banReason: 'x' });
    expect(refused.status).toBeGreaterThanOrEqual(401);
    expect((await me(victimToken.token)).status).toBe(200);

    const banned = await admin
      .post('/api/auth/admin/ban-user')
      .set('Origin', ORIGIN)
      .send({ userId: victimId, banReason: 'spam' });
    expect(banned.status, JSON.stringify(banned.body)).toBe(200);
    expect((await victim.get('/api/me')).status).toBe(401);
    const tokenAfter = await me(victimToken.token);
    expect(tokenAfter.status).toBe(401);
    expect(tokenAfter.body.error).toMatch(/suspended/);

    const owner = await signIn('abandoned');
    await owner
      .post('/api/auth/organization/create')
      .set('Origin', ORIGIN)
      .send({ name: 'left', slug: 'left-behind' });
    const hidden = await notAdmin
      .post('/api/admin/orgs/left-behind/take-over')
      .set('Origin', ORIGIN)
      .send({ reason: 'x' });
    expect(hidden.status).toBe(404);
    const taken = await admin
      .post('/api/admin/orgs/left-behind/take-over')
      .set('Origin', ORIGIN)
      .send({ reason: 'owners left' });
    expect(taken.status, JSON.stringify(taken.body)).toBe(200);
    const orgs = MeSchema.parse((await admin.get('/api/me')).body).organizations;
    expect(orgs).toContainEqual(expect.objectContaining({ slug: 'left-behind', role: 'owner' }));
    const audit = await admin.get('/api/orgs/left-behind/audit');
    expect((audit.body.data as Array<{ action: string }>).map((e) => e.action)).toContain(
      'organization.take-over',
    );
  });

  it('with ORGANIZATION_CREATION=site-admins only they create organisations', async () => {
    const ownRedis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${prefix}:restricted:` });
    const restricted = createApp({
      db: database.db,
      redis: ownRedis,
      logger,
      env: loadEnv({
        REGISTRY_PUBLIC_URL: PUBLIC_URL,
        DEV_SIGN_IN: 'true',
        ORGANIZATION_CREATION: 'site-admins',
      }),
    });
    const agent = request.agent(restricted);
    const signedIn = await agent
      .post('/api/auth/dev/sign-in')
      .set('Origin', ORIGIN)
      .send({ handle: 'plainuser' });
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    const res = await agent
      .post('/api/auth/organization/create')
      .set('Origin', ORIGIN)
      .send({ name: 'nope', slug: 'nope-org' });
    expect(res.status).toBe(403);
    expect(
      await database.db.selectFrom('auth_organization').select('id').where('slug', '=', 'nope-org').execute(),
    ).toEqual([]);
  });
});

describe('a read token only reads', () => {
  it('cannot change a scope, a package or its trusted publishers, even for an admin (403); a publish token can', async () => {
    const owner = await signIn('readonlyowner');
    const org = await owner
      .post('/api/auth/organization/create')
      .set('Origin', ORIGIN)
      .send({ name: 'ro', slug: 'ro-team' });
    await owner
      .put('/api/scopes/ro-team/settings')
      .set('Origin', ORIGIN)
      .send({ organizationId: org.body.id });
    await database.db
      .insertInto('packages')
      .values(packageRow({ scope: 'ro-team', name: 'kit' }))
      .execute();
    const read = await newToken(owner, { permission: 'read' });
    const publish = await newToken(owner, { permission: 'publish' });
    const asToken = (token: string) => ({ Authorization: `Bearer ${token}` });
    const attempts = (token: string) => [
      request(app).put('/api/scopes/ro-team/settings').set(asToken(token)).send({ visibility: 'private' }),
      request(app)
        .put('/api/packages/@ro-team/kit/settings')
        .set(asToken(token))
        .send({ visibility: 'private' }),
      request(app)
        .post('/api/packages/@ro-team/kit/trusted-publishers')
        .set(asToken(token))
        .send({ issuer: 'https://token.actions.githubusercontent.com', repository: 'ro/kit' }),
    ];
    for (const res of await Promise.all(attempts(read.token))) expect(res.status).toBe(403);
    expect(
      (
        await database.db
          .selectFrom('packages')
          .select('private')
          .where('scope', '=', 'ro-team')
          .executeTakeFirstOrThrow()
      ).private,
    ).toBe(false);
    expect(
      (await request(app).get('/api/packages/@ro-team/kit/settings').set(asToken(read.token))).status,
    ).toBe(200);
    const statuses = [];
    for (const res of await Promise.all(attempts(publish.token).slice(1))) statuses.push(res.status);
    expect(statuses).toEqual([200, 201]);
  });
});
