import { SCOPES } from '@pkgreg/contracts';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  allowClient,
  callTool,
  clientWithToken,
  expectRpcError,
  rpc,
  type TestClient,
  tokenAt,
  tokenFor,
  useHarness,
} from './helpers.js';

// Issue 26: tasks/get and tasks/result need every scope the call that created the task needed. A token of
// the same client narrowed to fewer scopes reads no more through polling than it could have asked for.

const ACME = 'acme.mcp.example.com';
const h = useHarness({
  PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON: JSON.stringify([{ host: ACME, tenant: 'acme' }]),
  EDGE_RATE_LIMIT_PER_MINUTE: '1000',
  EDGE_INVOKE_PER_MINUTE: '100',
});
let c: TestClient;
beforeAll(async () => {
  c = await clientWithToken(h);
});

const TASK_TOOLS = {
  /** invoke with an stm write binding: agents.invoke + stm write. */
  invokeStm: (ns: string) => ({
    name: 'pkgreg.agents.v1.invoke',
    arguments: {
      agentId: 'engineering.workflow',
      input: { type: 'text', text: 'plan the release' },
      memory: { namespace: ns, readTiers: [], writeTiers: ['stm'] },
      executionMode: 'async',
    },
  }),
  /** invoke with an ltm read binding: agents.invoke + ltm read. */
  invokeLtmRead: (ns: string) => ({
    name: 'pkgreg.agents.v1.invoke',
    arguments: {
      agentId: 'engineering.workflow',
      input: { type: 'text', text: 'plan the migration' },
      memory: { namespace: ns, readTiers: ['ltm'], writeTiers: [] },
      executionMode: 'async',
    },
  }),
  summarize: (ns: string) => ({
    name: 'pkgreg.memory.v1.compact',
    arguments: { namespace: ns, strategy: 'summarize', executionMode: 'async' },
  }),
  extractFacts: (ns: string) => ({
    name: 'pkgreg.memory.v1.compact',
    arguments: { namespace: ns, strategy: 'extract_facts', executionMode: 'async' },
  }),
};

async function startTask(kind: keyof typeof TASK_TOOLS): Promise<string> {
  const { name, arguments: args } = TASK_TOOLS[kind](c.namespace);
  const res = await callTool(h, c.token, name, args);
  expect(res.body.result?.mode, JSON.stringify(res.body)).toBe('task');
  return res.body.result.task.taskId as string;
}

/** Both polling methods with `token`: the verdicts, as reasons ('ok' for a task record or result). */
async function poll(token: string, taskId: string): Promise<string[]> {
  const verdicts: string[] = [];
  for (const method of ['tasks/get', 'tasks/result']) {
    const res = await rpc(h, token, method, { taskId });
    verdicts.push(res.body.error ? res.body.error.data.reason : 'ok');
  }
  return verdicts;
}

describe('tasks/get and tasks/result need the scopes of the call that made the task', () => {
  it('a narrowed token of the same client is refused, scope_insufficient naming the missing scopes', async () => {
    const taskId = await startTask('invokeStm');
    // Variants: no task scope at all, the tool's scope without the binding's, the binding's without the tool's.
    for (const scope of [SCOPES.systemRead, SCOPES.agentsInvoke, `${SCOPES.stmWrite} ${SCOPES.stmRead}`]) {
      const narrow = await tokenFor(h, c, { scope });
      for (const method of ['tasks/get', 'tasks/result']) {
        const res = await rpc(h, narrow, method, { taskId });
        expectRpcError(res, 403, 'scope_insufficient');
        const missing = [SCOPES.agentsInvoke, SCOPES.stmWrite].filter((s) => !scope.split(' ').includes(s));
        expect(res.body.error.data.requiredScopes).toEqual(missing);
        expect(res.headers['www-authenticate']).toContain('insufficient_scope');
        // Nothing of the task leaks with the refusal.
        expect(JSON.stringify(res.body)).not.toContain('engineering.workflow');
      }
    }
    // The scopes the call needed (and no more) read it: tasks/result says not ready, as for the full token.
    const exact = await tokenFor(h, c, { scope: `${SCOPES.agentsInvoke} ${SCOPES.stmWrite}` });
    expect(await poll(exact, taskId)).toEqual(['ok', 'task_not_ready']);
    expect(await poll(c.token, taskId)).toEqual(['ok', 'task_not_ready']);
  });

  it('each task tool and binding: invoke reading ltm, summarize, extract_facts', async () => {
    const cases = [
      { kind: 'invokeLtmRead', needs: [SCOPES.agentsInvoke, SCOPES.ltmRead], lacks: SCOPES.agentsInvoke },
      { kind: 'summarize', needs: [SCOPES.stmRead, SCOPES.stmWrite], lacks: SCOPES.stmRead },
      {
        kind: 'extractFacts',
        needs: [SCOPES.stmRead, SCOPES.ltmWrite],
        lacks: `${SCOPES.stmRead} ${SCOPES.stmWrite}`,
      },
    ] as const;
    for (const { kind, needs, lacks } of cases) {
      const taskId = await startTask(kind);
      expect(await poll(await tokenFor(h, c, { scope: lacks }), taskId)).toEqual([
        'scope_insufficient',
        'scope_insufficient',
      ]);
      expect(await poll(await tokenFor(h, c, { scope: needs.join(' ') }), taskId)).toEqual([
        'ok',
        'task_not_ready',
      ]);
    }
  });

  it("a hosted tenant's tasks: the same rule, with tokens for the tenant's host", async () => {
    await allowClient(h, { mode: 'hosted', id: 'acme' }, c);
    const full = await tokenAt(h, c, ACME);
    const { name, arguments: args } = TASK_TOOLS.extractFacts(c.namespace);
    const started = await rpc(h, full, 'tools/call', { name, arguments: args }, { headers: { Host: ACME } });
    expect(started.body.result?.mode, JSON.stringify(started.body)).toBe('task');
    const taskId = started.body.result.task.taskId as string;
    const pollAt = async (token: string, host: string) => {
      const verdicts: string[] = [];
      for (const method of ['tasks/get', 'tasks/result']) {
        const res = await rpc(h, token, method, { taskId }, { headers: { Host: host } });
        verdicts.push(res.body.error ? res.body.error.data.reason : 'ok');
      }
      return verdicts;
    };
    for (const scope of [SCOPES.stmRead, SCOPES.ltmWrite, `${SCOPES.stmRead} ${SCOPES.stmWrite}`]) {
      expect(await pollAt(await tokenAt(h, c, ACME, { scope }), ACME)).toEqual([
        'scope_insufficient',
        'scope_insufficient',
      ]);
    }
    expect(
      await pollAt(await tokenAt(h, c, ACME, { scope: `${SCOPES.stmRead} ${SCOPES.ltmWrite}` }), ACME),
    ).toEqual(['ok', 'task_not_ready']);
    // The task lives in the tenant's storage: the development backend does not know it.
    expect(await poll(c.token, taskId)).toEqual(['task_not_found', 'task_not_found']);
  });

  it('another client holding every scope still gets task_not_found (tasks stay subject-scoped)', async () => {
    const taskId = await startTask('summarize');
    const other = await clientWithToken(h);
    expect(await poll(other.token, taskId)).toEqual(['task_not_found', 'task_not_found']);
  });
});
