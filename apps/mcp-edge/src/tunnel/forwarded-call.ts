import { ERROR_WIRE_FORMS, type ErrorReason, RejectError } from '@pkgreg/contracts';

// The tunnel's wire form, shared by its two ends: the edge's tunnel runtime sends a ForwardedCall
// (tunnel-runtime.ts), the local runtime's receiver answers a ForwardReply (tunnel.routes.ts).

/** An already-admitted call as the edge hands it to a local runtime. Never carries the caller's token. */
export interface ForwardedCall {
  method: 'tools/call' | 'tasks/get' | 'tasks/result';
  /** Tool name for tools/call. */
  name?: string;
  /** Validated tool arguments, or `{taskId}`. */
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
