import { TOKEN_REFUSAL_MESSAGES, type TokenRefusal } from '@pkgreg/accounts';
import { MeSchema } from '@pkgreg/contracts';
import { skillMd } from '@pkgreg/indexer/testing';
import { buildArchive, checkpoint, logOrigin, logPendingVersions } from '@pkgreg/registry';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { refreshDerivedTables } from '../src/packages/derived-tables-refresher.js';
import { ROUTES, type RouteId, routeOf } from '../src/routes/route-table.js';
import {
  createOrganisation,
  createTokenAs,
  joinOrganisation,
  removeMember,
  signInAs,
} from './account-helpers.js';
import { useTestRegistry } from './fixtures.js';
import { newSigner } from './log-helpers.js';

// The access matrix of issue 28 (docs/accounts.md, "Private scopes and packages" and "Tokens"): every
// read route that can name a package, asked by every kind of caller. To anyone not allowed a private
// package is a missing one (the same status, body and headers) and no list, count, facet, feed, rank
// or index names or counts it; a reader and a publisher of its organisation see it everywhere, totals
// included; a revoked or expired token is a 401 everywhere, public paths too. Everything is set up
// through the API as a person would (sign-in, organisation, invitations, tokens, uploads, removal); the
// list of read routes comes from the route table, so a new one fails the last test until it has a row.

const ORIGIN = 'http://registry.test';
const t = useTestRegistry({
  REGISTRY_PUBLIC_URL: ORIGIN,
  DEV_SIGN_IN: 'true',
  SIGN_IN_PER_MINUTE: '1000',
  PUBLISHES_PER_HOUR: '10000',
  REPORTS_PER_HOUR: '10000',
  TRACK_PER_MINUTE: '10000',
});

// ---------------------------------------------------------------------------------------------------
// The callers. `sees`: `public` (a private package is a missing one), `member` (the organisation's
// private packages too) or `refused` (401 with the token's reason, whatever the path).

type Sees = 'public' | 'member' | 'refused';
type Method = 'get' | 'post';

interface Caller {
  name: string;
  sees: Sees;
  refusal?: TokenRefusal;
  send: (method: Method, path: string) => request.Test;
}

/** Browsers (sessions) and tokens of the people below, made in beforeAll. */
const agents: Record<string, request.Agent> = {};
const tokens: Record<string, string> = {};

const anonymous = (method: Method, path: string) => request(t.app)[method](path);
const withToken = (key: string) => (method: Method, path: string) =>
  request(t.app)[method](path).set('Authorization', `Bearer ${tokens[key]}`);
const withSession = (key: string) => (method: Method, path: string) =>
  (agents[key] as request.Agent)[method](path);

const CALLERS: readonly Caller[] = [
  { name: 'anonymous', sees: 'public', send: anonymous },
  { name: 'signed-in outsider (session)', sees: 'public', send: withSession('outsider') },
  { name: 'outsider token (account in no organisation)', sees: 'public', send: withToken('outsider') },
  { name: "owner's token limited to another scope", sees: 'public', send: withToken('elsewhere') },
  { name: 'removed member (session)', sees: 'public', send: withSession('leaver') },
  { name: 'removed member (token)', sees: 'public', send: withToken('leaver') },
  { name: 'reader (session)', sees: 'member', send: withSession('reader') },
  { name: 'reader (read token)', sees: 'member', send: withToken('reader') },
  { name: 'publisher (session)', sees: 'member', send: withSession('publisher') },
  { name: 'publisher (read token)', sees: 'member', send: withToken('publisher') },
  { name: 'revoked token', sees: 'refused', refusal: 'revoked', send: withToken('revoked') },
  { name: 'expired token', sees: 'refused', refusal: 'expired', send: withToken('expired') },
];

// ---------------------------------------------------------------------------------------------------
// The packages: the private scope `@secret` of the organisation `vault`, and the public scope `@pub`.
// @pub/open depends on @secret/hidden and @pub/plain; @secret/also depends on @pub/plain (a private
// dependant); @secret/plain shares a name with @pub/plain (the root index's one-holder rule).

