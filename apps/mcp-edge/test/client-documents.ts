import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';

// Clients' metadata documents (CIMD) for tests: an https server of the test's own as `client.test`,
// with a certificate only `fetch` below trusts (the edge's fetch in production refuses loopback
// addresses; the tests' resolves client.test to one).

export interface ClientDocuments {
  /** `https://client.test:<port>`. */
  origin: string;
  /** What the server answers per path: a body (object or text), headers, a status. */
  served: Map<string, { body: unknown; headers?: Record<string, string>; status?: number }>;
  /** Every path asked for, in order. */
  fetched: string[];
  /** oidc-provider's `fetch`, trusting the test's authority and resolving client.test to loopback. */
  fetch: (url: URL | string, options: Record<string, unknown>) => ReturnType<typeof undiciFetch>;
  close(): Promise<void>;
}

export async function serveClientDocuments(): Promise<ClientDocuments> {
  const tlsDir = mkdtempSync(path.join(tmpdir(), 'pkgreg-cimd-'));
  const key = path.join(tlsDir, 'key.pem');
  const cert = path.join(tlsDir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1'],
      ...['-subj', '/CN=client.test', '-addext', 'subjectAltName=DNS:client.test'],
      ...['-keyout', key, '-out', cert],
    ],
    { stdio: 'ignore' },
  );
  const served: ClientDocuments['served'] = new Map();
  const fetched: string[] = [];
  const server: Server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    fetched.push(req.url ?? '');
    const entry = served.get(req.url ?? '');
    if (!entry) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(entry.status ?? 200, { 'content-type': 'application/json', ...entry.headers });
    res.end(typeof entry.body === 'string' ? entry.body : JSON.stringify(entry.body));
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const agent = new Agent({
    connect: {
      ca: readFileSync(cert),
      lookup: ((_host, options, callback) =>
        options?.all
          ? callback(null, [{ address: '127.0.0.1', family: 4 }])
          : callback(null, '127.0.0.1', 4)) as LookupFunction,
    },
  });
  return {
    origin: `https://client.test:${(server.address() as AddressInfo).port}`,
    served,
    fetched,
    fetch: (url, options) => {
      const { dispatcher: _ignored, ...rest } = options;
      return undiciFetch(url, { ...rest, dispatcher: agent } as Parameters<typeof undiciFetch>[1]);
    },
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await agent.close();
      rmSync(tlsDir, { recursive: true, force: true });
    },
  };
}
