import type { IncomingMessage } from 'node:http';
import {
  MCP_EXTENSIONS,
  MCP_META,
  MCP_MODERN_PROTOCOL_VERSION,
  MCP_PROTOCOL_VERSION,
  RejectError,
} from '@pkgreg/contracts';
import { isObject, ResultMembers, SerializedResult } from './transport.js';

// MCP 2026-07-28 beside 2025-11-25 on one endpoint (docs/decisions.md, "MCP 2026-07-28"). A request is of
// the new revision when its `params._meta` names a protocol version, whatever its headers say (the
// revision's own rule); it then carries its client capabilities in that envelope, and its routing
// headers must repeat the body. These checks run after admission's own (host, origin, token, Streamable
// HTTP headers), so both revisions are admitted alike; the errors are the revision's (-32020/1/2, HTTP 400).

/** What a 2026-07-28 request declared of itself. */
export interface ModernRequest {
  version: typeof MCP_MODERN_PROTOCOL_VERSION;
  /** The client declared the tasks extension: a long tool call may be answered as a task. */
  tasks: boolean;
}

/**
 * Every revision one may name, as -32022 and server/discover list them (the older one through
 * `initialize`); a 2.x client picks the first of its own 2026-era revisions that is listed.
 */
export const SUPPORTED_REVISIONS: readonly string[] = [MCP_MODERN_PROTOCOL_VERSION, MCP_PROTOCOL_VERSION];
/** The body field each routing method's `Mcp-Name` header repeats. */
const NAME_FIELD: Record<string, string> = {
  'tools/call': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/** A protocol version header naming 2026-07-28 or a later revision (a date, compared as one). */
export function namesModernRevision(header: string | undefined): boolean {
  // The comparison first: a 2025-11-25 client sends its version with every request.
  return header !== undefined && header >= MCP_MODERN_PROTOCOL_VERSION && /^\d{4}-\d{2}-\d{2}$/.test(header);
}

/**
 * A request that names its revision in `params._meta` (the envelope's claim), valid or not: its version is
 * judged from the body, the MCP-Protocol-Version header only cross-checked against it.
 */
export function claimsEnvelope(params: Record<string, unknown>): boolean {
  const meta = params._meta;
  return isObject(meta) && MCP_META.protocolVersion in meta;
}

function envelopeError(key: string, problem: 'missing' | 'malformed'): RejectError {
  return new RejectError(
    'request_schema_invalid',
    `Invalid _meta envelope for protocol revision ${MCP_MODERN_PROTOCOL_VERSION}: ${key}: ${problem}`,
    { httpStatus: 400, envelope: { key, problem } },
  );
}

function mismatch(header: string | undefined, body: string): RejectError {
  return new RejectError('header_mismatch', `Bad Request: the request headers and body disagree: ${body}`, {
    mismatch: { header: header ?? '(missing)', body },
  });
}

const headerOf = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

/** A header value as sent: `=?base64?…?=` carries UTF-8 that a header cannot (the revision's encoding). */
function decodeHeaderValue(value: string): string | null {
  const sentinel = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  if (!sentinel) return value;
  const encoded = sentinel[1] ?? '';
  if (encoded.length % 4 !== 0) return null;
  return Buffer.from(encoded, 'base64').toString('utf8');
}

/**
 * The request's 2026-07-28 envelope, checked with its headers; undefined for a 2025-11-25 request (no
 * envelope). A request of neither kind (a new version's header without an envelope, a malformed
 * envelope, headers that disagree with the body, an unsupported version) is refused, in the order of
 * the 2.x SDK's inbound validation ladder: the envelope, the headers that are sent and disagree with the
 * body (-32020), the version (-32022), then the headers that are missing (-32020).
 */
export function modernRequestOf(
  req: IncomingMessage,
  method: string,
  params: Record<string, unknown>,
): ModernRequest | undefined {
  const meta = params._meta;
  const headerVersion = headerOf(req, 'mcp-protocol-version');
  if (!isObject(meta) || !(MCP_META.protocolVersion in meta)) {
    if (namesModernRevision(headerVersion)) {
      throw new RejectError(
        'request_schema_invalid',
        `Invalid params: the MCP-Protocol-Version header names protocol revision ${headerVersion}, but the request is missing the required per-request envelope key(s): _meta`,
        { httpStatus: 400, envelope: { missing: ['_meta'] } },
      );
    }
    return undefined;
  }
  const version = meta[MCP_META.protocolVersion];
  if (typeof version !== 'string' || version === '')
    throw envelopeError(MCP_META.protocolVersion, 'malformed');
  const capabilities = meta[MCP_META.clientCapabilities];
  if (capabilities === undefined) throw envelopeError(MCP_META.clientCapabilities, 'missing');
  if (!isObject(capabilities)) throw envelopeError(MCP_META.clientCapabilities, 'malformed');
  const info = meta[MCP_META.clientInfo];
  if (
    info !== undefined &&
    !(isObject(info) && typeof info.name === 'string' && typeof info.version === 'string')
  ) {
    throw envelopeError(MCP_META.clientInfo, 'malformed');
  }
  // A valid request costs the same comparisons as in the earlier order.
  const headerMethod = headerOf(req, 'mcp-method');
  if (headerVersion !== version && headerVersion !== undefined) {
    throw mismatch(
      headerVersion,
      `the body envelope names protocol version ${version.slice(0, 64)} but the MCP-Protocol-Version header names ${headerVersion}`,
    );
  }
  if (headerMethod !== method && headerMethod !== undefined) {
    throw mismatch(
      headerMethod,
      `the body names method ${method} but the Mcp-Method header names ${headerMethod}`,
    );
  }
  if (version !== MCP_MODERN_PROTOCOL_VERSION) {
    throw new RejectError(
      'protocol_version_unsupported',
      `Unsupported protocol version: ${version.slice(0, 64)}`,
      {
        supported: SUPPORTED_REVISIONS,
        requested: version.slice(0, 64),
      },
    );
  }
  if (headerVersion === undefined) {
    throw mismatch(
      headerVersion,
      `the body envelope names protocol version ${version} but the required MCP-Protocol-Version header is absent`,
    );
  }
  if (headerMethod === undefined) {
    throw mismatch(
      headerMethod,
      `the body names method ${method} but the required Mcp-Method header is absent`,
    );
  }
  const field = NAME_FIELD[method];
  const named = field === undefined ? undefined : params[field];
  if (field !== undefined && typeof named === 'string') {
    const raw = headerOf(req, 'mcp-name');
    const decoded = raw === undefined ? undefined : decodeHeaderValue(raw);
    if (decoded === null) throw mismatch(raw, 'the Mcp-Name header carries an invalid Base64 sentinel value');
    if (decoded !== named) {
      const body = `params.${field}=${JSON.stringify(named)}`;
      throw mismatch(
        raw,
        decoded === undefined
          ? `the body carries ${body} but the required Mcp-Name header is absent`
          : `the body carries ${body} but the Mcp-Name header names ${JSON.stringify(decoded)}`,
      );
    }
  }
  const extensions = capabilities.extensions;
  return {
    version: MCP_MODERN_PROTOCOL_VERSION,
    tasks: isObject(extensions) && isObject(extensions[MCP_EXTENSIONS.tasks]),
  };
}

/** -32021 for a request that needs the tasks extension its client did not declare. */
export function tasksExtensionRequired(what: string): RejectError {
  return new RejectError(
    'capability_missing',
    `Missing required client capabilities: extensions.${MCP_EXTENSIONS.tasks} (${what})`,
    { requiredCapabilities: { extensions: { [MCP_EXTENSIONS.tasks]: {} } } },
  );
}

/** A method this revision does not have (or this endpoint does not serve): -32601, HTTP 404. */
export function modernMethodNotFound(method: string): RejectError {
  return new RejectError('method_not_found', `Method not found: ${method.slice(0, 100)}`, {
    httpStatus: 404,
  });
}

/** How long a 2026-07-28 client may reuse a result, and whether other users may share it. */
interface CacheHint {
  ttlMs: number;
  /** Omitted: public for an anonymous catalog read, private for a person's (a delegated token). */
  scope?: 'public' | 'private';
}

// The revision's cacheable results (server/utilities/caching). The catalog changes as versions are
// published and delisted, so its reads are kept a minute; what only a restart changes, longer.
const CACHE_HINTS: Readonly<Record<string, CacheHint>> = {
  'server/discover': { ttlMs: 300_000, scope: 'public' },
  // What a token's scopes let it see.
  'tools/list': { ttlMs: 300_000, scope: 'private' },
  'resources/templates/list': { ttlMs: 3_600_000, scope: 'public' },
  'resources/list': { ttlMs: 60_000 },
  'resources/read': { ttlMs: 60_000 },
  'resources/directory/read': { ttlMs: 60_000 },
  'skills/list': { ttlMs: 60_000 },
  'skills/get': { ttlMs: 60_000 },
};

/** A tools/call answered with the tasks extension's CreateTaskResult (its own `resultType`). */
export class TaskCreated extends SerializedResult {}

/**
 * The members a 2026-07-28 result gets (`resultType`, the cache hint of its method, the server's
 * identity in `_meta`), as text to splice into the result; built once per kind.
 */
export function modernMembers(serverInfo: { name: string; version: string }) {
  const meta = `"_meta":${JSON.stringify({ [MCP_META.serverInfo]: serverInfo })}`;
  const taskMembers = new ResultMembers(meta);
  const built = new Map<string, ResultMembers>();
  return (method: string, result: object, person: boolean): ResultMembers => {
    if (result instanceof TaskCreated) return taskMembers;
    const hint = CACHE_HINTS[method];
    const scope = hint ? (hint.scope ?? (person ? 'private' : 'public')) : undefined;
    const key = hint ? `${hint.ttlMs} ${scope}` : '';
    let members = built.get(key);
    if (members === undefined) {
      members = new ResultMembers(
        `"resultType":"complete",${hint ? `"ttlMs":${hint.ttlMs},"cacheScope":"${scope}",` : ''}${meta}`,
      );
      built.set(key, members);
    }
    return members;
  };
}
