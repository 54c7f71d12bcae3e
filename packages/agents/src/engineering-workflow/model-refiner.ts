import { request } from 'undici';
import { z } from 'zod';

// Optional refinement by an OpenAI-compatible chat-completions endpoint (decisions.md: "a model endpoint
// may refine the plan when configured"). The model only rewords step titles; order, phases, dependencies
// and packages stay the planner's. Any failure (timeout, HTTP error, an answer that does not fit) keeps
// the model-free titles.

export interface ModelConfig {
  /**
   * The wire protocol (docs/agent.md): OpenAI chat completions (default; hosted or a local server) or
   * Anthropic's Messages API. The title refinement below speaks chat completions only.
   */
  provider?: 'openai' | 'anthropic';
  /** e.g. http://127.0.0.1:11434/v1 or https://api.openai.com/v1; Anthropic: https://api.anthropic.com */
  baseUrl: string;
  model: string;
  /** Sent as a bearer token; never logged. */
  apiKey?: string;
  timeoutMs: number;
}

export type RefineOutcome =
  | { refined: true; titles: string[] }
  | { refined: false; reason: 'timeout' | 'http_error' | 'bad_answer' | 'network_error' };

const ChatResponseSchema = z.object({
  choices: z
    .array(z.object({ message: z.object({ content: z.string().nullable().optional() }).loose() }).loose())
    .min(1),
});

const TitlesSchema = z.object({ titles: z.array(z.string().trim().min(3).max(160)) });

function parseTitles(content: string, expected: number): string[] | null {
  // Models often wrap JSON in a code fence or prose: take the outermost object.
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  try {
    const parsed = TitlesSchema.safeParse(JSON.parse(content.slice(start, end + 1)));
    if (!parsed.success || parsed.data.titles.length !== expected) return null;
    return parsed.data.titles.map((t) => t.replace(/\s+/g, ' '));
  } catch {
    return null;
  }
}

export async function refineTitles(
  config: ModelConfig,
  plan: { goal: string; steps: { title: string; phase: string }[] },
): Promise<RefineOutcome> {
  const body = {
    model: config.model,
    temperature: 0,
    messages: [
      {
        role: 'system',
        content:
          'You rewrite engineering plan step titles to be short, specific imperative sentences. ' +
          'Keep the number and order of steps. Answer only JSON: {"titles": ["..."]}.',
      },
      {
        role: 'user',
        content: JSON.stringify({
          goal: plan.goal,
          steps: plan.steps.map((s) => ({ title: s.title, phase: s.phase })),
        }),
      },
    ],
  };
  const signal = AbortSignal.timeout(config.timeoutMs);
  try {
    const res = await request(`${config.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal,
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return { refined: false, reason: 'http_error' };
    }
    const json = ChatResponseSchema.safeParse(await res.body.json().catch(() => null));
    const content = json.success ? json.data.choices[0]?.message.content : null;
    const titles = content ? parseTitles(content, plan.steps.length) : null;
    return titles ? { refined: true, titles } : { refined: false, reason: 'bad_answer' };
  } catch {
    return { refined: false, reason: signal.aborted ? 'timeout' : 'network_error' };
  }
}
