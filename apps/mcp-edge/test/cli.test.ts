import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { deriveNamespace, SCOPES } from '@pkgreg/contracts';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createClient } from '../src/oauth/clients.service.js';
import { callTool, expectRpcError, ISSUER, RESOURCE, rpc, tokenAt, tokenFor, useHarness } from './helpers.js';

// The operator commands (`pnpm edge …` runs dist/cli.js): clients, keys, audit, quarantine.

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const h = useHarness();

const edge = async (...args: string[]) =>
  run(process.execPath, [CLI, ...args], {
    env: { ...process.env, DATABASE_URL: h.t.url, LOG_LEVEL: 'silent' },
  });

describe('pnpm edge (operator CLI)', () => {
  it('clients:create shows the secret once; the client gets tokens; clients:list never shows secrets; disable stops it', async () => {
    const created = await edge(
      'clients:create',
      '--name',
      'ci bot',
      '--scopes',
      `${SCOPES.systemRead} ${SCOPES.stmWrite}`,
    );
    const client = JSON.parse(created.stdout) as {
      clientId: string;
      clientSecret: string;
      allowedScopes: string[];
    };
    expect(client.allowedScopes).toEqual([SCOPES.systemRead, SCOPES.stmWrite]);
    expect(created.stderr).toContain('cannot be shown again');
    const token = () =>
      request(h.app)
        .post('/mcp/token')
        .auth(client.clientId, client.clientSecret)
        .type('form')
        .send({ grant_type: 'client_credentials', resource: RESOURCE });
    const ok = await token();
    expect(ok.status).toBe(200);

    const listed = await edge('clients:list');
    expect(listed.stdout).toContain(client.clientId);
    expect(listed.stdout).not.toContain(client.clientSecret);

    await edge('clients:disable', client.clientId);
    expect((await token()).status).toBe(401);
  });

  it('clients:demo (used by pnpm dev) prints a working demo client, re-issuing its secret each time', async () => {
    const first = await edge('clients:demo');
    const id = /client id\s+(\S+)/.exec(first.stdout)?.[1] as string;
    const secret1 = /client secret\s+(\S+)/.exec(first.stdout)?.[1] as string;
    const second = await edge('clients:demo');
    expect(/client id\s+(\S+)/.exec(second.stdout)?.[1]).toBe(id);
    const secret2 = /client secret\s+(\S+)/.exec(second.stdout)?.[1] as string;
    expect(secret2).not.toBe(secret1);
    const tokenWith = (secret: string) =>
      request(h.app)
        .post('/mcp/token')
        .auth(id, secret)
        .type('form')
        .send({ grant_type: 'client_credentials' });
    expect((await tokenWith(secret1)).status).toBe(401);
    const ok = await tokenWith(secret2);
    expect(ok.status).toBe(200);
    expect(ok.body.scope.split(' ')).toHaveLength(9);
  });

  it('exit codes as the registry CLIs (README.md): 0 help, 1 a refused change or bad configuration, 2 usage', async () => {
    expect((await edge('--help')).stdout).toContain('clients:create');
    await expect(edge('clients:frobnicate')).rejects.toMatchObject({ code: 2 });
    await expect(edge('audit', '--limit', '0')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('expected 1..10000'),
    });
    await expect(edge('clients:disable', 'no-such-client')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no enabled client no-such-client'),
    });
    const badEnv = run(process.execPath, [CLI, 'clients:list'], {
      env: { ...process.env, DATABASE_URL: 'not a url', LOG_LEVEL: 'silent' },
    });
    await expect(badEnv).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('DATABASE_URL') });
  });

  it('clients:create refuses unknown scopes, no scope at all, and an empty name; nothing is registered', async () => {
    const before = await h.t.db.selectFrom('oauth_clients').select('client_id').execute();
    // Usage errors exit 2, as in the registry CLIs (README.md: exit codes).
    await expect(edge('clients:create', '--name', 'x', '--scopes', 'root')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('root'),
    });
    await expect(edge('clients:create', '--name', 'x', '--scopes', ' , ')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('expected at least one scope'),
    });
    await expect(edge('clients:create', '--name', '  ', '--scopes', SCOPES.systemRead)).rejects.toMatchObject(
      { code: 2, stderr: expect.stringContaining('expected a name of 1-200 characters') },
    );
    for (const uri of ['http://example.com/cb', 'https://app.example/cb#x', 'javascript:alert(1)']) {
      await expect(
        edge('clients:create', '--name', 'x', '--scopes', SCOPES.systemRead, '--redirect-uri', uri),
      ).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining(`redirect URI ${uri} must be`) });
    }
    expect(await h.t.db.selectFrom('oauth_clients').select('client_id').execute()).toEqual(before);
  });

  it('clients:create --redirect-uri (repeatable) registers where its sign-ins return', async () => {
    const created = await edge(
      ...['clients:create', '--name', 'Team Cursor', '--scopes', SCOPES.systemRead],
      ...['--redirect-uri', 'cursor://anysphere.cursor-mcp/oauth/callback'],
      ...['--redirect-uri', 'http://127.0.0.1/callback'],
    );
    expect(JSON.parse(created.stdout).redirectUris).toEqual([
      'cursor://anysphere.cursor-mcp/oauth/callback',
      'http://127.0.0.1/callback',
    ]);
  });

  it('keys:rotate makes new active keys (tokens, delegations) and keeps the old ones retiring', async () => {
    const keysOf = (table: 'oauth_signing_keys' | 'edge_delegation_keys') =>
      h.t.db.selectFrom(table).select(['kid', 'status']).execute();
    const before = await keysOf('oauth_signing_keys');
    const out = await edge('keys:rotate');
    const kid = /signing key is now (\S+)/.exec(out.stdout)?.[1];
    const delegationKid = /delegation key is now (\S+)/.exec(out.stdout)?.[1];
    const after = await keysOf('oauth_signing_keys');
    expect(after.find((k) => k.kid === kid)?.status).toBe('active');
    for (const old of before) expect(after.find((k) => k.kid === old.kid)?.status).toBe('retiring');
    // The delegation key rotates apart: a key of one kind never becomes the other.
    const delegationKeys = await keysOf('edge_delegation_keys');
    expect(delegationKeys.find((k) => k.kid === delegationKid)?.status).toBe('active');
    expect(delegationKeys.map((k) => k.kid)).not.toContain(kid);
    expect(after.map((k) => k.kid)).not.toContain(delegationKid);
    const listed = JSON.parse((await edge('keys:list')).stdout) as { purpose: string; kid: string }[];
    expect(listed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ purpose: 'access', kid }),
        expect.objectContaining({ purpose: 'delegation', kid: delegationKid }),
      ]),
    );
  });

  it('quarantine, release and purge a namespace; audit lists its requests', async () => {
    const created = JSON.parse(
      (await edge('clients:create', '--name', 'q', '--scopes', SCOPES.stmWrite)).stdout,
    );
    const namespace = deriveNamespace(ISSUER, created.clientId);
    const tokenRes = await request(h.app)
      .post('/mcp/token')
      .auth(created.clientId, created.clientSecret)
      .type('form')
      .send({ grant_type: 'client_credentials' });
    const token = tokenRes.body.access_token as string;
    const put = () =>
      callTool(h, token, 'pkgreg.memory.v1.put', { namespace, tier: 'stm', content: 'cli note' });
    expect((await put()).body.result.entry.status).toBe('active');

    await edge('quarantine', namespace, '--reason', 'abuse report');
    expect((await put()).body.error.data.reason).toBe('source_quarantined');
    await edge('release', namespace);
    expect((await put()).body.result).toBeDefined();
    const purged = JSON.parse((await edge('purge', namespace)).stdout);
    expect(purged.deletedEntries).toBe(2);
    expect((await put()).body.error.data.reason).toBe('source_quarantined');

    await h.edge.shutdown();
    const audit = await edge('audit', '--namespace', namespace, '--limit', '3');
    const lines = audit.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('rejected:source_quarantined');
    expect(audit.stdout).not.toContain(token);
    await expect(edge('audit', '--namespace', 'nope')).rejects.toMatchObject({ code: 2 });
  });
});

