import { SCOPES } from '@pkgreg/contracts';
import { insertAccounts, insertDelegation, insertOrganisation, type TestDatabase } from '@pkgreg/db/testing';
import { skillMd } from '@pkgreg/indexer/testing';
import { until } from '@pkgreg/testing';
import { type CryptoKey, decodeJwt, decodeProtectedHeader, importJWK, type JWK, jwtVerify } from 'jose';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDelegationAssertions, DELEGATION_TYP } from '../src/catalog/delegation-assertions.js';
import { createClient } from '../src/oauth/clients.service.js';
import { createKeyStore } from '../src/oauth/signing-keys.service.js';
import type { AuthInfo } from '../src/oauth/verify-token.js';
import { forgeToken, type Harness } from './helpers.js';
import {
  type EdgeOverRegistry,
  type RunningRegistry,
  type SkillRepos,
  startEdgeOverRegistry,
} from './registry.js';

// Issue 29, "pkgreg.registry.read shows that person's private skills": a token a person delegated to an
// app reads the registry through the edge as that person (docs/accounts.md, "Reading through the MCP
// edge"), by the edge's delegation assertion, never the app's token. The real registry (its built
// server, tests/registry.ts) and a real edge on this file's own database; accounts, the organisation
// and the delegations are rows, as the registry's own tests write them. Visibility is trusted for a
// minute here, so anything a person's read left in the edge's shared caches would be served to the next
// caller: every "right after" below would fail.

let t: TestDatabase;
let registry: RunningRegistry;
let repos: SkillRepos;
let stack: EdgeOverRegistry;
let base: string;

const APP = 'https://agent.example/oauth/client.json';
const RUNBOOK = skillMd(
  ['name: runbook', 'description: Deploy the vault service step by step'],
  '# Runbook\n\nSee [steps](references/STEPS.md).\n',
);
const STEPS = '# Steps\n\nRotate the vault keys first.\n';
const PRIVATE_URI = 'skill://vault/runbook/SKILL.md';
const MISSING_URI = 'skill://vault/no-such-skill/SKILL.md';

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
type Json = any;

/** A token `person` delegated to the app, as the edge's authorization server signs it. */
const delegated = (person: string, scope: string = SCOPES.registryRead) =>
  forgeToken({ t } as Harness, {
    iss: `${base}/mcp`,
    aud: `${base}/mcp`,
    clientId: APP,
    subject: person,
    scope,
  });

