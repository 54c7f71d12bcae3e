import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from '@pkgreg/db';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';

// Test plumbing: real child processes (registry-api, the built worker) and local HTTP servers for the
// services we cannot reach (an OpenAI-compatible model endpoint).

const here = dirname(fileURLToPath(import.meta.url));
export const WORKER_ENTRY = resolve(here, '../dist/index.js');
export const REGISTRY_ENTRY = resolve(here, '../../registry-api/dist/index.js');

export { createTestWorker, silentLogger } from '../src/testing.js';

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

export async function until<T>(
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined && value !== null && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

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
export async function startRegistryApi(databaseUrl: string): Promise<ChildHandle & { url: string }> {
  const port = await freePort();
  const handle = spawnNode(REGISTRY_ENTRY, {
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REGISTRY_HOST: '127.0.0.1',
    REGISTRY_PORT: String(port),
    LOG_LEVEL: 'warn',
    NODE_ENV: 'test',
  });
  const url = `http://127.0.0.1:${port}`;
  await until(async () => {
    if (handle.child.exitCode !== null) throw new Error(`registry-api exited: ${handle.output()}`);
    try {
      const res = await fetch(`${url}/api/search?q=x`);
      return res.status === 200;
    } catch {
      return false;
    }
  }, 20_000);
  return { ...handle, url };
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

/** A local server speaking OpenAI chat completions, with a behaviour the test switches. */
export async function startModelServer(initial: ModelBehaviour = 'ok', slowMs = 3000) {
  let behaviour: ModelBehaviour = initial;
  const requests: { body: unknown; authorization: string | undefined }[] = [];
  let onRequest: (() => void) | null = null;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (d: Buffer) => {
      raw += d.toString();
    });
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as { messages?: { role: string; content: string }[] };
      requests.push({ body, authorization: req.headers.authorization });
      onRequest?.();
      const user = body.messages?.find((m) => m.role === 'user')?.content ?? '{}';
      const steps = (JSON.parse(user) as { steps?: { title: string }[] }).steps ?? [];
      const answer = (content: string) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content } }],
          }),
        );
      };
      if (behaviour === 'error') {
        res.writeHead(500).end('{"error":"boom"}');
      } else if (behaviour === 'garbage') {
        answer('Sure! Here are better titles: 1) foo 2) bar');
      } else {
        const refined = `\`\`\`json\n${JSON.stringify({ titles: steps.map((s) => `Refined: ${s.title}`) })}\n\`\`\``;
        if (behaviour === 'slow') setTimeout(() => answer(refined), slowMs);
        else answer(refined);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    set(next: ModelBehaviour, nextSlowMs?: number) {
      behaviour = next;
      if (nextSlowMs !== undefined) slowMs = nextSlowMs;
    },
    /** Resolves when the next request arrives. */
    nextRequest() {
      return new Promise<void>((resolveRequest) => {
        onRequest = () => {
          onRequest = null;
          resolveRequest();
        };
      });
    },
    async close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
