import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { auth, type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { deriveDelegatedNamespace } from '@pkgreg/contracts';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase, testKeyPrefix } from '@pkgreg/db/testing';
import { skillMd } from '@pkgreg/indexer/testing';
import { createLogger } from '@pkgreg/server-kit';
import { freePort } from '@pkgreg/testing';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdge, type Edge } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { ensureActiveKey } from '../src/oauth/signing-keys.service.js';
import { type ClientDocuments, serveClientDocuments } from './client-documents.js';
import { type RunningRegistry, SkillRepos, startRegistry } from './registry.js';

// Issue 29's "done when", end to end: the official MCP TypeScript SDK's OAuth client against a listening
// edge, from the 401's WWW-Authenticate to tools, with sign-in and consent on the real registry (its
// built server, development sign-in) in headless Chromium. Once with a Client ID Metadata Document
// (served over https by the test), once with dynamic registration. The protocol's refusals are tested
// over HTTP in sign-in.test.ts and authorization-provider.test.ts.

const CHROMIUM_PATH = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

let t: TestDatabase;
let redis: Redis;
let registry: RunningRegistry;
let edge: Edge;
let edgeServer: Server;
let edgeUrl: string;
let documents: ClientDocuments;
let repos: SkillRepos;
const RUNBOOK = skillMd(['name: runbook', 'description: How the vault team deploys'], '# Runbook\n');
let browser: BrowserContext;
let profile: string;
/** The app's loopback redirect: answers 200 to whatever reaches it, so the browser stops there. */
let callback: Server;
let redirectUrl: string;
/** The registry process's Redis keys (its REDIS_KEY_PREFIX). */
const registryKeys = `${testKeyPrefix('edge-e2e-registry')}:`;

beforeAll(async () => {
  t = await createTestDatabase();
  redis = new Redis(TEST_REDIS_URL, { keyPrefix: `${testKeyPrefix('edge-e2e')}:` });
  documents = await serveClientDocuments();
  const port = await freePort();
  edgeUrl = `http://127.0.0.1:${port}`;
  registry = await startRegistry(t.url, {
    DEV_SIGN_IN: 'true',
    EDGE_PUBLIC_BASE_URL: edgeUrl,
    REDIS_KEY_PREFIX: registryKeys,
  });
  // A private skill: @vault is the private scope of the organisation `vault` (ada joins it below).
  repos = new SkillRepos(t.db);
  await repos.commit('vault', 'skills', { 'runbook/SKILL.md': RUNBOOK });
  await sql`insert into auth_organization ("id", "name", "slug", "createdAt")
    values ('org-vault', 'Vault', 'vault', now())`.execute(t.db);
  await sql`insert into scope_settings (scope, organization_id, visibility, created_at, updated_at)
    values ('vault', 'org-vault', 'private', now(), now())`.execute(t.db);
  const env = loadEnv({
    PKGREG_PUBLIC_BASE_URL: edgeUrl,
    DATABASE_URL: t.url,
    REDIS_URL: TEST_REDIS_URL,
    EDGE_QUEUE_PREFIX: testKeyPrefix('edge-e2e-q'),
    REGISTRY_URL: registry.url,
    LOG_LEVEL: 'silent',
  });
  await ensureActiveKey(t.db);
  edge = createEdge({
    db: t.db,
    redis,
    logger: createLogger('test', 'silent'),
    env,
    metadataDocumentFetch: documents.fetch as never,
  });
  edgeServer = createServer(edge.handler);
  await new Promise<void>((resolve) => edgeServer.listen(port, '127.0.0.1', resolve));
  callback = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  redirectUrl = `http://127.0.0.1:${(callback.address() as { port: number }).port}/callback`;
  profile = mkdtempSync(path.join(tmpdir(), 'pkgreg-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await new Promise((resolve) => callback?.close(resolve));
  edgeServer?.closeAllConnections();
  await new Promise((resolve) => edgeServer?.close(resolve));
  await edge?.shutdown();
  await registry?.stop();
  await documents?.close();
  repos?.remove();
  redis?.disconnect();
  await t?.destroy();
});

/** An app's OAuth state, kept in memory as a desktop client keeps it on disk. */
class AppAuth implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  private information: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';

  constructor(
    readonly clientMetadataUrl?: string,
    private readonly name = 'pkgreg e2e app',
  ) {}

  get redirectUrl() {
    return redirectUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const mcpUrl = () => new URL(`${edgeUrl}/mcp`);

/** The app's first connection: refused (401), it discovers the server and sends the person to sign in. */
async function firstConnect(app: AppAuth): Promise<void> {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await expect(
    client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: app })),
  ).rejects.toBeInstanceOf(UnauthorizedError);
  expect(app.authorizationUrl?.href.startsWith(`${edgeUrl}/mcp/authorize?`)).toBe(true);
}

