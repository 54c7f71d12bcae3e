import { freePort, type ModelStandIn, startModelStandIn } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelConfig, refineTitles } from '../src/index.js';

// The optional model (model-refiner.ts) against a local server speaking OpenAI chat completions: it only
// rewords step titles, and any failure keeps the planner's own, with the reason.

const PLAN = {
  goal: 'Ship the search page',
  steps: [
    { title: 'Design the index', phase: 'design' },
    { title: 'Write integration tests', phase: 'test' },
  ],
};
let model: ModelStandIn;
let config: ModelConfig;

beforeAll(async () => {
  model = await startModelStandIn();
  config = { baseUrl: `${model.url}/`, model: 'planner-1', apiKey: 'sk-test-123', timeoutMs: 5_000 };
});

afterAll(async () => {
  model?.release();
  await model?.close();
});

describe('refineTitles (an OpenAI-compatible chat-completions endpoint)', () => {
  it('sends the goal and the steps, with the key as a bearer token; takes the titles it answers', async () => {
    model.answer((titles) => ({ content: JSON.stringify({ titles: titles.map((t) => `Refined: ${t}`) }) }));
    const sent = model.requests.length;
    expect(await refineTitles(config, PLAN)).toEqual({
      refined: true,
      titles: ['Refined: Design the index', 'Refined: Write integration tests'],
    });
    const request = model.requests[sent];
    expect(request?.authorization).toBe('Bearer sk-test-123');
    expect(request?.body).toMatchObject({ model: 'planner-1', temperature: 0 });
    const messages = request?.body.messages as Array<{ role: string; content: string }>;
    expect(JSON.parse(messages.find((m) => m.role === 'user')?.content ?? '')).toEqual(PLAN);
  });

  it('without a key sends no Authorization header', async () => {
    const sent = model.requests.length;
    const { apiKey: _omitted, ...keyless } = config;
    expect((await refineTitles(keyless, PLAN)).refined).toBe(true);
    expect(model.requests[sent]?.authorization).toBeUndefined();
  });

  it('JSON in a code fence or prose is taken; whitespace inside a title is collapsed', async () => {
    model.answer(() => ({
      content: 'Here you go:\n```json\n{"titles": ["Design  the\\nindex", "Write tests"]}\n```',
    }));
    expect(await refineTitles(config, PLAN)).toEqual({
      refined: true,
      titles: ['Design the index', 'Write tests'],
    });
  });

  it.each([
    ['prose without JSON', () => ({ content: 'Sure! 1) foo 2) bar' })],
    ['fewer titles than steps', () => ({ content: '{"titles": ["Only one"]}' })],
    ['a title too short', () => ({ content: '{"titles": ["ab", "Write tests"]}' })],
    ['broken JSON', () => ({ content: '{"titles": ["a", ' })],
  ])('%s: bad_answer, the planner keeps its titles', async (_label, reply) => {
    model.answer(reply);
    expect(await refineTitles(config, PLAN)).toEqual({ refined: false, reason: 'bad_answer' });
  });

  it('an HTTP error: http_error', async () => {
    model.answer(() => ({ status: 500, content: 'boom' }));
    expect(await refineTitles(config, PLAN)).toEqual({ refined: false, reason: 'http_error' });
  });

  it('an endpoint that does not answer within timeoutMs: timeout', async () => {
    // The stand-in holds the request for good: only the timeout can end the call.
    model.answer('hold');
    expect(await refineTitles({ ...config, timeoutMs: 200 }, PLAN)).toEqual({
      refined: false,
      reason: 'timeout',
    });
    model.release();
  });

  it('nothing listening: network_error', async () => {
    const down = { ...config, baseUrl: `http://127.0.0.1:${await freePort()}/v1` };
    expect(await refineTitles(down, PLAN)).toEqual({ refined: false, reason: 'network_error' });
  });
});
