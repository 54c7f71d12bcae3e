import { z } from 'zod';

// The seed's thirteen reject reasons (mcp-edge.md, Errors) with the wire form decisions.md gives them,
// plus the edge's own reasons for failures the seed leaves unnamed (auth, origin, protocol).

export const RejectReasonSchema = z.enum([
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
]);
export type RejectReason = z.infer<typeof RejectReasonSchema>;

export const EdgeErrorReasonSchema = z.enum([
  /** Bearer token missing, malformed, expired, wrong issuer/audience or bad signature. */
  'token_invalid',
  /** Origin header present and not allowed. */
  'origin_not_allowed',
  /** Body is not JSON. */
  'parse_error',
  /** Body is not a single JSON-RPC request (a batch, or a broken envelope). */
  'invalid_request',
  /** Unknown JSON-RPC method or tool name. */
  'method_not_found',
  /** Request carries an unsupported MCP-Protocol-Version, Accept or Content-Type. */
  'transport_invalid',
  /**
   * A tunnel session's local runtime is not connected, lost its connection during the call, or did not
   * answer within the edge's tunnel timeout. Retryable: the runtime reconnects by itself.
   */
  'tunnel_unavailable',
  /**
   * A skill:// resource or a registry package the edge does not serve: no such package, version or file,
   * or a package that is delisted, quarantined or removed (`data.uri` names the resource).
   */
  'resource_not_found',
  /** The registry did not answer (unreachable, timed out, 5xx). Retryable. */
  'registry_unavailable',
  /**
   * A service the edge needs (PostgreSQL, Redis) is down or restarting. Retryable: HTTP 503 with
   * Retry-After, and `data.retryAfterSeconds`.
   */
  'service_unavailable',
  /** Unexpected failure; details are in the logs under the request id. */
  'internal_error',
  /** MCP 2026-07-28: a routing header (MCP-Protocol-Version, Mcp-Method, Mcp-Name) absent or not the body's. */
  'header_mismatch',
  /** MCP 2026-07-28: the request needs a client capability its `_meta` did not declare. */
  'capability_missing',
  /** MCP 2026-07-28: the request's `_meta` names a protocol version this endpoint does not serve. */
  'protocol_version_unsupported',
]);
export type EdgeErrorReason = z.infer<typeof EdgeErrorReasonSchema>;

export type ErrorReason = RejectReason | EdgeErrorReason;

export interface ReasonWireForm {
  /** JSON-RPC error code. */
  code: number;
  /** HTTP status of the response carrying the error. */
  httpStatus: number;
  /** Default message. */
  message: string;
}

/** decisions.md, "Admission order and wire form". */
export const ERROR_WIRE_FORMS: Record<ErrorReason, ReasonWireForm> = {
  deployment_not_resolved: { code: -32011, httpStatus: 421, message: 'No deployment serves this host' },
  origin_not_allowed: { code: -32002, httpStatus: 403, message: 'Origin not allowed' },
  token_invalid: { code: -32001, httpStatus: 401, message: 'Missing or invalid bearer token' },
  parse_error: { code: -32700, httpStatus: 400, message: 'Parse error' },
  invalid_request: { code: -32600, httpStatus: 400, message: 'Invalid request' },
  transport_invalid: { code: -32600, httpStatus: 400, message: 'Unsupported transport headers' },
  scope_insufficient: { code: -32003, httpStatus: 403, message: 'Insufficient scope' },
  quota_exceeded: { code: -32009, httpStatus: 429, message: 'Quota exceeded' },
  rate_limited: { code: -32010, httpStatus: 429, message: 'Rate limited' },
  request_schema_invalid: { code: -32602, httpStatus: 200, message: 'Invalid params' },
  task_not_found: { code: -32602, httpStatus: 200, message: 'Task not found' },
  method_not_found: { code: -32601, httpStatus: 200, message: 'Method not found' },
  namespace_unauthorized: { code: -32004, httpStatus: 200, message: 'Namespace not authorized' },
  memory_binding_forbidden: {
    code: -32005,
    httpStatus: 200,
    message: 'Memory binding not allowed for this agent',
  },
  agent_not_available: { code: -32006, httpStatus: 200, message: 'Agent not available' },
  task_not_ready: { code: -32007, httpStatus: 200, message: 'Task result not ready' },
  source_quarantined: { code: -32008, httpStatus: 200, message: 'Source is quarantined' },
  tunnel_envelope_invalid: { code: -32012, httpStatus: 200, message: 'Tunnel envelope invalid' },
  tunnel_replay_detected: { code: -32013, httpStatus: 200, message: 'Tunnel replay detected' },
  tunnel_unavailable: { code: -32014, httpStatus: 503, message: 'Local runtime unavailable' },
  // -32602 as SEP-2164 has it (MCP 2025-11-25 suggested -32002, which origin_not_allowed holds here).
  resource_not_found: { code: -32602, httpStatus: 200, message: 'Resource not found' },
  registry_unavailable: { code: -32015, httpStatus: 503, message: 'Registry unavailable' },
  service_unavailable: {
    code: -32016,
    httpStatus: 503,
    message: 'Service temporarily unavailable, try again shortly',
  },
  internal_error: { code: -32603, httpStatus: 500, message: 'Internal error' },
  // The codes MCP 2026-07-28 defines (basic/index, Error Codes), always with HTTP 400.
  header_mismatch: {
    code: -32020,
    httpStatus: 400,
    message: 'Bad Request: the request headers and body disagree',
  },
  capability_missing: { code: -32021, httpStatus: 400, message: 'Missing required client capabilities' },
  protocol_version_unsupported: { code: -32022, httpStatus: 400, message: 'Unsupported protocol version' },
};

/**
 * A request refused for a documented reason. Thrown by services and packages (memory, tasks, edge);
 * the edge's one error writer turns it into the wire form of ERROR_WIRE_FORMS. Never carries secrets.
 */
export class RejectError extends Error {
  readonly reason: ErrorReason;
  /** Extra fields for `error.data` (e.g. `retryAfterSeconds`, `requiredScopes`, `issues`). */
  readonly details: Record<string, unknown>;

  constructor(reason: ErrorReason, message?: string, details: Record<string, unknown> = {}) {
    super(message ?? ERROR_WIRE_FORMS[reason].message);
    this.name = 'RejectError';
    this.reason = reason;
    this.details = details;
  }
}
