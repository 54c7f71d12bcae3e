import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { JOB_CATALOG, type JobName, type JobPayload } from '@pkgreg/contracts';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import type { TaskQueue } from '@pkgreg/tasks';

// What the agents' tests run against: task rows in the real PostgreSQL, jobs the test runs itself (as a
// worker delivers them, and again as a redelivery), the real registry-api for package searches, and a
// local server speaking OpenAI chat completions where a model would be.

/**
 * A TaskQueue that keeps each job, validated by its catalog schema as every queue does, for the test
 * to run: the jobs under test are the functions a worker or an in-process runner calls with them.
 */
export function heldJobs() {
  const held: Array<{ name: JobName; payload: unknown }> = [];
  const queue: TaskQueue = {
    async enqueue(name, payload) {
      held.push({ name, payload: JOB_CATALOG[name].schema.parse(payload) });
    },
  };
  return {
    queue,
    /** The last job enqueued as `name`. */
    last<N extends JobName>(name: N): JobPayload<N> {
      const job = held.filter((j) => j.name === name).at(-1);
      if (!job) throw new Error(`no ${name} job was enqueued`);
      return job.payload as JobPayload<N>;
    },
  };
}

export interface ModelStandIn {
  /** The base URL a ModelConfig names (`…/v1`). */
  url: string;
  /** Each request as received: its parsed body and Authorization header. */
  requests: Array<{ body: Record<string, unknown>; authorization: string | undefined }>;
  /**
   * How the next requests are answered: given the step titles sent, the status and the assistant's
   * content; `hold` keeps the request open until `release` (a model slower than any timeout).
   */
  answer(reply: ((titles: string[]) => { status?: number; content: string }) | 'hold'): void;
  release(): void;
  close(): Promise<void>;
}

/** A local OpenAI-compatible chat-completions endpoint (POST /v1/chat/completions). */
export async function startModelStandIn(): Promise<ModelStandIn> {
  let reply: ((titles: string[]) => { status?: number; content: string }) | 'hold' = (titles) => ({
    content: JSON.stringify({ titles: titles.map((t) => `Refined: ${t}`) }),
  });
  const held: ServerResponse[] = [];
  const requests: ModelStandIn['requests'] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => {
      raw += chunk.toString();
    });
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      requests.push({ body, authorization: req.headers.authorization });
      if (req.url !== '/v1/chat/completions') return void res.writeHead(404).end();
      if (reply === 'hold') return void held.push(res);
      const messages = body.messages as Array<{ role: string; content: string }>;
      const user = JSON.parse(messages.find((m) => m.role === 'user')?.content ?? '{}');
      const { status = 200, content } = reply((user.steps ?? []).map((s: { title: string }) => s.title));
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', choices: [{ index: 0, message: { role: 'assistant', content } }] }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    answer(next) {
      reply = next;
    },
    release() {
      for (const res of held.splice(0)) res.writeHead(503).end();
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

const REGISTRY_ENTRY = fileURLToPath(new URL('../../../apps/registry-api/dist/index.js', import.meta.url));

/** The built registry-api on its own port against `databaseUrl` (its searches are the packages' source). */
export async function startRegistry(databaseUrl: string): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await closedPort();
  const child: ChildProcess = spawn(process.execPath, [REGISTRY_ENTRY], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      REDIS_URL: TEST_REDIS_URL,
      REGISTRY_HOST: '127.0.0.1',
      REGISTRY_PORT: String(port),
      METRICS_PORT: 'off',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 50))) {
    if (child.exitCode !== null) throw new Error(`registry-api exited: ${stderr}`);
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) throw new Error(`registry-api did not become ready: ${stderr}`);
  }
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
