import { SCOPES } from '@pkgreg/contracts';
import { describe, expect, it } from 'vitest';
import {
  allowClient,
  callTool,
  clientWithToken,
  type Harness,
  rpc,
  type TestClient,
  tokenAt,
  tokenFor,
  useHarness,
  withinOneWindow,
} from './helpers.js';

// Issue 26: quotas and per-tool rates are counted per namespace, the client's identity, not per token:
// minting more tokens (narrowed or not) never adds to a client's budget. Another client has its own.

const ACME = 'acme.mcp.example.com';
const h = useHarness({
  PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON: JSON.stringify([{ host: ACME, tenant: 'acme' }]),
  EDGE_RATE_LIMIT_PER_MINUTE: '3',
  EDGE_RATE_LIMITS_JSON: JSON.stringify({ 'pkgreg.agents.v1.invoke': 100, 'pkgreg.memory.v1.compact': 100 }),
  EDGE_INVOKE_PER_MINUTE: '2',
  EDGE_COMPACT_PER_MINUTE: '1',
});

const reason = (res: { status: number; body: { error?: { data: { reason: string } } } }) =>
  res.body.error ? res.body.error.data.reason : String(res.status);

async function secondTokens(h: Harness, c: TestClient): Promise<string[]> {
  // A second token like the first, and one narrowed to the scopes the calls below need.
  return [
    await tokenFor(h, c),
    await tokenFor(h, c, {
      scope: [SCOPES.systemRead, SCOPES.agentsInvoke, SCOPES.stmRead, SCOPES.stmWrite].join(' '),
    }),
  ];
}

describe('limits per namespace, whatever the token', () => {
  it('the per-tool rate is shared by every token of a client, on every host it may use', async () => {
    await withinOneWindow();
    const c = await clientWithToken(h);
    await allowClient(h, { mode: 'hosted', id: 'acme' }, c);
    const [second, narrowed] = (await secondTokens(h, c)) as [string, string];
    const atAcme = await tokenAt(h, c, ACME);
    const info = (token: string, host?: string) =>
      rpc(
        h,
        token,
        'tools/call',
        { name: 'pkgreg.system.v1.info', arguments: {} },
        host ? { headers: { Host: host } } : {},
      );
    expect([await info(c.token), await info(second), await info(atAcme, ACME)].map(reason)).toEqual([
      '200',
      '200',
      '200',
    ]);
    // The rate (3) is spent for the client: every token of it is refused, on either host, a fresh one too.
    const fresh = await tokenFor(h, c);
    for (const token of [c.token, second, narrowed, fresh])
      expect(reason(await info(token))).toBe('rate_limited');
    expect(reason(await info(atAcme, ACME))).toBe('rate_limited');
    // Another tool has its own rate; another client its own budget.
    expect(reason(await callTool(h, fresh, 'pkgreg.agents.v1.list'))).toBe('200');
    const other = await clientWithToken(h);
    expect(reason(await info(other.token))).toBe('200');
  });

  it('the invoke and compact quotas are shared by every token of a client', async () => {
    await withinOneWindow();
    const c = await clientWithToken(h);
    const [second, narrowed] = (await secondTokens(h, c)) as [string, string];
    const invoke = (token: string) =>
      callTool(h, token, 'pkgreg.agents.v1.invoke', {
        agentId: 'engineering.workflow',
        input: { type: 'text', text: 'plan' },
        executionMode: 'async',
      });
    expect([await invoke(c.token), await invoke(second)].map(reason)).toEqual(['200', '200']);
    expect(reason(await invoke(narrowed))).toBe('quota_exceeded');
    expect(reason(await invoke(await tokenFor(h, c)))).toBe('quota_exceeded');

    const compact = (token: string) =>
      callTool(h, token, 'pkgreg.memory.v1.compact', {
        namespace: c.namespace,
        strategy: 'summarize',
        executionMode: 'async',
      });
    expect(reason(await compact(narrowed))).toBe('200');
    for (const token of [c.token, second]) expect(reason(await compact(token))).toBe('quota_exceeded');

    // Another client's quotas are its own.
    const other = await clientWithToken(h);
    expect(reason(await invoke(other.token))).toBe('200');
  });

  it('polling (tasks/get) is rated per client too', async () => {
    await withinOneWindow();
    const c = await clientWithToken(h);
    const [second, narrowed] = (await secondTokens(h, c)) as [string, string];
    const taskId = '00000000-0000-4000-8000-000000000000';
    const get = (token: string) => rpc(h, token, 'tasks/get', { taskId });
    expect([await get(c.token), await get(second), await get(narrowed)].map(reason)).toEqual([
      'task_not_found',
      'task_not_found',
      'task_not_found',
    ]);
    expect(reason(await get(await tokenFor(h, c)))).toBe('rate_limited');
  });
});
