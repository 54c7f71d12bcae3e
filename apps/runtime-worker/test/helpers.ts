import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from '@pkgreg/db';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { commitFiles, createRepo, type FileSpec } from '@pkgreg/indexer/testing';
import {
  type ModelAnswer,
  type RegistryProcess,
  refineEachTitle,
  startModelStandIn,
  startRegistry,
} from '@pkgreg/testing';
import { Redis } from 'ioredis';

// Test plumbing: real child processes (registry-api, the built worker) and local HTTP servers for the
// services we cannot reach (an OpenAI-compatible model endpoint).

const here = dirname(fileURLToPath(import.meta.url));
export const WORKER_ENTRY = resolve(here, '../dist/index.js');
export const REGISTRY_ENTRY = resolve(here, '../../registry-api/dist/index.js');

export { freePort, until } from '@pkgreg/testing';
export { createTestWorker, silentLogger } from '../src/testing.js';

export interface ChildHandle {
  child: ChildProcess;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

function spawnNode(entry: string, env: Record<string, string>): ChildHandle {
  const child = spawn(process.execPath, [entry], {
    // METRICS_PORT 0: processes started at once must not contend for an app's default operator port.
    env: { PATH: process.env.PATH ?? '', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return {
    child,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const [code] = (await once(child, 'exit')) as [number | null];
      return code;
    },
  };
}

/** The real registry-api (built dist) on an ephemeral port against the test database. */
export function startRegistryApi(databaseUrl: string): Promise<RegistryProcess> {
  return startRegistry({ entry: REGISTRY_ENTRY, databaseUrl, redisUrl: TEST_REDIS_URL });
}

/** The built worker entry (dist/index.js) as its own process. */
export function startWorkerProcess(env: Record<string, string>): ChildHandle {
  return spawnNode(WORKER_ENTRY, { NODE_ENV: 'test', LOG_LEVEL: 'debug', INDEXING_ENABLED: 'false', ...env });
}

export interface SeedPackage {
  scope: string;
  name: string;
  description: string;
  stars?: number;
  verified?: boolean;
}

/** Registry rows the planner's searches should find (the shape the indexer writes). */
export async function seedPackages(db: Db, packages: SeedPackage[]): Promise<void> {
  await db
    .insertInto('packages')
    .values(
      packages.map((p) => ({
        scope: p.scope,
        name: p.name,
        description: p.description,
        source_repo: `${p.scope}/${p.name}`,
        repo_owner: p.scope,
        skill_md_raw: `---\nname: ${p.name}\ndescription: ${p.description}\n---\n`,
        frontmatter: JSON.stringify({ name: p.name, description: p.description }),
        repo_stars: p.stars ?? 10,
        verified: p.verified ?? false,
      })),
    )
    .execute();
}

export const REGISTRY_FIXTURE: SeedPackage[] = [
  {
    scope: 'dbtools',
    name: 'postgres-schema-designer',
    description: 'Design PostgreSQL database schemas and migrations',
    stars: 120,
    verified: true,
  },
  {
    scope: 'dbtools',
    name: 'mysql-to-postgres',
    description: 'Migrate a MySQL database to PostgreSQL with zero downtime',
    stars: 40,
  },
  {
    scope: 'apitools',
    name: 'rest-api-builder',
    description: 'Implement REST API endpoints with validation and rate limiting',
    stars: 300,
    verified: true,
  },
  {
    scope: 'apitools',
    name: 'rate-limiter',
    description: 'Token bucket rate limiting middleware for HTTP APIs',
    stars: 80,
  },
  {
    scope: 'qa',
    name: 'integration-tests',
    description: 'Write integration tests against real services',
    stars: 90,
  },
  {
    scope: 'qa',
    name: 'playwright-e2e',
    description: 'End-to-end browser tests with Playwright',
    stars: 150,
    verified: true,
  },
  {
    scope: 'qa',
    name: 'unit-test-writer',
    description: 'Generate unit tests for functions and modules',
    stars: 60,
  },
  { scope: 'deploy', name: 'fly-deployer', description: 'Deploy applications to Fly.io', stars: 70 },
  {
    scope: 'deploy',
    name: 'vercel-deploy',
    description: 'Deploy frontends to Vercel with preview environments',
    stars: 110,
  },
  {
    scope: 'deploy',
    name: 'kubernetes-helm',
    description: 'Deploy services to Kubernetes with Helm charts',
    stars: 200,
    verified: true,
  },
  {
    scope: 'ci',
    name: 'github-actions-ci',
    description: 'Set up GitHub Actions CI pipelines',
    stars: 250,
    verified: true,
  },
  {
    scope: 'ci',
    name: 'docker-containerize',
    description: 'Containerize a service with a Dockerfile and Docker Compose',
    stars: 130,
  },
  {
    scope: 'ops',
    name: 'prometheus-monitoring',
    description: 'Add Prometheus metrics, monitoring and alerts',
    stars: 95,
  },
  { scope: 'docs', name: 'changelog-writer', description: 'Write a changelog from commits', stars: 30 },
  {
    scope: 'docs',
    name: 'readme-generator',
    description: 'Generate README documentation for a project',
    stars: 45,
  },
  {
    scope: 'release',
    name: 'npm-publish',
    description: 'Publish packages to npm with provenance',
    stars: 85,
  },
  {
    scope: 'review',
    name: 'pr-reviewer',
    description: 'Review pull requests for bugs and style',
    stars: 140,
  },
  {
    scope: 'frontend',
    name: 'react-charts',
    description: 'Implement chart components for React dashboards',
    stars: 75,
  },
  { scope: 'design', name: 'wireframe-kit', description: 'Design wireframes and UX flows', stars: 25 },
  {
    scope: 'auth',
    name: 'oauth-express',
    description: 'Add OAuth login to Express apps',
    stars: 160,
    verified: true,
  },
  { scope: 'docs', name: 'pdf-invoice', description: 'Render PDF invoices from templates', stars: 20 },
  { scope: 'cloud', name: 'aws-lambda-deploy', description: 'Deploy functions to AWS Lambda', stars: 65 },
  {
    scope: 'security',
    name: 'security-audit',
    description: 'Audit dependencies and code for security issues',
    stars: 55,
  },
  { scope: 'data', name: 'csv-to-json', description: 'Convert CSV files to JSON', stars: 15 },
];

export type ModelBehaviour = 'ok' | 'garbage' | 'slow' | 'error';

/** How the worker's model answers in each behaviour: refined titles in a fenced JSON block, unless not. */
function modelReply(behaviour: ModelBehaviour, slowMs: number): ModelAnswer {
  return (titles) => {
    if (behaviour === 'error') return { status: 500, body: '{"error":"boom"}' };
    if (behaviour === 'garbage') return { content: 'Sure! Here are better titles: 1) foo 2) bar' };
    const refined = `\`\`\`json\n${refineEachTitle(titles).content}\n\`\`\``;
    return { content: refined, delayMs: behaviour === 'slow' ? slowMs : 0 };
  };
}

/** The model stand-in with a behaviour the test switches. */
export async function startModelServer(initial: ModelBehaviour = 'ok', slowMs = 3000) {
  let current = { behaviour: initial, slowMs };
  const model = await startModelStandIn(modelReply(initial, slowMs));
  return Object.assign(model, {
    set(next: ModelBehaviour, nextSlowMs?: number) {
      current = { behaviour: next, slowMs: nextSlowMs ?? current.slowMs };
      model.answer(modelReply(current.behaviour, current.slowMs));
    },
  });
}

/**
 * Every value Redis holds under `prefix` (job data, BullMQ's event streams, locks…), by key: what a test
 * searches for a secret that must never be kept.
 */
export async function redisValues(prefix: string): Promise<Array<{ key: string; value: string }>> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    const found: Array<{ key: string; value: string }> = [];
    for (const key of await redis.keys(`${prefix}:*`)) {
      const type = await redis.type(key);
      const values =
        type === 'hash'
          ? Object.values(await redis.hgetall(key))
          : type === 'string'
            ? [(await redis.get(key)) ?? '']
            : type === 'list'
              ? await redis.lrange(key, 0, -1)
              : type === 'zset'
                ? await redis.zrange(key, '0', '-1')
                : type === 'set'
                  ? await redis.smembers(key)
                  : type === 'stream'
                    ? (await redis.xrange(key, '-', '+')).flatMap(([, fields]) => fields)
                    : [];
      for (const value of values) found.push({ key, value });
    }
    return found;
  } finally {
    redis.disconnect();
  }
}

/** Commits `files` to a new repository `<owner>/skills` under `root` and indexes it, as `pnpm registry index` would. */
export async function indexRepo(
  db: Db,
  root: string,
  owner: string,
  files: Record<string, FileSpec>,
): Promise<void> {
  const dir = createRepo(root, owner, 'skills', {});
  commitFiles(dir, files);
  const summary = await indexSource({ db }, { kind: 'git', locator: dir, owner });
  if (summary.status !== 'succeeded')
    throw new Error(`indexing ${owner}/skills failed: ${JSON.stringify(summary)}`);
}
