import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A local model for the agent's tool loop, speaking both wire protocols the worker supports: OpenAI chat
// completions (POST /v1/chat/completions, `tool_calls`) and Anthropic's Messages API (POST /v1/messages,
// `tool_use` blocks). Each test scripts the turns; the server records every request (with the key header
// it carried) and turns a scripted turn into the protocol's own answer.

export type Protocol = 'openai' | 'anthropic';

export interface SeenModelRequest {
  protocol: Protocol;
  body: Record<string, unknown>;
  /** `x-api-key`, else `Authorization`, as sent (the SDK picks how it sends the key). */
  key: string | undefined;
  /** The tools offered, by name. */
  tools: string[];
  /** The tool results this request carries (the latest turn), in order, whatever the protocol. */
  toolResults: Array<{ id: string; content: string; isError: boolean }>;
}

export type ScriptedTurn =
  /** The model calls tools; `arguments` as an object, or raw text (a malformed call). */
  | {
      calls: Array<{ name: string; arguments: Record<string, unknown> | string }>;
      text?: string;
      usage?: { input: number; output: number };
    }
  /** The model answers in prose, calling nothing. */
  | { text: string; usage?: { input: number; output: number } }
  /** An HTTP error answer. */
  | { status: number; body: string }
  /** Never answered (until the server closes): only a timeout ends the call. */
  | 'hold';

/** Given the request and how many came before it in this script, the next turn. */
export type Script = (request: SeenModelRequest, index: number) => ScriptedTurn;

export interface ModelProtocolServer {
  /** OpenAI base (`…/v1`). */
  openaiUrl: string;
  /** Anthropic base (the origin; the SDK adds `/v1/messages`). */
  anthropicUrl: string;
  readonly requests: SeenModelRequest[];
  /** The script for the next requests; its index starts again at 0. */
  script(next: Script): void;
  close(): Promise<void>;
}

function toolResultsOf(protocol: Protocol, body: Record<string, unknown>): SeenModelRequest['toolResults'] {
  const messages = (body.messages ?? []) as Array<Record<string, unknown>>;
  if (protocol === 'openai') {
    const tail: SeenModelRequest['toolResults'] = [];
    for (let i = messages.length - 1; i >= 0 && messages[i]?.role === 'tool'; i -= 1) {
      const m = messages[i] as { tool_call_id: string; content: string };
      tail.unshift({ id: m.tool_call_id, content: m.content, isError: false });
    }
    return tail;
  }
  const last = messages.at(-1) as { role?: string; content?: unknown } | undefined;
  if (last?.role !== 'user' || !Array.isArray(last.content)) return [];
  return (last.content as Array<Record<string, unknown>>)
    .filter((b) => b.type === 'tool_result')
    .map((b) => ({
      id: String(b.tool_use_id),
      content: typeof b.content === 'string' ? b.content : JSON.stringify(b.content),
      isError: b.is_error === true,
    }));
}

function toolNames(protocol: Protocol, body: Record<string, unknown>): string[] {
  const tools = (body.tools ?? []) as Array<Record<string, unknown>>;
  return tools.map((t) =>
    protocol === 'openai' ? String((t.function as { name: string }).name) : String(t.name),
  );
}

let callCounter = 0;

function answer(protocol: Protocol, model: string, turn: Exclude<ScriptedTurn, 'hold'>): object {
  const usage = ('usage' in turn && turn.usage) || { input: 100, output: 20 };
  const calls = 'calls' in turn ? turn.calls : [];
  const text = 'text' in turn ? (turn.text ?? '') : '';
  if (protocol === 'openai') {
    return {
      id: `chatcmpl-${++callCounter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [
        {
          index: 0,
          finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
          message: {
            role: 'assistant',
            content: text || null,
            ...(calls.length > 0
              ? {
                  tool_calls: calls.map((c) => ({
                    id: `call_${++callCounter}`,
                    type: 'function',
                    function: {
                      name: c.name,
                      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
                    },
                  })),
                }
              : {}),
          },
        },
      ],
      usage: {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
      },
    };
  }
  return {
    id: `msg_${++callCounter}`,
    type: 'message',
    role: 'assistant',
    model,
    stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    content: [
      ...(text ? [{ type: 'text', text }] : []),
      ...calls.map((c) => ({
        type: 'tool_use',
        id: `toolu_${++callCounter}`,
        name: c.name,
        // The Messages API always sends an object; a raw string here is a model's broken arguments.
        input: typeof c.arguments === 'string' ? c.arguments : c.arguments,
      })),
    ],
    usage: { input_tokens: usage.input, output_tokens: usage.output },
  };
}

export async function startModelProtocolServer(): Promise<ModelProtocolServer> {
  let current: Script = () => ({ text: 'no script' });
  let index = 0;
  const requests: SeenModelRequest[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      raw += chunk;
    });
    req.on('end', () => {
      const protocol: Protocol | null =
        req.url === '/v1/chat/completions' ? 'openai' : req.url === '/v1/messages' ? 'anthropic' : null;
      if (!protocol || req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw || '{}') as Record<string, unknown>;
      const seen: SeenModelRequest = {
        protocol,
        body,
        key: (req.headers['x-api-key'] as string | undefined) ?? req.headers.authorization,
        tools: toolNames(protocol, body),
        toolResults: toolResultsOf(protocol, body),
      };
      requests.push(seen);
      const turn = current(seen, index++);
      if (turn === 'hold') {
        held.push(res);
        return;
      }
      if ('status' in turn) {
        res.writeHead(turn.status, { 'content-type': 'application/json' }).end(turn.body);
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(answer(protocol, String(body.model), turn)));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    openaiUrl: `${origin}/v1`,
    anthropicUrl: origin,
    requests,
    script(next) {
      current = next;
      index = 0;
    },
    async close() {
      for (const res of held.splice(0)) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A tool result's JSON, parsed (the loop's tool results are JSON data, or a plain refusal). */
export function resultJson(content: string): Record<string, unknown> | null {
  try {
    return JSON.parse(content) as Record<string, unknown>;
  } catch {
    return null;
  }
}
