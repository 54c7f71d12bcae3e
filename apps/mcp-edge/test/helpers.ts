import { randomUUID } from 'node:crypto';
import { ALL_SCOPES, deriveNamespace } from '@pkgreg/contracts';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase, testKeyPrefix } from '@pkgreg/db/testing';
import { createLogger, type Logger } from '@pkgreg/server-kit';
import { Redis } from 'ioredis';
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import request from 'supertest';
import { afterAll, beforeAll } from 'vitest';
import { insertGrant } from '../src/admission/access.repository.js';
import { hostnameOf, hostResource } from '../src/admission/backends.js';
import { createEdge, type Edge } from '../src/app.js';
import { type Env, loadEnv } from '../src/env.js';
import { createClient } from '../src/oauth/clients.service.js';
import { ensureActiveKey } from '../src/oauth/signing-keys.service.js';

// Test harness: a real database of its own (createTestDatabase), a Redis key prefix and queue prefix of
// its own, the real edge built by createEdge. Nothing of ours is mocked.

export const BASE = 'http://localhost:4100';
export const ISSUER = `${BASE}/mcp`;
export const RESOURCE = `${BASE}/mcp`;
export const PRM_URL = `${BASE}/.well-known/oauth-protected-resource/mcp`;
/** Host header that resolves to the development backend (the public base host). */
export const HOST = 'localhost:4100';

export interface Harness {
  t: TestDatabase;
  redis: Redis;
  env: Env;
  edge: Edge;
  app: Edge['app'];
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** The edge's logger (default: silent); a test reading what is logged passes its own. */
  logger?: Logger;
}

export async function createHarness(
  overrides: Record<string, string> = {},
  options: HarnessOptions = {},
): Promise<Harness> {
  const t = await createTestDatabase();
  const redisPrefix = testKeyPrefix('edge');
  const redis = new Redis(TEST_REDIS_URL, { keyPrefix: `${redisPrefix}:` });
  const env = loadEnv({
    PKGREG_PUBLIC_BASE_URL: BASE,
    DATABASE_URL: t.url,
    REDIS_URL: TEST_REDIS_URL,
    EDGE_QUEUE_PREFIX: testKeyPrefix('edge-q'),
    EDGE_AUDIT_FLUSH_MS: '20',
    LOG_LEVEL: 'silent',
    ...overrides,
  });
  await ensureActiveKey(t.db);
  const logger = options.logger ?? createLogger('test', 'silent');
  const edge = createEdge({ db: t.db, redis, logger, env });
  return {
    t,
    redis,
    env,
    edge,
    app: edge.app,
    async close() {
      await edge.shutdown();
      redis.disconnect();
      await t.destroy();
    },
  };
}

/**
 * Registers the hooks that build this file's harness (createHarness with `overrides`) before its tests
 * and close it after them. Read its fields from tests and hooks (not at module load); call it before the
 * file's own hooks.
 */
export function useHarness(overrides: Record<string, string> = {}, options: HarnessOptions = {}): Harness {
  let current: Harness | undefined;
  beforeAll(async () => {
    current = await createHarness(overrides, options);
  });
  afterAll(async () => {
    await current?.close();
  });
  const get = (): Harness => {
    if (!current) throw new Error('the harness is created in beforeAll: read it from a test or hook');
    return current;
  };
  return {
    get t() {
      return get().t;
    },
    get redis() {
      return get().redis;
    },
    get env() {
      return get().env;
    },
    get edge() {
      return get().edge;
    },
    get app() {
      return get().app;
    },
    close: () => get().close(),
  };
}

export interface TestClient {
  clientId: string;
  clientSecret: string;
  namespace: string;
  token: string;
}

/**
 * Another token of a registered client from the real token endpoint: `scope` narrows it, `resource`
 * names the MCP resource (RFC 8707) it is for (default: the public base's).
 */
export async function tokenFor(
  h: { app: Harness['app'] },
  client: { clientId: string; clientSecret: string },
  options: { scope?: string; resource?: string } = {},
): Promise<string> {
  const res = await request(h.app)
    .post('/mcp/token')
    .auth(client.clientId, client.clientSecret)
    .type('form')
    .send({
      grant_type: 'client_credentials',
      resource: options.resource ?? RESOURCE,
      ...(options.scope ? { scope: options.scope } : {}),
    });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.access_token as string;
}

/** The MCP resource a Host header's host serves (a tenant's or tunnel session's own, issue 26). */
export function resourceOf(host: string): string {
  return hostResource(BASE, hostnameOf(host));
}

/** A token of `client` for the resource of `host` (which must serve the client). */
export function tokenAt(
  h: { app: Harness['app'] },
  client: { clientId: string; clientSecret: string },
  host: string,
  options: { scope?: string } = {},
): Promise<string> {
  return tokenFor(h, client, { ...options, resource: resourceOf(host) });
}

/** Lets `client` use a hosted tenant or a tunnel session, as `pnpm edge tenants:allow|tunnels:allow` does. */
export async function allowClient(
  h: { t: TestDatabase },
  backend: { mode: 'hosted' | 'local_tunnel'; id: string },
  client: { clientId: string },
): Promise<void> {
  await insertGrant(h.t.db, {
    mode: backend.mode,
    backendId: backend.id,
    namespace: deriveNamespace(ISSUER, client.clientId),
    clientId: client.clientId,
  });
}

