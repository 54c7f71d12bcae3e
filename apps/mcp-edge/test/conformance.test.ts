import { execFile } from 'node:child_process';
import { createServer, request as forward, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { ALL_SCOPES } from '@pkgreg/contracts';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase, testKeyPrefix } from '@pkgreg/db/testing';
import { skillMd } from '@pkgreg/indexer/testing';
import { createLogger } from '@pkgreg/server-kit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdge, type Edge } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { createClient } from '../src/oauth/clients.service.js';
import { ensureActiveKey } from '../src/oauth/signing-keys.service.js';
import { tokenFor } from './helpers.js';
import { type RunningRegistry, SkillRepos, startRegistry } from './registry.js';

// The official MCP conformance tool's server scenarios that apply to the edge (issue 31), run as its
// CLI against a listening edge backed by the real registry. The tool speaks 2025-11-25 and sends no
// credentials, so a proxy in front adds a client's bearer token: what is tested is the edge's answers,
// its admission included (the DNS-rebinding scenario sends another Host and Origin through the proxy).
// Scenarios left out need fixture tools, prompts, sampling, elicitation or logging the edge has not.

const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection'];
const CONFORMANCE = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');
const run = promisify(execFile);

let t: TestDatabase;
let registry: RunningRegistry;
let repos: SkillRepos;
let redis: Redis;
let edge: Edge;
let server: Server;
let proxy: Server;
let url: string;

beforeAll(async () => {
  t = await createTestDatabase();
  registry = await startRegistry(t.url);
  repos = new SkillRepos(t.db);
  await repos.commit('acme', 'skills', {
    'pdf-tools/SKILL.md': skillMd(['name: pdf-tools', 'description: Fill PDF forms']),
  });
  server = createServer();
  proxy = createServer();
  await Promise.all([server, proxy].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
  const port = (s: Server) => (s.address() as AddressInfo).port;
  // The edge's public URL is the proxy's, as a client sees it.
  const base = `http://localhost:${port(proxy)}`;
  url = `${base}/mcp`;
  redis = new Redis(TEST_REDIS_URL, { keyPrefix: `${testKeyPrefix('conformance')}:` });
  const env = loadEnv({
    PKGREG_PUBLIC_BASE_URL: base,
    DATABASE_URL: t.url,
    REDIS_URL: TEST_REDIS_URL,
    EDGE_QUEUE_PREFIX: testKeyPrefix('conformance-q'),
    LOG_LEVEL: 'silent',
    REGISTRY_URL: registry.url,
  });
  await ensureActiveKey(t.db);
  edge = createEdge({ db: t.db, redis, logger: createLogger('t', 'silent'), env });
  server.on('request', edge.handler);
  const client = await createClient(t.db, { name: 'conformance', scopes: [...ALL_SCOPES] });
  const token = await tokenFor({ app: edge.app }, client, { resource: url });
  proxy.on('request', (req, res) => {
    const out = forward(
      {
        host: '127.0.0.1',
        port: port(server),
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(out);
  });
}, 120_000);

afterAll(async () => {
  for (const s of [proxy, server]) {
    if (!s) continue;
    await new Promise<void>((r) => {
      s.close(() => r());
      s.closeAllConnections();
    });
  }
  await edge?.shutdown();
  redis?.disconnect();
  await registry?.stop();
  repos?.remove();
  await t?.destroy();
});

describe('the MCP conformance tool (@modelcontextprotocol/conformance), server scenarios', () => {
  it.each(SCENARIOS)('%s passes', async (scenario) => {
    const result = await run(
      process.execPath,
      [CONFORMANCE, 'server', '--url', url, '--scenario', scenario],
      {
        timeout: 60_000,
      },
    ).catch((error: { code: number; stdout: string; stderr: string }) => error);
    const output = `${result.stdout}\n${result.stderr}`;
    expect('code' in result ? result.code : 0, output).toBe(0);
    expect(output).toMatch(/passed|✓|PASS/i);
  });
});
