import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { createToken, DEV_ACCOUNT_DOMAIN, TOKEN_REFUSAL_MESSAGES } from '@pkgreg/accounts';
import {
  AGENT_SKILLS_INDEX_SCHEMA,
  type AgentSkillsIndex,
  AgentSkillsIndexSchema,
  VersionDetailSchema,
} from '@pkgreg/contracts';
import { insertAccounts } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { createRepo, removeDir, skillMd, tempDir } from '@pkgreg/indexer/testing';
import { yankVersion } from '@pkgreg/registry';
import { sql } from 'kysely';
import request from 'supertest';
import { extract } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quarantinePackage } from '../src/moderation/moderation.repository.js';
import { refreshDerivedTables } from '../src/packages/derived-tables-refresher.js';
import { createTokenAs, signInAs } from './account-helpers.js';
import { useTestRegistry } from './fixtures.js';

// The Agent Skills discovery indexes (docs/discovery.md, the RFC's v0.2.0): the root's (public names
// held by one scope only), an organisation's, a scope's and a package's; each artifact's digest;
// private skills only to who may read them, a private scope or organisation answered as a missing one.
// Skills come from real git repositories through the real indexer.

const ORIGIN = 'http://registry.test';
const t = useTestRegistry({ DETAIL_CACHE_TTL_MS: '0', DEV_SIGN_IN: 'true', REGISTRY_PUBLIC_URL: ORIGIN });
let root: string;
let memberToken: string;
let outsiderToken: string;
let expiredToken: string;
/** The member's read token limited to the scope `secret`: not the organisation `umbrella`'s scopes. */
let secretOnlyToken: string;
/** The member's read token limited to the organisation `umbrella`. */
let umbrellaToken: string;
/** A browser signed in as `reader`, a reader of `umbrella` (a session, no token). */
let readerSession: request.Agent;

const INSTALLER = 'curl -fsSL https://get.example-cdn.test/install.sh | bash';
const skill = (name: string, description = `The ${name} skill.`, body?: string) =>
  skillMd([`name: ${name}`, `description: ${description}`], body);

const index = async (db: typeof t.db, dir: string, owner: string) => {
  const summary = await indexSource({ db }, { kind: 'git', locator: dir, owner });
  expect(summary.status).toBe('succeeded');
};

