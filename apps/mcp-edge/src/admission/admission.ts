import type { IncomingMessage } from 'node:http';
import {
  type AgentsInvokeArgs,
  findAgent,
  forbiddenBindingTiers,
  hasLoneSurrogate,
  InitializeParamsSchema,
  includesHighRisk,
  type JsonRpcId,
  MAX_RESOURCE_URI_LENGTH,
  RejectError,
  ResourcesDirectoryReadParamsSchema,
  ResourcesListParamsSchema,
  ResourcesReadParamsSchema,
  SCOPES,
  SKILLS_HIGH_RISK_HEADER,
  SkillsGetParamsSchema,
  SkillsListParamsSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  TaskIdParamsSchema,
  TOOL_NAMES,
  ToolsCallParamsSchema,
} from '@pkgreg/contracts';
import type { Caller } from '@pkgreg/runtime';
import type { z } from 'zod';
import type { Exchange } from '../mcp/exchange.js';
import {
  claimsEnvelope,
  type ModernRequest,
  modernMethodNotFound,
  modernRequestOf,
  namesModernRevision,
  tasksExtensionRequired,
} from '../mcp/modern.js';
import { isObject, type Parsed } from '../mcp/transport.js';
import type { AuthInfo, TokenVerifier } from '../oauth/verify-token.js';
import type { ToolSpec } from '../tools/tool-catalog.js';
import type { Access } from './access.js';
import type { Backend, BackendResolver } from './backends.js';
import { createBearerReader } from './bearer-token.js';
import type { Limiter } from './limits.js';
import type { OriginPolicy } from './origin.js';

// Every check a /mcp request passes before any tool mapping, task lookup or runtime dispatch, in the
// order of docs/decisions.md ("Admission order and wire form"), numbered as the README draws it. The
// first check that fails throws its RejectError, which rpc-error.ts puts on the wire. Nothing here opens
// tenant storage: a refused request costs no backend anything.

export interface AdmissionDeps {
  resolver: BackendResolver;
  /** Which clients each tenant and tunnel session serves, and which clients are disabled. */
  access: Access;
  origins: OriginPolicy;
  verifier: TokenVerifier;
  limiter: Limiter;
  /** The tool mappings the operator has not switched off. */
  tools: readonly ToolSpec[];
}

/**
 * A request admission let through, with what its checks validated for dispatch: the method, the backend
 * the host maps to, the verified caller (and its token's AuthInfo), and each method's own params.
 */
export type Admitted = {
  id: JsonRpcId;
  backend: Backend;
  caller: Caller;
  auth: AuthInfo;
  /** A 2026-07-28 request's envelope; undefined for 2025-11-25 (mcp/modern.ts). */
  modern: ModernRequest | undefined;
} & (
  | { method: 'initialize' /** The version the client asked for. */; protocolVersion: string }
  | { method: 'ping' | 'tools/list' | 'server/discover' }
  | { method: 'tools/call'; spec: ToolSpec; args: Record<string, unknown> }
  | { method: 'tasks/get' | 'tasks/result' | 'tasks/update' | 'tasks/cancel'; taskId: string }
  | { method: 'resources/list' | 'resources/templates/list'; cursor: string | undefined }
  | { method: 'resources/read'; uri: string }
  | { method: 'skills/list'; cursor: string | undefined; includeHighRisk: boolean }
  | { method: 'skills/get'; uri: string; includeHighRisk: boolean }
  | { method: 'resources/directory/read'; uri: string; cursor: string | undefined }
);

/** The methods admission lets through to dispatch. */
export type McpMethod = Admitted['method'];

export interface Admission {
  /**
   * Runs the checks for one request, noting on `ex` what each learns for the audit. Resolves with what
   * dispatch is to answer, or undefined for a notification (answered 202 with no body).
   */
  admit(req: IncomingMessage, ex: Exchange, message: Parsed): Promise<Admitted | undefined>;
}

