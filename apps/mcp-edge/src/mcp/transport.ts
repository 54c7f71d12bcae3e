import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERROR_WIRE_FORMS, type JsonRpcId, RejectError } from '@pkgreg/contracts';

// Streamable HTTP in stateless mode with JSON responses (MCP 2025-11-25, basic/transports): the request
// body in, the JSON-RPC message parsed, results out. Whether the request may go on is admission's call
// (admission/admission.ts); errors leave through rpc-error.ts.

const MAX_BODY_BYTES = 64 * 1024;

export type Parsed =
  | { kind: 'request'; id: JsonRpcId; method: string; params: Record<string, unknown> }
  | { kind: 'notification'; method: string | null }
  | { kind: 'invalid'; reason: 'parse_error' | 'invalid_request'; message: string };

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    // A declared length over the limit is refused before reading any of it (the 413 closes the connection).
    if (Number(req.headers['content-length']) > MAX_BODY_BYTES) {
      reject(new RejectError('invalid_request', 'request body too large', { httpStatus: 413 }));
      return;
    }
    // Requests almost always arrive in one chunk: keep it as is and decode once, no concat copy.
    let first: Buffer | undefined;
    let more: Buffer[] | undefined;
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new RejectError('invalid_request', 'request body too large', { httpStatus: 413 }));
        req.resume();
        return;
      }
      if (!first) first = chunk;
      else {
        more ??= [first];
        more.push(chunk);
      }
    });
    req.on('end', () =>
      resolve(more ? Buffer.concat(more).toString('utf8') : (first?.toString('utf8') ?? '')),
    );
    req.on('error', reject);
  });
}

/**
 * What Node's HTTP parser refuses before the edge sees a request (malformed, headers over 16 KiB, too
 * slow) as a JSON-RPC error (server-kit listen.ts writes it), the shape of every other /mcp refusal.
 */
export function rpcClientErrorBody(_status: number, message: string, requestId: string): string {
  const { code } = ERROR_WIRE_FORMS.invalid_request;
  return JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: { code, message, data: { reason: 'invalid_request', requestId } },
  });
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The message as JSON-RPC 2.0 sees it; an invalid one is refused by admission at its place in the order. */
export function parseMessage(raw: string): Parsed {
  let message: unknown;
  try {
    message = JSON.parse(raw);
  } catch {
    return { kind: 'invalid', reason: 'parse_error', message: 'body is not valid JSON' };
  }
  if (Array.isArray(message)) {
    return { kind: 'invalid', reason: 'invalid_request', message: 'batches are not supported' };
  }
  if (!isObject(message) || message.jsonrpc !== '2.0') {
    return { kind: 'invalid', reason: 'invalid_request', message: 'not a JSON-RPC 2.0 message' };
  }
  const { id, method, params } = message;
  const hasId = id !== undefined;
  if (hasId && !(typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)))) {
    return { kind: 'invalid', reason: 'invalid_request', message: 'id must be a string or an integer' };
  }
  if (params !== undefined && !isObject(params)) {
    return { kind: 'invalid', reason: 'invalid_request', message: 'params must be an object' };
  }
  if (typeof method === 'string' && method.length > 0) {
    if (!hasId) return { kind: 'notification', method };
    return {
      kind: 'request',
      id: id as JsonRpcId,
      method,
      params: (params as Record<string, unknown>) ?? {},
    };
  }
  // A client's response to a server request: nothing to answer in stateless mode.
  if (hasId && method === undefined && ('result' in message || 'error' in message)) {
    return { kind: 'notification', method: null };
  }
  return { kind: 'invalid', reason: 'invalid_request', message: 'method is required' };
}

/** A `result` already serialized (tool results are built as JSON text once, not re-stringified). */
export class SerializedResult {
  constructor(readonly json: string) {}
}

const RESPONSE_HEAD = '{"jsonrpc":"2.0","id":';

/**
 * A result served unchanged to every caller (system.info, agents.list, the catalog's kept reads): the
 * response's tail after the id is built once, with its length in UTF-8 bytes, so a request only joins
 * the head, its id and the tail.
 */
export class StaticResult {
  /** `,"result":{…}}` */
  readonly tail: string;
  readonly tailBytes: number;
  constructor(serialized: SerializedResult) {
    this.tail = `,"result":${serialized.json}}`;
    this.tailBytes = Buffer.byteLength(this.tail);
  }
}