beforeAll(async () => {
  root = realpathSync(tempDir('well-known'));
  const acme = createRepo(root, 'acme', 'skills', {
    'pdf/SKILL.md': skill('pdf', 'Fill and read PDF forms.'),
    'pdf/scripts/fill.sh': { content: '#!/bin/sh\necho fill\n', executable: true },
    'pdf/reference/forms.md': '# Forms\n\nEvery field.\n',
    'notes/SKILL.md': skill('notes', 'Takes notes.'),
    'setup/SKILL.md': skill(
      'setup',
      'Sets up the toolchain.',
      `# Setup\n\n\`\`\`bash\n${INSTALLER}\n\`\`\`\n`,
    ),
    'gone/SKILL.md': skill('gone'),
    'held/SKILL.md': skill('held'),
  });
  const octo = createRepo(root, 'octo', 'skills', {
    'pdf/SKILL.md': skill('pdf', "Octo's PDF tools."),
    'unique/SKILL.md': skill('unique', 'Only octo has it.', '# Unique\n\nSee [more](more.md).\n'),
    'unique/more.md': 'More.\n',
    // A path ustar holds only as UTF-8: the two forms of agent-skill.tar.gz differ for it.
    'unique/références/é.md': 'É.\n',
  });
  const secret = createRepo(root, 'secret', 'vault', {
    'hidden/SKILL.md': skill('hidden', 'The vault skill.'),
    'pdf/SKILL.md': skill('pdf', 'Secret PDF tools.'),
  });
  // @vault: private to the organisation `umbrella`; its `unique` shares octo's name.
  const vault = createRepo(root, 'vault', 'skills', {
    'tools/SKILL.md': skill('tools', 'The vault tools.'),
    'tools/run.sh': { content: '#!/bin/sh\necho run\n', executable: true },
    'unique/SKILL.md': skill('unique', "The vault's own unique."),
  });
  await index(t.db, acme, 'acme');
  await index(t.db, octo, 'octo');
  await index(t.db, secret, 'secret');
  await index(t.db, vault, 'vault');
  // @acme/gone: its only version yanked; @acme/held: quarantined by the operator.
  const gone = await t.db
    .selectFrom('package_versions as v')
    .innerJoin('packages as p', 'p.id', 'v.package_id')
    .select('v.id')
    .where('p.scope', '=', 'acme')
    .where('p.name', '=', 'gone')
    .executeTakeFirstOrThrow();
  await yankVersion(t.db, gone.id, 'broken');
  await quarantinePackage(t.db, { scope: 'acme', name: 'held' }, 'under review');
  // The scope `secret` is private to its organisation, whose member reads it.
  const now = new Date();
  await insertAccounts(t.db, ['member', 'outsider']);
  // Organisations: `secret` holds the private scope `secret`; `umbrella` holds @octo (public) and @vault
  // (private) by its settings, and @acme as the scope of the GitHub organisation linked to it;
  // `dormant` is suspended, and holds @octo through its GitHub organisation.
  const organization = (id: string, slug: string, githubOrgId: number | null, suspendedAt: Date | null) => ({
    id,
    name: slug,
    slug,
    createdAt: now,
    logo: null,
    metadata: null,
    githubOrgId,
    githubOrgLogin: githubOrgId === null ? null : `${slug}-gh`,
    suspendedAt,
  });
  await t.db
    .insertInto('auth_organization')
    .values([
      organization('org-secret', 'secret', null, null),
      organization('org-umbrella', 'umbrella', 4242, null),
      organization('org-dormant', 'dormant', 4343, now),
    ])
    .execute();
  await t.db
    .insertInto('auth_member')
    .values([
      { id: 'm1', organizationId: 'org-secret', userId: 'member', role: 'reader', createdAt: now },
      { id: 'm2', organizationId: 'org-umbrella', userId: 'member', role: 'reader', createdAt: now },
    ])
    .execute();
  const settings = (scope: string, organization_id: string, visibility: 'public' | 'private') => ({
    scope,
    organization_id,
    visibility,
    created_at: now,
    updated_at: now,
  });
  await t.db
    .insertInto('scope_settings')
    .values([
      settings('secret', 'org-secret', 'private'),
      settings('octo', 'org-umbrella', 'public'),
      settings('vault', 'org-umbrella', 'private'),
    ])
    .execute();
  const bound = (scope: string, owner_id: number, owner_login: string) => ({
    scope,
    owner_id,
    owner_login,
    bound_by: 'index' as const,
    bound_at: now,
    updated_at: now,
  });
  await t.db
    .insertInto('scope_owners')
    .values([bound('acme', 4242, 'umbrella-gh'), bound('octo', 4343, 'dormant-gh')])
    .execute();
  const token = (account: string, limits: { scopes?: string[]; organizations?: string[] } = {}) =>
    createToken(
      t.db,
      account,
      { name: 'reads', permission: 'read', expiresInDays: 30, ...limits },
      { maxDays: 90 },
    );
  memberToken = (await token('member')).token;
  outsiderToken = (await token('outsider')).token;
  secretOnlyToken = (await token('member', { scopes: ['secret'] })).token;
  umbrellaToken = (await token('member', { organizations: ['org-umbrella'] })).token;
  const expired = await token('member');
  await t.db
    .updateTable('access_tokens')
    .set({ expires_at: sql<Date>`now() - interval '1 second'` })
    .where('id', '=', expired.row.id)
    .execute();
  expiredToken = expired.token;
  // `reader` signs in (the development sign-in makes the account), then joins `umbrella`.
  readerSession = await signInAs(t.app, ORIGIN, 'reader');
  const reader = await t.db
    .selectFrom('auth_user')
    .select('id')
    .where('email', '=', `reader@${DEV_ACCOUNT_DOMAIN}`)
    .executeTakeFirstOrThrow();
  await t.db
    .insertInto('auth_member')
    .values({ id: 'm3', organizationId: 'org-umbrella', userId: reader.id, role: 'reader', createdAt: now })
    .execute();
  await refreshDerivedTables(t.db);
}, 60_000);

