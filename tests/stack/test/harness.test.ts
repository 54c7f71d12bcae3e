import { once } from 'node:events';
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useStack } from '../src/vitest.js';

// The stack harness (src/apps.ts) counts an HTTP app ready only once the app's own process said it holds
// its port: a server that took the port in between answers /readyz too, and must not pass for the app.

const stack = useStack('harness');

describe('the stack harness', () => {
  it('fails a restart whose port another server took, loudly, never ready by that server', async () => {
    const api = await stack.spawn('registry-api');
    const port = Number(new URL(api.url ?? '').port);
    expect(await api.stop()).toBe(0);
    const impostor = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"status":"ready"}');
    });
    impostor.listen(port, '127.0.0.1');
    await once(impostor, 'listening');
    try {
      expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
      await expect(api.restart()).rejects.toThrow(/exited/);
      expect(api.lines.some((line) => line.includes('EADDRINUSE'))).toBe(true);
    } finally {
      impostor.close();
    }
  });
});
