import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SCOPES } from '@pkgreg/contracts';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { deriveNamespace } from '../src/oauth/verify-token.js';
import { callTool, ISSUER, RESOURCE, useHarness } from './helpers.js';

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
    expect(await h.t.db.selectFrom('oauth_clients').select('client_id').execute()).toEqual(before);
  });

  it('keys:rotate makes a new active key and keeps the old one retiring', async () => {
    const before = await h.t.db.selectFrom('oauth_signing_keys').select(['kid', 'status']).execute();
    const out = await edge('keys:rotate');
    const kid = /now (\S+)/.exec(out.stdout)?.[1];
    const after = await h.t.db.selectFrom('oauth_signing_keys').select(['kid', 'status']).execute();
    expect(after.find((k) => k.kid === kid)?.status).toBe('active');
    for (const old of before) expect(after.find((k) => k.kid === old.kid)?.status).toBe('retiring');
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
