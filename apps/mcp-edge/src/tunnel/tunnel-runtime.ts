import { RejectError } from '@pkgreg/contracts';
import {
  type Caller,
  ENVELOPE_HEADER,
  type ForwardedCall,
  type ForwardReply,
  ForwardReplySchema,
  fromReply,
  type Runtime,
  signEnvelope,
} from '@pkgreg/runtime';
import type { TunnelSession } from '../env.js';
import type { TunnelHub } from './tunnel-hub.js';

// mcp-edge.md, Deployment backends, local_tunnel: only already-admitted calls are forwarded into the local
// runtime, each with a fresh single-use envelope (@pkgreg/runtime's envelope); the local runtime does the
// work and no raw local MCP server is exposed. A call goes over the WebSocket the local runtime dialed out
// (tunnel-hub.ts) when it is connected, else to the session's HTTP `target` when it has one; with neither,
// or when the runtime does not answer in time, the caller gets `tunnel_unavailable` at once.

export interface TunnelRuntimeDeps {
  hub: TunnelHub;
  /** How long a forwarded call may take before the edge gives up. */
  timeoutMs: number;
}

/** The runtime of one tunnel session: every call is sent through the session's tunnel. */
export function createTunnelRuntime(session: TunnelSession, deps: TunnelRuntimeDeps): Runtime {
  const forward = (call: ForwardedCall) => forwardCall(session, deps, call);
  return {
    callTool: (caller, name, args) => forward({ method: 'tools/call', name, args, caller: wire(caller) }),
    getTask: (caller, taskId) => forward({ method: 'tasks/get', args: { taskId }, caller: wire(caller) }),
    getTaskResult: (caller, taskId) =>
      forward({ method: 'tasks/result', args: { taskId }, caller: wire(caller) }),
  };
}

/** The caller as the local runtime needs it: who, and the scopes of tier checks it makes itself. */
function wire(caller: Caller): ForwardedCall['caller'] {
  return {
    namespace: caller.namespace,
    clientId: caller.clientId,
    scopes: [...caller.scopes],
    ...(caller.person !== undefined ? { person: caller.person } : {}),
  };
}

async function forwardCall(
  session: TunnelSession,
  deps: TunnelRuntimeDeps,
  call: ForwardedCall,
): Promise<Record<string, unknown>> {
  const body = JSON.stringify(call);
  const envelope = await signEnvelope({
    sessionId: session.sessionId,
    secret: session.secret,
    namespace: call.caller.namespace,
    body,
  });
  if (deps.hub.connected(session.sessionId)) {
    const { reply } = await deps.hub.call(session.sessionId, { envelope, body }, deps.timeoutMs);
    return fromReply(reply);
  }
  if (!session.target) throw new RejectError('tunnel_unavailable', 'local runtime not connected');
  return fromReply(await post(session.target, envelope, body, deps.timeoutMs));
}

/**
 * The session's direct HTTP target (a local runtime reachable from the edge). A redirect is never
 * followed (issue 26): the call, its envelope and its caller go to the target the operator set, or
 * nowhere, never to a URL the target's host names.
 */
async function post(
  target: string,
  envelope: string,
  body: string,
  timeoutMs: number,
): Promise<ForwardReply> {
  let res: Response;
  try {
    res = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [ENVELOPE_HEADER]: envelope },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    throw new RejectError(
      'tunnel_unavailable',
      timedOut ? `local runtime did not answer within ${timeoutMs} ms` : 'local runtime unreachable',
      { httpStatus: timedOut ? 504 : 503 },
    );
  }
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel();
    throw new RejectError(
      'tunnel_unavailable',
      'local runtime answered with a redirect, which is not followed',
    );
  }
  const reply = ForwardReplySchema.safeParse(await res.json().catch(() => undefined));
  if (!reply.success) throw new RejectError('tunnel_unavailable', 'local runtime sent an unreadable reply');
  return reply.data;
}
