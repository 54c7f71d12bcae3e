import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  AGENT_CATALOG,
  AgentCatalogEntrySchema,
  AgentsInvokeArgsSchema,
  AgentsInvokeResultSchema,
  AgentsListArgsSchema,
  AgentsListResultSchema,
  ALL_SCOPES,
  deriveDelegatedNamespace,
  deriveNamespace,
  ENGINEERING_WORKFLOW_AGENT_ID,
  findAgent,
  forbiddenBindingTiers,
  InitializeParamsSchema,
  InitializeResultSchema,
  MAX_INVOKE_INPUT_BYTES,
  MCP_PROTOCOL_VERSION,
  MEMORY_LIMITS,
  MemoryCompactArgsSchema,
  MemoryCompactResultSchema,
  MemoryDeleteArgsSchema,
  MemoryDeleteResultSchema,
  type MemoryEntry,
  MemoryEntrySchema,
  MemoryGetArgsSchema,
  MemoryGetResultSchema,
  MemoryPutArgsSchema,
  MemoryPutResultSchema,
  MemorySearchArgsSchema,
  MemorySearchResultSchema,
  memoryScope,
  NamespaceSchema,
  SCOPE_DESCRIPTIONS,
  SCOPES,
  type Scope,
  ScopeSchema,
  SystemInfoArgsSchema,
  type SystemInfoResult,
  SystemInfoResultSchema,
  TaskRecordSchema,
  TaskStatusSchema,
  TasksResultResultSchema,
  TOOL_NAMES,
  ToolDescriptorSchema,
  ToolsCallParamsSchema,
  ToolsListResultSchema,
} from '../src/index.js';

const ns = `app:${'0123456789abcdef'.repeat(4)}`;
const otherNs = `app:${'f'.repeat(64)}`;
const now = '2026-11-21T11:00:00.000Z';
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

const entry: MemoryEntry = {
  entryId: randomUUID(),
  namespace: ns,
  tier: 'ltm',
  content: 'The team deploys with blue/green on Fridays only after 10:00 UTC.',
  tags: ['deploy', 'policy'],
  metadata: { source: 'standup', confidence: 'high' },
  status: 'active',
  supersedesEntryId: null,
  supersededByEntryId: null,
  createdAt: now,
  updatedAt: now,
  deletedAt: null,
};

describe('mcp-edge.md: Namespace', () => {
  it.each([ns, otherNs])('accepts %s', (value) => {
    expect(NamespaceSchema.safeParse(value).success).toBe(true);
  });

  it.each([
    ['uppercase hex', `app:${'A'.repeat(64)}`],
    ['63 hex', `app:${'a'.repeat(63)}`],
    ['65 hex', `app:${'a'.repeat(65)}`],
    ['non-hex', `app:${'g'.repeat(64)}`],
    ['other prefix', `usr:${'a'.repeat(64)}`],
    ['no prefix', 'a'.repeat(64)],
    ['trailing newline', `app:${'a'.repeat(64)}\n`],
  ])('rejects %s', (_label, value) => {
    expect(NamespaceSchema.safeParse(value).success).toBe(false);
  });

  it('deriveNamespace: app: + sha256 hex of "<issuer>|<client>", as node:crypto computes it', () => {
    // Multi-byte text is hashed as UTF-8. The identity is the joined string (decisions.md), so ("a|b", "c")
    // and ("a", "b|c") derive one namespace, as they always have.
    const cases: Array<[string, string]> = [
      ['http://localhost:4100/mcp', 'client-1'],
      ['https://token.actions.githubusercontent.com', 'repo:acme/skills:ref:refs/heads/main'],
      ['https://idp.example/', 'ünïcödé-☃-😀'],
      ['', ''],
      ['a|b', 'c'],
      ['a', 'b|c'],
    ];
    const derived = cases.map(([issuer, client]) => deriveNamespace(issuer, client));
    for (const [i, [issuer, client]] of cases.entries()) {
      const hex = createHash('sha256').update(`${issuer}|${client}`).digest('hex');
      expect(derived[i]).toBe(`app:${hex}`);
      expect(NamespaceSchema.safeParse(derived[i]).success).toBe(true);
    }
    expect(new Set(derived).size).toBe(cases.length - 1); // "a|b|c" twice: the same identity string
  });

  it('deriveDelegatedNamespace: the issuer, the client and the person together', () => {
    const issuer = 'http://localhost:4100/mcp';
    const hex = createHash('sha256').update(`${issuer}|https://app.example/client.json|acct_1`).digest('hex');
    expect(deriveDelegatedNamespace(issuer, 'https://app.example/client.json', 'acct_1')).toBe(`app:${hex}`);
    // Two apps of one person, two people of one app, and the app's own client-credentials identity differ.
    const namespaces = [
      deriveDelegatedNamespace(issuer, 'app-a', 'acct_1'),
      deriveDelegatedNamespace(issuer, 'app-b', 'acct_1'),
      deriveDelegatedNamespace(issuer, 'app-a', 'acct_2'),
      deriveNamespace(issuer, 'app-a'),
    ];
    expect(new Set(namespaces).size).toBe(4);
  });

  it('describes every scope in plain words', () => {
    for (const scope of ALL_SCOPES) {
      const text = SCOPE_DESCRIPTIONS[scope as Scope];
      expect(text, scope).toMatch(/^[A-Z][^.]{10,80}$/);
      expect(text).not.toContain('pkgreg.');
    }
    expect(new Set(Object.values(SCOPE_DESCRIPTIONS)).size).toBe(ALL_SCOPES.length);
  });
});

