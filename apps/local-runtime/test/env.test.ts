import { describe, expect, it } from 'vitest';
import { connectUrl } from '../src/dial-out.js';
import { loadConfig } from '../src/env.js';

// The local runtime's configuration (env.ts): flags over variables, one message naming every bad
// setting and never its value, the embedded store under the XDG data home by default.

const SECRET = 's'.repeat(40);
const base = {
  PKGREG_TUNNEL_SESSION_ID: 'ts_abc',
  PKGREG_TUNNEL_SECRET: SECRET,
  PKGREG_TUNNEL_CLIENTS: 'pkc_1',
  HOME: '/home/u',
};

describe('loadConfig', () => {
  it('defaults: the embedded store per session under $XDG_DATA_HOME (else ~/.local/share)', () => {
    const config = loadConfig({ PKGREG_EDGE_URL: 'https://edge.example/' }, base);
    expect(config.edgeUrl).toBe('https://edge.example');
    expect(config.store).toEqual({ kind: 'embedded', dataDir: '/home/u/.local/share/pkgreg/runtime/ts_abc' });
    expect(config.listen).toBeUndefined();
    const xdg = loadConfig({ PKGREG_EDGE_URL: 'http://e' }, { ...base, XDG_DATA_HOME: '/data' });
    expect(xdg.store).toEqual({ kind: 'embedded', dataDir: '/data/pkgreg/runtime/ts_abc' });
  });

  it('flags override variables; DATABASE_URL switches to PostgreSQL; --port adds the HTTP receiver', () => {
    const config = loadConfig(
      { PKGREG_TUNNEL_SESSION_ID: 'ts_flag', PKGREG_RUNTIME_PORT: '0', DATABASE_URL: 'postgres://u@h/db' },
      base,
    );
    expect(config.sessionId).toBe('ts_flag');
    expect(config.listen).toEqual({ port: 0, host: '127.0.0.1' });
    expect(config.store).toMatchObject({ kind: 'postgres', url: 'postgres://u@h/db' });
    // A schema of the session's own, so a shared database never mixes its tasks with anyone's.
    expect((config.store as { schema: string }).schema).toMatch(/^pkgreg_runtime_[0-9a-f]{16}$/);
    const other = loadConfig(
      { PKGREG_TUNNEL_SESSION_ID: 'TS_FLAG', DATABASE_URL: 'postgres://u@h/db', PKGREG_EDGE_URL: 'http://e' },
      base,
    );
    expect((other.store as { schema: string }).schema).not.toBe((config.store as { schema: string }).schema);
    expect(() =>
      loadConfig({ PKGREG_RUNTIME_DB_SCHEMA: 'Bad-Name', PKGREG_EDGE_URL: 'http://e' }, base),
    ).toThrow(/PKGREG_RUNTIME_DB_SCHEMA/);
  });

  it('refuses a missing session, a short secret, neither edge nor port, naming each and never the secret', () => {
    let message = '';
    try {
      loadConfig({}, { PKGREG_TUNNEL_SECRET: 'short-secret-value' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/PKGREG_TUNNEL_SESSION_ID/);
    expect(message).toMatch(/PKGREG_TUNNEL_SECRET/);
    expect(message).not.toContain('short-secret-value');
    expect(() => loadConfig({}, base)).toThrow(/PKGREG_EDGE_URL/);
    expect(() => loadConfig({ PKGREG_EDGE_URL: 'ftp://e' }, base)).toThrow(/PKGREG_EDGE_URL/);
  });

  it('the clients it serves are required: a list of ids or namespaces, flags over the variable (issue 26)', () => {
    const { PKGREG_TUNNEL_CLIENTS: _, ...without } = base;
    for (const missing of [
      without,
      { ...base, PKGREG_TUNNEL_CLIENTS: '' },
      { ...base, PKGREG_TUNNEL_CLIENTS: ' , ' },
    ]) {
      expect(() => loadConfig({ PKGREG_EDGE_URL: 'http://e' }, missing)).toThrow(/PKGREG_TUNNEL_CLIENTS/);
    }
    const ns = `app:${'a'.repeat(64)}`;
    expect(
      loadConfig({ PKGREG_EDGE_URL: 'http://e' }, { ...base, PKGREG_TUNNEL_CLIENTS: `pkc_1, ${ns},pkc_1` })
        .clients,
    ).toEqual(['pkc_1', ns]);
    expect(
      loadConfig({ PKGREG_EDGE_URL: 'http://e', PKGREG_TUNNEL_CLIENTS: 'pkc_flag' }, base).clients,
    ).toEqual(['pkc_flag']);
  });

  it("serving the session's owners (issue 29) stands in for the list; off unless asked", () => {
    const { PKGREG_TUNNEL_CLIENTS: _, ...without } = base;
    const owners = loadConfig({ PKGREG_EDGE_URL: 'http://e', PKGREG_TUNNEL_SERVE_OWNERS: 'true' }, without);
    expect({ clients: owners.clients, servesOwners: owners.servesOwners }).toEqual({
      clients: [],
      servesOwners: true,
    });
    expect(loadConfig({ PKGREG_EDGE_URL: 'http://e' }, base).servesOwners).toBe(false);
    expect(() =>
      loadConfig({ PKGREG_EDGE_URL: 'http://e' }, { ...without, PKGREG_TUNNEL_SERVE_OWNERS: 'false' }),
    ).toThrow(/PKGREG_TUNNEL_CLIENTS/);
  });

  it('the connect URL follows the edge scheme (ws: for http:, wss: for https:)', () => {
    expect(connectUrl('http://127.0.0.1:4100')).toBe('ws://127.0.0.1:4100/tunnel/connect');
    expect(connectUrl('https://mcp.example.com/base')).toBe('wss://mcp.example.com/base/tunnel/connect');
  });
});
