import { ERROR_WIRE_FORMS, type ErrorReason, RejectError } from '@pkgreg/contracts';
import type { TunnelSession } from '../env.js';
import { ENVELOPE_HEADER, signEnvelope } from './envelope.js';

/** An already-admitted call as the edge hands it to a local runtime. Never carries the caller's token. */
export interface ForwardedCall {
  method: 'tools/call' | 'tasks/get' | 'tasks/result';
  /** Tool name for tools/call. */
  name?: string;
  /** Validated tool arguments (search tiers already defaulted), or `{taskId}`. */
  args: Record<string, unknown>;
  caller: { namespace: string; clientId: string; scopes: string[] };
}

export type ForwardReply =
  | { result: Record<string, unknown> }
  | { error: { reason: string; message: string } };

export function toReply(error: RejectError): ForwardReply {
  return { error: { reason: error.reason, message: error.message } };
}

export function fromReply(reply: ForwardReply): Record<string, unknown> {
  if ('result' in reply) return reply.result;
  const reason = (
    reply.error.reason in ERROR_WIRE_FORMS ? reply.error.reason : 'internal_error'
  ) as ErrorReason;
  throw new RejectError(reason, reason === 'internal_error' ? undefined : reply.error.message);
}

/** Sends one admitted call through the session's tunnel with a fresh single-use envelope. */
export async function forwardCall(
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