describe('decisions.md: Memory scopes and mcp-edge.md: Authentication', () => {
  it('has exactly the nine pkgreg scopes', () => {
    expect([...ALL_SCOPES].sort()).toEqual(
      [
        'pkgreg.system.read',
        'pkgreg.agents.invoke',
        'pkgreg.memory.stm.read',
        'pkgreg.memory.stm.write',
        'pkgreg.memory.stm.delete',
        'pkgreg.memory.ltm.read',
        'pkgreg.memory.ltm.write',
        'pkgreg.memory.ltm.delete',
        'pkgreg.registry.read',
      ].sort(),
    );
    expect(SCOPES.systemRead).toBe('pkgreg.system.read');
    expect(SCOPES.agentsInvoke).toBe('pkgreg.agents.invoke');
  });

  it.each([
    ['stm', 'read'],
    ['stm', 'write'],
    ['stm', 'delete'],
    ['ltm', 'read'],
    ['ltm', 'write'],
    ['ltm', 'delete'],
  ] as const)('memoryScope(%s, %s) is a known scope', (tier, action) => {
    const scope = memoryScope(tier, action);
    expect(scope).toBe(`pkgreg.memory.${tier}.${action}`);
    expect(ScopeSchema.safeParse(scope).success).toBe(true);
  });

  it('rejects the seed stand-in prefix and unknown scopes', () => {
    expect(ScopeSchema.safeParse('pub.system.read').success).toBe(false);
    expect(ScopeSchema.safeParse('pkgreg.memory.promoted.read').success).toBe(false);
  });

  it('tool names are the ten pkgreg.* v1 tools', () => {
    expect(Object.values(TOOL_NAMES).sort()).toEqual(
      [
        'pkgreg.memory.v1.put',
        'pkgreg.memory.v1.get',
        'pkgreg.memory.v1.search',
        'pkgreg.memory.v1.delete',
        'pkgreg.memory.v1.compact',
        'pkgreg.agents.v1.list',
        'pkgreg.agents.v1.invoke',
        'pkgreg.system.v1.info',
        'pkgreg.registry.v1.search',
        'pkgreg.registry.v1.get',
      ].sort(),
    );
  });
});

