import { MAX_INPUT_JSON_DEPTH, SCOPES } from '@pkgreg/contracts';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  callTool,
  clientWithToken,
  expectRpcError,
  postMcp,
  type TestClient,
  useHarness,
} from './helpers.js';

// docs/decisions.md (U+0000, lone surrogates): JSON can carry U+0000 and unpaired UTF-16 surrogates, but
// Postgres cannot store them (jsonb refuses both; text refuses U+0000 and would turn a lone surrogate
// into U+FFFD). Every argument the edge would store is refused with them as request_schema_invalid
// (mcp-edge.md, errors), the documented shape, not a 500; nothing is written and no task is created.

const h = useHarness();
let c: TestClient;
beforeAll(async () => {
  c = await clientWithToken(h, Object.values(SCOPES));
});

const NUL = '\u0000';

describe('arguments holding U+0000', () => {
  it('are request_schema_invalid for every stored field of memory put, search, compact and agents invoke', async () => {
    const ns = c.namespace;
    const cases: Array<[string, Record<string, unknown>, string, string?]> = [
      ['pkgreg.memory.v1.put', { namespace: ns, tier: 'stm', content: `a${NUL}b` }, 'content'],
      ['pkgreg.memory.v1.put', { namespace: ns, tier: 'stm', content: 'x', tags: [`t${NUL}`] }, 'tags.0'],
      [
        'pkgreg.memory.v1.put',
        { namespace: ns, tier: 'stm', content: 'x', metadata: { [`k${NUL}`]: 'v' } },
        'metadata',
        'keys must not contain the character U+0000',
      ],
      [
        'pkgreg.memory.v1.put',
        { namespace: ns, tier: 'stm', content: 'x', metadata: { k: `v${NUL}` } },
        'metadata.k',
      ],
      [
        'pkgreg.memory.v1.put',
        { namespace: ns, tier: 'stm', content: 'x', idempotencyKey: `key${NUL}` },
        'idempotencyKey',
      ],
      ['pkgreg.memory.v1.search', { namespace: ns, query: 'x', tags: [`t${NUL}`] }, 'tags.0'],
      [
        'pkgreg.memory.v1.compact',
        { namespace: ns, strategy: 'summarize', idempotencyKey: `k${NUL}` },
        'idempotencyKey',
      ],
      [
        'pkgreg.agents.v1.invoke',
        { agentId: 'engineering.workflow', input: { type: 'text', text: `plan${NUL}` } },
        'input.text',
      ],
      [
        'pkgreg.agents.v1.invoke',
        { agentId: 'engineering.workflow', input: { type: 'json', json: { deep: [{ [`k${NUL}`]: 1 }] } } },
        'input.json',
        'keys must not contain the character U+0000',
      ],
      [
        'pkgreg.agents.v1.invoke',
        {
          agentId: 'engineering.workflow',
          input: { type: 'packet', packet: { goal: 'g', constraints: [NUL] } },
        },
        'input.packet.constraints.0',
      ],
      [
        'pkgreg.agents.v1.invoke',
        { agentId: 'engineering.workflow', input: { type: 'text', text: 'plan' }, idempotencyKey: NUL },
        'idempotencyKey',
      ],
    ];
    for (const [tool, args, path, message = 'must not contain the character U+0000'] of cases) {
      const res = await callTool(h, c.token, tool, args);
      expectRpcError(res, 200, 'request_schema_invalid');
      expect(res.body.error.data.issues).toContainEqual({ path, message });
    }
    const entries = await h.t.db.selectFrom('memory_entries').select('entry_id').execute();
    const tasks = await h.t.db.selectFrom('tasks').select('task_id').execute();
    expect({ entries, tasks }).toEqual({ entries: [], tasks: [] });
  });

  it('a lone UTF-16 surrogate is request_schema_invalid too (jsonb refuses it; text would store U+FFFD)', async () => {
    const ns = c.namespace;
    const LONE = '\ud800';
    const message = 'must not contain a lone surrogate (U+D800 to U+DFFF)';
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['pkgreg.memory.v1.put', { namespace: ns, tier: 'stm', content: `a${LONE}b` }, 'content', message],
      [
        'pkgreg.memory.v1.put',
        { namespace: ns, tier: 'stm', content: 'x', metadata: { k: `v${LONE}` } },
        'metadata.k',
        message,
      ],
      [
        'pkgreg.memory.v1.put',
        { namespace: ns, tier: 'stm', content: 'x', metadata: { [`k${LONE}`]: 'v' } },
        'metadata',
        `keys ${message}`,
      ],
      [
        'pkgreg.agents.v1.invoke',
        { agentId: 'engineering.workflow', input: { type: 'text', text: `plan ${LONE}` } },
        'input.text',
        message,
      ],
      [
        'pkgreg.agents.v1.invoke',
        { agentId: 'engineering.workflow', input: { type: 'json', json: { k: [`\udc00`] } } },
        'input.json',
        message,
      ],
    ];
    for (const [tool, args, path, expected] of cases) {
      const res = await callTool(h, c.token, tool, args);
      expectRpcError(res, 200, 'request_schema_invalid');
      expect(res.body.error.data.issues).toContainEqual({ path, message: expected });
    }
    // A surrogate pair is one character (here an emoji), stored as sent.
    const ok = await callTool(h, c.token, 'pkgreg.memory.v1.put', {
      namespace: ns,
      tier: 'stm',
      content: 'ok 😀',
    });
    expect(ok.body.result.entry.content).toBe('ok 😀');
  });

  it('a metadata key "__proto__" is request_schema_invalid, plain or escaped, and nothing is stored', async () => {
    // JSON.parse makes "__proto__" an own key; zod's record would drop it without a word and the entry
    // would be stored without it. The escaped spelling reaches the same key.
    const stored = () => h.t.db.selectFrom('memory_entries').select('entry_id').execute();
    const before = await stored();
    const args = `{"namespace":${JSON.stringify(c.namespace)},"tier":"stm","content":"x","metadata":{"a":"1","KEY":"2"}}`;
    for (const key of ['__proto__', '\\u005f_proto__']) {
      const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pkgreg.memory.v1.put","arguments":${args.replace('KEY', key)}}}`;
      const res = await postMcp(h, c.token, body);
      expectRpcError(res, 200, 'request_schema_invalid');
      expect(res.body.error.code).toBe(-32602);
      expect(res.body.error.data.issues).toContainEqual({
        path: 'metadata',
        message: 'keys must not be "__proto__"',
      });
    }
    expect(await stored()).toEqual(before);
    // Any other key, "proto" among them, is stored as sent.
    const ok = await callTool(h, c.token, 'pkgreg.memory.v1.put', {
      namespace: c.namespace,
      tier: 'stm',
      content: 'x',
      metadata: { proto: '1', constructor: '2' },
    });
    expect(ok.body.result.entry.metadata).toEqual({ proto: '1', constructor: '2' });
  });

  it('a backslash followed by "u0000" is ordinary text, stored as sent', async () => {
    const content = 'the JSON escape \\u0000 written out';
    const res = await callTool(h, c.token, 'pkgreg.memory.v1.put', {
      namespace: c.namespace,
      tier: 'stm',
      content,
      tags: ['\\u0000'],
    });
    expect(res.body.result.entry).toMatchObject({ content, tags: ['\\u0000'] });
  });
});

// docs/decisions.md (agent json input depth): 64 KiB of `[` nests 32k deep; validating or serializing
// that recursively exhausts the stack. Input nesting deeper than MAX_INPUT_JSON_DEPTH is a schema error.
describe('agents invoke json input nesting', () => {
  const invokeBody = (json: string) =>
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pkgreg.agents.v1.invoke",` +
    `"arguments":{"agentId":"engineering.workflow","input":{"type":"json","json":${json}},"executionMode":"async"}}}`;
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it(`takes ${MAX_INPUT_JSON_DEPTH} levels, and refuses one more or 30,000 as request_schema_invalid`, async () => {
    const ok = await postMcp(h, c.token, invokeBody(nested(MAX_INPUT_JSON_DEPTH)));
    expect(ok.body.result.task.status).toBe('queued');
    for (const depth of [MAX_INPUT_JSON_DEPTH + 1, 30_000]) {
      const res = await postMcp(h, c.token, invokeBody(nested(depth)));
      expectRpcError(res, 200, 'request_schema_invalid');
      expect(res.body.error.data.issues).toEqual([
        { path: 'input.json', message: `must not nest deeper than ${MAX_INPUT_JSON_DEPTH} levels` },
      ]);
    }
  });
});