/**
 * decisions.md: the tool object at the top level of `result`, plus MCP's `content` (one text item holding
 * the JSON) and `structuredContent` (the same object). Built from one JSON.stringify of the tool object.
 */
export function toolCallResult(result: object): SerializedResult {
  const json = JSON.stringify(result);
  const extra = `"content":[{"type":"text","text":${JSON.stringify(json)}}],"structuredContent":${json}}`;
  return new SerializedResult(json === '{}' ? `{${extra}` : `${json.slice(0, -1)},${extra}`);
}

/**
 * Members to add at the end of a result object (`"key":value,…`), with their length in UTF-8 bytes, made
 * once: the same few sets are added to every 2026-07-28 result (mcp/modern.ts).
 */
export class ResultMembers {
  readonly bytes: number;
  constructor(readonly json: string) {
    this.bytes = Buffer.byteLength(json);
  }
}

// A response is written as ONE string with its Content-Length: Node then sends headers and body in one
// chunk, encoded straight into the socket write. A Buffer body goes out as a second chunk of a writev
// (and the Buffer.concat that built it is an allocation per request); a string without a length goes out
// chunked, in four pieces. Both cost the edge more CPU per request (docs/benchmarks.md, MCP edge).
// Headers go to writeHead whole, with X-Request-Id among them, not through setHeader first: Node then
// takes the object as it is instead of merging it into the headers already set.
/**
 * Writes a JSON-RPC result. `extra`: members added to the result object (MCP 2026-07-28's `resultType`,
 * cache hints and `_meta`), spliced into its serialized form so a static result is not rebuilt.
 */
export function writeResult(
  res: ServerResponse,
  requestId: string,
  id: JsonRpcId,
  result: object,
  extra?: ResultMembers,
): void {
  const idJson = JSON.stringify(id);
  let body: string;
  let length: number;
  if (result instanceof StaticResult) {
    const { tail } = result;
    // `typeof id`: a number's JSON is ASCII; only a string id may need counting.
    length = RESPONSE_HEAD.length + (typeof id === 'number' ? idJson.length : Buffer.byteLength(idJson));
    if (extra === undefined) {
      body = `${RESPONSE_HEAD}${idJson}${tail}`;
      length += result.tailBytes;
    } else {
      // tail is `,"result":{…}}`: the members go before the result's closing brace (no comma in `{}`).
      const alone = tail.charCodeAt(tail.length - 3) === 0x7b;
      body = `${RESPONSE_HEAD}${idJson}${tail.slice(0, -2)}${alone ? '' : ','}${extra.json}}}`;
      length += result.tailBytes + extra.bytes + (alone ? 0 : 1);
    }
  } else {
    let json: string;
    if (extra !== undefined && isObject((result as { _meta?: unknown })._meta)) {
      // A result with `_meta` of its own (skills/list's count of skills withheld) gets one `_meta` holding
      // both; rare, so parsed rather than spliced.
      json = JSON.stringify(mergedMembers(result as { _meta: Record<string, unknown> }, extra));
    } else {
      json = result instanceof SerializedResult ? result.json : JSON.stringify(result);
      if (extra !== undefined) json = `${json.slice(0, -1)}${json === '{}' ? '' : ','}${extra.json}}`;
    }
    body = `${RESPONSE_HEAD}${idJson},"result":${json}}`;
    length = Buffer.byteLength(body);
  }
  res.writeHead(200, {
    'X-Request-Id': requestId,
    'Content-Type': 'application/json',
    'Content-Length': length,
  });
  res.end(body);
}

/** `result` with `extra`'s members, the two `_meta` objects merged. */
function mergedMembers(result: { _meta: Record<string, unknown> }, extra: ResultMembers): object {
  const members = JSON.parse(`{${extra.json}}`) as { _meta?: Record<string, unknown> };
  return { ...result, ...members, _meta: { ...result._meta, ...members._meta } };
}

/** A notification (or a client's response) is accepted with 202 and no body; returns the status. */
export function writeAccepted(res: ServerResponse, requestId: string): number {
  res.writeHead(202, { 'X-Request-Id': requestId, 'Content-Length': 0 });
  res.end();
  return 202;
}
