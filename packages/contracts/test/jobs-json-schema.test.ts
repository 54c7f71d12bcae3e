import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  AgentsInvokeArgsSchema,
  AgentsInvokeResultSchema,
  AgentsListArgsSchema,
  AgentsListResultSchema,
  JOB_CATALOG,
  type JobHandlers,
  type JobName,
  MemoryCompactArgsSchema,
  MemoryCompactResultSchema,
  MemoryDeleteArgsSchema,
  MemoryDeleteResultSchema,
  MemoryGetArgsSchema,
  MemoryGetResultSchema,
  MemoryPutArgsSchema,
  MemoryPutResultSchema,
  MemorySearchArgsSchema,
  MemorySearchResultSchema,
  PackageDetailSchema,
  QUEUES,
  SystemInfoArgsSchema,
  SystemInfoResultSchema,
  TaskRecordSchema,
  toJsonSchema,
} from '../src/index.js';

const ns = `app:${'ab'.repeat(32)}`;

// STYLE.md §10: jobs are declared once in a typed catalog (name -> payload schema, attempts, backoff).
const validPayloads: Record<JobName, unknown> = {
  'agent.invoke': {
    taskId: randomUUID(),
    runId: randomUUID(),
    namespace: ns,
    agentId: 'engineering.workflow',
    input: { type: 'packet', packet: { goal: 'Ship the CLI' } },
    memory: { namespace: ns, readTiers: ['ltm'], writeTiers: ['stm'] },
  },
  'memory.compact': {
    taskId: randomUUID(),
    runId: randomUUID(),
    namespace: ns,
    sourceTier: 'stm',
    strategy: 'extract_facts',
    maxEntries: 50,
  },
  'memory.embed': { namespace: ns, entryIds: [randomUUID()] },
  'registry.index': { locator: 'anthropics/skills', kind: 'github' },
  'registry.reindex-all': {},
  'registry.gc-blobs': {},
  'tasks.purge-expired': {},
};

const invalidPayloads: Partial<Record<JobName, unknown>> = {
  'agent.invoke': { taskId: 'x', runId: randomUUID(), namespace: ns, agentId: 'a', input: { type: 'text' } },
  'memory.compact': { taskId: randomUUID(), runId: randomUUID(), namespace: ns, sourceTier: 'ltm' },
  'memory.embed': { namespace: ns, entryIds: [] },
  'registry.index': { locator: '', kind: 'svn' },
};

describe('STYLE.md §10: job catalog', () => {
  const names = Object.keys(JOB_CATALOG) as JobName[];

  it.each(names)('%s has a schema, a known queue, attempts >= 1 and a backoff', (name) => {
    const job = JOB_CATALOG[name];
    expect(typeof job.schema.safeParse).toBe('function');
    expect(Object.values(QUEUES)).toContain(job.queue);
    expect(Number.isInteger(job.attempts) && job.attempts >= 1).toBe(true);
    expect(['exponential', 'fixed']).toContain(job.backoff.type);
    expect(job.backoff.delay).toBeGreaterThanOrEqual(0);
  });

  it.each(names)('%s validates a realistic payload', (name) => {
    const schema = JOB_CATALOG[name].schema as z.ZodType;
    expect(schema.safeParse(validPayloads[name]).success).toBe(true);
  });

  it.each(Object.keys(invalidPayloads) as JobName[])('%s rejects a broken payload', (name) => {
    const schema = JOB_CATALOG[name].schema as z.ZodType;
    expect(schema.safeParse(invalidPayloads[name]).success).toBe(false);
  });

  it('agent.invoke carries a person to read as by identity only: nothing more fits in', () => {
    const schema = JOB_CATALOG['agent.invoke'].schema;
    const delegation = { subject: 'acct-1', clientId: 'https://agent.example/client.json' };
    expect(schema.safeParse({ ...(validPayloads['agent.invoke'] as object), delegation }).success).toBe(true);
    expect(
      schema.safeParse({
        ...(validPayloads['agent.invoke'] as object),
        delegation: { ...delegation, assertion: 'eyJ.e30.sig' },
      }).success,
    ).toBe(false);
  });

  it('queues are pkgreg-runtime and pkgreg-indexing', () => {
    expect(QUEUES).toEqual({ runtime: 'pkgreg-runtime', indexing: 'pkgreg-indexing' });
  });

  it('JobHandlers needs a handler for every job (typecheck)', () => {
    const handlers: JobHandlers<{ label: string }> = {
      'agent.invoke': async (p) => p.agentId,
      'memory.compact': async (p) => p.strategy,
      'memory.embed': async (p) => p.entryIds,
      'registry.index': async (p) => p.locator,
      'registry.reindex-all': async () => undefined,
      'registry.gc-blobs': async () => undefined,
      'tasks.purge-expired': async () => undefined,
    };
    expect(Object.keys(handlers).sort()).toEqual([...names].sort());
  });
});

