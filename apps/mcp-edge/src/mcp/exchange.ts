import { randomUUID } from 'node:crypto';
import type { JsonRpcId } from '@pkgreg/contracts';
import type { Backend } from '../admission/backends.js';
import type { AuthInfo } from '../oauth/verify-token.js';

/**
 * What the audit and the metrics learn of one /mcp request as it passes transport, admission and
 * dispatch (mcp.handler.ts). Facts are added as each stage learns them, so a refused request is audited
 * with whatever was known when it was refused.
 */
export interface Exchange {
  requestId: string;
  /** From the message as sent (method and tool capped): set before admission. */
  id: JsonRpcId | null;
  method: string | null;
  tool: string | null;
  /** Set by admission as its checks learn them (what dispatch needs, admission returns: Admitted). */
  backend: Backend | undefined;
  auth: AuthInfo | undefined;
}

export function newExchange(): Exchange {
  return {
    requestId: randomUUID(),
    id: null,
    method: null,
    tool: null,
    backend: undefined,
    auth: undefined,
  };
}
