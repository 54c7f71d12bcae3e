import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { estimateTokens } from './limits.js';

// The two wire protocols the loop speaks, behind one small interface: OpenAI chat completions (hosted
// providers and local servers: Ollama, vLLM, llama.cpp) and Anthropic's Messages API, each through its
// official SDK (docs/decisions.md). The SDKs never retry (maxRetries 0) and never log: the loop counts
// retries against the run's limits, and a key must not reach a log line.

export type ProviderName = 'openai' | 'anthropic';

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them (JSON text); parsed and checked by the loop, not here. */
  rawArguments: string;
}

/** The run's conversation in neutral form; each provider maps it to its own messages. */
export type Turn =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; calls: ToolCall[] }
  | { role: 'tool'; results: Array<{ callId: string; name: string; content: string; isError: boolean }> };

export interface CompletionRequest {
  system: string;
  turns: Turn[];
  tools: ToolSpec[];
  /** Forces this tool (the last step may only submit the plan). */
  forceTool?: string;
  maxOutputTokens: number;
  signal: AbortSignal;
  timeoutMs: number;
}

export interface Completion {
  text: string;
  calls: ToolCall[];
  usage: { input: number; output: number };
}

export interface ChatProvider {
  readonly name: ProviderName;
  readonly model: string;
  complete(request: CompletionRequest): Promise<Completion>;
}

export interface ProviderConfig {
  provider: ProviderName;
  /** OpenAI: the base with `/v1` (http://127.0.0.1:11434/v1); Anthropic: without it (https://api.anthropic.com). */
  baseUrl: string;
  model: string;
  /** Sent as the SDK sends it (bearer, or x-api-key); never logged, never in job data. */
  apiKey?: string | undefined;
}

/** Local servers take any key; the SDKs refuse to start without one. */
const NO_KEY = 'no-key';

function requestChars(request: CompletionRequest): number {
  return (
    request.system.length +
    request.turns.reduce(
      (n, t) =>
        n +
        (t.role === 'tool'
          ? t.results.reduce((m, r) => m + r.content.length, 0)
          : t.text.length +
            (t.role === 'assistant' ? t.calls.reduce((m, c) => m + c.rawArguments.length, 0) : 0)),
      0,
    )
  );
}

function openAiMessages(request: CompletionRequest): OpenAI.Chat.ChatCompletionMessageParam[] {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'system', content: request.system }];
  for (const turn of request.turns) {
    if (turn.role === 'user') messages.push({ role: 'user', content: turn.text });
    else if (turn.role === 'assistant') {
      messages.push({
        role: 'assistant',
        content: turn.text || null,
        ...(turn.calls.length > 0
          ? {
              tool_calls: turn.calls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.rawArguments },
              })),
            }
          : {}),
      });
    } else {
      for (const r of turn.results)
        messages.push({ role: 'tool', tool_call_id: r.callId, content: r.content });
    }
  }
  return messages;
}

function createOpenAiProvider(config: ProviderConfig): ChatProvider {
  const client = new OpenAI({
    baseURL: config.baseUrl,
    apiKey: config.apiKey || NO_KEY,
    maxRetries: 0,
    logLevel: 'off',
  });
  return {
    name: 'openai',
    model: config.model,
    async complete(request) {
      const tools = request.tools.map((t) => ({
        type: 'function' as const,
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
      const response = await client.chat.completions.create(
        {
          model: config.model,
          temperature: 0,
          messages: openAiMessages(request),
          tools,
          tool_choice: request.forceTool
            ? { type: 'function', function: { name: request.forceTool } }
            : 'auto',
          max_tokens: request.maxOutputTokens,
        },
        { signal: request.signal, timeout: request.timeoutMs },
      );
      const message = response.choices[0]?.message;
      const calls: ToolCall[] = (message?.tool_calls ?? []).flatMap((c) =>
        c.type === 'function'
          ? [{ id: c.id, name: c.function.name, rawArguments: c.function.arguments ?? '' }]
          : [],
      );
      const text = message?.content ?? '';
      return {
        text,
        calls,
        usage: {
          input: response.usage?.prompt_tokens ?? estimateTokens(requestChars(request)),
          output:
            response.usage?.completion_tokens ??
            estimateTokens(text.length + calls.reduce((n, c) => n + c.rawArguments.length, 0)),
        },
      };
    },
  };
}

/** Arguments that are not a JSON object are replayed as an empty object (Messages wants an object). */
function inputOf(raw: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(raw) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

function anthropicMessages(request: CompletionRequest): Anthropic.MessageParam[] {
  const messages: Anthropic.MessageParam[] = [];
  for (const turn of request.turns) {
    if (turn.role === 'user') messages.push({ role: 'user', content: turn.text });
    else if (turn.role === 'assistant') {
      const content: Anthropic.ContentBlockParam[] = [];
      if (turn.text) content.push({ type: 'text', text: turn.text });
      for (const c of turn.calls)
        content.push({ type: 'tool_use', id: c.id, name: c.name, input: inputOf(c.rawArguments) });
      messages.push({ role: 'assistant', content: content.length > 0 ? content : '(no answer)' });
    } else {
      messages.push({
        role: 'user',
        content: turn.results.map((r) => ({
          type: 'tool_result' as const,
          tool_use_id: r.callId,
          content: r.content,
          ...(r.isError ? { is_error: true } : {}),
        })),
      });
    }
  }
  return messages;
}

function createAnthropicProvider(config: ProviderConfig): ChatProvider {
  const client = new Anthropic({
    baseURL: config.baseUrl,
    apiKey: config.apiKey || NO_KEY,
    maxRetries: 0,
    logLevel: 'off',
  });
  return {
    name: 'anthropic',
    model: config.model,
    async complete(request) {
      const response = await client.messages.create(
        {
          model: config.model,
          system: request.system,
          max_tokens: request.maxOutputTokens,
          messages: anthropicMessages(request),
          tools: request.tools.map((t) => ({
            name: t.name,
            description: t.description,
            input_schema: t.parameters as Anthropic.Tool.InputSchema,
          })),
          tool_choice: request.forceTool ? { type: 'tool', name: request.forceTool } : { type: 'auto' },
        },
        { signal: request.signal, timeout: request.timeoutMs },
      );
      let text = '';
      const calls: ToolCall[] = [];
      for (const block of response.content) {
        if (block.type === 'text') text += block.text;
        else if (block.type === 'tool_use')
          calls.push({ id: block.id, name: block.name, rawArguments: JSON.stringify(block.input ?? {}) });
      }
      return {
        text,
        calls,
        usage: {
          input: response.usage?.input_tokens ?? estimateTokens(requestChars(request)),
          output: response.usage?.output_tokens ?? estimateTokens(text.length),
        },
      };
    },
  };
}

export function createChatProvider(config: ProviderConfig): ChatProvider {
  return config.provider === 'anthropic' ? createAnthropicProvider(config) : createOpenAiProvider(config);
}

/** A model call's failure as the loop counts it (only its kind: nothing of the error is kept). */
export function failureOf(error: unknown): 'timeout' | 'model_error' {
  return error instanceof OpenAI.APIConnectionTimeoutError ||
    error instanceof Anthropic.APIConnectionTimeoutError
    ? 'timeout'
    : 'model_error';
}