const TOOL_SCHEMAS: [string, z.ZodType, z.ZodType][] = [
  ['pkgreg.memory.v1.put', MemoryPutArgsSchema, MemoryPutResultSchema],
  ['pkgreg.memory.v1.get', MemoryGetArgsSchema, MemoryGetResultSchema],
  ['pkgreg.memory.v1.search', MemorySearchArgsSchema, MemorySearchResultSchema],
  ['pkgreg.memory.v1.delete', MemoryDeleteArgsSchema, MemoryDeleteResultSchema],
  ['pkgreg.memory.v1.compact', MemoryCompactArgsSchema, MemoryCompactResultSchema],
  ['pkgreg.agents.v1.list', AgentsListArgsSchema, AgentsListResultSchema],
  ['pkgreg.agents.v1.invoke', AgentsInvokeArgsSchema, AgentsInvokeResultSchema],
  ['pkgreg.system.v1.info', SystemInfoArgsSchema, SystemInfoResultSchema],
];

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

describe('decisions.md: Names / JSON Schema from native z.toJSONSchema (draft 2020-12)', () => {
  it('emits $schema draft 2020-12 and non-empty properties for an object', () => {
    const schema = toJsonSchema(TaskRecordSchema);
    expect(schema.$schema).toBe(DRAFT_2020_12);
    expect(schema.type).toBe('object');
    const properties = schema.properties as Record<string, unknown>;
    expect(Object.keys(properties).sort()).toEqual(
      [
        'taskId',
        'toolName',
        'subjectNamespace',
        'canonicalRunId',
        'status',
        'submittedAt',
        'updatedAt',
        'statusMessage',
      ].sort(),
    );
  });

  it('package detail has all its properties and marks them required', () => {
    const schema = toJsonSchema(PackageDetailSchema);
    const keys = Object.keys(PackageDetailSchema.shape);
    expect(Object.keys(schema.properties as object).sort()).toEqual([...keys].sort());
    expect([...(schema.required as string[])].sort()).toEqual([...keys].sort());
  });

  it.each(TOOL_SCHEMAS)('%s: input and output schemas are 2020-12 objects', (_name, args, result) => {
    const input = toJsonSchema(args, 'input');
    expect(input.$schema).toBe(DRAFT_2020_12);
    expect(input.type).toBe('object');
    expect(input).toHaveProperty('properties');
    const output = toJsonSchema(result);
    expect(output.$schema).toBe(DRAFT_2020_12);
    // Results are objects or unions of objects (mode: task | completed).
    const variants = (output.oneOf ?? output.anyOf ?? [output]) as Record<string, unknown>[];
    for (const variant of variants) {
      expect(variant.type).toBe('object');
      expect(Object.keys(variant.properties as object).length).toBeGreaterThan(0);
    }
  });

  it.each(
    TOOL_SCHEMAS.filter(([name]) => name !== 'pkgreg.agents.v1.list' && name !== 'pkgreg.system.v1.info'),
  )('%s: argument properties are non-empty', (_name, args) => {
    const input = toJsonSchema(args, 'input');
    expect(Object.keys(input.properties as object).length).toBeGreaterThan(0);
  });

  it("io 'input' makes defaulted arguments optional; 'output' requires them", () => {
    const input = toJsonSchema(AgentsInvokeArgsSchema, 'input');
    expect(input.required).toEqual(expect.arrayContaining(['agentId', 'input']));
    expect(input.required).not.toContain('executionMode');
    const output = toJsonSchema(AgentsInvokeArgsSchema, 'output');
    expect(output.required).toContain('executionMode');
  });

  it('strict argument objects forbid additional properties', () => {
    expect(toJsonSchema(MemoryGetArgsSchema, 'input').additionalProperties).toBe(false);
  });

  it('carries the limits into the schema (topK 1..50, default 10)', () => {
    const search = toJsonSchema(MemorySearchArgsSchema, 'input');
    const topK = (search.properties as Record<string, Record<string, unknown>>).topK;
    expect(topK).toMatchObject({ type: 'integer', minimum: 1, maximum: 50, default: 10 });
  });
});
