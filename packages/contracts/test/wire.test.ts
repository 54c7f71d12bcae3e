import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  EdgeErrorReasonSchema,
  ERROR_WIRE_FORMS,
  type ErrorReason,
  JsonRpcErrorResponseSchema,
  JsonRpcNotificationSchema,
  JsonRpcRequestSchema,
  JsonRpcResponseSchema,
  JsonRpcSuccessSchema,
  RejectError,
  RejectReasonSchema,
  TaskIdParamsSchema,
} from '../src/index.js';

describe('mcp-edge.md: POST /mcp JSON-RPC 2.0 envelopes', () => {
  const request = { jsonrpc: '2.0', id: 'req-1', method: 'tools/call', params: { name: 'x', arguments: {} } };

  it('accepts a request with a string id (as shown) and a numeric id (JSON-RPC 2.0)', () => {
    expect(JsonRpcRequestSchema.parse(request)).toEqual(request);
    expect(JsonRpcRequestSchema.safeParse({ ...request, id: 7 }).success).toBe(true);
    expect(JsonRpcRequestSchema.safeParse({ jsonrpc: '2.0', id: '1', method: 'tools/list' }).success).toBe(
      true,
    );
  });

  it.each([
    ['jsonrpc 1.0', { ...request, jsonrpc: '1.0' }],
    ['no jsonrpc', { id: '1', method: 'initialize' }],
    ['no method', { jsonrpc: '2.0', id: '1' }],
    ['empty method', { ...request, method: '' }],
    ['params as array', { ...request, params: [1, 2] }],
    ['null id', { ...request, id: null }],
    ['fractional id', { ...request, id: 1.5 }],
    ['no id (a notification)', { jsonrpc: '2.0', method: 'notifications/initialized' }],
    ['a batch', [request]],
  ])('request rejects %s', (_label, value) => {
    expect(JsonRpcRequestSchema.safeParse(value).success).toBe(false);
  });

  it('a notification has no id', () => {
    expect(
      JsonRpcNotificationSchema.safeParse({ jsonrpc: '2.0', method: 'notifications/initialized' }).success,
    ).toBe(true);
  });

  it('success response: jsonrpc, the same id, result', () => {
    const success = { jsonrpc: '2.0', id: 'req-1', result: { tools: [] } };
    expect(JsonRpcSuccessSchema.parse(success)).toEqual(success);
    expect(JsonRpcResponseSchema.parse(success)).toEqual(success);
    expect(JsonRpcSuccessSchema.safeParse({ jsonrpc: '2.0', id: 'req-1' }).success).toBe(false);
  });

  it('error response: code, message, data.reason and data.requestId (decisions.md: wire form)', () => {
    const error = {
      jsonrpc: '2.0',
      id: 'req-1',
      error: {
        code: -32602,
        message: 'Task not found',
        data: { reason: 'task_not_found', requestId: randomUUID() },
      },
    };
    expect(JsonRpcErrorResponseSchema.parse(error)).toEqual(error);
    expect(JsonRpcResponseSchema.parse(error)).toEqual(error);
    // id is null when the request id could not be read (parse error).
    expect(JsonRpcErrorResponseSchema.safeParse({ ...error, id: null }).success).toBe(true);
    // Extra data fields are allowed next to reason and requestId.
    const extra = {
      ...error,
      error: { ...error.error, data: { ...error.error.data, retryAfterSeconds: 30 } },
    };
    expect(JsonRpcErrorResponseSchema.safeParse(extra).success).toBe(true);
    const noReason = { ...error, error: { ...error.error, data: { requestId: 'r' } } };
    expect(JsonRpcErrorResponseSchema.safeParse(noReason).success).toBe(false);
    const noRequestId = { ...error, error: { ...error.error, data: { reason: 'task_not_found' } } };
    expect(JsonRpcErrorResponseSchema.safeParse(noRequestId).success).toBe(false);
    const stringCode = { ...error, error: { ...error.error, code: '-32602' } };
    expect(JsonRpcErrorResponseSchema.safeParse(stringCode).success).toBe(false);
  });

  it('tasks/get and tasks/result params: taskId (UUID)', () => {
    const taskId = randomUUID();
    expect(TaskIdParamsSchema.parse({ taskId })).toEqual({ taskId });
    expect(TaskIdParamsSchema.safeParse({}).success).toBe(false);
    expect(TaskIdParamsSchema.safeParse({ taskId: 'task-1' }).success).toBe(false);
  });
});