const PRIVATE_PACKAGE = '@secret/hidden';
/** A package that never existed, in the same scope: what a private package must look like. */
const MISSING_PACKAGE = '@secret/nothing';
const PUBLIC_NAMES = ['@pub/open', '@pub/plain'];
const PRIVATE_NAMES = ['@secret/also', '@secret/hidden', '@secret/plain'];
const ALL_NAMES = [...PUBLIC_NAMES, ...PRIVATE_NAMES].sort();
/** What outsiders must never read in an answer that lists or counts (its SKILL.md aside, see below). */
const PRIVATE_MARK = /secret|hidden/;

const skill = (name: string, dependencies?: string) =>
  skillMd([
    `name: ${name}`,
    `description: The ${name} skill for vault work.`,
    ...(dependencies === undefined ? [] : ['metadata:', `  dependencies: "${dependencies}"`]),
  ]);

/** A tar.gz of a skill folder holding its SKILL.md, as `pkgreg publish` uploads it. */
const folder = (name: string, md: string) =>
  buildArchive(
    name,
    [{ path: 'SKILL.md', mode: '100644', sha256: '', gitSha1: '', size: 0, linkTarget: null }],
    () => Buffer.from(md),
  );

async function upload(token: string, full: string, md: string) {
  const name = full.split('/')[1] as string;
  const res = await request(t.app)
    .put(`/api/packages/${full}/versions/1.0.0`)
    .set('Content-Type', 'application/gzip')
    .set('Authorization', `Bearer ${token}`)
    .send(await folder(name, md));
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

beforeAll(async () => {
  const signIn = async (handle: string) => {
    agents[handle] = await signInAs(t.app, ORIGIN, handle);
    return agents[handle];
  };
  const token = async (handle: string, body: Record<string, unknown> = {}) =>
    (await createTokenAs(agents[handle] as request.Agent, ORIGIN, { permission: 'read', ...body })).token;

  // The organisation `vault` holds the scope `secret`, private before anything is in it, and `annex`.
  const owner = await signIn('owner');
  const org = await createOrganisation(owner, ORIGIN, 'vault');
  for (const scope of ['secret', 'annex']) {
    const claimed = await owner
      .put(`/api/scopes/${scope}/settings`)
      .set('Origin', ORIGIN)
      .send({ organizationId: org });
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
  }
  const hidden = await owner
    .put('/api/scopes/secret/settings')
    .set('Origin', ORIGIN)
    .send({ visibility: 'private' });
  expect(hidden.status, JSON.stringify(hidden.body)).toBe(200);
  for (const [handle, role] of [
    ['reader', 'reader'],
    ['publisher', 'publisher'],
    ['leaver', 'reader'],
  ] as const) {
    await joinOrganisation(owner, await signIn(handle), ORIGIN, org, handle, role);
  }
  await signIn('outsider');
  await signIn('author');

  // The packages, uploaded: @pub's by its author (claiming the scope), @secret's by the publisher.
  const author = await token('author', { permission: 'publish' });
  const publisher = await token('publisher', { permission: 'publish' });
  await upload(author, '@pub/plain', skill('plain'));
  await upload(publisher, '@secret/hidden', skill('hidden'));
  await upload(publisher, '@secret/also', skill('also', '@pub/plain'));
  await upload(publisher, '@secret/plain', skill('plain'));
  await upload(author, '@pub/open', skill('open', '@secret/hidden@^1, @pub/plain'));

  for (const handle of ['outsider', 'reader', 'publisher', 'leaver']) tokens[handle] = await token(handle);
  // The organisation's owner reaches everything of it, settings and audit log too; limited to `annex`,
  // another scope of the same organisation, the token reaches nothing of `secret`.
  tokens.elsewhere = await token('owner', { scopes: ['annex'] });
  // Revoked through the API; expired as time would make it (no API makes a token expire early).
  const revoked = await createTokenAs(agents.reader as request.Agent, ORIGIN, { permission: 'read' });
  tokens.revoked = revoked.token;
  const revoke = await (agents.reader as request.Agent)
    .delete(`/api/tokens/${revoked.id}`)
    .set('Origin', ORIGIN);
  expect(revoke.status).toBe(200);
  const expired = await createTokenAs(agents.reader as request.Agent, ORIGIN, { permission: 'read' });
  tokens.expired = expired.token;
  await t.db
    .updateTable('access_tokens')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('id', '=', expired.id)
    .execute();

  // The leaver reads the private package (so their reach is kept by the access cache), then is removed
  // through the organisation API: their session and token lose it at once.
  for (const send of [withSession('leaver'), withToken('leaver')]) {
    expect((await send('get', `/api/packages/${PRIVATE_PACKAGE}`)).status).toBe(200);
  }
  await removeMember(owner, ORIGIN, org, 'leaver');

  // What the refresher and the signer beside the API do within seconds: list, rank and search tables,
  // and the transparency log with its checkpoint.
  await refreshDerivedTables(t.db);
  await logPendingVersions(t.db);
  await checkpoint(t.db, newSigner(), logOrigin(ORIGIN));
});

// ---------------------------------------------------------------------------------------------------
// The read paths. A `hidden` row names the private package (or its scope or organisation) and the same
// path naming a missing one: outsiders get exactly the missing one's answer, members `member`'s status.
// A `listing` row lists or counts packages: `read` takes from its answer what each class must see.

interface HiddenRow {
  kind: 'hidden';
  route: RouteId;
  method: Method;
  path: string;
  missing: string;
  /** The status a member gets. */
  member: number;
}

interface ListingRow {
  kind: 'listing';
  route: RouteId;
  method: 'get';
  path: string;
  read: (res: request.Response) => unknown;
  public: unknown;
  member: unknown;
}

type Row = HiddenRow | ListingRow;

const packageRow = (route: RouteId, method: Method, tail: string, member: number): HiddenRow => ({
  kind: 'hidden',
  route,
  method,
  path: tail.replace('{pkg}', PRIVATE_PACKAGE),
  missing: tail.replace('{pkg}', MISSING_PACKAGE),
  member,
});

const HIDDEN_ROWS: HiddenRow[] = [
  packageRow('detail', 'get', '/api/packages/{pkg}', 200),
  packageRow('skill-md', 'get', '/api/packages/{pkg}/skill-md', 200),
  packageRow('source', 'get', '/api/packages/{pkg}/source', 302),
  packageRow('versions', 'get', '/api/packages/{pkg}/versions', 200),
  packageRow('version', 'get', '/api/packages/{pkg}/versions/1.0.0', 200),
  packageRow('version', 'get', '/api/packages/{pkg}/versions/latest', 200),
  packageRow('version-attestations', 'get', '/api/packages/{pkg}/versions/1.0.0/attestations', 200),
  packageRow('version-file', 'get', '/api/packages/{pkg}/versions/1.0.0/files/SKILL.md', 200),
  packageRow('version-file', 'get', '/api/packages/{pkg}/versions/latest/files/SKILL.md', 200),
  packageRow('version-archive', 'get', '/api/packages/{pkg}/versions/1.0.0/archive.tgz', 200),
  packageRow('version-archive', 'get', '/api/packages/{pkg}/versions/latest/archive.tgz', 200),
  packageRow('version-agent-skill', 'get', '/api/packages/{pkg}/versions/1.0.0/agent-skill.tar.gz', 200),
  packageRow(
    'version-agent-skill-v2',
    'get',
    '/api/packages/{pkg}/versions/1.0.0/agent-skill.v2.tar.gz',
    200,
  ),
  packageRow('dependants', 'get', '/api/packages/{pkg}/dependants', 200),
  packageRow('package-agent-skills-index', 'get', '/{pkg}/.well-known/agent-skills/index.json', 200),
  packageRow('track', 'post', '/api/packages/{pkg}/track', 200),
  packageRow('report', 'post', '/api/packages/{pkg}/reports', 201),
  // Settings are for admins: a reader or publisher is told so (403); anyone else finds nothing.
  packageRow('package-settings', 'get', '/api/packages/{pkg}/settings', 403),
  {
    kind: 'hidden',
    route: 'scope-agent-skills-index',
    method: 'get',
    path: '/@secret/.well-known/agent-skills/index.json',
    missing: '/@nothing/.well-known/agent-skills/index.json',
    member: 200,
  },
  {
    kind: 'hidden',
    route: 'organization-agent-skills-index',
    method: 'get',
    path: '/orgs/vault/.well-known/agent-skills/index.json',
    missing: '/orgs/nothing/.well-known/agent-skills/index.json',
    member: 200,
  },
  {
    kind: 'hidden',
    route: 'organization-audit',
    method: 'get',
    path: '/api/orgs/vault/audit',
    missing: '/api/orgs/nothing/audit',
    member: 403,
  },
  {
    kind: 'hidden',
    route: 'scope-settings',
    method: 'get',
    path: '/api/scopes/secret/settings',
    missing: '/api/scopes/nothing/settings',
    member: 403,
  },
];

/** A page's packages as `@scope/name`, sorted, and its total. */
const names = (items: Array<{ scope: string; name: string }>) => items.map((p) => `@${p.scope}/${p.name}`);
const page = (res: request.Response) => ({ total: res.body.total, names: names(res.body.data).sort() });
const searched = (res: request.Response) => ({
  total: res.body.total,
  names: names(res.body.results).sort(),
});
/** What a page or search of exactly these packages reads as. */
const seen = (list: string[]) => ({ total: list.length, names: [...list].sort() });

const listing = (
  route: RouteId,
  path: string,
  read: ListingRow['read'],
  expected: { public: unknown; member: unknown },
): ListingRow => ({ kind: 'listing', route, method: 'get', path, read, ...expected });

const LISTING_ROWS: ListingRow[] = [
  // The list, its total, its sorts (downloads and trending are the popularity ranks) and its facets.
  ...['name', 'stars', 'indexed', 'downloads', 'trending'].map((sort) =>
    listing('list', `/api/packages?sort=${sort}&pageSize=100`, page, {
      public: seen(PUBLIC_NAMES),
      member: seen(ALL_NAMES),
    }),
  ),
  listing('list', '/api/packages?owner=secret', page, { public: seen([]), member: seen(PRIVATE_NAMES) }),
  listing('list', '/api/packages?kind=skill&status=active&pageSize=100', page, {
    public: seen(PUBLIC_NAMES),
    member: seen(ALL_NAMES),
  }),
  // The sync feed is for anonymous mirrors: the same to everyone, a package born private never in it.
  listing('list', '/api/packages?limit=500', (res) => names(res.body.data).sort(), {
    public: PUBLIC_NAMES,
    member: PUBLIC_NAMES,
  }),
  // Search, its total and its filters.
  listing('search', '/api/search?q=vault', searched, { public: seen(PUBLIC_NAMES), member: seen(ALL_NAMES) }),
  listing('search', '/api/search?q=hidden', searched, { public: seen([]), member: seen([PRIVATE_PACKAGE]) }),
  listing('search', '/api/search?q=plain', searched, {
    public: seen(['@pub/plain']),
    member: seen(['@pub/plain', '@secret/plain']),
  }),
  listing('search', '/api/search?q=vault&owner=secret', searched, {
    public: seen([]),
    member: seen(PRIVATE_NAMES),
  }),
  listing('search', '/api/search?q=vault&kind=skill', searched, {
    public: seen(PUBLIC_NAMES),
    member: seen(ALL_NAMES),
  }),
  // Dependencies and dependants: a public package's private dependency and dependant, and their counts.
  listing(
    'detail',
    '/api/packages/@pub/open',
    (res) => ({ dependencies: res.body.dependencies, depCount: res.body.depCount }),
    {
      public: { dependencies: [{ name: '@pub/plain', range: null, resolves: true }], depCount: 1 },
      member: {
        dependencies: [
          { name: PRIVATE_PACKAGE, range: '^1', resolves: true },
          { name: '@pub/plain', range: null, resolves: true },
        ],
        depCount: 2,
      },
    },
  ),
  listing('version', '/api/packages/@pub/open/versions/1.0.0', (res) => res.body.dependencies, {
    public: [{ name: '@pub/plain', range: null }],
    member: [
      { name: PRIVATE_PACKAGE, range: '^1' },
      { name: '@pub/plain', range: null },
    ],
  }),
  // docs/versions.md: `dependantCount` counts public dependants only, for everyone (a member's private
  // dependants are in the dependants list and its total, read live).
  listing('detail', '/api/packages/@pub/plain', (res) => res.body.dependantCount, { public: 1, member: 1 }),
  listing('dependants', '/api/packages/@pub/plain/dependants', page, {
    public: seen(['@pub/open']),
    member: seen(['@pub/open', '@secret/also']),
  }),
  // The root discovery index is public only, whoever asks; a private twin does not take @pub/plain out.
  listing(
    'agent-skills-index',
    '/.well-known/agent-skills/index.json',
    (res) => res.body.skills.map((s: { url: string }) => s.url),
    {
      public: [expect.stringContaining('/@pub/open/'), expect.stringContaining('/@pub/plain/')],
      member: [expect.stringContaining('/@pub/open/'), expect.stringContaining('/@pub/plain/')],
    },
  ),
  // The transparency log is public: private versions are never logged, so it is the same to everyone.
  listing(
    'log-entries',
    '/api/log/entries',
    (res) => res.body.entries.map((e: { entry: string }) => e.entry.split(' ')[0]),
    { public: ['@pub/plain@1.0.0', '@pub/open@1.0.0'], member: ['@pub/plain@1.0.0', '@pub/open@1.0.0'] },
  ),
  listing('log-checkpoint', '/api/log/checkpoint', (res) => res.text.split('\n')[1], {
    public: '2',
    member: '2',
  }),
];

const ROWS: Row[] = [...HIDDEN_ROWS, ...LISTING_ROWS];

/**
 * GET routes that name no package, or name one only to someone it already belongs to, each with why.
 * Every other read route of the table must have a row above (the last test).
 */
const NOT_PACKAGE_READS: Partial<Record<RouteId, string>> = {
  'scope-only': 'a package path without its name: 400 whatever follows, names nothing',
  'publish-run': "a publisher's own run, by an unguessable id handed to the publisher alone",
  'registry-keys': 'signing keys',
  'log-inclusion-proof': "hashes of the log's leaves: public versions only (the log-entries row)",
  'log-consistency-proof': "hashes of the log's leaves: public versions only (the log-entries row)",
  openapi: 'the API description',
  'auth-options': 'the sign-in methods',
  me: "the caller's own account and reach",
  'tokens-list': "the caller's own tokens",
  'cli-authorize-page': 'a sign-in page',
  'sessions-list': "the caller's own sessions",
  'mcp-consent-page': 'a consent page',
  'connected-apps-list': "the caller's own connected apps",
};

// ---------------------------------------------------------------------------------------------------

/** The headers a client could compare (not the per-request ones). */
function comparable(headers: Record<string, unknown>): Record<string, unknown> {
  const { 'x-request-id': _id, date: _date, connection: _c, 'keep-alive': _k, ...rest } = headers;
  return rest;
}

async function ask(caller: Caller, method: Method, path: string) {
  let req = caller.send(method, path);
  // A browser sends its origin on a write; a report needs a reason.
  if (method === 'post') req = req.set('Origin', ORIGIN);
  if (path.endsWith('/reports')) req = req.send({ reason: 'spam' });
  return req;
}

/** Everything a client could tell apart: status, body bytes and headers. */
const answerOf = (res: request.Response) => ({
  status: res.status,
  text: res.text,
  headers: comparable(res.headers),
});

/** An answer with what a public package's author wrote in its own SKILL.md left out. */
const withoutAuthorsText = (res: request.Response) => {
  if (!res.body || typeof res.body !== 'object') return res.text;
  const { skillMdRaw: _raw, frontmatter: _frontmatter, ...rest } = res.body as Record<string, unknown>;
  return JSON.stringify(rest);
};

const label = (row: Row) => `${row.method.toUpperCase()} ${row.path} (${row.route})`;

describe.each(CALLERS)('$name', (caller) => {
  it.each(ROWS.map((row) => [label(row), row] as const))('%s', async (_label, row) => {
    const res = await ask(caller, row.method, row.path);
    if (caller.sees === 'refused') {
      expect({ status: res.status, body: res.body }).toEqual({
        status: 401,
        body: { error: TOKEN_REFUSAL_MESSAGES[caller.refusal as TokenRefusal] },
      });
      expect(res.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
      return;
    }
    if (row.kind === 'hidden') {
      if (caller.sees === 'member') {
        expect(res.status, res.text).toBe(row.member);
        return;
      }
      const missing = await ask(caller, row.method, row.missing);
      // A route for accounts asks anonymous callers to sign in, for both alike.
      const signInFirst = routeOf(row.route).access !== 'anonymous' && caller.send === anonymous;
      expect(res.status).toBe(signInFirst ? 401 : 404);
      expect(answerOf(res)).toEqual(answerOf(missing));
      return;
    }
    expect(res.status, res.text).toBe(200);
    expect(row.read(res)).toEqual(caller.sees === 'member' ? row.member : row.public);
    if (caller.sees === 'public') expect(withoutAuthorsText(res)).not.toMatch(PRIVATE_MARK);
  });
});

describe('the matrix itself', () => {
  it('the callers are who they say: their organisations and the scopes they reach (GET /api/me)', async () => {
    const reach = async (caller: Caller) => {
      const res = await caller.send('get', '/api/me');
      if (res.status !== 200) return res.status;
      const me = MeSchema.parse(res.body);
      return {
        organizations: me.organizations.map((o) => `${o.slug}:${o.role}`),
        scopes: me.scopes.map((s) => `${s.scope}:${s.role}`).sort(),
      };
    };
    const member = (role: string) => ({
      organizations: [`vault:${role}`],
      scopes: [`annex:${role}`, `secret:${role}`],
    });
    const none = { organizations: [], scopes: [] };
    const seenBy: Record<string, unknown> = {};
    for (const caller of CALLERS) seenBy[caller.name] = await reach(caller);
    expect(seenBy).toEqual({
      anonymous: 401,
      'signed-in outsider (session)': none,
      'outsider token (account in no organisation)': none,
      // The organisation is the account's; the token reaches one scope of it.
      "owner's token limited to another scope": { organizations: ['vault:owner'], scopes: ['annex:owner'] },
      'removed member (session)': none,
      'removed member (token)': none,
      'reader (session)': member('reader'),
      'reader (read token)': member('reader'),
      'publisher (session)': member('publisher'),
      'publisher (read token)': member('publisher'),
      'revoked token': 401,
      'expired token': 401,
    });
  });

  it('every listing row tells a member from an outsider, or says it is the same to everyone', () => {
    const same = LISTING_ROWS.filter((row) => JSON.stringify(row.public) === JSON.stringify(row.member));
    expect(same.map(label).sort()).toEqual(
      [
        'GET /api/packages?limit=500 (list)',
        'GET /api/packages/@pub/plain (detail)',
        'GET /.well-known/agent-skills/index.json (agent-skills-index)',
        'GET /api/log/entries (log-entries)',
        'GET /api/log/checkpoint (log-checkpoint)',
      ].sort(),
    );
  });

  it("each row's path is its route's, and the missing twin answers 404 to the members who read the private one", async () => {
    const template = (path: string) =>
      new RegExp(`^${path.replace(/:[A-Za-z]+/g, '[^/]+').replace(/\*[A-Za-z]+/g, '.+')}$`);
    for (const row of ROWS) {
      expect(row.path.split('?')[0], label(row)).toMatch(template(routeOf(row.route).path));
      if (row.kind !== 'hidden') continue;
      const member = CALLERS.find((c) => c.sees === 'member') as Caller;
      const missing = await ask(member, row.method, row.missing);
      expect(missing.status, label(row)).toBe(404);
    }
  });

  it('every read route that can name a package has a row (or a reason above why it names none)', () => {
    // Reads: every GET, and the anonymous POSTs about one package (track, report).
    const reads = ROUTES.filter(
      (r) =>
        r.method === 'get' || (r.access === 'anonymous' && r.path.startsWith('/api/packages/:scope/:name/')),
    ).map((r) => r.id as RouteId);
    const covered = new Set<RouteId>(ROWS.map((row) => row.route));
    expect(reads.filter((id) => !covered.has(id) && !(id in NOT_PACKAGE_READS))).toEqual([]);
    expect(Object.keys(NOT_PACKAGE_READS).filter((id) => covered.has(id as RouteId))).toEqual([]);
    expect(Object.keys(NOT_PACKAGE_READS).filter((id) => !reads.includes(id as RouteId))).toEqual([]);
  });
});