describe('pnpm edge: which clients a tenant or tunnel session serves (issue 26)', () => {
  const SETTINGS = {
    PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON: JSON.stringify([
      { host: 'acme.mcp.example.com', tenant: 'acme' },
    ]),
    PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON: JSON.stringify([
      { handle: 'carol', sessionId: 'ts_carol', secret: 'c'.repeat(43) },
    ]),
  };
  const bound = useHarness(SETTINGS);
  const cli = async (...args: string[]) =>
    run(process.execPath, [CLI, ...args], {
      env: { ...process.env, DATABASE_URL: bound.t.url, LOG_LEVEL: 'silent', ...SETTINGS },
    });
  // Made in process: clients:create has its own test above, and each CLI run costs a process start.
  const newClient = () => createClient(bound.t.db, { name: 'bound', scopes: [SCOPES.systemRead] });
  const ping = (host: string, token: string) => rpc(bound, token, 'ping', {}, { headers: { Host: host } });

  it('tenants:allow and tunnels:allow open a host to a client at once; revoke closes it at once', async () => {
    const client = await newClient();
    for (const [kind, id, host] of [
      ['tenants', 'acme', 'acme.mcp.example.com'],
      ['tunnels', 'ts_carol', 'carol.tunnel.example'],
    ] as const) {
      expect((await ping(host, await tokenFor(bound, client))).status).toBe(421);
      expect((await cli(`${kind}:allow`, id, client.clientId)).stdout).toContain(
        `allowed ${client.clientId}`,
      );
      if (kind === 'tenants') {
        expect((await cli(`${kind}:allow`, id, client.clientId)).stdout).toContain('already allowed');
        const listed = JSON.parse((await cli(`${kind}:clients`, id)).stdout);
        expect(listed.stored.map((s: { client: string }) => s.client)).toEqual([client.clientId]);
      }
      const token = await tokenAt(bound, client, host);
      // The edge needs no restart: the next request sees the grant (ping answers at the edge; a tunnel
      // call would need a runtime).
      expect((await ping(host, token)).status).toBe(200);
      await cli(`${kind}:revoke`, id, client.clientId);
      expectRpcError(await ping(host, token), 421, 'deployment_not_resolved');
      await expect(cli(`${kind}:revoke`, id, client.clientId)).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('was not allowed'),
      });
    }
  });

  it('refuses an unknown tenant, session or client (exit 1) and stores nothing', async () => {
    const client = await newClient();
    for (const [args, message] of [
      [['tenants:allow', 'nope', client.clientId], 'no hosted tenant nope'],
      [['tunnels:allow', 'ts_nope', client.clientId], 'no tunnel session ts_nope'],
      [['tenants:allow', 'acme', 'pkc_missing'], 'no client pkc_missing'],
    ] as const) {
      await expect(cli(...args)).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining(message) });
    }
    // A namespace (a trusted issuer's client) is taken as given.
    const ns = `app:${'e'.repeat(64)}`;
    await cli('tunnels:allow', 'ts_carol', ns);
    const stored = await bound.t.db.selectFrom('edge_backend_clients').selectAll().execute();
    expect(stored.filter((g) => g.client_id === client.clientId)).toEqual([]);
    expect(stored.find((g) => g.namespace === ns)).toMatchObject({ backend_id: 'ts_carol', client_id: null });
  });

  it('tunnels:own and tenants:own give an owner (an account or an organisation); disown removes it', async () => {
    await bound.t.db
      .insertInto('auth_user')
      .values({
        id: 'acct-own',
        name: 'Ada',
        email: 'ada@example.com',
        emailVerified: true,
        createdAt: new Date(),
        updatedAt: new Date(),
      })
      .execute();
    await bound.t.db
      .insertInto('auth_organization')
      .values({ id: 'org-own', name: 'Team', slug: 'team', createdAt: new Date() })
      .execute();
    await cli('tunnels:own', 'ts_carol', '--account', 'Ada@Example.com');
    await cli('tenants:own', 'acme', '--org', 'team');
    expect(JSON.parse((await cli('tunnels:clients', 'ts_carol')).stdout).owner).toBe('ada@example.com');
    expect(JSON.parse((await cli('tenants:clients', 'acme')).stdout).owner).toBe('org team');
    for (const [args, code, message] of [
      [['tunnels:own', 'ts_carol'], 2, 'name one owner'],
      [['tunnels:own', 'ts_carol', '--account', 'a@b.c', '--org', 'team'], 2, 'name one owner'],
      [['tunnels:own', 'ts_carol', '--account', 'nobody@example.com'], 1, 'no account nobody@example.com'],
      [['tenants:own', 'nope', '--org', 'team'], 1, 'no hosted tenant nope'],
    ] as const) {
      await expect(cli(...args)).rejects.toMatchObject({ code, stderr: expect.stringContaining(message) });
    }
    await cli('tunnels:disown', 'ts_carol');
    await expect(cli('tunnels:disown', 'ts_carol')).rejects.toMatchObject({ code: 1 });
    const owners = await bound.t.db.selectFrom('edge_backend_owners').selectAll().execute();
    expect(owners).toEqual([expect.objectContaining({ backend_id: 'acme', organization_id: 'org-own' })]);
  });

  it('tunnels:create needs the clients the session serves, and prints them for the edge and the runtime', async () => {
    await expect(cli('tunnels:create', '--handle', 'dave')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--client'),
    });
    await expect(cli('tunnels:create', '--handle', 'dave', '--client', 'pkc_missing')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no client pkc_missing'),
    });
    const [a, b] = [await newClient(), await newClient()];
    const out = (
      await cli('tunnels:create', '--handle', 'dave', '--client', a.clientId, '--client', b.clientId)
    ).stdout;
    const setting = JSON.parse(/PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON='(.+)'/.exec(out)?.[1] ?? '[]');
    expect(setting.at(-1).clients).toEqual([a.clientId, b.clientId]);
    expect(out).toContain(`PKGREG_TUNNEL_CLIENTS=${a.clientId},${b.clientId}`);
  });

  it("clients:disable stops the client's tokens at once, not at their expiry", async () => {
    const client = await newClient();
    await cli('tenants:allow', 'acme', client.clientId);
    const tokens: Array<[string, string]> = [
      ['localhost:4100', await tokenFor(bound, client)],
      ['acme.mcp.example.com', await tokenAt(bound, client, 'acme.mcp.example.com')],
    ];
    for (const [host, token] of tokens) expect((await ping(host, token)).status).toBe(200);
    await cli('clients:disable', client.clientId);
    for (const [host, token] of tokens) {
      const res = await ping(host, token);
      expectRpcError(res, 401, 'token_invalid');
      expect(res.body.error.message).toBe('token revoked');
    }
  });
});