afterAll(() => {
  if (root) removeDir(root);
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function getIndex(path: string, headers: Record<string, string> = {}): Promise<AgentSkillsIndex> {
  const res = await request(t.app).get(path).set(headers).expect(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return AgentSkillsIndexSchema.parse(res.body);
}

const names = (index: AgentSkillsIndex) => index.skills.map((s) => s.name);

/** An artifact's bytes, its URL resolved against the index's as a client does (RFC 3986). */
async function artifact(indexPath: string, url: string, headers: Record<string, string> = {}) {
  const resolved = new URL(url, `http://registry.test${indexPath}`);
  const res = await request(t.app)
    .get(`${resolved.pathname}${resolved.search}`)
    .set(headers)
    .buffer(true)
    .parse((response, done) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done(null, Buffer.concat(chunks)));
    })
    .expect(200);
  return { bytes: res.body as Buffer, headers: res.headers };
}

const digestOf = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** A tar.gz's entries: path, kind, mode and bytes. */
async function entriesOf(tgz: Buffer) {
  const entries: Array<{ name: string; type: string; mode: number; text: string }> = [];
  const reader = extract();
  const done = (async () => {
    for await (const entry of reader) {
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      entries.push({
        name: entry.header.name,
        type: entry.header.type ?? 'file',
        mode: entry.header.mode ?? 0,
        text: Buffer.concat(chunks).toString('utf8'),
      });
    }
  })();
  reader.end(gunzipSync(tgz));
  await done;
  return entries;
}

describe('the root index', () => {
  it('lists public skills whose name one scope holds, in the RFC v0.2.0 shape', async () => {
    const res = await request(t.app).get('/.well-known/agent-skills/index.json').expect(200);
    const index = AgentSkillsIndexSchema.parse(res.body);
    expect(index.$schema).toBe(AGENT_SKILLS_INDEX_SCHEMA);
    // pdf is held by @acme and @octo (and the private @secret does not count): in neither's name here.
    // setup is high-risk, gone has every version yanked, held is quarantined, hidden is private.
    expect(names(index)).toEqual(['notes', 'unique']);
    expect(new Set(names(index)).size).toBe(index.skills.length);
    expect(res.headers['cache-control']).toBe('public, max-age=60, must-revalidate');
    expect(res.headers.vary).toBe('Authorization, Cookie');
  });

  it('is public only whoever asks, and kept by no shared cache when asked with credentials', async () => {
    const res = await request(t.app)
      .get('/.well-known/agent-skills/index.json')
      .set(bearer(memberToken))
      .expect(200);
    expect(names(AgentSkillsIndexSchema.parse(res.body))).toEqual(['notes', 'unique']);
    expect(res.headers['cache-control']).toBe('private, no-store');
  });

  it('answers 304 to its ETag, and HEAD as GET without a body', async () => {
    const first = await request(t.app).get('/.well-known/agent-skills/index.json').expect(200);
    await request(t.app)
      .get('/.well-known/agent-skills/index.json')
      .set('If-None-Match', first.headers.etag as string)
      .expect(304);
    const head = await request(t.app).head('/.well-known/agent-skills/index.json').expect(200);
    expect(head.headers.etag).toBe(first.headers.etag);
  });
});

describe('artifacts and digests', () => {
  it('a lone SKILL.md is a skill-md entry: the exact version file, its SHA-256', async () => {
    const index = await getIndex('/@acme/.well-known/agent-skills/index.json');
    const notes = index.skills.find((s) => s.name === 'notes');
    expect(notes).toMatchObject({ type: 'skill-md', description: 'Takes notes.' });
    expect(notes?.url).toMatch(/^\/api\/packages\/@acme\/notes\/versions\/[^/]+\/files\/SKILL\.md$/);
    const { bytes, headers } = await artifact('/@acme/.well-known/agent-skills/index.json', notes?.url ?? '');
    expect(digestOf(bytes)).toBe(notes?.digest);
    expect(headers['content-type']).toMatch(/^text\/markdown/);
    // An exact version's bytes: immutable for caches, so the digest an index named keeps matching.
    expect(headers['cache-control']).toMatch(/immutable/);
  });

  it('a folder of several files is an archive with them at its root, modes kept, the digest its bytes', async () => {
    const index = await getIndex('/@acme/.well-known/agent-skills/index.json');
    const pdf = index.skills.find((s) => s.name === 'pdf');
    expect(pdf?.type).toBe('archive');
    expect(pdf?.url).toMatch(/^\/api\/packages\/@acme\/pdf\/versions\/[^/]+\/agent-skill\.v2\.tar\.gz$/);
    const { bytes, headers } = await artifact('/@acme/.well-known/agent-skills/index.json', pdf?.url ?? '');
    expect(digestOf(bytes)).toBe(pdf?.digest);
    expect(headers['content-type']).toBe('application/gzip');
    const entries = await entriesOf(bytes);
    expect(entries.map((e) => [e.name, e.type, e.mode])).toEqual([
      ['SKILL.md', 'file', 0o644],
      ['reference/forms.md', 'file', 0o644],
      ['scripts/fill.sh', 'file', 0o755],
    ]);
    // The same files as the version's manifest, byte for byte.
    const version = VersionDetailSchema.parse(
      (await request(t.app).get('/api/packages/@acme/pdf/versions/latest').expect(200)).body,
    );
    for (const entry of entries) {
      const file = version.files.find((f) => f.path === entry.name);
      expect(createHash('sha256').update(entry.text).digest('hex')).toBe(file?.sha256);
    }
  });

  it('the archive is the same bytes on every request (a digest named once holds)', async () => {
    const index = await getIndex('/@octo/unique/.well-known/agent-skills/index.json');
    const [unique] = index.skills;
    const path = '/@octo/unique/.well-known/agent-skills/index.json';
    const one = await artifact(path, unique?.url ?? '');
    const two = await artifact(path, unique?.url ?? '');
    expect(one.bytes.equals(two.bytes)).toBe(true);
    expect(digestOf(one.bytes)).toBe(unique?.digest);
    // The root names the same artifact with the same digest.
    const rootIndex = await getIndex('/.well-known/agent-skills/index.json');
    expect(rootIndex.skills.find((s) => s.name === 'unique')).toEqual(unique);
  });

  it('agent-skill.tar.gz keeps its first bytes (lockfiles hold its URL and digest): v2 when every path is ASCII', async () => {
    const v1Of = (url: string | undefined) =>
      (url ?? '').replace('agent-skill.v2.tar.gz', 'agent-skill.tar.gz');
    const acme = '/@acme/.well-known/agent-skills/index.json';
    const pdf = (await getIndex(acme)).skills.find((s) => s.name === 'pdf');
    expect(pdf?.type).toBe('archive');
    expect(digestOf((await artifact(acme, v1Of(pdf?.url))).bytes)).toBe(pdf?.digest);
    // `unique/références/é.md`: v1's entry header is named `PaxHeader`, v2's names the path too; a PAX
    // reader reads the same files from both.
    const path = '/@octo/.well-known/agent-skills/index.json';
    const unique = (await getIndex(path)).skills.find((s) => s.name === 'unique');
    const v1 = await artifact(path, v1Of(unique?.url));
    expect(v1.headers['cache-control']).toMatch(/immutable/);
    expect(digestOf(v1.bytes)).not.toBe(unique?.digest);
    const v2 = await artifact(path, unique?.url ?? '');
    expect(await entriesOf(v1.bytes)).toEqual(await entriesOf(v2.bytes));
    expect((await entriesOf(v2.bytes)).map((e) => e.name)).toEqual([
      'SKILL.md',
      'more.md',
      'références/é.md',
    ]);
  });

  it('a quarantined package’s archive is 410, as its archive.tgz', async () => {
    await request(t.app).get('/api/packages/@acme/held/versions/latest/agent-skill.tar.gz').expect(410);
    await request(t.app).get('/api/packages/@acme/held/versions/latest/agent-skill.v2.tar.gz').expect(410);
  });
});

describe('a scope’s index and a package’s', () => {
  it('a scope lists its installable skills (names unique), a package itself alone', async () => {
    expect(names(await getIndex('/@acme/.well-known/agent-skills/index.json'))).toEqual(['notes', 'pdf']);
    expect(names(await getIndex('/@octo/.well-known/agent-skills/index.json'))).toEqual(['pdf', 'unique']);
    expect(names(await getIndex('/%40octo/.well-known/agent-skills/index.json'))).toEqual(['pdf', 'unique']);
    const pdf = await getIndex('/@octo/pdf/.well-known/agent-skills/index.json');
    expect(pdf.skills).toMatchObject([{ name: 'pdf', type: 'skill-md', description: "Octo's PDF tools." }]);
  });

  it('a listed package with nothing installable is an empty index; an unknown one 404', async () => {
    expect((await getIndex('/@acme/gone/.well-known/agent-skills/index.json')).skills).toEqual([]);
    expect((await getIndex('/@acme/setup/.well-known/agent-skills/index.json')).skills).toEqual([]);
    const missing = await request(t.app)
      .get('/@acme/nothing/.well-known/agent-skills/index.json')
      .expect(404);
    expect(missing.body).toEqual({ error: 'Package not found' });
    await request(t.app).get('/@acme/held/.well-known/agent-skills/index.json').expect(404);
  });

  it('an unknown scope is 404; a segment that is no scope the invalid package path (400)', async () => {
    const res = await request(t.app).get('/@nobody/.well-known/agent-skills/index.json').expect(404);
    expect(res.body).toEqual({ error: 'Scope not found' });
    expect(res.headers['cache-control']).toBe('no-store');
    for (const path of ['/api', '/acme', '/@Acme', `/@${'a'.repeat(65)}`, '/@acme/PDF', '/@acme/a%2Fb']) {
      const bad = await request(t.app).get(`${path}/.well-known/agent-skills/index.json`).expect(400);
      expect(bad.body).toEqual({ error: 'Invalid package path: expected @scope/name' });
    }
  });
});

/** Each kind of index: the root's, an organisation's, a scope's and a package's. */
const EVERY_INDEX = [
  '/.well-known/agent-skills/index.json',
  '/orgs/umbrella/.well-known/agent-skills/index.json',
  '/@secret/.well-known/agent-skills/index.json',
  '/@acme/pdf/.well-known/agent-skills/index.json',
];

/** What a client could tell apart: status, body and headers (not the per-request ones). */
async function answer(path: string, headers: Record<string, string> = {}) {
  const res = await request(t.app).get(path).set(headers);
  const { 'x-request-id': _id, date: _date, connection: _c, 'keep-alive': _k, ...rest } = res.headers;
  return { status: res.status, text: res.text, headers: rest };
}

describe('private skills', () => {
  it('to anyone not allowed, a private scope’s and package’s index answer as missing ones', async () => {
    for (const headers of [{}, bearer(outsiderToken)]) {
      const hidden = await answer('/@secret/.well-known/agent-skills/index.json', headers);
      const missing = await answer('/@nothing/.well-known/agent-skills/index.json', headers);
      expect(hidden.status).toBe(404);
      expect(hidden).toEqual(missing);
      const pkg = await answer('/@secret/hidden/.well-known/agent-skills/index.json', headers);
      const nothing = await answer('/@secret/nothing/.well-known/agent-skills/index.json', headers);
      expect(pkg.status).toBe(404);
      expect(pkg).toEqual(nothing);
    }
  });

  it('a read token of a member lists them, never kept by a shared cache', async () => {
    const res = await request(t.app)
      .get('/@secret/.well-known/agent-skills/index.json')
      .set(bearer(memberToken))
      .expect(200);
    const index = AgentSkillsIndexSchema.parse(res.body);
    expect(names(index)).toEqual(['hidden', 'pdf']);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.headers.vary).toBe('Authorization, Cookie');
    // The artifact needs the same credentials: without them it is not found either.
    const hidden = index.skills.find((s) => s.name === 'hidden');
    const path = new URL(hidden?.url ?? '', 'http://registry.test/').pathname;
    await request(t.app).get(path).expect(404);
    const { bytes } = await artifact(
      '/@secret/.well-known/agent-skills/index.json',
      hidden?.url ?? '',
      bearer(memberToken),
    );
    expect(digestOf(bytes)).toBe(hidden?.digest);
  });

  it('a private skill never reaches the root, nor makes a public name ambiguous there', async () => {
    const index = await getIndex('/.well-known/agent-skills/index.json', bearer(memberToken));
    expect(names(index)).not.toContain('hidden');
  });

  it('malformed and expired tokens are 401 with their reason and a Bearer challenge, as on every route', async () => {
    for (const [token, reason] of [
      ['pkgreg_not-a-real-token', 'malformed'],
      [expiredToken, 'expired'],
    ] as const) {
      for (const path of EVERY_INDEX) {
        const res = await request(t.app).get(path).set(bearer(token));
        expect({ path, status: res.status, body: res.body }).toEqual({
          path,
          status: 401,
          body: { error: TOKEN_REFUSAL_MESSAGES[reason] },
        });
        expect(res.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
      }
    }
  });

  it('a revoked token is 401 with its reason (docs/accounts.md, "Tokens"), on every index', async () => {
    const created = await createTokenAs(readerSession, ORIGIN, { permission: 'read' });
    const vault = await request(t.app)
      .get('/@vault/.well-known/agent-skills/index.json')
      .set(bearer(created.token))
      .expect(200);
    expect(names(AgentSkillsIndexSchema.parse(vault.body))).toEqual(['tools', 'unique']);
    await readerSession.delete(`/api/tokens/${created.id}`).set('Origin', ORIGIN).expect(200);
    for (const path of EVERY_INDEX) {
      const res = await request(t.app).get(path).set(bearer(created.token));
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 401,
        body: { error: TOKEN_REFUSAL_MESSAGES.revoked },
      });
      expect(res.headers['www-authenticate']).toBe(
        `Bearer realm="pkgreg", error="invalid_token", error_description="${TOKEN_REFUSAL_MESSAGES.revoked}"`,
      );
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });
});

