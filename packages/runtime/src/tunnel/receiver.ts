import { NAMESPACE_PATTERN, RejectError, TaskIdParamsSchema } from '@pkgreg/contracts';
import express, { type Router as ExpressRouter, Router } from 'express';
import type { Runtime } from '../runtime.js';
import { ENVELOPE_HEADER, verifyEnvelope } from './envelope.js';
import type { ForwardedCall, ForwardReply } from './forwarded-call.js';
import type { NonceStore } from './nonce-store.js';

/** What a receiver needs: its session, its nonces, the runtime its calls run on. */
export interface TunnelReceiverDeps {
  sessionId: string;
  secret: string;
  nonces: NonceStore;
  runtime: Runtime;
  /**
   * The clients this session serves: client ids, or namespaces (`app:` + 64 hex) for clients of other
   * issuers. A call for anyone else is refused whatever the edge admitted (issue 26: defence in depth,
   * the user's own say over their machine). Empty serves no one.
   */
  allowedClients: readonly string[];
  /**
   * Also serve the people the edge vouches for (a call whose caller carries `person`: the session's
   * owner, or a member of the organisation owning it, with any app they signed in with).
   */
  servesOwners?: boolean;
  /** Told of an unexpected failure (its details stay in the log, never in the reply). */
  onError(error: unknown): void;
}

export interface TunnelReceiver {
  /** Checks one forwarded call and runs it; never throws. `status` is the HTTP status of the reply. */
  receive(
    envelope: string | undefined,
    body: Buffer | string,
  ): Promise<{ status: number; reply: ForwardReply }>;
}

/**
 * The local runtime's end of a tunnel session: it accepts only calls the edge admitted and signed, and
 * runs them on its own runtime (a local one: createLocalRuntime). It never sees a bearer token; of the
 * edge's admission it repeats one check, that the caller is a client the session serves. The same receiver
 * serves both ways a call arrives: the WebSocket the local runtime dialed out to the edge, and the HTTP
 * route below for a session whose `target` points at it.
 */
export function createTunnelReceiver(deps: TunnelReceiverDeps): TunnelReceiver {
  const clientIds = new Set(deps.allowedClients.filter((c) => !NAMESPACE_PATTERN.test(c)));
  const namespaces = new Set(deps.allowedClients.filter((c) => NAMESPACE_PATTERN.test(c)));
  // A person's app is served when its user said so (--serve-owners) or named its exact namespace; a
  // client id in the list names a machine client, not anyone signing in through that client's id.
  const serves = (caller: ForwardedCall['caller']) =>
    typeof caller.person === 'string'
      ? deps.servesOwners === true || namespaces.has(caller.namespace)
      : clientIds.has(caller.clientId) || namespaces.has(caller.namespace);

  async function run(call: ForwardedCall): Promise<object> {
    const caller = { ...call.caller, scopes: new Set(call.caller.scopes) };
    if (call.method === 'tools/call' && call.name) {
      return deps.runtime.callTool(caller, call.name, call.args);
    }
    const { taskId } = TaskIdParamsSchema.parse(call.args);
    if (call.method === 'tasks/get') return deps.runtime.getTask(caller, taskId);
    if (call.method === 'tasks/result') return deps.runtime.getTaskResult(caller, taskId);
    throw new RejectError('method_not_found');
  }

  return {
    async receive(envelope, body) {
      try {
        const { namespace } = await verifyEnvelope({
          envelope,
          sessionId: deps.sessionId,
          secret: deps.secret,
          body,
          nonces: deps.nonces,
        });
        const call = JSON.parse(body.toString()) as ForwardedCall;
        // The envelope's subject binds the call to one namespace: a body naming another is refused.
        if (call.caller?.namespace !== namespace) {
          throw new RejectError('tunnel_envelope_invalid', 'envelope subject differs from the call');
        }
        // A binding failure of its own: the envelope is good, the caller is not one this session serves.
        if (!serves(call.caller)) {
          return {
            status: 403,
            reply: {
              error: {
                reason: 'tunnel_envelope_invalid',
                message: 'the local runtime does not serve this client',
              },
            },
          };
        }
        return { status: 200, reply: { result: (await run(call)) as Record<string, unknown> } };
      } catch (error) {
        const reject = error instanceof RejectError ? error : new RejectError('internal_error');
        if (!(error instanceof RejectError)) deps.onError(error);
        const status =
          reject.reason === 'tunnel_envelope_invalid'
            ? 401
            : reject.reason === 'tunnel_replay_detected'
              ? 409
              : 200;
        return { status, reply: { error: { reason: reject.reason, message: reject.message } } };
      }
    },
  };
}

/** The receiver as an HTTP route (`/tunnel/mcp`): for a session whose `target` is this runtime's URL. */
export function tunnelReceiverRoutes(receiver: TunnelReceiver, path = '/tunnel/mcp'): ExpressRouter {
  const router = Router();
  router.post(path, express.raw({ type: '*/*', limit: '128kb' }), async (req, res) => {
    const raw: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const { status, reply } = await receiver.receive(req.get(ENVELOPE_HEADER), raw);
    res.status(status).json(reply);
  });
  return router;
}
