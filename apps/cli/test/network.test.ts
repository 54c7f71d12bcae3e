import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { freePort } from '@pkgreg/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../src/errors.js';
import { createRegistryClient } from '../src/http-client.js';
import { type CliResult, runCli, tempDir } from './helpers/cli.js';
import { type FaultProxy, startFaultProxy } from './helpers/fault-proxy.js';
import { useSeededRegistry } from './helpers/seeded-registry.js';

// Registry address precedence (decisions.md: Names) and behaviour when the registry misbehaves:
// down, rate limited (429 + Retry-After), failing with 5xx, answering with a body off the contract.

const { registry } = useSeededRegistry([
  {
    owner: 'acme',
    repo: 'skills',
    path: 'pdf-tools',
    name: 'pdf-tools',
    description: 'Extract text from PDF files',
  },
]);
let proxy: FaultProxy | undefined;
let deadUrl: string;

beforeAll(async () => {
  deadUrl = `http://127.0.0.1:${await freePort()}`;
});

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

async function search(args: string[], env: Record<string, string> = {}, home?: string): Promise<CliResult> {
  return runCli([...args, 'search', 'pdf'], {
    cwd: await tempDir('net'),
    home: home ?? (await tempDir('home')),
    env,
  });
}

const found = (result: CliResult) => result.code === 0 && result.stdout.includes('@acme/pdf-tools');

describe('registry address precedence: --registry > PKGREG_REGISTRY > config file > default', () => {
  it('--registry wins over PKGREG_REGISTRY', async () => {
    expect(found(await search(['--registry', registry.url], { PKGREG_REGISTRY: deadUrl }))).toBe(true);
    const result = await search(['--registry', deadUrl], { PKGREG_REGISTRY: registry.url });
    expect(result.code).toBe(4);
  });

  it('PKGREG_REGISTRY wins over the config file', async () => {
    const home = await tempDir('home');
    await mkdir(join(home, '.config/pkgreg'), { recursive: true });
    await writeFile(join(home, '.config/pkgreg/config.json'), JSON.stringify({ registry: deadUrl }));
    expect(found(await search([], { PKGREG_REGISTRY: registry.url }, home))).toBe(true);
    await writeFile(join(home, '.config/pkgreg/config.json'), JSON.stringify({ registry: registry.url }));
    expect((await search([], { PKGREG_REGISTRY: deadUrl }, home)).code).toBe(4);
  });

  it('reads ~/.config/pkgreg/config.json, or $XDG_CONFIG_HOME/pkgreg/config.json when set', async () => {
    const home = await tempDir('home');
    await mkdir(join(home, '.config/pkgreg'), { recursive: true });
    await writeFile(join(home, '.config/pkgreg/config.json'), JSON.stringify({ registry: registry.url }));
    expect(found(await search([], {}, home))).toBe(true);
    const xdg = await tempDir('xdg');
    await mkdir(join(xdg, 'pkgreg'), { recursive: true });
    await writeFile(join(xdg, 'pkgreg/config.json'), JSON.stringify({ registry: deadUrl }));
    expect((await search([], { XDG_CONFIG_HOME: xdg }, home)).code).toBe(4);
  });

  it('falls back to the public default and says where the address came from with --verbose', async () => {
    const result = await search(['--verbose'], { PKGREG_TIMEOUT_MS: '2000' });
    expect(result.stderr).toContain('pkgreg: registry https://registry.pkgreg.dev (from default)');
  });

  it('a malformed address is a usage error (exit 2) from --registry, an error (exit 1) from config', async () => {
    expect((await search(['--registry', 'not a url'])).code).toBe(2);
    const home = await tempDir('home');
    await mkdir(join(home, '.config/pkgreg'), { recursive: true });
    await writeFile(join(home, '.config/pkgreg/config.json'), '{"registry": 42}');
    const result = await search([], {}, home);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: Config file .*config\.json: registry /);
  });
});

