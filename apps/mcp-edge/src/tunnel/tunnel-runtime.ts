import { RejectError } from '@pkgreg/contracts';
import type { TunnelSession } from '../env.js';
import type { Caller, Runtime } from '../runtime/runtime.js';
import { ENVELOPE_HEADER, signEnvelope } from './envelope.js';
import { type ForwardedCall, type ForwardReply, fromReply } from './forwarded-call.js';

// mcp-edge.md, Deployment backends, local_tunnel: only already-admitted calls are forwarded into the local
// runtime, each with a fresh single-use envelope (envelope.ts); the local runtime does the work and no
// raw local MCP server is exposed.

/** The runtime of one tunnel session: every call is sent through the session's tunnel. */
export function createTunnelRuntime(session: TunnelSession, timeoutMs: number): Runtime {
  const forward = (call: ForwardedCall) => forwardCall(session, call, timeoutMs);
  return {
    callTool: (caller, name, args) => forward({ method: 'tools/call', name, args, caller: wire(caller) }),
    getTask: (caller, taskId) => forward({ method: 'tasks/get', args: { taskId }, caller: wire(caller) }),
    getTaskResult: (caller, taskId) =>
      forward({ method: 'tasks/result', args: { taskId }, caller: wire(caller) }),
  };
}

/** The caller as the local runtime needs it: who, and the scopes of tier checks it makes itself. */
function wire(caller: Caller): ForwardedCall['caller'] {
  return { namespace: caller.namespace, clientId: caller.clientId, scopes: [...caller.scopes] };
}

async function forwardCall(
  session: TunnelSession,
  call: ForwardedCall,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const body = JSON.stringify(call);
  const envelope = await signEnvelope({
    sessionId: session.sessionId,
    secret: session.secret,
    namespace: call.caller.namespace,
    body,
  });
  let reply: ForwardReply;
  try {
    const res = await fetch(session.target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [ENVELOPE_HEADER]: envelope },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    reply = (await res.json()) as ForwardReply;
  } catch {
    throw new RejectError('internal_error', 'local runtime unreachable', { httpStatus: 502 });
  }
  return fromReply(reply);
}
