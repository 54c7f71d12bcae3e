import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AgentsInvokeArgs,
  InitializeParamsSchema,
  type JsonRpcId,
  RejectError,
  SUPPORTED_PROTOCOL_VERSIONS,
  TaskIdParamsSchema,
  TOOL_NAMES,
  ToolsCallParamsSchema,
} from '@pkgreg/contracts';
import type { Logger } from '@pkgreg/server-kit';
import { getTaskRecord, getTaskResult } from '@pkgreg/tasks';
import type { z } from 'zod';
import type { Backend, BackendResolver } from '../admission/backends.js';
import type { Limiter } from '../admission/limits.js';
import type { OriginPolicy } from '../admission/origin.js';
import type { AuditWriter } from '../audit/audit-writer.js';
import type { Env } from '../env.js';
import type { AuthInfo, TokenVerifier } from '../oauth/verify-token.js';
import type { Runtimes } from '../runtimes.js';
import { readableTiers, type ToolSpec } from '../tools/tool-catalog.js';
import { type Caller, checkInvokeBinding, edgeToolResult, runRuntimeTool } from '../tools/tool-handlers.js';
import { forwardCall } from '../tunnel/tunnel-forward.js';
import { toRejectError, writeRpcError } from './rpc-error.js';
import { enabledTools, initializeResult, systemInfo, toolDescriptor } from './server-info.js';

// POST /mcp: Streamable HTTP in stateless mode with JSON responses. Admission runs in the order of
// decisions.md (host, origin, bearer, request schema, scopes, namespace, quotas) before any tool mapping,
// task lookup or runtime dispatch. Written against node:http directly: this is the hot path.

const MAX_BODY_BYTES = 64 * 1024;

export interface McpHandlerDeps {
  env: Env;
  logger: Logger;
  resolver: BackendResolver;
  origins: OriginPolicy;
  verifier: TokenVerifier;
  limiter: Limiter;
  runtimes: Runtimes;
  audit: AuditWriter;
  resourceMetadataUrl: string;
}

/** Mutable facts about one request, gathered as admission proceeds; they become its audit row. */
interface Exchange {
  requestId: string;
  id: JsonRpcId | null;
  method: string | null;
  tool: string | null;
  backend: Backend | undefined;
  auth: AuthInfo | undefined;
}

type Parsed =
  | { kind: 'request'; id: JsonRpcId; method: string; params: Record<string, unknown> }
  | { kind: 'notification'; method: string | null }
  | { kind: 'invalid'; reason: 'parse_error' | 'invalid_request'; message: string };

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    // Requests almost always arrive in one chunk: keep it as is and decode once, no concat copy.
    let first: Buffer | undefined;
    let more: Buffer[] | undefined;
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new RejectError('invalid_request', 'request body too large', { httpStatus: 413 }));
        req.resume();
        return;
      }
      if (!first) first = chunk;
      else {
        more ??= [first];
        more.push(chunk);
      }
    });
    req.on('end', () =>
      resolve(more ? Buffer.concat(more).toString('utf8') : (first?.toString('utf8') ?? '')),
    );
    req.on('error', reject);
  });
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parseMessage(raw: string): Parsed {
  let message: unknown;
  try {
    message = JSON.parse(raw);
  } catch {
    return { kind: 'invalid', reason: 'parse_error', message: 'body is not valid JSON' };
  }
  if (Array.isArray(message)) {
    return { kind: 'invalid', reason: 'invalid_request', message: 'batches are not supported' };
  }
  if (!isObject(message) || message.jsonrpc !== '2.0') {
    return { kind: 'invalid', reason: 'invalid_request', message: 'not a JSON-RPC 2.0 message' };
  }
  const { id, method, params } = message;
  const hasId = id !== undefined;
  if (hasId && !(typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)))) {
    return { kind: 'invalid', reason: 'invalid_request', message: 'id must be a string or an integer' };
  }
  if (params !== undefined && !isObject(params)) {
    return { kind: 'invalid', reason: 'invalid_request', message: 'params must be an object' };
  }
  if (typeof method === 'string' && method.length > 0) {
    if (!hasId) return { kind: 'notification', method };
    return {
      kind: 'request',
      id: id as JsonRpcId,
      method,
      params: (params as Record<string, unknown>) ?? {},
    };
  }
  // A client's response to a server request: nothing to answer in stateless mode.
  if (hasId && method === undefined && ('result' in message || 'error' in message)) {
    return { kind: 'notification', method: null };
  }
  return { kind: 'invalid', reason: 'invalid_request', message: 'method is required' };
}

