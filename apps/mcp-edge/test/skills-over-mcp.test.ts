import { createHash, generateKeyPairSync, verify } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ALL_SCOPES, SCOPES, type SkillManifest } from '@pkgreg/contracts';
import { TEST_REDIS_URL, type TestDatabase, testKeyPrefix } from '@pkgreg/db/testing';
import { skillMd } from '@pkgreg/indexer/testing';
import { registerSigningKey, signerFromPem, signPendingVersions } from '@pkgreg/registry';
import { createLogger } from '@pkgreg/server-kit';
import { until } from '@pkgreg/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdge } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { createClient } from '../src/oauth/clients.service.js';
import { forgeToken, type Harness, unknownKey, unsignedToken } from './helpers.js';
import {
  type EdgeOverRegistry,
  type RunningRegistry,
  type SkillRepos,
  startEdgeOverRegistry,
} from './registry.js';

// Skills over MCP (issue 20): skill:// resources and the registry tools, read through the official MCP SDK
// client from a real edge whose catalog is a real registry-api (its built server) on this file's own
// database, fed by indexing git repositories. Refusals are checked on the wire with plain fetch.

let t: TestDatabase;
let redis: Redis;
let registry: RunningRegistry;
let repos: SkillRepos;
let stack: EdgeOverRegistry;
let base: string;

const PDF_V1 = skillMd(['name: pdf-tools', 'description: Fill and read PDF forms', 'version: 1.0.0']);
const PDF_V2 = skillMd(
  ['name: pdf-tools', 'description: Fill, read and sign PDF forms', 'version: 1.1.0'],
  '# PDF tools\n\nSee [forms](references/FORMS.md) and run scripts/fill.py.\n',
);
const FORMS = '# Forms\n\nEvery field, one by one.\n';
const SCRIPT = '#!/usr/bin/env python3\nprint("filled")\n';
const LOGO = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x10, 0x80]);
const sha256 = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const skill = (name: string, description: string) =>
  skillMd([`name: ${name}`, `description: ${description}`]);