describe('an organisation’s index', () => {
  const UMBRELLA = '/orgs/umbrella/.well-known/agent-skills/index.json';

  /** The entry of `name` in the index of its own scope, as `headers` read it. */
  async function scopeEntry(scope: string, name: string, headers: Record<string, string> = {}) {
    const index = await getIndex(`/@${scope}/.well-known/agent-skills/index.json`, headers);
    return index.skills.find((s) => s.name === name);
  }

  it('lists the public skills of its scopes (by settings and by its GitHub organisation), names unique', async () => {
    const res = await request(t.app).get(UMBRELLA).expect(200);
    const index = AgentSkillsIndexSchema.parse(res.body);
    expect(index.$schema).toBe(AGENT_SKILLS_INDEX_SCHEMA);
    // @acme (GitHub) and @octo (settings) both hold pdf: in neither's name here, as at the root. The
    // private @vault is not counted for who cannot read it, so octo's unique stays.
    expect(names(index)).toEqual(['notes', 'unique']);
    expect(res.headers['cache-control']).toBe('public, max-age=60, must-revalidate');
    expect(res.headers.vary).toBe('Authorization, Cookie');
    // The same entries, digests and all, as each scope's own index.
    expect(index.skills).toEqual([await scopeEntry('acme', 'notes'), await scopeEntry('octo', 'unique')]);
    const etag = res.headers.etag as string;
    await request(t.app).get(UMBRELLA).set('If-None-Match', etag).expect(304);
  });

  it('a reader’s token, session or token limited to it lists the private skills, never kept by a shared cache', async () => {
    for (const [who, headers, agent] of [
      ['member token', bearer(memberToken), request(t.app)],
      ['token limited to the organisation', bearer(umbrellaToken), request(t.app)],
      ['session', {}, readerSession],
    ] as const) {
      const res = await agent.get(UMBRELLA).set(headers);
      expect({ who, status: res.status }).toEqual({ who, status: 200 });
      const index = AgentSkillsIndexSchema.parse(res.body);
      // @vault's unique now shares octo's name: neither is listed; its tools is.
      expect({ who, names: names(index) }).toEqual({ who, names: ['notes', 'tools'] });
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.headers.vary).toBe('Authorization, Cookie');
    }
    const index = await getIndex(UMBRELLA, bearer(memberToken));
    const tools = index.skills.find((s) => s.name === 'tools');
    expect(tools?.type).toBe('archive');
    expect(tools).toEqual(await scopeEntry('vault', 'tools', bearer(memberToken)));
    const { bytes } = await artifact(UMBRELLA, tools?.url ?? '', bearer(memberToken));
    expect(digestOf(bytes)).toBe(tools?.digest);
  });

  it('to an outsider, anonymous or a token limited to another scope, its private skills are not there', async () => {
    const anonymous = await answer(UMBRELLA);
    for (const headers of [bearer(outsiderToken), bearer(secretOnlyToken)]) {
      const res = await answer(UMBRELLA, headers);
      expect(res.status).toBe(200);
      expect(res.text).toBe(anonymous.text);
    }
    // The limited token still reads what it is limited to.
    expect(
      names(await getIndex('/orgs/secret/.well-known/agent-skills/index.json', bearer(secretOnlyToken))),
    ).toEqual(['hidden', 'pdf']);
  });

  it('an organisation with nothing the caller may read answers as a missing one; a suspended one as well', async () => {
    const SECRET = '/orgs/secret/.well-known/agent-skills/index.json';
    const MISSING = '/orgs/nothing/.well-known/agent-skills/index.json';
    for (const headers of [{}, bearer(outsiderToken), bearer(umbrellaToken)]) {
      const hidden = await answer(SECRET, headers);
      const missing = await answer(MISSING, headers);
      expect(hidden.status).toBe(404);
      expect(JSON.parse(hidden.text)).toEqual({ error: 'Organisation not found' });
      expect(hidden.headers['cache-control']).toBe('no-store');
      expect(hidden).toEqual(missing);
    }
    expect(names(await getIndex(SECRET, bearer(memberToken)))).toEqual(['hidden', 'pdf']);
    // `dormant` holds the public @octo, but a suspended organisation holds nothing.
    expect(await answer('/orgs/dormant/.well-known/agent-skills/index.json')).toEqual(await answer(MISSING));
    // A slug no organisation can have is a 400 of the documented shape, not a 500 from PostgreSQL.
    for (const slug of ['a'.repeat(101), '%00', 'a%00b', '%ED%A0%80']) {
      const bad = await request(t.app).get(`/orgs/${slug}/.well-known/agent-skills/index.json`);
      expect(bad.status, slug).toBe(400);
      expect(typeof bad.body.error, slug).toBe('string');
    }
  });
});
