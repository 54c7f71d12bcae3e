import { randomUUID } from 'node:crypto';
import type { JsonRpcId } from '@pkgreg/contracts';
import type { Caller } from '@pkgreg/runtime';
import type { Backend } from '../admission/backends.js';
import type { AuthInfo } from '../oauth/verify-token.js';
import type { ToolSpec } from '../tools/tool-catalog.js';

/** The methods admission lets through to dispatch. */
export type McpMethod =
  | 'initialize'
  | 'ping'
  | 'tools/list'
  | 'tools/call'
  | 'tasks/get'
  | 'tasks/result'
  | 'resources/list'
  | 'resources/templates/list'
  | 'resources/read';

/**
 * One /mcp request as it passes transport, admission and dispatch (mcp.handler.ts). Facts are added as
 * each stage learns them, so a refused request is audited with whatever was known when it was refused.
 * One object per request: the stages pass it along instead of building results of their own.
 */
export interface Exchange {
  requestId: string;
  /** From the message as sent (method and tool capped): set before admission. */
  id: JsonRpcId | null;
  method: string | null;
  tool: string | null;
  /** Set by admission, in its order. */
  backend: Backend | undefined;
  auth: AuthInfo | undefined;
  caller: Caller | undefined;
  /** What admission validated for dispatch: the tool and its arguments (tools/call). */
  spec: ToolSpec | undefined;
  args: Record<string, unknown> | undefined;
  /** tasks/get and tasks/result. */
  taskId: string | undefined;
  /** resources/read: the URI; resources/list and resources/templates/list: the cursor, when sent. */
  resourceUri: string | undefined;
  cursor: string | undefined;
  /** initialize: the version the client asked for. */
  protocolVersion: string | undefined;
}

export function newExchange(): Exchange {
  return {
    requestId: randomUUID(),
    id: null,
    method: null,
    tool: null,
    backend: undefined,
    auth: undefined,
    caller: undefined,
    spec: undefined,
    args: undefined,
    taskId: undefined,
    resourceUri: undefined,
    cursor: undefined,
    protocolVersion: undefined,
  };
}