describe('mcp-edge.md: POST /mcp initialize', () => {
  it('accepts the spec params, unknown keys kept', () => {
    const params = {
      protocolVersion: MCP_PROTOCOL_VERSION,
      clientInfo: { name: 'inspector', version: '0.9.0' },
      capabilities: {},
    };
    expect(InitializeParamsSchema.parse(params)).toEqual(params);
    expect(MCP_PROTOCOL_VERSION).toBe('2025-11-25');
  });

  it.each([
    ['no protocolVersion', { clientInfo: { name: 'x', version: '1' } }],
    ['empty protocolVersion', { protocolVersion: '', clientInfo: { name: 'x', version: '1' } }],
    ['no clientInfo', { protocolVersion: MCP_PROTOCOL_VERSION }],
    ['clientInfo without version', { protocolVersion: MCP_PROTOCOL_VERSION, clientInfo: { name: 'x' } }],
  ])('rejects %s', (_label, params) => {
    expect(InitializeParamsSchema.safeParse(params).success).toBe(false);
  });

  it('result carries protocolVersion, serverInfo and capabilities {tools, resources, tasks}', () => {
    const resources = { subscribe: false, listChanged: false };
    const result = {
      protocolVersion: MCP_PROTOCOL_VERSION,
      serverInfo: { name: 'pkgreg-mcp-edge', version: '0.1.0' },
      capabilities: { tools: { listChanged: false }, resources, tasks: {} },
    };
    expect(InitializeResultSchema.parse(result)).toEqual(result);
    const listChanged = { ...result, capabilities: { tools: { listChanged: true }, resources, tasks: {} } };
    expect(InitializeResultSchema.safeParse(listChanged).success).toBe(false);
    expect(InitializeResultSchema.safeParse({ ...result, serverInfo: { name: 'x' } }).success).toBe(false);
  });
});

describe('mcp-edge.md: Tool descriptor and tools/list, tools/call', () => {
  const descriptor = {
    name: TOOL_NAMES.systemInfo,
    version: '1.0.0',
    description: 'Read public-safe runtime metadata.',
    capabilities: ['external'],
    permissionScope: 'external',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    outputSchema: { type: 'object', properties: { server: { type: 'object' } } },
  };

  it('accepts the spec shape', () => {
    expect(ToolDescriptorSchema.parse(descriptor)).toEqual(descriptor);
    expect(ToolsListResultSchema.parse({ tools: [descriptor] })).toEqual({ tools: [descriptor] });
  });

  it.each([
    'name',
    'version',
    'description',
    'capabilities',
    'permissionScope',
    'inputSchema',
    'outputSchema',
  ])('requires %s', (field) => {
    const copy: Record<string, unknown> = { ...descriptor };
    delete copy[field];
    expect(ToolDescriptorSchema.safeParse(copy).success).toBe(false);
  });

  it('tools/call params: name and arguments (arguments default {})', () => {
    expect(ToolsCallParamsSchema.parse({ name: TOOL_NAMES.agentsList })).toEqual({
      name: TOOL_NAMES.agentsList,
      arguments: {},
    });
    expect(ToolsCallParamsSchema.safeParse({ name: '' }).success).toBe(false);
    expect(ToolsCallParamsSchema.safeParse({ name: 'x', arguments: [] }).success).toBe(false);
  });
});

describe('mcp-edge.md: Agent catalog entry and current catalog', () => {
  it('AGENT_CATALOG is exactly engineering.workflow: text/packet/json, ltm read, stm write', () => {
    expect(AGENT_CATALOG).toHaveLength(1);
    const [agent] = AGENT_CATALOG;
    expect(AgentCatalogEntrySchema.parse(agent)).toEqual(agent);
    expect(agent?.agentId).toBe('engineering.workflow');
    expect(ENGINEERING_WORKFLOW_AGENT_ID).toBe('engineering.workflow');
    expect([...(agent?.inputModes ?? [])].sort()).toEqual(['json', 'packet', 'text']);
    expect(agent?.memoryBinding).toEqual({ supported: true, readTiers: ['ltm'], writeTiers: ['stm'] });
    expect(agent?.execution.asyncThreshold).toBe('long_running_only');
    // Invoke has task support `optional` in the Tools table.
    expect(agent?.execution.taskSupport).toBe('optional');
  });

  it('findAgent finds only catalogued agents (agent_not_available otherwise)', () => {
    expect(findAgent('engineering.workflow')?.agentId).toBe('engineering.workflow');
    expect(findAgent('engineering.other')).toBeUndefined();
  });

  it('forbiddenBindingTiers lists tiers outside the agent binding (memory_binding_forbidden)', () => {
    const agent = findAgent(ENGINEERING_WORKFLOW_AGENT_ID);
    if (!agent) throw new Error('catalog lost its agent');
    expect(forbiddenBindingTiers(agent, { readTiers: ['ltm'], writeTiers: ['stm'] })).toEqual([]);
    expect(forbiddenBindingTiers(agent, { readTiers: [], writeTiers: [] })).toEqual([]);
    expect(forbiddenBindingTiers(agent, { readTiers: ['stm'], writeTiers: ['ltm'] })).toEqual([
      'read:stm',
      'write:ltm',
    ]);
  });

  it.each([
    ['unknown input mode', { inputModes: ['audio'] }],
    ['unknown tier', { memoryBinding: { supported: true, readTiers: ['promoted'], writeTiers: [] } }],
    ['unknown taskSupport', { execution: { taskSupport: 'required', asyncThreshold: 'long_running_only' } }],
  ])('rejects %s', (_label, patch) => {
    expect(AgentCatalogEntrySchema.safeParse({ ...AGENT_CATALOG[0], ...patch }).success).toBe(false);
  });

  it('list takes an empty object and returns {agents}', () => {
    expect(AgentsListArgsSchema.parse({})).toEqual({});
    expect(AgentsListArgsSchema.safeParse({ page: 1 }).success).toBe(false);
    expect(AgentsListResultSchema.parse({ agents: AGENT_CATALOG })).toEqual({ agents: AGENT_CATALOG });
  });
});