const SEED_REASONS = [
  'scope_insufficient',
  'namespace_unauthorized',
  'memory_binding_forbidden',
  'agent_not_available',
  'task_not_found',
  'task_not_ready',
  'request_schema_invalid',
  'source_quarantined',
  'quota_exceeded',
  'rate_limited',
  'deployment_not_resolved',
  'tunnel_envelope_invalid',
  'tunnel_replay_detected',
] as const;

describe('mcp-edge.md: Errors (the thirteen reject reasons)', () => {
  it('RejectReasonSchema holds exactly the thirteen reasons of the table', () => {
    expect(RejectReasonSchema.options).toHaveLength(13);
    expect([...RejectReasonSchema.options].sort()).toEqual([...SEED_REASONS].sort());
  });

  it("the edge's own reasons never reuse a seed reason", () => {
    for (const reason of EdgeErrorReasonSchema.options) {
      expect(SEED_REASONS as readonly string[]).not.toContain(reason);
    }
  });

  it('every reason, seed or edge, has a wire form', () => {
    const all = [...RejectReasonSchema.options, ...EdgeErrorReasonSchema.options];
    expect(Object.keys(ERROR_WIRE_FORMS).sort()).toEqual([...all].sort());
    for (const reason of all) {
      const form = ERROR_WIRE_FORMS[reason];
      expect(Number.isInteger(form.code)).toBe(true);
      expect(form.message.length).toBeGreaterThan(0);
    }
  });
});

describe('decisions.md: Admission order and wire form', () => {
  it.each([
    ['deployment_not_resolved', 421],
    ['origin_not_allowed', 403],
    ['token_invalid', 401],
    ['parse_error', 400],
    ['invalid_request', 400],
    ['scope_insufficient', 403],
    ['quota_exceeded', 429],
    ['rate_limited', 429],
  ] as const)('%s answers HTTP %i', (reason, status) => {
    expect(ERROR_WIRE_FORMS[reason].httpStatus).toBe(status);
  });

  const others = SEED_REASONS.filter(
    (r) => !['deployment_not_resolved', 'scope_insufficient', 'quota_exceeded', 'rate_limited'].includes(r),
  );
  it.each(others)('every other reject reason (%s) answers HTTP 200', (reason) => {
    expect(ERROR_WIRE_FORMS[reason].httpStatus).toBe(200);
  });

  it('body not JSON is -32700; not a JSON-RPC request or a batch is -32600', () => {
    expect(ERROR_WIRE_FORMS.parse_error.code).toBe(-32700);
    expect(ERROR_WIRE_FORMS.invalid_request.code).toBe(-32600);
  });

  it('-32602 for request_schema_invalid and task_not_found; -32601 for an unknown method or tool', () => {
    expect(ERROR_WIRE_FORMS.request_schema_invalid.code).toBe(-32602);
    expect(ERROR_WIRE_FORMS.task_not_found.code).toBe(-32602);
    expect(ERROR_WIRE_FORMS.method_not_found.code).toBe(-32601);
  });

  const fixedCodeReasons = SEED_REASONS.filter(
    (r) => r !== 'request_schema_invalid' && r !== 'task_not_found',
  );
  it.each(fixedCodeReasons)('%s has a fixed code in -32001..-32019', (reason) => {
    const { code } = ERROR_WIRE_FORMS[reason];
    expect(code).toBeGreaterThanOrEqual(-32019);
    expect(code).toBeLessThanOrEqual(-32001);
  });

  it('"a fixed code each": no two reasons share a code in -32001..-32019', () => {
    const inRange = (Object.entries(ERROR_WIRE_FORMS) as [ErrorReason, { code: number }][]).filter(
      ([, f]) => f.code >= -32019 && f.code <= -32001,
    );
    expect(inRange.length).toBeGreaterThanOrEqual(fixedCodeReasons.length);
    const codes = inRange.map(([, f]) => f.code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('RejectError carries the reason, its default message and details', () => {
    const error = new RejectError('quota_exceeded', undefined, { retryAfterSeconds: 12 });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('RejectError');
    expect(error.reason).toBe('quota_exceeded');
    expect(error.message).toBe(ERROR_WIRE_FORMS.quota_exceeded.message);
    expect(error.details).toEqual({ retryAfterSeconds: 12 });
    expect(new RejectError('task_not_found', 'no such task').message).toBe('no such task');
    expect(new RejectError('task_not_found').details).toEqual({});
  });
});