export function createAdmission(deps: AdmissionDeps): Admission {
  const { resolver, access, origins, verifier, limiter } = deps;
  const tools = new Map<string, ToolSpec>(deps.tools.map((t) => [t.name, t]));
  const tokenOf = createBearerReader();
  // A verified token's AuthInfo is reused from the token cache, so its Caller (and scope Set) is built
  // once per token, not per request; entries go when the cache drops the AuthInfo.
  const callers = new WeakMap<AuthInfo, Caller>();

  function callerOf(auth: AuthInfo): Caller {
    let who = callers.get(auth);
    if (!who) {
      who = {
        namespace: auth.namespace,
        clientId: auth.clientId,
        scopes: new Set(auth.scopes),
        ...(auth.subject !== undefined ? { person: auth.subject } : {}),
      };
      callers.set(auth, who);
    }
    return who;
  }

  async function admit(req: IncomingMessage, ex: Exchange, message: Parsed): Promise<Admitted | undefined> {
    // 1. Host → backend: 421 deployment_not_resolved.
    const resolved = resolver.resolve(req.headers.host);
    if (!resolved) throw new RejectError('deployment_not_resolved');
    const backend = resolved.backend;
    ex.backend = backend;
    // 2. Origin, when sent (DNS rebinding): 403 origin_not_allowed.
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.allows(origin)) throw new RejectError('origin_not_allowed');
    // 3. Bearer token, missing, malformed, invalid, expired or for another audience: 401 token_invalid.
    const auth = await verifier.verifyAccessToken(tokenOf(req.headers.authorization));
    ex.auth = auth;
    const current = access.current();
    const state = current instanceof Promise ? await current : current;
    // A client the tenant or tunnel session does not serve is answered as for a host that maps to no
    // backend (same status, code and message): it cannot learn which hosts exist. Checked before anything
    // that answers differently per host (a revoked token, the audience, the method).
    // A person's app is served where the person is (an owner or a member of the owning organisation).
    const serves =
      state.allows(backend, auth.namespace) ||
      (auth.subject !== undefined && state.allowsPerson(backend, auth.subject));
    if (!serves) throw new RejectError('deployment_not_resolved');
    if (
      state.disabled(auth.issuer, auth.clientId) ||
      (auth.subject !== undefined && state.revoked(auth.issuer, auth.clientId, auth.subject, auth.issuedAt))
    ) {
      throw new RejectError('token_invalid', 'token revoked');
    }
    if (!auth.audiences.includes(resolved.resource)) {
      throw new RejectError('token_invalid', 'token not issued for this resource');
    }
    const caller = callerOf(auth);
    // 4. Streamable HTTP headers (415, 406, 400), then the JSON-RPC message itself (400).
    checkTransportHeaders(req, message);
    if (message.kind === 'invalid') throw new RejectError(message.reason, message.message);
    if (message.kind === 'notification') return undefined;
    // 4b. A 2026-07-28 request: its envelope, version and routing headers (400: -32602, -32022, -32020).
    const { id, method, params } = message;
    const modern = modernRequestOf(req, method, params);
    // 5. The method and its params: -32601, -32602. tools/call and resources/* go on through 6-9.
    // What one revision has and the other lacks is not found (a 2026-07-28 miss is HTTP 404).
    const missing = () =>
      modern ? modernMethodNotFound(method) : new RejectError('method_not_found', `unknown method ${method}`);
    switch (method) {
      case 'initialize': {
        if (modern) throw missing();
        const { protocolVersion } = parseParams(InitializeParamsSchema, params, 'initialize params');
        return { id, backend, caller, auth, modern, method, protocolVersion };
      }
      case 'ping':
        if (modern) throw missing();
        return { id, backend, caller, auth, modern, method };
      case 'server/discover':
        if (!modern) throw missing();
        return { id, backend, caller, auth, modern, method };
      case 'tools/list':
        return { id, backend, caller, auth, modern, method };
      case 'tools/call': {
        const { spec, args } = await admitToolCall(ex, caller, params, modern);
        return { id, backend, caller, auth, modern, method, spec, args };
      }
      case 'tasks/get':
      case 'tasks/result':
      case 'tasks/update':
      case 'tasks/cancel': {
        // 2025-11-25 has the contract's tasks/get and tasks/result; 2026-07-28 the tasks extension's
        // get, update and cancel, for a client that declared it (-32021 otherwise).
        if (modern ? method === 'tasks/result' : method === 'tasks/update' || method === 'tasks/cancel')
          throw missing();
        if (modern && !modern.tasks) throw tasksExtensionRequired(method);
        const { taskId } = parseParams(TaskIdParamsSchema, params, `${method} params`);
        // 9. Polling has a rate of its own per method, so it cannot be used to get around the tools'.
        await limiter.check({ namespace: auth.namespace, tool: method });
        return { id, backend, caller, auth, modern, method, taskId };
      }
      case 'resources/list':
      case 'resources/templates/list':
      case 'resources/read': {
        const admitted: Admitted =
          method === 'resources/read'
            ? { id, backend, caller, auth, modern, method, uri: resourceUriOf(params) }
            : {
                id,
                backend,
                caller,
                auth,
                modern,
                method,
                cursor: parseParams(ResourcesListParamsSchema, params, `${method} params`).cursor,
              };
        // 6. skill:// resources are the registry's catalog: pkgreg.registry.read, as its tools need.
        requireScopes(caller, REGISTRY_READ);
        // 9. Each method is rated as a tool is (one bucket per method).
        await limiter.check({ namespace: auth.namespace, tool: method });
        return admitted;
      }
      case 'skills/list':
      case 'skills/get':
      case 'resources/directory/read': {
        // The skills extension (SEP-2640) reads the same catalog: checked as resources/* are.
        const read = skillsParams(method, params, req.headers[SKILLS_HIGH_RISK_HEADER]);
        requireScopes(caller, REGISTRY_READ);
        await limiter.check({ namespace: auth.namespace, tool: method });
        return { id, backend, caller, auth, modern, ...read };
      }
      default:
        throw missing();
    }
  }

  /**
   * tools/call from step 5 on; resolves with the tool and its validated arguments once the rate limit
   * and quota (step 9) let the call through.
   */
  async function admitToolCall(
    ex: Exchange,
    caller: Caller,
    params: Record<string, unknown>,
    modern: ModernRequest | undefined,
  ): Promise<{ spec: ToolSpec; args: Record<string, unknown> }> {
    const call = toolsCallParams(params);
    ex.tool = call.name.slice(0, 100);
    // Unknown and switched-off tools look the same: neither is on this surface.
    const spec = tools.get(call.name);
    if (!spec) throw new RejectError('method_not_found', `unknown tool ${call.name}`);
    const args = parseParams(spec.args, call.arguments, `arguments for ${spec.name}`) as Record<
      string,
      unknown
    >;
    // 6. Scopes this call needs: 403 scope_insufficient, naming the missing ones.
    requireScopes(caller, spec.requiredScopes(args, caller.scopes));
    // 7. The namespace the call touches must be the caller's own.
    const namespace = spec.namespaceOf(args);
    if (namespace !== undefined && namespace !== caller.namespace) {
      throw new RejectError('namespace_unauthorized');
    }
    // 8. Agent checks that need no storage (before any quota is counted).
    if (spec.name === TOOL_NAMES.agentsInvoke) checkInvokeBinding(args as AgentsInvokeArgs);
    // A 2026-07-28 client asking for a task (async) must have declared the tasks extension to poll it.
    if (modern && !modern.tasks && args.executionMode === 'async')
      throw tasksExtensionRequired(`${spec.name} with executionMode "async"`);
    // 9. Rate limit and, for invoke and compact, the quota: 429 with Retry-After.
    await limiter.check({
      namespace: caller.namespace,
      tool: spec.name,
      ...(spec.quota ? { quota: spec.quota } : {}),
    });
    return { spec, args };
  }

  return { admit };
}

