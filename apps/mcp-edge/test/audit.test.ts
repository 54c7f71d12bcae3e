import { SCOPES } from '@pkgreg/contracts';
import { describe, expect, it } from 'vitest';
import { callTool, clientWithToken, createHarness, forgeToken, postMcp, rpc, useHarness } from './helpers.js';

// decisions.md, Audit: every /mcp request, admitted or rejected, leaves one audit record (time, request
// id, namespace, client, method, tool, outcome or reason, latency, backend); never a token or memory content.

// A long timer and a batch of 4, so the test sees when rows are written.
const h = useHarness({ EDGE_AUDIT_FLUSH_MS: '60000', EDGE_AUDIT_BATCH_SIZE: '4' });

const rows = () => h.t.db.selectFrom('audit_records').selectAll().orderBy('at').execute();

describe('audit records', () => {
  it('one row per request, admitted or rejected, written in batches off the request path', async () => {
    const c = await clientWithToken(h, [SCOPES.stmWrite, SCOPES.systemRead]);
    const secretContent = 'top secret memory content 4711';
    const put = await callTool(h, c.token, 'pkgreg.memory.v1.put', {
      namespace: c.namespace,
      tier: 'stm',
      content: secretContent,
    });
    const noToken = await rpc(h, undefined, 'tools/list');
    const unknownHost = await rpc(h, c.token, 'ping', {}, { headers: { Host: 'nowhere.example' } });
    // Three requests answered, none written yet: the batch is not full and the timer is far away.
    expect(await rows()).toHaveLength(0);
    const lacking = await forgeToken(h, { scope: SCOPES.systemRead, clientId: c.clientId });
    const denied = await callTool(h, lacking, 'pkgreg.memory.v1.put', {
      namespace: c.namespace,
      tier: 'ltm',
      content: 'x',
    });
    await h.edge.shutdown(); // flushes (also what happens on SIGTERM)
    const all = await rows();
    expect(all).toHaveLength(4);
    const byId = new Map(all.map((r) => [r.request_id, r]));

    expect(byId.get(String(put.headers['x-request-id']))).toMatchObject({
      namespace: c.namespace,
      client_id: c.clientId,
      method: 'tools/call',
      tool: 'pkgreg.memory.v1.put',
      outcome: 'ok',
      reason: null,
      http_status: 200,
      backend: 'development',
    });
    expect(byId.get(String(noToken.headers['x-request-id']))).toMatchObject({
      namespace: null,
      method: 'tools/list',
      outcome: 'rejected',
      reason: 'token_invalid',
      http_status: 401,
      backend: 'development',
    });
    expect(byId.get(String(unknownHost.headers['x-request-id']))).toMatchObject({
      outcome: 'rejected',
      reason: 'deployment_not_resolved',
      http_status: 421,
      backend: null,
    });
    expect(byId.get(String(denied.headers['x-request-id']))).toMatchObject({
      reason: 'scope_insufficient',
      http_status: 403,
      tool: 'pkgreg.memory.v1.put',
    });
    for (const r of all) {
      expect(r.latency_ms).toBeGreaterThan(0);
      expect(r.at).toBeInstanceOf(Date);
    }
    const dump = JSON.stringify(all);
    expect(dump).not.toContain(c.token);
    expect(dump).not.toContain(lacking);
    expect(dump).not.toContain(secretContent);
  });

  it('a notification leaves a row too, with its method and HTTP 202', async () => {
    const other = await createHarness();
    try {
      const c = await clientWithToken(other, [SCOPES.systemRead]);
      const res = await postMcp(other, c.token, { jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(res.status).toBe(202);
      await other.edge.shutdown();
      const [row] = await other.t.db.selectFrom('audit_records').selectAll().execute();
      expect(row).toMatchObject({ method: 'notifications/initialized', http_status: 202, outcome: 'ok' });
    } finally {
      await other.close();
    }
  });

  it('a method or tool name with characters Postgres text cannot hold is audited, and blocks no other row', async () => {
    const other = await createHarness({ EDGE_AUDIT_FLUSH_MS: '60000', EDGE_AUDIT_BATCH_SIZE: '1000' });
    try {
      const c = await clientWithToken(other, [SCOPES.systemRead]);
      // JSON lets a client send U+0000, which no Postgres text value can hold; tabs, newlines and
      // backslashes must survive as they came.
      const odd = await postMcp(other, c.token, { jsonrpc: '2.0', id: 1, method: 'tools/\u0000list\t\\x\n' });
      const badTool = await postMcp(other, c.token, {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'pkgreg.\u0000system\r.v1.info', arguments: {} },
      });
      const fine = await rpc(other, c.token, 'ping');
      await other.edge.shutdown();
      const all = await other.t.db.selectFrom('audit_records').selectAll().execute();
      const byId = new Map(all.map((r) => [r.request_id, r]));
      expect(all).toHaveLength(3);
      expect(byId.get(String(odd.headers['x-request-id']))).toMatchObject({
        method: 'tools/\ufffdlist\t\\x\n',
        reason: 'method_not_found',
      });
      expect(byId.get(String(badTool.headers['x-request-id']))?.tool).toBe('pkgreg.\ufffdsystem\r.v1.info');
      expect(byId.get(String(fine.headers['x-request-id']))).toMatchObject({ method: 'ping', outcome: 'ok' });
    } finally {
      await other.close();
    }
  });
});