describe('mcp-edge.md: pkgreg.agents.v1.invoke arguments (decisions.md: Invoke, Agent engineering.workflow)', () => {
  const base = { agentId: 'engineering.workflow', input: { type: 'text', text: 'Plan a release' } };

  it('executionMode defaults to sync', () => {
    expect(AgentsInvokeArgsSchema.parse(base).executionMode).toBe('sync');
    expect(AgentsInvokeArgsSchema.parse({ ...base, executionMode: 'async' }).executionMode).toBe('async');
    expect(AgentsInvokeArgsSchema.safeParse({ ...base, executionMode: 'background' }).success).toBe(false);
  });

  it.each([
    ['text', { type: 'text', text: 'Plan a release of the CLI' }],
    ['json', { type: 'json', json: { goal: 'release', steps: 3 } }],
    [
      'packet',
      { type: 'packet', packet: { goal: 'Ship v2', constraints: ['no downtime'], context: 'monorepo' } },
    ],
    ['packet with goal only', { type: 'packet', packet: { goal: 'Ship v2' } }],
  ])('accepts %s input', (_label, input) => {
    expect(AgentsInvokeArgsSchema.parse({ ...base, input }).input).toEqual(input);
  });

  it.each([
    ['unknown type', { type: 'audio', data: 'x' }],
    ['text without text', { type: 'text' }],
    ['packet without goal', { type: 'packet', packet: { constraints: [] } }],
    ['packet with extra field', { type: 'packet', packet: { goal: 'x', secret: 'y' } }],
    ['text as string', 'Plan a release'],
  ])('rejects %s input', (_label, input) => {
    expect(AgentsInvokeArgsSchema.safeParse({ ...base, input }).success).toBe(false);
  });

  it('input is at most 8192 bytes serialized, counting multi-byte chars as bytes', () => {
    expect(MAX_INVOKE_INPUT_BYTES).toBe(8192);
    const overhead = bytes(JSON.stringify({ type: 'text', text: '' }));
    const fits = { type: 'text', text: 'a'.repeat(8192 - overhead) };
    expect(bytes(JSON.stringify(fits))).toBe(8192);
    expect(AgentsInvokeArgsSchema.safeParse({ ...base, input: fits }).success).toBe(true);
    const over = { type: 'text', text: 'a'.repeat(8193 - overhead) };
    expect(AgentsInvokeArgsSchema.safeParse({ ...base, input: over }).success).toBe(false);
    // 3000 '€' are 3000 chars but 9000 bytes.
    const multiByte = { type: 'text', text: '€'.repeat(3000) };
    expect(JSON.stringify(multiByte).length).toBeLessThan(8192);
    expect(AgentsInvokeArgsSchema.safeParse({ ...base, input: multiByte }).success).toBe(false);
  });

  it('memory binding: namespace pattern, tiers stm/ltm', () => {
    const withMemory = { ...base, memory: { namespace: ns, readTiers: ['ltm'], writeTiers: ['stm'] } };
    expect(AgentsInvokeArgsSchema.parse(withMemory).memory).toEqual(withMemory.memory);
    expect(
      AgentsInvokeArgsSchema.safeParse({ ...base, memory: { namespace: 'app:xyz', readTiers: ['ltm'] } })
        .success,
    ).toBe(false);
    expect(
      AgentsInvokeArgsSchema.safeParse({ ...base, memory: { namespace: ns, readTiers: ['promoted'] } })
        .success,
    ).toBe(false);
  });

  it('rejects unknown top-level arguments and a missing agentId', () => {
    expect(AgentsInvokeArgsSchema.safeParse({ ...base, model: 'gpt' }).success).toBe(false);
    expect(AgentsInvokeArgsSchema.safeParse({ input: base.input }).success).toBe(false);
  });

  it('result: async acceptance {mode: task, task} and sync completion {mode: completed, runId, outputs}', () => {
    const task = { mode: 'task', task: { taskId: randomUUID(), status: 'queued', runId: randomUUID() } };
    expect(AgentsInvokeResultSchema.parse(task)).toEqual(task);
    const completed = {
      mode: 'completed',
      runId: randomUUID(),
      outputs: [
        { type: 'text', text: 'Plan: 1. build 2. test' },
        { type: 'text', text: '{"steps":[]}' },
      ],
    };
    expect(AgentsInvokeResultSchema.parse(completed)).toEqual(completed);
    expect(AgentsInvokeResultSchema.safeParse({ mode: 'completed', runId: randomUUID() }).success).toBe(
      false,
    );
    expect(
      AgentsInvokeResultSchema.safeParse({ ...completed, outputs: [{ type: 'image', text: 'x' }] }).success,
    ).toBe(false);
  });
});