/** Registers a client with `scopes` and gets a token through the real token endpoint. */
export async function clientWithToken(
  h: Harness,
  scopes: readonly string[] = ALL_SCOPES,
): Promise<TestClient> {
  const { clientId, clientSecret } = await createClient(h.t.db, {
    name: `test-${randomUUID()}`,
    scopes: [...scopes],
  });
  const res = await request(h.app)
    .post('/mcp/token')
    .auth(clientId, clientSecret)
    .type('form')
    .send({ grant_type: 'client_credentials', resource: RESOURCE });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    clientId,
    clientSecret,
    namespace: deriveNamespace(ISSUER, clientId),
    token: res.body.access_token,
  };
}

/** POST /mcp with any body, as a well-behaved Streamable HTTP client sends it (to a harness or any edge). */
export function postMcp(
  target: { app: Harness['app'] },
  token: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const req = request(target.app)
    .post('/mcp')
    .set('Host', HOST)
    .set('Content-Type', 'application/json')
    .set('Accept', 'application/json, text/event-stream')
    .set('MCP-Protocol-Version', '2025-11-25');
  if (token) req.set('Authorization', `Bearer ${token}`);
  for (const [k, v] of Object.entries(headers)) req.set(k, v);
  return req.send(body as object);
}

/** POST /mcp with a JSON-RPC request. */
export function rpc(
  target: { app: Harness['app'] },
  token: string | undefined,
  method: string,
  params: Record<string, unknown> = {},
  options: { id?: string | number; headers?: Record<string, string> } = {},
) {
  return postMcp(target, token, { jsonrpc: '2.0', id: options.id ?? 1, method, params }, options.headers);
}

export function callTool(
  h: { app: Harness['app'] },
  token: string | undefined,
  name: string,
  args: Record<string, unknown> = {},
) {
  return rpc(h, token, 'tools/call', { name, arguments: args });
}

/** The active signing key's private half, to forge tokens that differ from a valid one in one claim. */
export async function activeSigningKey(h: Harness): Promise<{ kid: string; key: CryptoKey }> {
  const row = await h.t.db
    .selectFrom('oauth_signing_keys')
    .selectAll()
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return { kid: row.kid, key: (await importJWK(row.private_jwk as JWK, 'ES256')) as CryptoKey };
}

export interface ForgeOptions {
  iss?: string;
  aud?: string;
  expSecondsFromNow?: number;
  scope?: string;
  clientId?: string;
  /** The person a delegated token acts for (its `sub`); the client itself when absent. */
  subject?: string;
  /** The header `typ`; null leaves it out. */
  typ?: string | null;
  /** `iat` in seconds; ten seconds ago when absent. */
  issuedAt?: number;
  key?: { kid: string; key: CryptoKey };
}

export async function forgeToken(h: Harness, o: ForgeOptions = {}): Promise<string> {
  const signer = o.key ?? (await activeSigningKey(h));
  const now = Math.floor(Date.now() / 1000);
  const clientId = o.clientId ?? 'pkc_forged';
  const typ = o.typ === undefined ? 'at+jwt' : o.typ;
  return new SignJWT({ scope: o.scope ?? ALL_SCOPES.join(' '), client_id: clientId })
    .setProtectedHeader({ alg: 'ES256', kid: signer.kid, ...(typ === null ? {} : { typ }) })
    .setIssuer(o.iss ?? ISSUER)
    .setAudience(o.aud ?? RESOURCE)
    .setSubject(o.subject ?? clientId)
    .setIssuedAt(o.issuedAt ?? now - 10)
    .setExpirationTime(now + (o.expSecondsFromNow ?? 300))
    .setJti(randomUUID())
    .sign(signer.key);
}

/** A key this edge has never published. */
export async function unknownKey(): Promise<{ kid: string; key: CryptoKey; publicJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = `unknown-${randomUUID()}`;
  return { kid, key: privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256' } };
}

/** An unsecured JWT (`alg: none`) carrying otherwise valid claims. */
export function unsignedToken(): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc({
    iss: ISSUER,
    aud: RESOURCE,
    sub: 'pkc_none',
    client_id: 'pkc_none',
    scope: ALL_SCOPES.join(' '),
    iat: now,
    exp: now + 300,
    jti: randomUUID(),
  })}.`;
}

/**
 * Retries `check` (every 5 ms) until it passes or `timeoutMs` ends, then throws its last failure: for
 * what takes effect within a millisecond or two rather than in the same instant (a revoked grant or a
 * disabled client, which each edge sees at its next read of who may call, at most 1 ms old).
 */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 2000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

export function expectRpcError(
  res: { status: number; body: { error?: { code: number; data?: { reason?: string; requestId?: string } } } },
  status: number,
  reason: string,
): void {
  if (res.status !== status || res.body.error?.data?.reason !== reason || !res.body.error?.data?.requestId) {
    throw new Error(`expected ${status} ${reason}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
}

/**
 * Waits for the next minute when fewer than `neededMs` are left of this one. The edge's rate and quota
 * windows are fixed minutes, so a test that counts to a limit must not straddle a turn (it would start
 * a new budget half-way and see an extra admission).
 */
export async function withinOneWindow(neededMs = 10_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < neededMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
