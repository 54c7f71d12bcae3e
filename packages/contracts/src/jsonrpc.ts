import { z } from 'zod';

// JSON-RPC 2.0 envelopes for POST /mcp (../shared/spec/mcp-edge.md, Endpoints).

export const JsonRpcIdSchema = z.union([z.string(), z.number().int()]);
export type JsonRpcId = z.infer<typeof JsonRpcIdSchema>;

export const JsonRpcRequestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  /** Request id; a message without one is a notification. */
  id: JsonRpcIdSchema,
  method: z.string().min(1),
  params: z.record(z.string(), z.unknown()).optional(),
});
export type JsonRpcRequest = z.infer<typeof JsonRpcRequestSchema>;

export const JsonRpcNotificationSchema = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.string().min(1),
  params: z.record(z.string(), z.unknown()).optional(),
});
export type JsonRpcNotification = z.infer<typeof JsonRpcNotificationSchema>;

export const JsonRpcErrorObjectSchema = z.object({
  /** Numeric JSON-RPC error code. */
  code: z.number().int(),
  /** Short human-readable message. */
  message: z.string(),
  /** Always carries the reject reason and the request id (decisions.md). */
  data: z
    .object({
      reason: z.string(),
      requestId: z.string(),
    })
    .catchall(z.unknown()),
});
export type JsonRpcErrorObject = z.infer<typeof JsonRpcErrorObjectSchema>;

export const JsonRpcSuccessSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: JsonRpcIdSchema,
  result: z.record(z.string(), z.unknown()),
});
export type JsonRpcSuccess = z.infer<typeof JsonRpcSuccessSchema>;

export const JsonRpcErrorResponseSchema = z.object({
  jsonrpc: z.literal('2.0'),
  /** Null when the request's id could not be read. */
  id: JsonRpcIdSchema.nullable(),
  error: JsonRpcErrorObjectSchema,
});
export type JsonRpcErrorResponse = z.infer<typeof JsonRpcErrorResponseSchema>;

export const JsonRpcResponseSchema = z.union([JsonRpcSuccessSchema, JsonRpcErrorResponseSchema]);
export type JsonRpcResponse = z.infer<typeof JsonRpcResponseSchema>;