describe('decisions.md: Memory entry', () => {
  it('accepts an active entry and a superseded one', () => {
    expect(MemoryEntrySchema.parse(entry)).toEqual(entry);
    const superseded = { ...entry, status: 'superseded', supersededByEntryId: randomUUID() };
    expect(MemoryEntrySchema.safeParse(superseded).success).toBe(true);
    const deleted = { ...entry, status: 'deleted', deletedAt: now };
    expect(MemoryEntrySchema.safeParse(deleted).success).toBe(true);
  });

  it('has exactly the fields decisions.md lists', () => {
    expect(Object.keys(MemoryEntrySchema.shape).sort()).toEqual(
      [
        'entryId',
        'namespace',
        'tier',
        'content',
        'tags',
        'metadata',
        'status',
        'supersedesEntryId',
        'supersededByEntryId',
        'createdAt',
        'updatedAt',
        'deletedAt',
      ].sort(),
    );
  });

  it.each([
    ['status', 'archived'],
    ['tier', 'promoted'],
    ['entryId', '123'],
    ['metadata', { n: 1 }],
    ['namespace', 'app:short'],
  ])('rejects %s = %j', (field, value) => {
    expect(MemoryEntrySchema.safeParse({ ...entry, [field]: value }).success).toBe(false);
  });
});