describe('an unavailable or misbehaving registry', () => {
  it('down: exit 4 with one line on stderr, after bounded retries', async () => {
    const started = Date.now();
    const result = await search(['--registry', deadUrl]);
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(`error: Registry unavailable at ${deadUrl}: ECONNREFUSED\n`);
    expect(result.stdout).toBe('');
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('429 with Retry-After: waits that long, then succeeds', async () => {
    proxy = await startFaultProxy(registry.url, (_req, index) =>
      index === 0
        ? {
            status: 429,
            headers: { 'retry-after': '1' },
            body: JSON.stringify({ error: 'Too many requests' }),
          }
        : 'forward',
    );
    const result = await search(['--registry', proxy.url]);
    expect(found(result)).toBe(true);
    expect(proxy.requests).toHaveLength(2);
    const [first, second] = proxy.requests;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('5xx is retried with backoff; the retries show with --verbose', async () => {
    proxy = await startFaultProxy(registry.url, (_req, index) =>
      index < 2 ? { status: 503, body: JSON.stringify({ error: 'warming up' }) } : 'forward',
    );
    const result = await search(['--registry', proxy.url, '--verbose']);
    expect(found(result)).toBe(true);
    expect(proxy.requests).toHaveLength(3);
    expect(result.stderr).toMatch(/GET .*\/api\/search\?q=pdf -> 503/);
    expect(result.stderr).toContain('retrying in');
  });

  it('5xx that persists: exit 4 with the registry error message', async () => {
    proxy = await startFaultProxy(registry.url, () => ({
      status: 500,
      body: JSON.stringify({ error: 'database is down' }),
    }));
    const result = await search(['--registry', proxy.url]);
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(`error: Registry unavailable at ${proxy.url}: HTTP 500: database is down\n`);
    expect(proxy.requests).toHaveLength(4);
  });

  it('a response off the contract: exit 4 naming the bad field', async () => {
    proxy = await startFaultProxy(registry.url, () => (body) => {
      const json = JSON.parse(body);
      json.results[0].tokenCount = 'many';
      return JSON.stringify(json);
    });
    const result = await search(['--registry', proxy.url]);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(
      /^error: Malformed response from registry \(search\): results\.0\.tokenCount: /,
    );
  });

  it('a body that is not JSON: exit 4', async () => {
    proxy = await startFaultProxy(registry.url, () => ({ status: 200, body: '<html>captive portal</html>' }));
    const result = await search(['--registry', proxy.url]);
    expect(result.code).toBe(4);
    expect(result.stderr).toBe('error: Malformed response from registry (search): not JSON\n');
  });

  it('a failing track is not resent (it would count twice) and does not fail the install', async () => {
    proxy = await startFaultProxy(registry.url, (req) =>
      req.method === 'POST' ? { status: 503, body: JSON.stringify({ error: 'busy' }) } : 'forward',
    );
    const cwd = await tempDir('track');
    const result = await runCli(['--registry', proxy.url, 'install', '@acme/pdf-tools'], {
      cwd,
      home: await tempDir('home'),
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('warning: could not record the download of @acme/pdf-tools');
    expect(proxy.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    // registry-api.md and docs/versions.md: detail, the latest version, the registry's signing keys
    // (docs/provenance.md), its archive, then track.
    expect(proxy.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET', 'GET', 'POST']);
    expect(proxy.requests[2]?.path).toBe('/api/keys');
  });

  it('a registry that accepts the connection but never answers: timeout, exit 4', async () => {
    const silent = createServer(() => {});
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const address = silent.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    try {
      const result = await search(['--registry', url], { PKGREG_TIMEOUT_MS: '300' });
      expect(result.code).toBe(4);
      expect(result.stderr).toBe(`error: Registry unavailable at ${url}: timed out after 300 ms\n`);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});

describe('a JSON body is read up to 16 MiB (issue 26), like archives up to their bound', () => {
  const CAP = 16 * 1024 * 1024;

  it('a valid but oversized answer (declared length) is exit 4 naming the bound, not shown', async () => {
    proxy = await startFaultProxy(registry.url, () => (body) => {
      const json = JSON.parse(body);
      if (json.description !== undefined) json.description = 'x'.repeat(CAP + 1);
      for (const item of json.results ?? []) item.description = 'x'.repeat(CAP + 1);
      return JSON.stringify(json);
    });
    for (const [args, route] of [
      [['info', '@acme/pdf-tools'], 'GET /api/packages/@acme/pdf-tools'],
      [['search', 'pdf'], 'GET /api/search?q=pdf'],
    ] as const) {
      const result = await runCli(['--registry', proxy.url, ...args], {
        cwd: await tempDir('net'),
        home: await tempDir('home'),
      });
      expect(result.code).toBe(4);
      expect(result.stderr).toMatch(
        new RegExp(
          `^error: Malformed response from registry \\(${route.replace(/[?/.]/g, '\\$&')}\\): \\d+ bytes, more than the ${CAP} a response may have\\n$`,
        ),
      );
      expect(result.stdout).toBe('');
    }
  });

  it('an error body that large is exit 4 too, never printed', async () => {
    proxy = await startFaultProxy(registry.url, () => ({
      status: 404,
      body: JSON.stringify({ error: 'y'.repeat(CAP) }),
    }));
    const result = await search(['--registry', proxy.url]);
    expect(result.code).toBe(4);
    expect(result.stderr.length).toBeLessThan(300);
  });

  it('an endless body without a length stops at the bound: the client hangs up, nothing is retried', async () => {
    let sent = 0;
    let requests = 0;
    const closed: Promise<void>[] = [];
    const endless = createServer((req, res) => {
      requests += 1;
      // The client hanging up mid-body is the point: its reset is expected.
      req.socket.on('error', () => {});
      res.on('error', () => {});
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.from(' '.repeat(65_536));
      res.write('{"results": [');
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
      };
      res.on('drain', pump);
      closed.push(new Promise((resolve) => req.socket.once('close', () => resolve())));
      pump();
    });
    endless.listen(0, '127.0.0.1');
    await once(endless, 'listening');
    const address = endless.address();
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    try {
      const result = await search(['--registry', url], { PKGREG_TIMEOUT_MS: '60000' });
      expect(result.code).toBe(4);
      expect(result.stderr).toBe(
        `error: Malformed response from registry (GET /api/search?q=pdf): more than ${CAP} bytes, more than the ${CAP} a response may have\n`,
      );
      await Promise.all(closed);
      expect(requests).toBe(1);
      // What the kernel's socket buffers held besides: far less than a second bound.
      expect(sent).toBeLessThan(2 * CAP);
    } finally {
      endless.closeAllConnections();
      endless.close();
    }
  });
});

// Reading Retry-After itself is tested with the client (packages/registry-client/test/client.test.ts).
describe('http client retry policy (in process, against the real registry behind the fault proxy)', () => {
  it('caps a long Retry-After at maxRetryAfterMs', async () => {
    proxy = await startFaultProxy(registry.url, (_req, index) =>
      index === 0
        ? { status: 429, headers: { 'retry-after': '3600' }, body: '{"error":"slow down"}' }
        : 'forward',
    );
    const client = createRegistryClient({
      baseUrl: proxy.url,
      timeoutMs: 5_000,
      retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 20, maxRetryAfterMs: 200 },
    });
    const started = Date.now();
    const response = await client.search('pdf');
    expect(response.results.map((r) => r.name)).toContain('pdf-tools');
    // Waited the cap, not the hour asked for (which would run past the test's timeout).
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('gives up after the last attempt when every answer is 429 (exit code 4)', async () => {
    proxy = await startFaultProxy(registry.url, () => ({
      status: 429,
      headers: { 'retry-after': '0' },
      body: '{"error":"slow down"}',
    }));
    const client = createRegistryClient({
      baseUrl: proxy.url,
      timeoutMs: 5_000,
      retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 20, maxRetryAfterMs: 200 },
    });
    const error = await client.search('pdf').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(4);
    expect((error as CliError).message).toContain('HTTP 429: slow down');
    expect(proxy.requests).toHaveLength(3);
  });
});