/**
 * The person in the browser: opens the authorization URL, signs in on the registry's page when asked
 * (development sign-in as `handle`), answers the consent page with `decision` (when it is shown) and
 * ends at the app's redirect URI: its query.
 */
async function inBrowser(url: URL, handle: string, decision: 'Allow' | 'Deny'): Promise<URLSearchParams> {
  const page: Page = await browser.newPage();
  try {
    await page.goto(url.href);
    const atCallback = () => page.url().startsWith(redirectUrl);
    if (!atCallback() && (await page.locator('input[name=handle]').count()) > 0) {
      await page.fill('input[name=handle]', handle);
      await Promise.all([page.waitForEvent('load'), page.click('#dev button[type=submit]')]);
    }
    if (!atCallback()) {
      await Promise.all([
        page.waitForURL((u) => u.href.startsWith(redirectUrl)),
        page.click(`button[value=${decision.toLowerCase()}]`),
      ]);
    }
    return new URL(page.url()).searchParams;
  } finally {
    await page.close();
  }
}

async function connected(app: AppAuth): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: app }));
  return client;
}

/** tools/list with a bare access token (the SDK would try to refresh on a 401). */
function listWith(accessToken: string | undefined): Promise<Response> {
  return fetch(mcpUrl(), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
}

async function accountOf(handle: string): Promise<string> {
  const row = await t.db
    .selectFrom('auth_user')
    .select('id')
    .where('email', 'like', `${handle}@%`)
    .executeTakeFirstOrThrow();
  return row.id;
}

describe('the MCP SDK signs a person in to the edge by URL', () => {
  it('with a Client ID Metadata Document: sign-in, consent, tools, memory; the next time, no page', async () => {
    const metadataUrl = `${documents.origin}/desktop.json`;
    documents.served.set('/desktop.json', {
      body: {
        client_id: metadataUrl,
        client_name: 'Desktop Agent',
        redirect_uris: [redirectUrl.replace(/:\d+\//, '/')],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      headers: { 'cache-control': 'max-age=60' },
    });
    const app = new AppAuth(metadataUrl);
    await firstConnect(app);
    const back = await inBrowser(app.authorizationUrl as URL, 'ada', 'Allow');
    expect(back.get('iss')).toBe(`${edgeUrl}/mcp`);
    // Her sign-in was counted under the registry process's own prefix (REDIS_KEY_PREFIX), not in keys
    // every registry on this Redis shares.
    const raw = new Redis(TEST_REDIS_URL);
    try {
      expect(await raw.keys(`${registryKeys}pkgreg:registry:auth-rate:*`)).not.toHaveLength(0);
    } finally {
      raw.disconnect();
    }
    await auth(app, { serverUrl: mcpUrl(), authorizationCode: back.get('code') as string });
    expect(app.clientInformation()?.client_id).toBe(metadataUrl);
    const client = await connected(app);
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toContain('pkgreg.memory.v1.put');
    const ada = await accountOf('ada');
    const namespace = deriveDelegatedNamespace(`${edgeUrl}/mcp`, metadataUrl, ada);
    const put = await client.callTool({
      name: 'pkgreg.memory.v1.put',
      arguments: { namespace, tier: 'ltm', content: 'the deploy target is fly.io' },
    });
    const entryId = (put.structuredContent as { entry: { entryId: string } }).entry.entryId;
    const got = await client.callTool({ name: 'pkgreg.memory.v1.get', arguments: { namespace, entryId } });
    expect((got.structuredContent as { entry: { content: string } }).entry.content).toBe(
      'the deploy target is fly.io',
    );
    // Her private skill, once she is a member of the organisation that owns it.
    await expect(client.readResource({ uri: 'skill://@vault/runbook/SKILL.md' })).rejects.toThrow(
      /not found/i,
    );
    await sql`insert into auth_member ("id", "organizationId", "userId", "role", "createdAt")
      values ('m-ada', 'org-vault', ${ada}, 'reader', now())`.execute(t.db);
    const skill = await client.readResource({ uri: 'skill://@vault/runbook/SKILL.md' });
    expect(skill.contents[0]).toMatchObject({ text: RUNBOOK });
    await client.close();

    // Refresh: the SDK trades its refresh token, which rotates.
    const before = app.tokens()?.refresh_token;
    await auth(app, { serverUrl: mcpUrl() });
    expect(app.tokens()?.refresh_token).not.toBe(before);

    // The same app asking again (another device of the person): the registry remembers the consent
    // and the browser goes straight back to the app.
    const again = new AppAuth(metadataUrl);
    await firstConnect(again);
    const second = await inBrowser(again.authorizationUrl as URL, 'ada', 'Allow');
    expect(second.get('code')).toEqual(expect.any(String));

    // Revoked in the web UI's connected apps (its API, with her session): the app's tokens stop at once.
    const revoking = await connected(app);
    const page = await browser.newPage();
    try {
      await page.goto(`${registry.url}/api/connected-apps`);
      const status = await page.evaluate(
        async (clientId) =>
          (await fetch(`/api/connected-apps/${encodeURIComponent(clientId)}`, { method: 'DELETE' })).status,
        metadataUrl,
      );
      expect(status).toBe(204);
    } finally {
      await page.close();
    }
    // Refused on every edge within EDGE_ACCESS_MAX_AGE_MS (100 ms).
    await expect
      .poll(async () => (await listWith(app.tokens()?.access_token)).status, { timeout: 5000 })
      .toBe(401);
    // The SDK's refresh token went with the app: its refresh is refused as invalid_grant.
    await expect(revoking.listTools()).rejects.toSatisfy(
      (error: Error) => error.constructor.name === 'InvalidGrantError',
    );
  });

  it('with dynamic registration: the unverified app is allowed, then denied by another person', async () => {
    const app = new AppAuth(undefined, 'Registered Agent');
    await firstConnect(app);
    expect(app.clientInformation()?.client_id).toMatch(/^dcr_/);
    const back = await inBrowser(app.authorizationUrl as URL, 'grace', 'Allow');
    await auth(app, { serverUrl: mcpUrl(), authorizationCode: back.get('code') as string });
    const client = await connected(app);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();

    // Refresh rotates; the old refresh token again (a stolen copy) is invalid_grant and revokes the
    // family: the rotated one is dead too, and so is the access token issued with it.
    const before = app.tokens()?.refresh_token;
    await auth(app, { serverUrl: mcpUrl() });
    expect(app.tokens()?.refresh_token).not.toBe(before);
    const clientId = app.clientInformation()?.client_id as string;
    const reuse = await fetch(`${edgeUrl}/mcp/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: before ?? '',
        client_id: clientId,
      }),
    });
    expect(reuse.status).toBe(400);
    expect(((await reuse.json()) as { error: string }).error).toBe('invalid_grant');
    // Refused on every edge within EDGE_ACCESS_MAX_AGE_MS (100 ms).
    await expect
      .poll(async () => (await listWith(app.tokens()?.access_token)).status, { timeout: 5000 })
      .toBe(401);
    await expect(auth(app, { serverUrl: mcpUrl() })).rejects.toSatisfy(
      (error: Error) => error.constructor.name === 'InvalidGrantError',
    );

    // A person who says no: the app gets access_denied with the issuer, and no code.
    await browser.clearCookies();
    const other = new AppAuth(undefined, 'Registered Agent');
    await firstConnect(other);
    const denied = await inBrowser(other.authorizationUrl as URL, 'linus', 'Deny');
    expect(Object.fromEntries(denied)).toMatchObject({ error: 'access_denied', iss: `${edgeUrl}/mcp` });
    expect(denied.has('code')).toBe(false);
  });
});