describe('mcp-edge.md: pkgreg.memory.v1.put (decisions.md: limits)', () => {
  const put = { namespace: ns, tier: 'stm', content: 'note' };

  it('defaults to append with no tags and no metadata', () => {
    expect(MemoryPutArgsSchema.parse(put)).toEqual({ ...put, mode: 'append', tags: [], metadata: {} });
  });

  it('supersede requires supersedesEntryId, and only supersede allows it', () => {
    const id = randomUUID();
    expect(MemoryPutArgsSchema.safeParse({ ...put, mode: 'supersede', supersedesEntryId: id }).success).toBe(
      true,
    );
    const missing = MemoryPutArgsSchema.safeParse({ ...put, mode: 'supersede' });
    expect(missing.success).toBe(false);
    expect(missing.error?.issues[0]?.path).toEqual(['supersedesEntryId']);
    expect(MemoryPutArgsSchema.safeParse({ ...put, supersedesEntryId: id }).success).toBe(false);
    expect(MemoryPutArgsSchema.safeParse({ ...put, mode: 'supersede', supersedesEntryId: 'x' }).success).toBe(
      false,
    );
  });

  it('content is at most 16384 BYTES, multi-byte chars counted as bytes', () => {
    expect(MEMORY_LIMITS.maxContentBytes).toBe(16384);
    const exact = `${'€'.repeat(5461)}a`; // 16383 + 1 bytes
    expect(bytes(exact)).toBe(16384);
    expect(MemoryPutArgsSchema.safeParse({ ...put, content: exact }).success).toBe(true);
    expect(MemoryPutArgsSchema.safeParse({ ...put, content: `${exact}a` }).success).toBe(false);
    const fewCharsManyBytes = '😀'.repeat(4097); // 8194 UTF-16 units, 16388 bytes
    expect(fewCharsManyBytes.length).toBeLessThan(16384);
    expect(MemoryPutArgsSchema.safeParse({ ...put, content: fewCharsManyBytes }).success).toBe(false);
    expect(MemoryPutArgsSchema.safeParse({ ...put, content: 'a'.repeat(16384) }).success).toBe(true);
    expect(MemoryPutArgsSchema.safeParse({ ...put, content: 'a'.repeat(16385) }).success).toBe(false);
  });

  it('at most 32 tags of at most 64 chars', () => {
    const tags32 = Array.from({ length: 32 }, (_, i) => `tag-${i}`);
    expect(MemoryPutArgsSchema.safeParse({ ...put, tags: tags32 }).success).toBe(true);
    expect(MemoryPutArgsSchema.safeParse({ ...put, tags: [...tags32, 'one-more'] }).success).toBe(false);
    expect(MemoryPutArgsSchema.safeParse({ ...put, tags: ['t'.repeat(64)] }).success).toBe(true);
    expect(MemoryPutArgsSchema.safeParse({ ...put, tags: ['t'.repeat(65)] }).success).toBe(false);
  });

  it('at most 32 metadata keys with string values of at most 1024 chars', () => {
    const meta32 = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, 'v']));
    expect(MemoryPutArgsSchema.safeParse({ ...put, metadata: meta32 }).success).toBe(true);
    expect(MemoryPutArgsSchema.safeParse({ ...put, metadata: { ...meta32, k32: 'v' } }).success).toBe(false);
    expect(MemoryPutArgsSchema.safeParse({ ...put, metadata: { k: 'v'.repeat(1024) } }).success).toBe(true);
    expect(MemoryPutArgsSchema.safeParse({ ...put, metadata: { k: 'v'.repeat(1025) } }).success).toBe(false);
    expect(MemoryPutArgsSchema.safeParse({ ...put, metadata: { k: 1 } }).success).toBe(false);
  });

  it.each([
    ['tier promoted', { tier: 'promoted' }],
    ['bad namespace', { namespace: 'app:abc' }],
    ['empty content', { content: '' }],
    ['unknown mode', { mode: 'upsert' }],
    ['unknown argument', { ttl: 60 }],
    ['empty idempotencyKey', { idempotencyKey: '' }],
  ])('rejects %s', (_label, patch) => {
    expect(MemoryPutArgsSchema.safeParse({ ...put, ...patch }).success).toBe(false);
  });

  it('result carries the entry and the superseded id', () => {
    const result = { entry, supersededEntryId: null };
    expect(MemoryPutResultSchema.parse(result)).toEqual(result);
  });
});