beforeAll(async () => {
  stack = await startEdgeOverRegistry({ trustEdge: false });
  ({ t, base, registry, repos } = stack);
  await repos.commit('acme', 'skills', {
    'pdf-tools/SKILL.md': PDF_V1,
    'code-review/SKILL.md': skill('code-review', 'Review a change like a senior engineer'),
    'commit-writer/SKILL.md': skill('commit-writer', 'Write commit messages that say why'),
    'doomed/SKILL.md': skill('doomed', 'A skill that will stop passing the rules'),
    'risky/SKILL.md': skill('risky', 'A skill an operator will quarantine'),
    'gone/SKILL.md': skill('gone', 'A skill an operator will remove'),
  });
  // A second version of pdf-tools: its folder grows, so 1.0.0 and 1.1.0 differ.
  await repos.commit('acme', 'skills', {
    'pdf-tools/SKILL.md': PDF_V2,
    'pdf-tools/references/FORMS.md': FORMS,
    'pdf-tools/scripts/fill.py': { content: SCRIPT, executable: true },
    'pdf-tools/assets/logo.png': LOGO,
    'pdf-tools/guide.md': { symlink: 'references/FORMS.md' },
  });
  await until(async () => {
    const list = (await fetch(`${registry.url}/api/packages?pageSize=100`).then((r) => r.json())) as Json;
    return list.total === 6;
  }, 'the registry to list the six packages');

  await stack.startEdge('skills', {
    // Small pages, so listing the six packages takes several; visibility asked again after 50 ms.
    EDGE_RESOURCES_PAGE_SIZE: '2',
    EDGE_CATALOG_TTL_MS: '50',
    EDGE_RATE_LIMITS_JSON: JSON.stringify({ 'resources/templates/list': 3 }),
  });
  redis = stack.redis;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

async function sdkClient(scopes: readonly string[] = ALL_SCOPES): Promise<Client> {
  const { clientId, clientSecret } = await createClient(t.db, { name: 'skills', scopes: [...scopes] });
  const provider = new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer: `${base}/mcp` });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
  const client = new Client({ name: 'pkgreg-skills-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** A token from the real token endpoint for a client holding `scopes`. */
async function tokenFor(scopes: readonly string[]): Promise<{ token: string; clientId: string }> {
  const { clientId, clientSecret } = await createClient(t.db, { name: 'skills-raw', scopes: [...scopes] });
  const res = await fetch(`${base}/mcp/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  });
  return { token: ((await res.json()) as Json).access_token, clientId };
}

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, as supertest's bodies are
type Json = any;

/** One JSON-RPC request on the wire: status, headers and body as the edge sent them. */
async function rpc(token: string | undefined, method: string, params: Record<string, unknown> = {}) {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
}

const forged = (o: Parameters<typeof forgeToken>[1]) =>
  forgeToken({ t } as Harness, { iss: `${base}/mcp`, aud: `${base}/mcp`, ...o });

async function readText(client: Client, uri: string) {
  const { contents } = await client.readResource({ uri });
  expect(contents).toHaveLength(1);
  return contents[0] as { uri: string; mimeType?: string; text?: string; blob?: string };
}

describe('skill:// resources through the official MCP SDK client', () => {
  let client: Client;
  beforeAll(async () => {
    client = await sdkClient();
  });
  afterAll(async () => {
    await client?.close();
  });

  it('initialize declares resources (no subscriptions, no list changes) beside tools and tasks', () => {
    expect(client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: false },
      resources: { subscribe: false, listChanged: false },
      tasks: {},
    });
  });

  it('resources/list pages through every visible skill with an opaque cursor: SKILL.md and _manifest each', async () => {
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor ? { cursor } : {});
      pages.push(page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
      if (cursor) expect(cursor).not.toMatch(/page|[?&=]/);
    } while (cursor);
    expect(pages.map((p) => p.length)).toEqual([4, 4, 4]);
    const uris = pages.flat();
    expect(new Set(uris).size).toBe(12);
    for (const name of ['code-review', 'commit-writer', 'doomed', 'gone', 'pdf-tools', 'risky']) {
      expect(uris).toContain(`skill://acme/${name}/SKILL.md`);
      expect(uris).toContain(`skill://acme/${name}/_manifest`);
    }
    const first = (await client.listResources()).resources[0];
    // SEP-2640 ("Resource Metadata"): a SKILL.md's name is its frontmatter's; the title names the package.
    expect(first).toMatchObject({
      uri: 'skill://acme/code-review/SKILL.md',
      name: 'code-review',
      title: '@acme/code-review',
      description: 'Review a change like a senior engineer',
      mimeType: 'text/markdown',
      annotations: { audience: ['user', 'assistant'], priority: 1 },
    });
  });

  it("resources/read of SKILL.md answers the latest version's text", async () => {
    const item = await readText(client, 'skill://acme/pdf-tools/SKILL.md');
    expect(item).toEqual({
      uri: 'skill://acme/pdf-tools/SKILL.md',
      mimeType: 'text/markdown',
      text: PDF_V2,
    });
  });

  it("_manifest carries the archive's integrity and, once the registry signed it, its signatures", async () => {
    const unsigned = JSON.parse(
      (await readText(client, 'skill://acme/pdf-tools/_manifest')).text ?? '',
    ) as SkillManifest;
    expect(unsigned.integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
    expect(unsigned.signatures).toEqual([]);
    // The registry's signer (docs/provenance.md) signs; the edge asks again within its catalog TTL.
    const signer = signerFromPem(
      generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
    await registerSigningKey(t.db, signer);
    await signPendingVersions(t.db, signer, { limit: 10_000 });
    const signed = await until(async () => {
      const m = JSON.parse(
        (await readText(client, 'skill://acme/pdf-tools/_manifest')).text ?? '',
      ) as SkillManifest;
      return m.signatures.length > 0 && m;
    }, 'the manifest to carry the signature');
    const [sig] = signed.signatures;
    expect(sig?.keyid).toBe(signer.keyId);
    const text = `${signed.skill}@${signed.version}:${signed.integrity}`;
    expect(verify(null, Buffer.from(text), signer.publicKey, Buffer.from(sig?.sig ?? '', 'base64'))).toBe(
      true,
    );
  });

  it('resources/read of _manifest lists every file with its path, size and sha256', async () => {
    const item = await readText(client, 'skill://acme/pdf-tools/_manifest');
    expect(item.mimeType).toBe('application/json');
    const manifest = JSON.parse(item.text ?? '') as SkillManifest;
    expect(manifest).toMatchObject({ skill: '@acme/pdf-tools', version: '1.1.0' });
    expect(manifest.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const byPath = Object.fromEntries(manifest.files.map((f) => [f.path, f]));
    expect(Object.keys(byPath).sort()).toEqual([
      'SKILL.md',
      'assets/logo.png',
      'guide.md',
      'references/FORMS.md',
      'scripts/fill.py',
    ]);
    for (const [path, bytes] of [
      ['SKILL.md', PDF_V2],
      ['references/FORMS.md', FORMS],
      ['scripts/fill.py', SCRIPT],
      ['assets/logo.png', LOGO],
    ] as const) {
      expect(byPath[path]).toMatchObject({
        size: Buffer.byteLength(bytes),
        sha256: sha256(bytes),
        hash: `sha256:${sha256(bytes)}`,
        linkTarget: null,
      });
    }
    expect(byPath['guide.md']?.linkTarget).toBe('references/FORMS.md');
  });

  it('resources/templates/list offers the file template and the exact-version template', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((x) => x.uriTemplate)).toEqual([
      'skill://{scope}/{name}/{+path}',
      'skill://{scope}/{version}/{name}/{+path}',
    ]);
  });

  it('a file by the template: text as text (text/plain when its type is unknown), binary as a base64 blob; a link reads its target', async () => {
    expect(await readText(client, 'skill://acme/pdf-tools/references/FORMS.md')).toEqual({
      uri: 'skill://acme/pdf-tools/references/FORMS.md',
      mimeType: 'text/markdown',
      text: FORMS,
    });
    expect(await readText(client, 'skill://acme/pdf-tools/scripts/fill.py')).toMatchObject({
      mimeType: 'text/plain',
      text: SCRIPT,
    });
    const logo = await readText(client, 'skill://acme/pdf-tools/assets/logo.png');
    expect(logo.mimeType).toBe('image/png');
    expect(logo.text).toBeUndefined();
    expect(Buffer.from(logo.blob ?? '', 'base64')).toEqual(LOGO);
    expect((await readText(client, 'skill://acme/pdf-tools/guide.md')).text).toBe(FORMS);
  });

  it('an exact version: its own SKILL.md and manifest, whatever the latest is', async () => {
    expect((await readText(client, 'skill://acme/1.0.0/pdf-tools/SKILL.md')).text).toBe(PDF_V1);
    const manifest = JSON.parse(
      (await readText(client, 'skill://acme/1.0.0/pdf-tools/_manifest')).text ?? '',
    );
    expect(manifest.version).toBe('1.0.0');
    expect(manifest.files.map((f: { path: string }) => f.path)).toEqual(['SKILL.md']);
    expect((await readText(client, 'skill://acme/1.1.0/pdf-tools/references/FORMS.md')).text).toBe(FORMS);
  });

  it('pkgreg.registry.v1.search finds skills with their skill:// URIs', async () => {
    const res = await client.callTool({ name: 'pkgreg.registry.v1.search', arguments: { q: 'pdf' } });
    expect(res.isError).toBeFalsy();
    const found = res.structuredContent as { results: Record<string, unknown>[]; total: number };
    expect(found.total).toBe(1);
    expect(found.results[0]).toMatchObject({
      scope: 'acme',
      name: 'pdf-tools',
      description: 'Fill, read and sign PDF forms',
      uri: 'skill://acme/pdf-tools/SKILL.md',
      manifestUri: 'skill://acme/pdf-tools/_manifest',
    });
    const none = await client.callTool({ name: 'pkgreg.registry.v1.search', arguments: { q: '' } });
    expect(none.structuredContent).toEqual({ results: [], total: 0 });
  });

  it("pkgreg.registry.v1.get answers a package's detail", async () => {
    const res = await client.callTool({
      name: 'pkgreg.registry.v1.get',
      arguments: { package: '@acme/pdf-tools' },
    });
    const got = res.structuredContent as {
      package: Record<string, unknown>;
      uri: string;
      manifestUri: string;
    };
    expect(got.package).toMatchObject({
      scope: 'acme',
      name: 'pdf-tools',
      version: '1.1.0',
      status: 'active',
      skillMdRaw: PDF_V2,
    });
    expect(got.uri).toBe('skill://acme/pdf-tools/SKILL.md');
    expect(got.manifestUri).toBe('skill://acme/pdf-tools/_manifest');
  });

  it('tools/list shows both registry tools with input and output schemas', async () => {
    const { tools } = await client.listTools();
    const search = tools.find((x) => x.name === 'pkgreg.registry.v1.search');
    const get = tools.find((x) => x.name === 'pkgreg.registry.v1.get');
    expect(search?.inputSchema).toMatchObject({ type: 'object', required: ['q'] });
    expect(search?.outputSchema).toMatchObject({ type: 'object', required: ['results', 'total'] });
    expect(get?.inputSchema).toMatchObject({ type: 'object', required: ['package'] });
    expect(get?.outputSchema).toMatchObject({ type: 'object', required: ['package', 'uri', 'manifestUri'] });
  });
});

describe('refusals on the wire', () => {
  let token: string;
  beforeAll(async () => {
    token = (await tokenFor([SCOPES.registryRead])).token;
  });

  it.each([
    ['not a skill:// URI', 'https://example.com/SKILL.md'],
    ['no path', 'skill://acme/pdf-tools'],
    ['a bad scope', 'skill://Acme/pdf-tools/SKILL.md'],
    ['a version that is not semver', 'skill://acme/1.0/pdf-tools/SKILL.md'],
    ['a deprecated URI with a version that is not semver', 'skill://@acme/pdf-tools@latest/SKILL.md'],
    ['a path leaving the folder', 'skill://acme/pdf-tools/../other/SKILL.md'],
    ['an encoded path leaving the folder', 'skill://acme/pdf-tools/%2e%2e/other/SKILL.md'],
    ['an empty segment', 'skill://acme/pdf-tools/references//FORMS.md'],
    ['a malformed escape', 'skill://acme/pdf-tools/references/%zz.md'],
    ['NUL', 'skill://acme/pdf-tools/references/%00.md'],
    // A segment that decodes to hold `/` is outside the skill to SEP-2640 clients: not FORMS.md.
    ['an encoded / joining two segments', 'skill://acme/pdf-tools/references%2FFORMS.md'],
  ])('%s → -32602 request_schema_invalid', async (_label, uri) => {
    const res = await rpc(token, 'resources/read', { uri });
    expect(res.status).toBe(200);
    expect(res.body.error).toMatchObject({ code: -32602, data: { reason: 'request_schema_invalid' } });
  });

  it.each([
    ['a query', 'skill://acme/pdf-tools/SKILL.md?x=1'],
    ['a fragment', 'skill://acme/pdf-tools/SKILL.md#top'],
  ])('%s → -32602 request_schema_invalid saying so, not a missing file', async (_label, uri) => {
    for (const method of ['resources/read', 'skills/get', 'resources/directory/read']) {
      const res = await rpc(token, method, { uri });
      expect(res.body.error, method).toMatchObject({
        code: -32602,
        message: 'uri must not have a query or fragment',
        data: { reason: 'request_schema_invalid', uri },
      });
    }
  });

  // A valid uri skips zod (admission.ts, resourceUriOf); every other shape gets the schema's own issues.
  it.each([
    ['no uri', {}],
    ['an empty uri', { uri: '' }],
    ['a uri that is not a string', { uri: 7 }],
    ['a uri over 8192 characters', { uri: `skill://acme/pdf-tools/${'a'.repeat(8192)}` }],
  ])('params with %s → -32602 request_schema_invalid naming uri', async (_label, params) => {
    const res = await rpc(token, 'resources/read', params);
    expect(res.body.error).toMatchObject({
      code: -32602,
      message: 'invalid resources/read params',
      data: { reason: 'request_schema_invalid', issues: [{ path: 'uri' }] },
    });
  });

  it('a uri of exactly 8192 characters passes the params check, for the URI parser to judge', async () => {
    const uri = `skill://acme/pdf-tools/${'a'.repeat(8192 - 'skill://acme/pdf-tools/'.length)}`;
    const res = await rpc(token, 'resources/read', { uri });
    expect(res.body.error.data.reason).toBe('request_schema_invalid');
    expect(res.body.error.message).not.toBe('invalid resources/read params');
    expect(res.body.error.data.issues).toBeUndefined();
  });
  it.each([
    ['an unknown package', 'skill://acme/nothing-here/SKILL.md', '@acme/nothing-here'],
    ['an unknown file', 'skill://acme/pdf-tools/references/NOPE.md', 'has no file references/NOPE.md'],
    ['an unknown version', 'skill://acme/9.9.9/pdf-tools/SKILL.md', 'version not found'],
  ])('%s → -32602 resource_not_found naming the URI', async (_label, uri, message) => {
    const res = await rpc(token, 'resources/read', { uri });
    expect(res.status).toBe(200);
    expect(res.body.error).toMatchObject({ code: -32602, data: { reason: 'resource_not_found', uri } });
    expect(res.body.error.message).toContain(message);
  });

  it('an invalid cursor → -32602 (MCP pagination)', async () => {
    for (const method of ['resources/list', 'resources/templates/list']) {
      const res = await rpc(token, method, { cursor: 'bm90IGEgY3Vyc29y' });
      expect(res.body.error).toMatchObject({ code: -32602, message: 'invalid cursor' });
    }
  });

  it('pkgreg.registry.v1.get of an unknown package, and arguments outside the schema', async () => {
    const missing = await rpc(token, 'tools/call', {
      name: 'pkgreg.registry.v1.get',
      arguments: { package: '@acme/nothing-here' },
    });
    expect(missing.body.error).toMatchObject({
      code: -32602,
      data: { reason: 'resource_not_found', package: '@acme/nothing-here' },
    });
    for (const args of [{ package: 'acme/pdf-tools' }, { package: '@acme/pdf-tools', extra: 1 }, {}]) {
      const res = await rpc(token, 'tools/call', { name: 'pkgreg.registry.v1.get', arguments: args });
      expect(res.body.error.data.reason).toBe('request_schema_invalid');
    }
    const tooLong = await rpc(token, 'tools/call', {
      name: 'pkgreg.registry.v1.search',
      arguments: { q: 'x'.repeat(257) },
    });
    expect(tooLong.body.error.data.reason).toBe('request_schema_invalid');
  });

  it('resources methods are rate-limited per namespace + token like tools (429 + Retry-After)', async () => {
    const { token: own } = await tokenFor([SCOPES.registryRead]);
    for (let i = 0; i < 3; i++) expect((await rpc(own, 'resources/templates/list')).status).toBe(200);
    const limited = await rpc(own, 'resources/templates/list');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBeTruthy();
    expect(limited.body.error.data.reason).toBe('rate_limited');
  });

  it('every request is audited with its method', async () => {
    const { token: own, clientId } = await tokenFor([SCOPES.registryRead]);
    await rpc(own, 'resources/read', { uri: 'skill://acme/code-review/SKILL.md' });
    await rpc(own, 'resources/read', { uri: 'skill://acme/nothing-here/SKILL.md' });
    await until(async () => {
      const rows = await t.db
        .selectFrom('audit_records')
        .select(['method', 'outcome', 'reason'])
        .where('client_id', '=', clientId)
        .execute();
      return rows.length === 2;
    }, 'two audit rows');
    const rows = await t.db
      .selectFrom('audit_records')
      .select(['method', 'outcome', 'reason'])
      .where('client_id', '=', clientId)
      .orderBy('at')
      .execute();
    expect(rows).toEqual([
      { method: 'resources/read', outcome: 'ok', reason: null },
      { method: 'resources/read', outcome: 'rejected', reason: 'resource_not_found' },
    ]);
  });
});

// STYLE.md §14: the security battery for each new method and tool (test/security.test.ts does the rest).
describe.each([
  { label: 'resources/list', method: 'resources/list', params: {} },
  { label: 'resources/templates/list', method: 'resources/templates/list', params: {} },
  {
    label: 'resources/read',
    method: 'resources/read',
    params: { uri: 'skill://acme/code-review/SKILL.md' },
  },
  {
    label: 'pkgreg.registry.v1.search',
    method: 'tools/call',
    params: { name: 'pkgreg.registry.v1.search', arguments: { q: 'review' } },
  },
  {
    label: 'pkgreg.registry.v1.get',
    method: 'tools/call',
    params: { name: 'pkgreg.registry.v1.get', arguments: { package: '@acme/code-review' } },
  },
])('security battery: $label', ({ method, params }) => {
  const expectUnauthorized = (res: Awaited<ReturnType<typeof rpc>>) => {
    expect(res.status).toBe(401);
    expect(res.body.error.data.reason).toBe('token_invalid');
    expect(res.headers.get('www-authenticate')).toContain('resource_metadata=');
  };

  it('happy path: a token with pkgreg.registry.read is answered', async () => {
    const { token } = await tokenFor([SCOPES.registryRead]);
    const res = await rpc(token, method, params);
    expect(res.status).toBe(200);
    expect(res.body.result).toBeDefined();
  });

  it('no token, a malformed one, alg none, an unknown key, expired, another audience or issuer → 401', async () => {
    const { clientId } = await tokenFor([SCOPES.registryRead]);
    const scope = SCOPES.registryRead;
    for (const token of [
      undefined,
      'not-a-jwt',
      unsignedToken(),
      await forged({ key: await unknownKey(), clientId, scope }),
      await forged({ expSecondsFromNow: -60, clientId, scope }),
      await forged({ aud: 'https://other.example/mcp', clientId, scope }),
      await forged({ iss: 'https://evil.example/mcp', clientId, scope }),
    ]) {
      expectUnauthorized(await rpc(token, method, params));
    }
  });

  it('every other scope but pkgreg.registry.read → 403 insufficient_scope naming it', async () => {
    const { token } = await tokenFor(ALL_SCOPES.filter((s) => s !== SCOPES.registryRead));
    const res = await rpc(token, method, params);
    expect(res.status).toBe(403);
    expect(res.body.error.data).toMatchObject({
      reason: 'scope_insufficient',
      requiredScopes: [SCOPES.registryRead],
    });
    expect(res.headers.get('www-authenticate')).toContain(
      'error="insufficient_scope", scope="pkgreg.registry.read"',
    );
  });
});

describe('pkgreg.registry.read governs all of it', () => {
  it('tools/list without the scope shows no registry tool; with only it, just the two', async () => {
    const { token: without } = await tokenFor(ALL_SCOPES.filter((s) => s !== SCOPES.registryRead));
    const names = (await rpc(without, 'tools/list')).body.result.tools.map((x: { name: string }) => x.name);
    expect(names.filter((n: string) => n.startsWith('pkgreg.registry.'))).toEqual([]);
    const { token: only } = await tokenFor([SCOPES.registryRead]);
    const mine = (await rpc(only, 'tools/list')).body.result.tools.map((x: { name: string }) => x.name);
    expect(mine).toEqual(['pkgreg.registry.v1.search', 'pkgreg.registry.v1.get']);
  });
});

describe('delisted, quarantined and removed packages are never served', () => {
  let token: string;
  const expectNotServed = async (uri: string, message: string) => {
    const res = await rpc(token, 'resources/read', { uri });
    expect(res.status).toBe(200);
    expect(res.body.error).toMatchObject({ code: -32602, data: { reason: 'resource_not_found', uri } });
    expect(res.body.error.message).toContain(message);
  };

  beforeAll(async () => {
    token = (await tokenFor([SCOPES.registryRead])).token;
    // Read once each, so the edge holds them: what follows must not be served from what it kept.
    for (const name of ['doomed', 'risky', 'gone', 'commit-writer']) {
      expect((await rpc(token, 'resources/read', { uri: `skill://acme/${name}/SKILL.md` })).status).toBe(200);
    }
    // doomed: its SKILL.md stops passing the rules (no description), so indexing delists it.
    await repos.commit('acme', 'skills', { 'doomed/SKILL.md': skillMd(['name: doomed']) });
    await registry.cli('quarantine', '@acme/risky', '--reason', 'exfiltrates credentials');
    await registry.cli('remove', '@acme/gone', '--reason', 'malware');
    // commit-writer: its admin makes it private (docs/accounts.md); the edge reads the registry anonymously.
    await t.db
      .updateTable('packages')
      .set({ visibility: 'private' })
      .where('name', '=', 'commit-writer')
      .execute();
  });

  it('a private package: answered exactly as a missing one, by resources, get and search', async () => {
    const hidden = await rpc(token, 'resources/read', { uri: 'skill://acme/commit-writer/SKILL.md' });
    const missing = await rpc(token, 'resources/read', { uri: 'skill://acme/no-such-skill/SKILL.md' });
    expect(hidden.body.error.code).toBe(missing.body.error.code);
    expect(hidden.body.error.message.replace('commit-writer', 'X')).toBe(
      missing.body.error.message.replace('no-such-skill', 'X'),
    );
    const got = await rpc(token, 'tools/call', {
      name: 'pkgreg.registry.v1.get',
      arguments: { package: '@acme/commit-writer' },
    });
    expect(got.body.error.data).toMatchObject({
      reason: 'resource_not_found',
      package: '@acme/commit-writer',
    });
    // The registry's search drops it at its next refresh: wait there, then ask the edge once (polling the
    // tool would spend the namespace's per-minute tool budget the other tests use too).
    await until(async () => {
      const res = await fetch(`${registry.url}/api/search?q=commit`);
      return ((await res.json()) as Json).total === 0;
    }, 'the registry search to drop the private package');
    const found = await rpc(token, 'tools/call', {
      name: 'pkgreg.registry.v1.search',
      arguments: { q: 'commit' },
    });
    expect(found.body.result.total).toBe(0);
  });

  it('a delisted package: not read (latest or exact), not got, not listed, not found by search', async () => {
    await expectNotServed('skill://acme/doomed/SKILL.md', '@acme/doomed');
    const version = (await fetch(`${registry.url}/api/packages/@acme/doomed/versions/latest`)).status;
    expect(version).toBe(404);
    const exact = (await t.db
      .selectFrom('package_versions as v')
      .innerJoin('packages as p', 'p.id', 'v.package_id')
      .select('v.version')
      .where('p.name', '=', 'doomed')
      .executeTakeFirstOrThrow()) as { version: string };
    await expectNotServed(`skill://acme/${exact.version}/doomed/SKILL.md`, '@acme/doomed');
    await expectNotServed('skill://acme/doomed/_manifest', '@acme/doomed');
    const got = await rpc(token, 'tools/call', {
      name: 'pkgreg.registry.v1.get',
      arguments: { package: '@acme/doomed' },
    });
    expect(got.body.error.data).toMatchObject({ reason: 'resource_not_found', package: '@acme/doomed' });
    await until(async () => {
      const found = await rpc(token, 'tools/call', {
        name: 'pkgreg.registry.v1.search',
        arguments: { q: 'doomed' },
      });
      return found.body.result.total === 0;
    }, 'search to drop the delisted package');
  });

  it('a quarantined package: refused with the reason', async () => {
    await expectNotServed(
      'skill://acme/risky/SKILL.md',
      '@acme/risky is quarantined: exfiltrates credentials',
    );
    await expectNotServed('skill://acme/risky/_manifest', 'quarantined');
  });

  it('a removed package: refused, exact versions too', async () => {
    await expectNotServed('skill://acme/gone/SKILL.md', '@acme/gone');
    await expectNotServed('skill://acme/0.0.0/gone/SKILL.md', '@acme/gone');
  });

  it('resources/list leaves all three out, and the private one', async () => {
    await until(async () => {
      const uris: string[] = [];
      let cursor: string | undefined;
      do {
        const page = (await rpc(token, 'resources/list', cursor ? { cursor } : {})).body.result;
        uris.push(...page.resources.map((r: { uri: string }) => r.uri));
        cursor = page.nextCursor;
      } while (cursor);
      return uris.length === 4 && !uris.some((u) => /doomed|risky|gone|commit-writer/.test(u));
    }, 'the list to leave them out (and the private one)');
  });
});

describe('the registry out of reach', () => {
  it('is registry_unavailable (503), and admission still runs first', async () => {
    const down = createEdge({
      db: t.db,
      redis,
      logger: createLogger('t', 'silent'),
      env: loadEnv({
        PKGREG_PUBLIC_BASE_URL: base,
        DATABASE_URL: t.url,
        REDIS_URL: TEST_REDIS_URL,
        EDGE_QUEUE_PREFIX: testKeyPrefix('skills-down'),
        LOG_LEVEL: 'silent',
        REGISTRY_URL: 'http://127.0.0.1:9',
        REGISTRY_TIMEOUT_MS: '500',
      }),
    });
    const other = createServer(down.handler);
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    try {
      const { token } = await tokenFor([SCOPES.registryRead]);
      const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}/mcp`;
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'resources/read',
          params: { uri: 'skill://acme/pdf-tools/SKILL.md' },
        }),
      });
      expect(res.status).toBe(503);
      expect(((await res.json()) as Json).error).toMatchObject({
        code: -32015,
        data: { reason: 'registry_unavailable' },
      });
    } finally {
      await new Promise<void>((r) => other.close(() => r()));
      await down.shutdown();
    }
  });
});

describe('a read the edge answered before', () => {
  it('follows its package to a new latest version once the visibility TTL has passed', async () => {
    const { token } = await tokenFor([SCOPES.registryRead]);
    const textOf = async (uri: string) =>
      (await rpc(token, 'resources/read', { uri })).body.result.contents[0].text as string;
    const latest = 'skill://acme/pdf-tools/SKILL.md';
    // Twice: the second is answered from what the first remembered (catalog.ts, recentReads).
    expect(await textOf(latest)).toBe(PDF_V2);
    expect(await textOf(latest)).toBe(PDF_V2);
    const v3 = skillMd(['name: pdf-tools', 'description: Fill, read and sign PDF forms', 'version: 1.2.0']);
    await repos.commit('acme', 'skills', { 'pdf-tools/SKILL.md': v3 });
    // The registry keeps a detail up to a second (DETAIL_CACHE_TTL_MS): asked a few times a second, within
    // the namespace's 60 reads a minute.
    await until(async () => {
      await sleep(150);
      return (await textOf(latest)) === v3;
    }, 'the latest SKILL.md to be the new version');
    expect(await textOf('skill://acme/1.1.0/pdf-tools/SKILL.md')).toBe(PDF_V2);
  });
});
