import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// An OpenAI-compatible chat-completions endpoint the worker's planner refines titles with (MODEL_BASE_URL).
// Its answer waits `delayMs`, which keeps an invoke running in the worker long enough for a test to kill
// or stop the worker while the job is in flight.

export interface ModelServer {
  /** The base URL to give as MODEL_BASE_URL (…/v1). */
  url: string;
  /** Requests answered or waiting so far. */
  readonly requests: number;
  /** Requests waiting for their answer now: each is a worker job in flight. */
  readonly waiting: number;
  setDelay(ms: number): void;
  close(): Promise<void>;
}

export async function startModelServer(delayMs = 0): Promise<ModelServer> {
  let delay = delayMs;
  let requests = 0;
  let waiting = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      raw += chunk;
    });
    req.on('end', () => {
      requests += 1;
      waiting += 1;
      const body = JSON.parse(raw || '{}') as { messages?: { role: string; content: string }[] };
      const user = body.messages?.find((m) => m.role === 'user')?.content ?? '{}';
      const steps = (JSON.parse(user) as { steps?: { title: string }[] }).steps ?? [];
      const content = JSON.stringify({ titles: steps.map((s) => `Refined: ${s.title}`) });
      setTimeout(() => {
        waiting -= 1;
        if (res.destroyed) return;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content } }],
          }),
        );
      }, delay);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return requests;
    },
    get waiting() {
      return waiting;
    },
    setDelay(ms) {
      delay = ms;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