describe('decisions.md: pkgreg.memory.v1.get / search / delete', () => {
  it('get takes {namespace, entryId}', () => {
    const args = { namespace: ns, entryId: randomUUID() };
    expect(MemoryGetArgsSchema.parse(args)).toEqual(args);
    expect(MemoryGetArgsSchema.safeParse({ namespace: ns }).success).toBe(false);
    expect(MemoryGetArgsSchema.safeParse({ ...args, tier: 'stm' }).success).toBe(false);
    expect(MemoryGetResultSchema.parse({ entry })).toEqual({ entry });
  });

  it('search: topK 1..50, default 10; tiers and tags optional', () => {
    const args = { namespace: ns, query: 'deploy policy' };
    expect(MemorySearchArgsSchema.parse(args)).toEqual({ ...args, topK: 10 });
    expect(MemorySearchArgsSchema.parse({ ...args, topK: 1 }).topK).toBe(1);
    expect(MemorySearchArgsSchema.parse({ ...args, topK: 50 }).topK).toBe(50);
    expect(MemorySearchArgsSchema.safeParse({ ...args, topK: 0 }).success).toBe(false);
    expect(MemorySearchArgsSchema.safeParse({ ...args, topK: 51 }).success).toBe(false);
    expect(MemorySearchArgsSchema.safeParse({ ...args, topK: 2.5 }).success).toBe(false);
    expect(MemorySearchArgsSchema.parse({ ...args, tiers: ['stm', 'ltm'], tags: ['deploy'] })).toMatchObject({
      tiers: ['stm', 'ltm'],
      tags: ['deploy'],
    });
    expect(MemorySearchArgsSchema.safeParse({ ...args, tiers: ['promoted'] }).success).toBe(false);
    expect(MemorySearchArgsSchema.safeParse({ namespace: ns }).success).toBe(false);
  });

  it('search result is {results: [{entry, score}], total}', () => {
    const result = { results: [{ entry, score: 0.82 }], total: 1 };
    expect(MemorySearchResultSchema.parse(result)).toEqual(result);
    expect(MemorySearchResultSchema.safeParse({ results: [{ entry }], total: 1 }).success).toBe(false);
  });

  it('delete takes {namespace, entryId, idempotencyKey?}', () => {
    const args = { namespace: ns, entryId: randomUUID(), idempotencyKey: 'del-1' };
    expect(MemoryDeleteArgsSchema.parse(args)).toEqual(args);
    expect(MemoryDeleteArgsSchema.safeParse({ namespace: ns, entryId: 'nope' }).success).toBe(false);
    const deleted = { entry: { ...entry, status: 'deleted', deletedAt: now } };
    expect(MemoryDeleteResultSchema.parse(deleted)).toEqual(deleted);
  });
});

describe('mcp-edge.md: pkgreg.memory.v1.compact', () => {
  it('accepts summarize and extract_facts; sourceTier stm by default', () => {
    const args = { namespace: ns, strategy: 'extract_facts', maxEntries: 20, idempotencyKey: 'c-1' };
    expect(MemoryCompactArgsSchema.parse(args)).toEqual({
      ...args,
      sourceTier: 'stm',
      executionMode: 'sync',
    });
    expect(MemoryCompactArgsSchema.parse({ namespace: ns, strategy: 'summarize' })).toMatchObject({
      sourceTier: 'stm',
      strategy: 'summarize',
    });
  });

  it.each([
    ['unknown strategy', { strategy: 'compress' }],
    ['ltm source tier', { strategy: 'summarize', sourceTier: 'ltm' }],
    ['maxEntries 0', { strategy: 'summarize', maxEntries: 0 }],
    ['maxEntries not an integer', { strategy: 'summarize', maxEntries: 1.5 }],
    ['no strategy', {}],
  ])('rejects %s', (_label, patch) => {
    expect(MemoryCompactArgsSchema.safeParse({ namespace: ns, ...patch }).success).toBe(false);
  });

  it('result: task acceptance or a completed outcome', () => {
    const task = { mode: 'task', task: { taskId: randomUUID(), status: 'queued', runId: randomUUID() } };
    expect(MemoryCompactResultSchema.parse(task)).toEqual(task);
    const done = {
      mode: 'completed',
      runId: randomUUID(),
      strategy: 'summarize',
      sourceEntryIds: [randomUUID()],
      createdEntries: [{ ...entry, tier: 'stm' }],
    };
    expect(MemoryCompactResultSchema.parse(done)).toEqual(done);
    expect(MemoryCompactResultSchema.safeParse({ ...done, mode: 'finished' }).success).toBe(false);
  });
});