function bearerToken(header: string | undefined): string {
  if (!header) throw new RejectError('token_invalid', 'bearer token required', { tokenMissing: true });
  const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(header.trim());
  if (!match?.[1]) throw new RejectError('token_invalid', 'malformed Authorization header');
  return match[1];
}

/** Streamable HTTP headers (MCP 2025-11-25, transports): content type, accepted types, protocol version. */
function checkTransportHeaders(req: IncomingMessage): void {
  const contentType = req.headers['content-type'];
  if (!contentType || !/^application\/json\s*(;|$)/i.test(contentType)) {
    throw new RejectError('transport_invalid', 'Content-Type must be application/json', { httpStatus: 415 });
  }
  const accept = req.headers.accept;
  if (accept && !/(application\/json|application\/\*|\*\/\*)/i.test(accept)) {
    throw new RejectError('transport_invalid', 'Accept must allow application/json', { httpStatus: 406 });
  }
  const version = req.headers['mcp-protocol-version'];
  // Absent: an older client (the transport spec says assume 2025-03-26). Present: must be one we speak.
  if (
    version !== undefined &&
    !(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(String(version))
  ) {
    throw new RejectError('transport_invalid', `unsupported MCP-Protocol-Version ${String(version)}`);
  }
}

/**
 * tools/call params as ToolsCallParamsSchema would return them, without zod for the usual shape (a
 * non-empty name and an object of arguments, as JSON.parse built them); anything else goes through the
 * schema, so refusals keep its exact issues. The arguments themselves are validated by the tool's schema.
 */
function toolsCallParams(params: Record<string, unknown>): {
  name: string;
  arguments: Record<string, unknown>;
} {
  const { name, arguments: args } = params;
  if (typeof name === 'string' && name.length > 0) {
    if (args === undefined) return { ...params, name, arguments: {} };
    if (isObject(args)) return params as { name: string; arguments: Record<string, unknown> };
  }
  return parseParams(ToolsCallParamsSchema, params, 'tools/call params');
}

function parseParams<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new RejectError('request_schema_invalid', `invalid ${what}`, {
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return parsed.data;
}

/** A `result` already serialized (tool results are built as JSON text once, not re-stringified). */
class SerializedResult {
  constructor(readonly json: string) {}
}

const RESPONSE_HEAD = Buffer.from('{"jsonrpc":"2.0","id":');

/**
 * A result served unchanged to every caller (edge-local tools: system.info, agents.list). The response
 * tail after the id is UTF-8 encoded once, so a request copies ~2 KB of bytes instead of building,
 * flattening and encoding the same string again.
 */
class StaticResult {
  readonly tail: Buffer;
  constructor(serialized: SerializedResult) {
    this.tail = Buffer.from(`,"result":${serialized.json}}`);
  }
}

/**
 * decisions.md: the tool object at the top level of `result`, plus MCP's `content` (one text item holding
 * the JSON) and `structuredContent` (the same object). Built from one JSON.stringify of the tool object.
 */
export function toolCallResult(result: object): SerializedResult {
  const json = JSON.stringify(result);
  const extra = `"content":[{"type":"text","text":${JSON.stringify(json)}}],"structuredContent":${json}}`;
  return new SerializedResult(json === '{}' ? `{${extra}` : `${json.slice(0, -1)},${extra}`);
}

// Headers go to writeHead whole, with X-Request-Id among them, not through setHeader first: Node then
// takes the object as it is instead of merging it into the headers already set (docs/benchmarks.md).
function writeResult(res: ServerResponse, requestId: string, id: JsonRpcId, result: object): void {
  if (result instanceof StaticResult) {
    const idJson = Buffer.from(JSON.stringify(id));
    const length = RESPONSE_HEAD.length + idJson.length + result.tail.length;
    res.writeHead(200, {
      'X-Request-Id': requestId,
      'Content-Type': 'application/json',
      'Content-Length': length,
    });
    res.end(Buffer.concat([RESPONSE_HEAD, idJson, result.tail], length));
    return;
  }
  const body = result instanceof SerializedResult ? result.json : JSON.stringify(result);
  res.writeHead(200, { 'X-Request-Id': requestId, 'Content-Type': 'application/json' });
  res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${body}}`);
}

export function createMcpHandler(deps: McpHandlerDeps) {
  const { env } = deps;
  const pollWindow = env.EDGE_MAX_TASK_POLL_WINDOW_SECONDS;
  const tools = enabledTools(env);
  const enabled = new Map<string, ToolSpec>(tools.map((t) => [t.name, t]));
  const descriptors = new Map(tools.map((t) => [t.name, toolDescriptor(t)]));
  // Edge-local tool results depend only on the backend mode: serialized once at start.
  const edgeResults = new Map<string, Map<Backend['mode'], StaticResult>>();
  for (const t of tools.filter((x) => !x.runtime)) {
    const byMode = new Map<Backend['mode'], StaticResult>();
    for (const mode of ['development', 'local_tunnel', 'hosted'] as const) {
      byMode.set(mode, new StaticResult(toolCallResult(edgeToolResult(t.name, systemInfo(env, mode)))));
    }
    edgeResults.set(t.name, byMode);
  }

  // Authorization header -> its bearer token: a client sends the same header on every call, and the
  // parse (a regex over a ~700-character JWT) is skipped for it. The token string is then the same
  // object every time, whose hash the token cache's Map has already computed. The last header is
  // compared first: comparing two strings is a memcmp, where a Map lookup hashes each new header string
  // whole. Bounded: the map is cleared when full.
  const tokenOfHeader = new Map<string, string>();
  let lastHeader = '';
  let lastToken = '';
  function tokenOf(header: string | undefined): string {
    if (header === undefined) return bearerToken(header);
    if (header === lastHeader) return lastToken;
    let token = tokenOfHeader.get(header);
    if (token === undefined) {
      token = bearerToken(header);
      if (tokenOfHeader.size >= 1024) tokenOfHeader.clear();
      tokenOfHeader.set(header, token);
    }
    lastHeader = header;
    lastToken = token;
    return token;
  }

  // A verified token's AuthInfo is reused from the token cache, so its Caller (and scope Set) is built
  // once per token, not per request; entries go when the cache drops the AuthInfo.
  const callers = new WeakMap<AuthInfo, Caller>();
  function caller(auth: AuthInfo): Caller {
    let who = callers.get(auth);
    if (!who) {
      who = { namespace: auth.namespace, clientId: auth.clientId, scopes: new Set(auth.scopes) };
      callers.set(auth, who);
    }
    return who;
  }

  async function callTool(ex: Exchange, params: Record<string, unknown>): Promise<object> {
    const call = toolsCallParams(params);
    ex.tool = call.name.slice(0, 100);
    // Unknown and switched-off tools look the same: neither is on this surface.
    const spec = enabled.get(call.name);
    if (!spec) throw new RejectError('method_not_found', `unknown tool ${call.name}`);
    const args = parseParams(spec.args, call.arguments, `arguments for ${spec.name}`) as Record<
      string,
      unknown
    >;
    const auth = ex.auth as AuthInfo;
    const who = caller(auth);

    const missing = spec.requiredScopes(args, who.scopes).filter((s) => !who.scopes.has(s));
    if (missing.length) {
      throw new RejectError('scope_insufficient', `missing scope ${missing.join(' ')}`, {
        requiredScopes: missing,
      });
    }
    const namespace = spec.namespaceOf(args);
    if (namespace !== undefined && namespace !== auth.namespace)
      throw new RejectError('namespace_unauthorized');
    if (spec.name === TOOL_NAMES.agentsInvoke) checkInvokeBinding(args as AgentsInvokeArgs);
    await deps.limiter.check({
      namespace: auth.namespace,
      tokenId: auth.tokenId,
      tool: spec.name,
      ...(spec.quota ? { quota: spec.quota } : {}),
    });

    const backend = ex.backend as Backend;
    if (!spec.runtime) return edgeResults.get(spec.name)?.get(backend.mode) as StaticResult;
    if (spec.name === TOOL_NAMES.memorySearch && args.tiers === undefined) {
      args.tiers = readableTiers(who.scopes);
    }
    if (backend.mode === 'local_tunnel') {
      const forwarded = {
        method: 'tools/call' as const,
        name: spec.name,
        args,
        caller: { ...who, scopes: auth.scopes },
      };
      return toolCallResult(await forwardCall(backend.session, forwarded, env.EDGE_TUNNEL_TIMEOUT_MS));
    }
    await backend.ready;
    return toolCallResult(await runRuntimeTool(spec.name, args, who, deps.runtimes.forBackend(backend)));
  }

  async function taskMethod(
    ex: Exchange,
    method: 'tasks/get' | 'tasks/result',
    params: Record<string, unknown>,
  ) {
    const { taskId } = parseParams(TaskIdParamsSchema, params, `${method} params`);
    const auth = ex.auth as AuthInfo;
    await deps.limiter.check({ namespace: auth.namespace, tokenId: auth.tokenId, tool: method });
    const backend = ex.backend as Backend;
    if (backend.mode === 'local_tunnel') {
      const who = { namespace: auth.namespace, clientId: auth.clientId, scopes: auth.scopes };
      return forwardCall(
        backend.session,
        { method, args: { taskId }, caller: who },
        env.EDGE_TUNNEL_TIMEOUT_MS,
      );
    }
    await backend.ready;
    return method === 'tasks/get'
      ? getTaskRecord(backend.db, auth.namespace, taskId, pollWindow)
      : getTaskResult(backend.db, auth.namespace, taskId, pollWindow);
  }

  async function dispatch(ex: Exchange, method: string, params: Record<string, unknown>): Promise<object> {
    switch (method) {
      case 'initialize': {
        const p = parseParams(InitializeParamsSchema, params, 'initialize params');
        return initializeResult(env, p.protocolVersion);
      }
      case 'ping':
        return {};
      case 'tools/list': {
        const { scopes } = caller(ex.auth as AuthInfo);
        return { tools: tools.filter((t) => t.visibleTo(scopes)).map((t) => descriptors.get(t.name)) };
      }
      case 'tools/call':
        return callTool(ex, params);
      case 'tasks/get':
      case 'tasks/result':
        return taskMethod(ex, method, params);
      default:
        throw new RejectError('method_not_found', `unknown method ${method}`);
    }
  }

  async function admitAndRun(req: IncomingMessage, res: ServerResponse, ex: Exchange): Promise<number> {
    // The body is read first so that every error, whatever stage refuses, can echo the request's id.
    const raw = await readBody(req);
    const message = parseMessage(raw);
    // Caller-chosen strings: capped before they reach the audit table.
    if (message.kind !== 'invalid') ex.method = message.method?.slice(0, 100) ?? null;
    if (message.kind === 'request') {
      ex.id = message.id;
      if (message.method === 'tools/call' && typeof message.params.name === 'string') {
        ex.tool = message.params.name.slice(0, 100);
      }
    }

    ex.backend = deps.resolver.resolve(req.headers.host);
    if (!ex.backend) throw new RejectError('deployment_not_resolved');
    const origin = req.headers.origin;
    if (origin !== undefined && !deps.origins.allows(origin)) throw new RejectError('origin_not_allowed');
    ex.auth = await deps.verifier.verifyAccessToken(tokenOf(req.headers.authorization));
    checkTransportHeaders(req);
    if (message.kind === 'invalid') throw new RejectError(message.reason, message.message);
    if (message.kind === 'notification') {
      res.writeHead(202, { 'X-Request-Id': ex.requestId });
      res.end();
      return 202;
    }
    const result = await dispatch(ex, message.method, message.params);
    writeResult(res, ex.requestId, message.id, result);
    return 200;
  }

  return async function handleMcpPost(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const ex: Exchange = {
      requestId: randomUUID(),
      id: null,
      method: null,
      tool: null,
      backend: undefined,
      auth: undefined,
    };
    let status: number;
    let reason: string | null = null;
    try {
      status = await admitAndRun(req, res, ex);
    } catch (error) {
      const reject = toRejectError(error);
      if (!(error instanceof RejectError)) {
        deps.logger.error({ err: error, requestId: ex.requestId }, 'mcp request failed');
      }
      reason = reject.reason;
      status = writeRpcError(
        res,
        { id: ex.id, requestId: ex.requestId, resourceMetadataUrl: deps.resourceMetadataUrl },
        reject,
      );
    }
    deps.audit.record({
      at: new Date(),
      request_id: ex.requestId,
      namespace: ex.auth?.namespace ?? null,
      client_id: ex.auth?.clientId ?? null,
      method: ex.method,
      tool: ex.tool,
      outcome: reason === null ? 'ok' : reason === 'internal_error' ? 'error' : 'rejected',
      reason,
      http_status: status,
      latency_ms: performance.now() - started,
      backend: ex.backend?.mode ?? null,
    });
  };
}
