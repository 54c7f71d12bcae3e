// The registry behind the edge's resources/read scenario (run.mjs): the built registry-api
// (apps/registry-api/dist) on the bench's database, with one skill indexed from a git repository by the
// real indexer. Not pinned: like Postgres and Redis, it is a service the edge calls (about once a second
// here, when the package's visibility is asked again; its bytes are served from the edge's cache).
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const { indexSource } = await import('@pkgreg/indexer');
const { createRepo, removeDir, skillMd, tempDir } = await import('@pkgreg/indexer/testing');
const { freePort } = await import('@pkgreg/testing');

const API = fileURLToPath(new URL('../../registry-api/dist/index.js', import.meta.url));

/** A SKILL.md of ~4 KB, the size of a typical one: frontmatter, then steps. */
function benchSkillMd() {
  const steps = Array.from(
    { length: 40 },
    (_, i) => `${i + 1}. Check step ${i + 1} of the review: read the diff, name the risk, suggest a fix.`,
  );
  return skillMd(
    ['name: bench-skill', 'description: A skill the edge benchmark reads over MCP', 'version: 1.0.0'],
    `# Bench skill\n\n${steps.join('\n')}\n`,
  );
}

/** Indexes the skill into `db`, starts the registry on `databaseUrl`; resolves once it is ready. */
export async function startBenchRegistry({ db, databaseUrl, redisUrl }) {
  const root = tempDir('edge-bench');
  const text = benchSkillMd();
  const repo = createRepo(root, 'bench', 'skills', { 'bench-skill/SKILL.md': text });
  const summary = await indexSource({ db }, { kind: 'git', locator: repo, owner: 'bench' });
  if (summary.status !== 'succeeded') throw new Error(`indexing failed: ${JSON.stringify(summary)}`);
  const port = await freePort();
  const child = spawn(process.execPath, [API], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REGISTRY_HOST: '127.0.0.1',
      REGISTRY_PORT: String(port),
      REGISTRY_PUBLIC_URL: `http://127.0.0.1:${port}`,
      WEBHOOK_SECRET_KEY: 'pkgreg-edge-bench-webhook-key-not-a-secret',
      AUTH_SECRET: 'pkgreg-edge-bench-auth-secret-not-a-secret',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 30_000; ; await sleep(100)) {
    if (child.exitCode !== null) throw new Error(`registry-api exited ${child.exitCode}`);
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) throw new Error('registry-api did not become ready');
  }
  return {
    url,
    child,
    uri: 'skill://bench/bench-skill/SKILL.md',
    text,
    stop() {
      child.kill('SIGTERM');
      removeDir(root);
    },
  };
}
