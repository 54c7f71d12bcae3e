import { RejectError, TaskIdParamsSchema } from '@pkgreg/contracts';
import type { Logger } from '@pkgreg/server-kit';
import express, { type Router as ExpressRouter, Router } from 'express';
import type { Redis } from 'ioredis';
import type { Runtime } from '../runtime/runtime.js';
import { ENVELOPE_HEADER, verifyEnvelope } from './envelope.js';
import { type ForwardedCall, type ForwardReply, toReply } from './forwarded-call.js';

/**
 * The local runtime's end of a tunnel session: it accepts only calls the edge admitted and signed, and
 * runs them on its own runtime (a local one: createLocalRuntime). It never sees a bearer token and does no
 * admission of its own.
 */
export function tunnelReceiverRoutes(deps: {
  sessionId: string;
  secret: string;
  redis: Redis;
  runtime: Runtime;
  logger: Logger;
  path?: string;
}): ExpressRouter {
  const router = Router();
  router.post(deps.path ?? '/tunnel/mcp', express.raw({ type: '*/*', limit: '128kb' }), async (req, res) => {
    const raw: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    let reply: ForwardReply;
    let status = 200;
    try {
      const { namespace } = await verifyEnvelope({
        envelope: req.get(ENVELOPE_HEADER),
        sessionId: deps.sessionId,
        secret: deps.secret,
        body: raw,
        redis: deps.redis,
      });
      const call = JSON.parse(raw.toString('utf8')) as ForwardedCall;
      // The envelope's subject binds the call to one namespace: a body naming another is refused.
      if (call.caller?.namespace !== namespace) {
        throw new RejectError('tunnel_envelope_invalid', 'envelope subject differs from the call');
      }
      reply = { result: (await run(call)) as Record<string, unknown> };
    } catch (error) {
      const reject = error instanceof RejectError ? error : new RejectError('internal_error');
      if (!(error instanceof RejectError)) deps.logger.error({ err: error }, 'tunnel call failed');
      if (reject.reason === 'tunnel_envelope_invalid') status = 401;
      if (reject.reason === 'tunnel_replay_detected') status = 409;
      reply = toReply(reject);
    }
    res.status(status).json(reply);
  });

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
  return router;
}