const REGISTRY_READ: readonly string[] = [SCOPES.registryRead];

/** Step 6: 403 scope_insufficient naming the scopes of `needed` the caller lacks. */
function requireScopes(caller: Caller, needed: readonly string[]): void {
  // A loop, not filter: the list of missing scopes is built only once one is missing.
  for (const scope of needed) {
    if (caller.scopes.has(scope)) continue;
    const missing = needed.filter((s) => !caller.scopes.has(s));
    throw new RejectError('scope_insufficient', `missing scope ${missing.join(' ')}`, {
      requiredScopes: missing,
    });
  }
}

/** Streamable HTTP headers (MCP 2025-11-25, transports): content type, accepted types, protocol version. */
function checkTransportHeaders(req: IncomingMessage, message: Parsed): void {
  const contentType = req.headers['content-type'];
  if (!contentType || !/^application\/json\s*(;|$)/i.test(contentType)) {
    throw new RejectError('transport_invalid', 'Content-Type must be application/json', { httpStatus: 415 });
  }
  const accept = req.headers.accept;
  if (accept && !/(application\/json|application\/\*|\*\/\*)/i.test(accept)) {
    throw new RejectError('transport_invalid', 'Accept must allow application/json', { httpStatus: 406 });
  }
  const version = req.headers['mcp-protocol-version'];
  // Absent: an older client (the transport spec says assume 2025-03-26). Present: must be one we speak;
  // 2026-07-28 and later are checked against the body's envelope (mcp/modern.ts). A request whose
  // envelope names a version is judged by that revision's rules there, whatever the header says (its
  // -32022 for a version we do not speak, -32020 for a header that disagrees with the body).
  if (
    version !== undefined &&
    !namesModernRevision(String(version)) &&
    !(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(String(version)) &&
    !(message.kind === 'request' && claimsEnvelope(message.params))
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

/**
 * resources/read's `uri` as ResourcesReadParamsSchema would return it, without zod for a valid one (the
 * usual case, on every read); anything else goes through the schema, so refusals keep its exact issues.
 */
function resourceUriOf(params: Record<string, unknown>): string {
  const { uri } = params;
  if (
    typeof uri === 'string' &&
    uri.length > 0 &&
    uri.length <= MAX_RESOURCE_URI_LENGTH &&
    !hasLoneSurrogate(uri)
  ) {
    return uri;
  }
  return parseParams(ResourcesReadParamsSchema, params, 'resources/read params').uri;
}

/**
 * The params of a skills extension method, as dispatch takes them (the opt-in read from `_meta` or from
 * its header, `optIn`).
 */
function skillsParams(
  method: 'skills/list' | 'skills/get' | 'resources/directory/read',
  params: Record<string, unknown>,
  optIn: string | string[] | undefined,
) {
  const what = `${method} params`;
  if (method === 'skills/list') {
    const p = parseParams(SkillsListParamsSchema, params, what);
    return { method, cursor: p.cursor, includeHighRisk: includesHighRisk(p, optIn) };
  }
  if (method === 'skills/get') {
    const p = parseParams(SkillsGetParamsSchema, params, what);
    return { method, uri: p.uri, includeHighRisk: includesHighRisk(p, optIn) };
  }
  const p = parseParams(ResourcesDirectoryReadParamsSchema, params, what);
  return { method, uri: p.uri, cursor: p.cursor };
}

/** Params or arguments through their schema: request_schema_invalid (-32602) with zod's issues. */
function parseParams<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new RejectError('request_schema_invalid', `invalid ${what}`, {
      issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return parsed.data;
}

/** The agent must be on this surface, and its memory binding within what the agent allows. */
function checkInvokeBinding(args: AgentsInvokeArgs): void {
  const agent = findAgent(args.agentId);
  if (!agent) throw new RejectError('agent_not_available', `agent ${args.agentId} is not available`);
  if (args.memory) {
    const forbidden = forbiddenBindingTiers(agent, args.memory);
    if (forbidden.length) {
      throw new RejectError('memory_binding_forbidden', `binding not allowed: ${forbidden.join(', ')}`, {
        forbidden,
      });
    }
  }
}
