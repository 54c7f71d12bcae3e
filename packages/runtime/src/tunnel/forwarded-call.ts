import { ERROR_WIRE_FORMS, type ErrorReason, RejectError } from '@pkgreg/contracts';
import { z } from 'zod';

// The tunnel's wire form, shared by its two ends: the edge's tunnel runtime sends a ForwardedCall, the
// local runtime's receiver (receiver.ts) answers a ForwardReply. Over HTTP the call is the body and the
// envelope a header; over the tunnel's WebSocket each is one JSON frame (TunnelCallFrame, TunnelReplyFrame).

/** An already-admitted call as the edge hands it to a local runtime. Never carries the caller's token. */
export interface ForwardedCall {
  method: 'tools/call' | 'tasks/get' | 'tasks/result';
  /** Tool name for tools/call. */
  name?: string;
  /** Validated tool arguments, or `{taskId}`. */
  args: Record<string, unknown>;
  /**
   * `person`: the account a person's app acts for, set by the edge on the calls of a person's app it
   * admitted (on a session with an owner: the owner, or a member of the owning organisation; issue 29).
   */
  caller: { namespace: string; clientId: string; scopes: string[]; person?: string };
}

export type ForwardReply =
  | { result: Record<string, unknown> }
  | { error: { reason: string; message: string } };

export function fromReply(reply: ForwardReply): Record<string, unknown> {
  if ('result' in reply) return reply.result;
  const reason = (
    reply.error.reason in ERROR_WIRE_FORMS ? reply.error.reason : 'internal_error'
  ) as ErrorReason;
  throw new RejectError(reason, reason === 'internal_error' ? undefined : reply.error.message);
}

/** Path of the edge's WebSocket upgrade for tunnel sessions (the local runtime dials out to it). */
export const TUNNEL_CONNECT_PATH = '/tunnel/connect';

export const ForwardReplySchema = z.union([
  z.object({ result: z.record(z.string(), z.unknown()) }),
  z.object({ error: z.object({ reason: z.string(), message: z.string() }) }),
]);

/** Edge → local runtime: one forwarded call, its exact body as signed, matched to its reply by `id`. */
export const TunnelCallFrameSchema = z.object({
  type: z.literal('call'),
  id: z.string().min(1).max(64),
  envelope: z.string().max(4096),
  body: z.string().max(256 * 1024),
});
export type TunnelCallFrame = z.infer<typeof TunnelCallFrameSchema>;

/** Local runtime → edge: the reply to the call of the same `id`, with the status the HTTP route would send. */
export const TunnelReplyFrameSchema = z.object({
  type: z.literal('reply'),
  id: z.string().min(1).max(64),
  status: z.number().int(),
  reply: ForwardReplySchema,
});
export type TunnelReplyFrame = z.infer<typeof TunnelReplyFrameSchema>;

/** A frame's JSON text parsed by `schema`; undefined when it is not JSON or not of that shape. */
export function parseFrame<S extends z.ZodType>(schema: S, data: string): z.infer<S> | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(data));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
