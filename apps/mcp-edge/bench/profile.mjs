// Profiles the built edge under load: `node bench/profile.mjs [seconds]` (run under the bench flock).
// The edge runs with --cpu-prof pinned to CPU 0, autocannon pinned to CPU 1; prints the top functions
// by self time for each scenario (info, get, read: resources/read of a SKILL.md; info26, read26: the same as
// MCP 2026-07-28 requests), and leaves the .cpuprofile files in bench-results/prof/<scenario>.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const SECONDS = Number(process.argv[2] ?? 8);
const SCENARIOS = (process.argv[3] ?? 'info,get').split(',');
const profRoot = here('../bench-results/prof');
const { createTestDatabase } = await import('@pkgreg/db/testing');
const { createClient } = await import('../dist/oauth/clients.service.js');
const { ensureActiveKey } = await import('../dist/oauth/signing-keys.service.js');
const { modern, openSession } = await import('./session.mjs');
const { startBenchRegistry } = await import('./registry.mjs');

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited ${code}`))));
  });
}

function topSelf(file, n = 25) {
  const { nodes, samples, timeDeltas } = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(nodes.map((x) => [x.id, x]));
  const self = new Map();
  let total = 0;
  samples.forEach((id, i) => {
    const node = byId.get(id);
    const f = node.callFrame;
    const key = `${f.functionName || '(anon)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/apps\//, '')}:${f.lineNumber}`;
    const dt = timeDeltas[i] ?? 0;
    total += dt;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  const idle = self.get('(idle) :-1') ?? 0;
  const busy = total - idle;
  console.log(`busy ${(busy / 1000).toFixed(0)} ms of ${(total / 1000).toFixed(0)} ms`);
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    console.log(`${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`);
  }
}

const t = await createTestDatabase();
let registry;
try {
  await ensureActiveKey(t.db);
  const client = await createClient(t.db, {
    name: 'prof',
    scopes: [
      'pkgreg.system.read',
      'pkgreg.memory.stm.read',
      'pkgreg.memory.stm.write',
      'pkgreg.registry.read',
    ],
  });
  const reads = SCENARIOS.some((s) => s.startsWith('read'));
  if (reads)
    registry = await startBenchRegistry({ db: t.db, databaseUrl: t.url, redisUrl: process.env.REDIS_URL });
  const env = {
    PKGREG_PUBLIC_BASE_URL: 'http://localhost:4100',
    DATABASE_URL: t.url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    EDGE_QUEUE_PREFIX: `pkgreg-prof:${randomBytes(4).toString('hex')}`,
    EDGE_RATE_LIMIT_PER_MINUTE: '1000000000',
    EDGE_TOKEN_TTL_SECONDS: '7200',
    LOG_LEVEL: 'silent',
    ...(registry ? { REGISTRY_URL: registry.url } : {}),
  };
  for (const scenario of SCENARIOS) {
    const profDir = `${profRoot}/${scenario}`;
    rmSync(profDir, { recursive: true, force: true });
    mkdirSync(profDir, { recursive: true });
    const cfg = JSON.stringify({ env, redisPrefix: `pkgreg-prof:${randomBytes(4).toString('hex')}:` });
    const child = spawn(
      'taskset',
      [
        '-c',
        '0',
        process.execPath,
        '--cpu-prof',
        `--cpu-prof-dir=${profDir}`,
        here('./servers.mjs'),
        'edge',
        cfg,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const port = await new Promise((resolve) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const m = /READY (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
    });
    const url = `http://127.0.0.1:${port}`;
    const session = await openSession(`${url}/mcp`, client);
    const { namespace, call } = session;
    let { headers } = session;
    let body = call('pkgreg.system.v1.info', {});
    if (scenario.startsWith('read')) {
      body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/read',
        params: { uri: registry.uri },
      });
    }
    if (scenario.endsWith('26')) ({ body, headers } = modern(body, headers));
    const check = await fetch(`${url}/mcp`, { method: 'POST', headers, body }).then((r) => r.json());
    if (!check.result) throw new Error(`${scenario} failed: ${JSON.stringify(check)}`);
    if (scenario === 'get') {
      const put = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers,
        body: call('pkgreg.memory.v1.put', { namespace, tier: 'stm', content: 'profile entry' }),
      });
      body = call('pkgreg.memory.v1.get', { namespace, entryId: (await put.json()).result.entry.entryId });
    }
    const opts = { url: `${url}/mcp`, headers, body, connections: 32, duration: SECONDS };
    const out = await run('taskset', ['-c', '1', process.execPath, here('./load.mjs'), JSON.stringify(opts)]);
    console.log(`\n== ${scenario}: ${out.trim()}`);
    await new Promise((resolve) => {
      child.on('exit', resolve);
      child.kill('SIGTERM');
    });
    const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    if (file) topSelf(`${profDir}/${file}`);
  }
} finally {
  registry?.stop();
  await t.destroy();
}
