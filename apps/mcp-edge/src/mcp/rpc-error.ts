import type { ServerResponse } from 'node:http';
import { ERROR_WIRE_FORMS, type JsonRpcId, RejectError } from '@pkgreg/contracts';
import { dependencyOutageOf, OUTAGE_RETRY_AFTER_SECONDS } from '@pkgreg/server-kit';

// The edge's one error writer: every refusal on /mcp, whatever raised it, leaves here as a JSON-RPC error
// whose HTTP status, code and headers come from ERROR_WIRE_FORMS, so no two refusals can drift apart.

export interface RpcErrorContext {
  id: JsonRpcId | null;
  requestId: string;
  /** `{base}/.well-known/oauth-protected-resource/mcp`, named in 401 challenges. */
  resourceMetadataUrl: string;
}

/**
 * Turns anything thrown into a RejectError: PostgreSQL or Redis down becomes service_unavailable (a
 * retryable 503), other unexpected errors internal_error (details only in logs).
 */
export function toRejectError(error: unknown): RejectError {
  if (error instanceof RejectError) return error;
  if (dependencyOutageOf(error)) {
    return new RejectError('service_unavailable', undefined, {
      retryAfterSeconds: OUTAGE_RETRY_AFTER_SECONDS,
    });
  }
  return new RejectError('internal_error');
}

/** Writes the error and returns the HTTP status used (for the audit record). */
export function writeRpcError(res: ServerResponse, ctx: RpcErrorContext, error: RejectError): number {
  const form = ERROR_WIRE_FORMS[error.reason];
  const {
    httpStatus: statusOverride,
    retryAfterSeconds,
    requiredScopes,
    tokenMissing,
    ...details
  } = error.details as {
    httpStatus?: number;
    tokenMissing?: boolean;
    retryAfterSeconds?: number;
    requiredScopes?: string[];
    [key: string]: unknown;
  };
  const status = typeof statusOverride === 'number' ? statusOverride : form.httpStatus;
  const headers: Record<string, string> = {
    'X-Request-Id': ctx.requestId,
    'Content-Type': 'application/json',
  };
  if (error.reason === 'token_invalid') {
    // RFC 6750 §3.1: a request without credentials gets a challenge without an error code.
    headers['WWW-Authenticate'] = tokenMissing
      ? `Bearer resource_metadata="${ctx.resourceMetadataUrl}"`
      : `Bearer error="invalid_token", resource_metadata="${ctx.resourceMetadataUrl}"`;
  }
  if (error.reason === 'scope_insufficient') {
    headers['WWW-Authenticate'] =
      `Bearer error="insufficient_scope", scope="${(requiredScopes ?? []).join(' ')}", resource_metadata="${ctx.resourceMetadataUrl}"`;
  }
  if (status === 429 || status === 503)
    headers['Retry-After'] = String(Math.max(1, Math.ceil(retryAfterSeconds ?? 1)));
  // The rest of an oversized body is not read: closing the connection is the only way to stop it.
  if (status === 413) headers.Connection = 'close';
  const data: Record<string, unknown> = { ...details, reason: error.reason, requestId: ctx.requestId };
  if (requiredScopes) data.requiredScopes = requiredScopes;
  if (retryAfterSeconds !== undefined) data.retryAfterSeconds = retryAfterSeconds;
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: ctx.id,
    error: { code: form.code, message: error.message || form.message, data },
  });
  // With its length, in one piece, as results are (transport.ts, writeResult).
  headers['Content-Length'] = String(Buffer.byteLength(body));
  res.writeHead(status, headers);
  res.end(body);
  return status;
}
