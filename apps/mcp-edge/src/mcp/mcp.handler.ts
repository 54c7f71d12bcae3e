import type { IncomingMessage, ServerResponse } from 'node:http';
import { RejectError } from '@pkgreg/contracts';
import {
  annotateSpan,
  inSpan,
  type Logger,
  nameRequest,
  outageMonitorOf,
  tracingEnabled,
} from '@pkgreg/server-kit';
import { type AdmissionDeps, createAdmission } from '../admission/admission.js';
import type { AuditWriter } from '../audit/audit-writer.js';
import type { Catalog } from '../catalog/catalog.js';
import type { DelegationAssertions } from '../catalog/delegation-assertions.js';
import type { Env } from '../env.js';
import { createEdgeMetrics, type EdgeMetrics } from '../metrics.js';
import { edgeRouteOf } from '../routes/route-table.js';
import { createDispatch } from './dispatch.js';
import { type Exchange, newExchange } from './exchange.js';
import { modernMembers } from './modern.js';
import { toRejectError, writeRpcError } from './rpc-error.js';
import { enabledTools, SERVER_VERSION } from './server-info.js';
import { type Parsed, parseMessage, readBody, writeAccepted, writeResult } from './transport.js';

// POST /mcp from the first byte to the audit row: the transport reads and parses the message, admission
// runs every check in the documented order, dispatch answers, and every request, admitted or refused,
// leaves one audit row. Written against node:http directly: app.ts routes /mcp here before Express.

export interface McpHandlerDeps extends Omit<AdmissionDeps, 'tools'> {
  env: Env;
  logger: Logger;
  audit: AuditWriter;
  /** The registry's catalog: skill:// resources and the registry tools. */
  catalog: Catalog;
  /** What the catalog is read as for a person an app acts for. */
  assertions: DelegationAssertions;
  resourceMetadataUrl: string;
  metrics?: EdgeMetrics;
}

const MCP_ROUTE = edgeRouteOf('mcp');

export function createMcpHandler(deps: McpHandlerDeps) {
  const { logger, audit, resourceMetadataUrl } = deps;
  const metrics = deps.metrics ?? createEdgeMetrics();
  const tools = enabledTools(deps.env);
  const admission = createAdmission({ ...deps, tools });
  const dispatch = createDispatch(deps.env, tools, deps.catalog, deps.assertions);
  const members = modernMembers({ name: deps.env.PKGREG_SERVER_NAME, version: SERVER_VERSION });
  // Tracing is started before the app is built (index.ts) and stays as it is, so the path is chosen
  // once: untraced, a request allocates no span closure. Traced, admission is a child span of the
  // request's, so its checks' time shows apart.
  const traced = tracingEnabled();
  const admit = traced
    ? (req: IncomingMessage, ex: Exchange, message: Parsed) =>
        inSpan('mcp admission', () => admission.admit(req, ex, message))
    : admission.admit;

  return async function handleMcpPost(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    nameRequest(req, MCP_ROUTE);
    const ex = newExchange();
    let status = 200;
    let reason: string | null = null;
    try {
      // The body is read first so that every error, whatever stage refuses, can echo the request's id.
      const message = parseMessage(await readBody(req));
      noteMessage(ex, message);
      const admitted = await admit(req, ex, message);
      if (admitted === undefined) status = writeAccepted(res, ex.requestId);
      else {
        const result = await dispatch(admitted);
        // A 2026-07-28 result names its type, its cache hint and the server (mcp/modern.ts).
        const extra = admitted.modern
          ? members(admitted.method, result, admitted.auth.subject !== undefined)
          : undefined;
        writeResult(res, ex.requestId, admitted.id, result, extra);
      }
    } catch (error) {
      const reject = toRejectError(error);
      // A PostgreSQL or Redis outage is logged once by the process's monitor, not per request.
      if (!(error instanceof RejectError) && !outageMonitorOf(logger).failed(error)) {
        logger.error({ err: error, requestId: ex.requestId }, 'mcp request failed');
      }
      reason = reject.reason;
      status = writeRpcError(res, { id: ex.id, requestId: ex.requestId, resourceMetadataUrl }, reject);
    }
    const latencyMs = performance.now() - started;
    metrics.observeMcp(ex.method, ex.tool, reason, latencyMs / 1000);
    if (traced) {
      annotateSpan({
        'mcp.method.name': ex.method ?? undefined,
        'gen_ai.tool.name': ex.tool ?? undefined,
        'pkgreg.reject_reason': reason ?? undefined,
        'pkgreg.backend': ex.backend?.mode,
      });
    }
    audit.record({
      at: new Date(),
      request_id: ex.requestId,
      namespace: ex.auth?.namespace ?? null,
      client_id: ex.auth?.clientId ?? null,
      method: ex.method,
      tool: ex.tool,
      outcome: reason === null ? 'ok' : reason === 'internal_error' ? 'error' : 'rejected',
      reason,
      http_status: status,
      latency_ms: latencyMs,
      backend: ex.backend?.label ?? null,
    });
  };
}

/** What the message says, noted before admission so a refused request is audited with it too. */
function noteMessage(ex: Exchange, message: Parsed): void {
  // Caller-chosen strings: capped before they reach the audit table.
  if (message.kind !== 'invalid') ex.method = message.method?.slice(0, 100) ?? null;
  if (message.kind === 'request') {
    ex.id = message.id;
    if (message.method === 'tools/call' && typeof message.params.name === 'string') {
      ex.tool = message.params.name.slice(0, 100);
    }
  }
}
