import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A local endpoint speaking OpenAI chat completions (POST /v1/chat/completions) where a model would be:
// the agents' planner and the worker refine step titles through it. It records each request, answers as
// the test says, and can hold answers open, so a run stays in flight until the test releases it.

export interface ModelRequest {
  /** The parsed JSON body. */
  body: Record<string, unknown>;
  authorization: string | undefined;
  /** The step titles the planner sent (the user message's `steps`). */
  titles: string[];
}

export interface ModelReply {
  /** 200 unless given. */
  status?: number;
  /** The assistant's content, sent in a chat-completion body. */
  content?: string;
  /** A raw body instead of a chat completion (an error answer). */
  body?: string;
  /** Answers after this long (a model that takes its time); 0 unless given. */
  delayMs?: number;
}

/** How a request is answered, given the step titles it sent; `hold` keeps it open until `release()`. */
export type ModelAnswer = ((titles: string[], request: ModelRequest) => ModelReply) | 'hold';

export interface ModelStandIn {
  /** The base URL a model configuration names (`…/v1`). */
  url: string;
  /** Every request received so far, in order. */
  readonly requests: readonly ModelRequest[];
  /** Requests received and not answered yet. */
  readonly waiting: number;
  /** How the next requests are answered (the default refines each title to `Refined: <title>`). */
  answer(next: ModelAnswer): void;
  /** Answers every held request with 503. */
  release(): void;
  /** Resolves with the next request to arrive. */
  nextRequest(): Promise<ModelRequest>;
  close(): Promise<void>;
}

/** The default answer: each title refined, as JSON content. */
export const refineEachTitle = (titles: string[]): ModelReply => ({
  content: JSON.stringify({ titles: titles.map((t) => `Refined: ${t}`) }),
});

function titlesOf(body: Record<string, unknown>): string[] {
  const messages = Array.isArray(body.messages)
    ? (body.messages as Array<{ role?: string; content?: string }>)
    : [];
  try {
    const user = JSON.parse(messages.find((m) => m.role === 'user')?.content ?? '{}') as {
      steps?: Array<{ title: string }>;
    };
    return (user.steps ?? []).map((s) => s.title);
  } catch {
    return [];
  }
}

export async function startModelStandIn(initial: ModelAnswer = refineEachTitle): Promise<ModelStandIn> {
  let answer = initial;
  let waiting = 0;
  const requests: ModelRequest[] = [];
  const held: ServerResponse[] = [];
  const waiters: Array<(request: ModelRequest) => void> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      raw += chunk;
    });
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw || '{}') as Record<string, unknown>;
      } catch {
        // recorded as an empty body; the answer decides
      }
      const request: ModelRequest = {
        body,
        authorization: req.headers.authorization,
        titles: titlesOf(body),
      };
      requests.push(request);
      for (const resolve of waiters.splice(0)) resolve(request);
      if (req.url !== '/v1/chat/completions') return void res.writeHead(404).end();
      waiting += 1;
      res.once('close', () => {
        waiting -= 1;
      });
      if (answer === 'hold') return void held.push(res);
      const reply = answer(request.titles, request);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
        res.end(
          reply.body ??
            JSON.stringify({
              id: 'x',
              object: 'chat.completion',
              choices: [{ index: 0, message: { role: 'assistant', content: reply.content ?? '' } }],
            }),
        );
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
      else send();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get waiting() {
      return waiting;
    },
    answer(next) {
      answer = next;
    },
    release() {
      for (const res of held.splice(0)) if (!res.destroyed) res.writeHead(503).end();
    },
    nextRequest() {
      return new Promise((resolve) => waiters.push(resolve));
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
