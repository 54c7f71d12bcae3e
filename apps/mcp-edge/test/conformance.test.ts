import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as forward, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ALL_SCOPES, SCOPES } from '@pkgreg/contracts';
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
// CLI against a listening edge backed by the real registry, at each revision's wire: 2025-11-25
// (initialize) and 2026-07-28 (stateless, per-request `_meta`), the skills extension (SEP-2640) at the
// latter. The tool sends no credentials, so a proxy in front adds a client's bearer token: what is
// tested is the edge's answers, its admission included (the DNS-rebinding scenario sends another Host
// and Origin through the proxy). Scenarios left out need fixture tools, prompts, sampling, elicitation,
// logging, subscriptions or input-required results the edge has not; checks left out of a scenario
// that runs are named in EXCLUDED, each with its reason. Every other check must succeed.

const OLD = '2025-11-25';
const MODERN = '2026-07-28';
const RUNS: { scenario: string; version: string; path?: string }[] = [
  ...['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection'].map(
    (scenario) => ({ scenario, version: OLD }),
  ),
  ...[
    'server-stateless',
    'caching',
    'sep-2164-resource-not-found',
    'tools-list',
    'resources-list',
    'dns-rebinding-protection',
    'sep-2640-skills-enumeration',
    'sep-2640-skills-manifest',
    'sep-2640-skills-directory',
    'server-sse-multiple-streams',
  ].map((scenario) => ({ scenario, version: MODERN })),
  // Its whitespace check calls the first listed tool with no arguments and wants a result: through a
  // token whose first tool takes none (pkgreg.agents.v1.list), not one whose first is pkgreg.memory.v1.put.
  { scenario: 'http-header-validation', version: MODERN, path: '/narrow' },
];

const FIXTURE = "calls one of the tool's own fixture tools";
const NO_SUBSCRIPTIONS = 'the edge declares no listChanged and serves no subscriptions/listen (stateless)';
/** `<scenario>:<check id>` that cannot succeed against the edge (failed, warned, skipped or info), with why. */
const EXCLUDED: Record<string, string> = {
  'server-initialize:server-session-id-visible-ascii': 'the edge is stateless: it issues no MCP-Session-Id',
  'server-stateless:sep-2575-server-rejects-undeclared-capability': `${FIXTURE} (test_missing_capability)`,
  'server-stateless:sep-2575-missing-capability-http-400': `${FIXTURE} (test_missing_capability)`,
  'server-stateless:sep-2575-http-server-no-independent-requests-on-stream': `${FIXTURE} (test_streaming_elicitation)`,
  'server-stateless:sep-2575-server-no-log-without-loglevel': `${FIXTURE} (test_logging_tool)`,
  'server-stateless:sep-2575-server-sends-subscription-ack': NO_SUBSCRIPTIONS,
  'server-stateless:sep-2575-server-tags-subscription-id': NO_SUBSCRIPTIONS,
  'server-stateless:sep-2575-server-honors-notification-filter': NO_SUBSCRIPTIONS,
  'server-stateless:sep-2575-server-sends-prompts-list-changed-on-subscription': NO_SUBSCRIPTIONS,
  'server-stateless:sep-2575-server-sends-tools-list-changed-on-subscription': NO_SUBSCRIPTIONS,
  'caching:sep-2549-prompts-list-caching-hints': 'the edge has no prompts',
  'server-sse-multiple-streams:server-sse-streams-functional': 'the edge answers JSON, never an SSE stream',
};

const CONFORMANCE = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');
const run = promisify(execFile);

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

let t: TestDatabase;
let registry: RunningRegistry;
let repos: SkillRepos;
let redis: Redis;
let edge: Edge;
let server: Server;
let proxy: Server;
let url: string;
let results: string;

beforeAll(async () => {
  t = await createTestDatabase();
  registry = await startRegistry(t.url);
  repos = new SkillRepos(t.db);
  // A folder in the skill, for resources/directory/read's subdirectory check.
  await repos.commit('acme', 'skills', {
    'pdf-tools/SKILL.md': skillMd(['name: pdf-tools', 'description: Fill PDF forms']),
    'pdf-tools/references/forms.md': '# Forms\n',
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
    // The scenarios run side by side and some send hundreds of requests.
    EDGE_RATE_LIMIT_PER_MINUTE: '100000',
  });
  await ensureActiveKey(t.db);
  edge = createEdge({ db: t.db, redis, logger: createLogger('t', 'silent'), env });
  server.on('request', edge.handler);
  const tokenOf = async (scopes: readonly string[]) =>
    tokenFor(
      { app: edge.app },
      await createClient(t.db, { name: `conformance-${scopes.length}`, scopes: [...scopes] }),
      { resource: url },
    );
  const token = await tokenOf(ALL_SCOPES);
  const narrow = await tokenOf([SCOPES.systemRead]);
  proxy.on('request', (req, res) => {
    const narrowed = req.url?.startsWith('/narrow/');
    const out = forward(
      {
        host: '127.0.0.1',
        port: port(server),
        method: req.method,
        path: narrowed ? req.url?.slice('/narrow'.length) : req.url,
        headers: { ...req.headers, authorization: `Bearer ${narrowed ? narrow : token}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(out);
  });
  results = mkdtempSync(join(tmpdir(), 'pkgreg-conformance-'));
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
  if (results) rmSync(results, { recursive: true, force: true });
});

describe.concurrent('the MCP conformance tool (@modelcontextprotocol/conformance), server scenarios', () => {
  it.each(RUNS)('$scenario at $version', async ({ scenario, version, path }) => {
    const out = join(results, `${scenario}-${version}`);
    const target = path ? url.replace('/mcp', `${path}/mcp`) : url;
    // --force: the skills extension is on no revision's timeline; it runs at 2026-07-28's wire.
    const args = ['server', '--url', target, '--scenario', scenario, '--spec-version', version, '--force'];
    const result = await run(process.execPath, [CONFORMANCE, ...args, '-o', out], {
      timeout: 60_000,
      maxBuffer: 64 * 1024 * 1024,
      // Most of a run is loading the tool's modules: compiled once, kept for the next runs.
      env: { ...process.env, NODE_COMPILE_CACHE: join(tmpdir(), 'pkgreg-conformance-compile-cache') },
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    const [dir] = readdirSync(out);
    const checks = JSON.parse(readFileSync(join(out, dir ?? '', 'checks.json'), 'utf8')) as Check[];
    expect(checks.length, `${scenario}: no checks ran\n${result.stderr}`).toBeGreaterThan(0);
    const failed = checks.filter((c) => c.status !== 'SUCCESS' && !(`${scenario}:${c.id}` in EXCLUDED));
    expect(failed.map((c) => `${c.id} ${c.status}: ${c.errorMessage ?? ''}`)).toEqual([]);
    // An exclusion that no longer fails is stale: the check now runs and must be held to it.
    const excused = checks.filter((c) => `${scenario}:${c.id}` in EXCLUDED);
    for (const c of excused) expect(c.status, `${scenario}:${c.id} passes now`).not.toBe('SUCCESS');
  });
});