describe('mcp-edge.md: System info result', () => {
  const info: SystemInfoResult = {
    server: {
      name: 'pkgreg-mcp-edge',
      phase: 'phase-1',
      backendMode: 'development',
      protocolVersion: MCP_PROTOCOL_VERSION,
    },
    features: { publicAgents: true, publicSystemInfo: true, publicTasks: true, publicCompactAsync: true },
    limits: { maxInvokeInputBytes: 8192, maxSearchTopK: 50, maxTaskPollWindowSeconds: 300 },
    quotas: { invokePerMinute: 10, compactPerMinute: 10 },
    tasks: {
      supportedMethods: ['tasks/get', 'tasks/result'],
      toolSupport: { 'pkgreg.agents.v1.invoke': 'optional', 'pkgreg.memory.v1.compact': 'optional' },
    },
  };

  it('accepts the spec shape; info takes an empty object', () => {
    expect(SystemInfoResultSchema.parse(info)).toEqual(info);
    expect(SystemInfoArgsSchema.parse({})).toEqual({});
    expect(SystemInfoArgsSchema.safeParse({ verbose: true }).success).toBe(false);
  });

  it.each(['phase-1', 'phase-12', 'phase-0'])('phase %s has the phase-<number> form', (phase) => {
    expect(SystemInfoResultSchema.safeParse({ ...info, server: { ...info.server, phase } }).success).toBe(
      true,
    );
  });

  it.each(['phase-', 'phase-one', 'Phase-1', '1', 'phase-1-beta'])('rejects phase %s', (phase) => {
    expect(SystemInfoResultSchema.safeParse({ ...info, server: { ...info.server, phase } }).success).toBe(
      false,
    );
  });

  it.each(['development', 'local_tunnel', 'hosted'])('backendMode %s', (backendMode) => {
    expect(
      SystemInfoResultSchema.safeParse({ ...info, server: { ...info.server, backendMode } }).success,
    ).toBe(true);
  });

  it('rejects an unknown backendMode, a non-integer limit and a non-optional toolSupport', () => {
    expect(
      SystemInfoResultSchema.safeParse({ ...info, server: { ...info.server, backendMode: 'tunnel' } })
        .success,
    ).toBe(false);
    expect(
      SystemInfoResultSchema.safeParse({ ...info, limits: { ...info.limits, maxSearchTopK: 'fifty' } })
        .success,
    ).toBe(false);
    expect(
      SystemInfoResultSchema.safeParse({ ...info, tasks: { ...info.tasks, toolSupport: { x: 'required' } } })
        .success,
    ).toBe(false);
  });
});

describe('mcp-edge.md: Task record, tasks/result (decisions.md: Tasks)', () => {
  const record = {
    taskId: randomUUID(),
    toolName: TOOL_NAMES.agentsInvoke,
    subjectNamespace: ns,
    canonicalRunId: randomUUID(),
    status: 'queued',
    submittedAt: now,
    updatedAt: now,
  };

  it('statuses are queued, running, completed, failed', () => {
    expect(TaskStatusSchema.options).toEqual(['queued', 'running', 'completed', 'failed']);
  });

  it('accepts the task record of the spec', () => {
    expect(TaskRecordSchema.parse(record)).toEqual(record);
  });

  it.each([
    ['taskId', 'task-1'],
    ['canonicalRunId', 'run-1'],
    ['subjectNamespace', 'app:1'],
    ['status', 'cancelled'],
    ['submittedAt', 'now'],
  ])('rejects %s = %j', (field, value) => {
    expect(TaskRecordSchema.safeParse({ ...record, [field]: value }).success).toBe(false);
  });

  it('tasks/result completed carries result {runId, outputs}', () => {
    const done = {
      taskId: record.taskId,
      status: 'completed',
      result: { runId: record.canonicalRunId, outputs: [{ type: 'text', text: 'done' }] },
    };
    expect(TasksResultResultSchema.parse(done)).toEqual(done);
    expect(TasksResultResultSchema.safeParse({ taskId: record.taskId, status: 'completed' }).success).toBe(
      false,
    );
  });

  it('tasks/result failed carries error {reason, message}', () => {
    const failed = {
      taskId: record.taskId,
      status: 'failed',
      error: { reason: 'internal_error', message: 'run failed' },
    };
    expect(TasksResultResultSchema.parse(failed)).toEqual(failed);
    expect(TasksResultResultSchema.safeParse({ taskId: record.taskId, status: 'failed' }).success).toBe(
      false,
    );
  });

  it('tasks/result never reports a non-terminal status (task_not_ready instead)', () => {
    expect(TasksResultResultSchema.safeParse({ taskId: record.taskId, status: 'running' }).success).toBe(
      false,
    );
    expect(TasksResultResultSchema.safeParse({ taskId: record.taskId, status: 'queued' }).success).toBe(
      false,
    );
  });
});