/** A client acting for itself (client credentials, `sub` = `client_id`) from the real token endpoint. */
async function clientToken(): Promise<string> {
  const { clientId, clientSecret } = await createClient(t.db, {
    name: 'machine',
    scopes: [SCOPES.registryRead],
  });
  const res = await fetch(`${base}/mcp/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  });
  return ((await res.json()) as Json).access_token;
}

async function rpc(token: string, method: string, params: Record<string, unknown> = {}) {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 3, method, params }),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

const read = (token: string, uri: string) => rpc(token, 'resources/read', { uri });
const get = (token: string, name: string) =>
  rpc(token, 'tools/call', { name: 'pkgreg.registry.v1.get', arguments: { package: name } });
const search = (token: string, q: string) =>
  rpc(token, 'tools/call', { name: 'pkgreg.registry.v1.search', arguments: { q } });

async function listedUris(token: string): Promise<string[]> {
  const uris: string[] = [];
  let cursor: string | undefined;
  do {
    const page = (await rpc(token, 'resources/list', cursor ? { cursor } : {})).body.result;
    uris.push(...page.resources.map((r: { uri: string }) => r.uri));
    cursor = page.nextCursor;
  } while (cursor);
  return uris;
}

/** The error of a read of the private package, and of a missing one, with the names swapped out. */
function expectAnsweredAsMissing(hidden: Json, missing: Json, hiddenName: string, missingName: string) {
  expect(hidden.status).toBe(missing.status);
  expect(hidden.body.error).toBeDefined();
  expect(hidden.body.error.code).toBe(missing.body.error.code);
  expect(hidden.body.error.data.reason).toBe(missing.body.error.data.reason);
  expect(hidden.body.error.message.replaceAll(hiddenName, 'X')).toBe(
    missing.body.error.message.replaceAll(missingName, 'X'),
  );
}

let member: string;
let outsider: string;
let machine: string;

beforeAll(async () => {
  // The edge listens first: the registry must know its public URL to trust its assertions.
  stack = await startEdgeOverRegistry({ trustEdge: true });
  ({ t, base, registry, repos } = stack);
  await repos.commit('vault', 'skills', {
    'runbook/SKILL.md': RUNBOOK,
    'runbook/references/STEPS.md': STEPS,
  });
  await repos.commit('open', 'skills', {
    'helper/SKILL.md': skillMd(['name: helper', 'description: A public vault helper']),
  });
  // `vault` is the private scope of an organisation `member` belongs to; `outsider` belongs to none.
  const people = ['member', 'outsider', 'suspended-later', 'revoking'];
  await insertAccounts(t.db, people);
  await insertOrganisation(t.db, {
    id: 'org-vault',
    name: 'Vault',
    slug: 'vault',
    members: { member: 'reader', 'suspended-later': 'reader', revoking: 'reader' },
    scopes: { vault: 'private' },
  });
  for (const accountId of people)
    await insertDelegation(t.db, { accountId, clientId: APP, scopes: [SCOPES.registryRead] });
  await until(async () => {
    const res = await fetch(`${registry.url}/api/search?q=vault`);
    return ((await res.json()) as Json).total === 1;
  }, 'the registry search to hold the public package only');

  await stack.startEdge('delegated', {
    // Trusted for a minute: a person's answer kept for anyone would be served to the next caller.
    EDGE_CATALOG_TTL_MS: '60000',
    EDGE_RATE_LIMIT_PER_MINUTE: '10000',
  });
  member = await delegated('member');
  outsider = await delegated('outsider');
  machine = await clientToken();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe("a person's delegated token reads that person's private skills", () => {
  it('resources/read of SKILL.md, _manifest and a file by the template', async () => {
    const skill = await read(member, PRIVATE_URI);
    expect(skill.body.result.contents[0]).toMatchObject({ uri: PRIVATE_URI, text: RUNBOOK });
    const manifest = await read(member, 'skill://vault/runbook/_manifest');
    const files = JSON.parse(manifest.body.result.contents[0].text).files.map(
      (f: { path: string }) => f.path,
    );
    expect(files.sort()).toEqual(['SKILL.md', 'references/STEPS.md']);
    const steps = await read(member, 'skill://vault/runbook/references/STEPS.md');
    expect(steps.body.result.contents[0].text).toBe(STEPS);
  });

  it('pkgreg.registry.v1.get and .search, and resources/list', async () => {
    const got = await get(member, '@vault/runbook');
    expect(got.body.result.structuredContent).toMatchObject({
      package: { scope: 'vault', name: 'runbook' },
      uri: PRIVATE_URI,
    });
    const found = await search(member, 'vault');
    const names = found.body.result.structuredContent.results.map((r: { name: string }) => r.name);
    expect(names.sort()).toEqual(['helper', 'runbook']);
    expect(found.body.result.structuredContent.total).toBe(2);
    expect(await listedUris(member)).toContain(PRIVATE_URI);
  });
});

describe('everyone else gets what a missing package gets', () => {
  const others = () =>
    [
      ['a delegated token of an account outside the organisation', outsider],
      ['a client acting for itself (client credentials)', machine],
    ] as const;

  it('resources/read, get, search and resources/list, right after the member read it', async () => {
    for (const [label, token] of others()) {
      // The member reads first each time: nothing of its answer may reach the next caller.
      expect((await read(member, PRIVATE_URI)).body.result, label).toBeDefined();
      expectAnsweredAsMissing(
        await read(token, PRIVATE_URI),
        await read(token, MISSING_URI),
        'runbook',
        'no-such-skill',
      );
      expect((await read(member, 'skill://vault/runbook/references/STEPS.md')).body.result).toBeDefined();
      expectAnsweredAsMissing(
        await read(token, 'skill://vault/runbook/references/STEPS.md'),
        await read(token, 'skill://vault/no-such-skill/references/STEPS.md'),
        'runbook',
        'no-such-skill',
      );
      expect((await get(member, '@vault/runbook')).body.result, label).toBeDefined();
      expectAnsweredAsMissing(
        await get(token, '@vault/runbook'),
        await get(token, '@vault/no-such-skill'),
        'runbook',
        'no-such-skill',
      );
      // The skills extension reads the same way (skills/get, skills/list).
      expect((await rpc(member, 'skills/get', { uri: PRIVATE_URI })).body.result, label).toBeDefined();
      expectAnsweredAsMissing(
        await rpc(token, 'skills/get', { uri: PRIVATE_URI }),
        await rpc(token, 'skills/get', { uri: MISSING_URI }),
        'runbook',
        'no-such-skill',
      );
      expect(JSON.stringify((await rpc(token, 'skills/list')).body), label).not.toContain('runbook');
      const found = await search(token, 'vault');
      expect(found.body.result.structuredContent.total, label).toBe(1);
      expect(JSON.stringify(found.body)).not.toContain('runbook');
      expect(await listedUris(token), label).not.toContain(PRIVATE_URI);
    }
  });

  it('asked at the same moment as the member, each gets its own answer', async () => {
    for (let round = 0; round < 5; round++) {
      const [mine, theirs, machines] = await Promise.all([
        read(member, PRIVATE_URI),
        read(outsider, PRIVATE_URI),
        read(machine, PRIVATE_URI),
      ]);
      expect(mine.body.result.contents[0].text).toBe(RUNBOOK);
      expect(theirs.body.error.data.reason).toBe('resource_not_found');
      expect(machines.body.error.data.reason).toBe('resource_not_found');
    }
  });

  it('the member still reads it after the others asked (their not-found is not kept for it)', async () => {
    expect((await read(machine, PRIVATE_URI)).body.error.data.reason).toBe('resource_not_found');
    expect((await read(member, PRIVATE_URI)).body.result.contents[0].text).toBe(RUNBOOK);
  });
});

describe('when the delegation ends, so do the reads', () => {
  it('a revoked delegation: the edge refuses the token at once (401)', async () => {
    const token = await delegated('revoking');
    expect((await read(token, PRIVATE_URI)).body.result.contents[0].text).toBe(RUNBOOK);
    await sql`update edge_delegations set revoked_at = now() where account_id = 'revoking'`.execute(t.db);
    const refused = await until(async () => {
      const res = await read(token, PRIVATE_URI);
      return res.status === 401 ? res : undefined;
    }, 'the edge to refuse the revoked token');
    expect(refused.body.error.data.reason).toBe('token_invalid');
  });

  it('a suspended account: the registry refuses the assertion and the edge answers 401', async () => {
    const token = await delegated('suspended-later');
    expect((await read(token, PRIVATE_URI)).body.result.contents[0].text).toBe(RUNBOOK);
    await sql`update auth_user set "banned" = true where "id" = 'suspended-later'`.execute(t.db);
    for (const res of [
      await read(token, PRIVATE_URI),
      await read(token, 'skill://open/helper/SKILL.md'),
      await search(token, 'vault'),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body.error.data.reason).toBe('token_invalid');
    }
  });
});

describe('the assertion the edge signs', () => {
  const auth = (o: Partial<AuthInfo>): AuthInfo => ({
    issuer: `${base}/mcp`,
    clientId: APP,
    subject: 'member',
    scopes: [SCOPES.registryRead],
    namespace: 'app:x',
    expiresAt: Math.floor(Date.now() / 1000) + 600,
    issuedAt: Math.floor(Date.now() / 1000),
    audiences: [`${base}/mcp`],
    ...o,
  });

  it("for a person's token only; typed, for the registry, two minutes; kept per person and app", async () => {
    const keyStore = createKeyStore(t.db, { purpose: 'delegation' });
    const assertions = createDelegationAssertions({
      keyStore,
      issuer: `${base}/mcp`,
      audience: registry.url,
    });
    expect(assertions.of(auth({ subject: undefined }))).toBeUndefined();
    expect(assertions.of(auth({ subject: APP }))).toBeUndefined();
    expect(assertions.of(auth({ issuer: 'https://trusted.example' }))).toBeUndefined();
    expect(assertions.of(auth({ scopes: [SCOPES.systemRead] }))).toBeUndefined();

    const first = (await assertions.of(auth({}))) as string;
    const { kid } = await keyStore.signingKey();
    expect(decodeProtectedHeader(first)).toEqual({ alg: 'ES256', kid, typ: DELEGATION_TYP });
    const { payload } = await jwtVerify(first, (h) => keyStore.verificationKey(h.kid) as never, {
      issuer: `${base}/mcp`,
      audience: registry.url,
      typ: DELEGATION_TYP,
    });
    expect(payload).toMatchObject({ sub: 'member', client_id: APP });
    expect((payload.exp as number) - (payload.iat as number)).toBe(120);
    expect(await assertions.of(auth({}))).toBe(first);
    expect(await assertions.of(auth({ subject: 'outsider' }))).not.toBe(first);
    // Signed again once under 30 s are left: the clock set from the assertion's own whole-second exp, so
    // the time the steps above took does not move the boundary.
    const exp = payload.exp as number;
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime((exp - 31) * 1000);
      expect(await assertions.of(auth({}))).toBe(first);
      vi.setSystemTime((exp - 29) * 1000);
      const renewed = (await assertions.of(auth({}))) as string;
      expect(renewed).not.toBe(first);
      expect(decodeJwt(renewed).iat).toBeGreaterThan(payload.iat as number);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('delegation keys are not access-token keys (docs/decisions.md, "Delegation keys")', () => {
  /** The edge's active delegation key, as the runtime worker reads it. */
  async function delegationKey(): Promise<{ kid: string; key: CryptoKey }> {
    const row = await t.db
      .selectFrom('edge_delegation_keys')
      .selectAll()
      .where('status', '=', 'active')
      .executeTakeFirstOrThrow();
    return { kid: row.kid, key: (await importJWK(row.private_jwk as JWK, 'ES256')) as CryptoKey };
  }

  it("the edge's assertions are signed by a delegation key, which is in no JWKS", async () => {
    const signed = (await read(member, PRIVATE_URI)).body;
    expect(signed.result.contents[0].text).toContain('# Runbook');
    const { kid } = await delegationKey();
    const accessKids = (await t.db.selectFrom('oauth_signing_keys').select('kid').execute()).map(
      (k) => k.kid,
    );
    expect(accessKids).not.toContain(kid);
    const jwks = (await (await fetch(`${base}/mcp/jwks.json`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).not.toContain(kid);
  });

  it('an access token signed with the delegation key (a worker compromised) is refused: 401', async () => {
    const forged = await forgeToken({ t } as Harness, {
      iss: `${base}/mcp`,
      aud: `${base}/mcp`,
      clientId: APP,
      subject: 'member',
      scope: SCOPES.registryRead,
      key: await delegationKey(),
    });
    const res = await read(forged, PRIVATE_URI);
    expect(res.status).toBe(401);
    expect(res.body.error.data.reason).toBe('token_invalid');
    // The same claims under the access key are a token: only the key made the difference.
    expect((await read(await delegated('member'), PRIVATE_URI)).status).toBe(200);
  });
});
