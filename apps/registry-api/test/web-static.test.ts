import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WEB_CONTENT_SECURITY_POLICY } from '@pkgreg/contracts';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webStatic } from '../src/web-static.js';

// Issue 7: registry-api serves the built web UI with an SPA fallback and a CSP forbidding inline script.
let dist: string;
let app: express.Express;

beforeAll(() => {
  dist = mkdtempSync(path.join(tmpdir(), 'pkgreg-web-dist-'));
  mkdirSync(path.join(dist, 'assets'));
  writeFileSync(path.join(dist, 'index.html'), '<!doctype html><title>pkgreg</title><div id="app"></div>');
  writeFileSync(path.join(dist, 'assets', 'index-abc123.js'), 'console.log(1)');
  writeFileSync(path.join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  app = express();
  app.get('/api/packages', (_req, res) => {
    res.json({ data: [] });
  });
  app.use(webStatic({ distDir: dist }));
  app.use((_req, res) => {
    res.status(404).json({ error: 'Not found' });
  });
});
afterAll(() => rmSync(dist, { recursive: true, force: true }));

describe('webStatic', () => {
  it('serves index.html at / and for client routes (/@scope/name), with the CSP', async () => {
    for (const url of ['/', '/@acme/code-review', '/?sort=stars&page=2', '/no/such/page']) {
      const res = await request(app).get(url).expect(200);
      expect(res.text).toContain('<div id="app">');
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      const csp = res.headers['content-security-policy'];
      expect(csp).toBe(WEB_CONTENT_SECURITY_POLICY);
    }
  });

  it('sends a CSP that forbids inline script, plugins, <base> and framing', () => {
    const directives = new Map(
      WEB_CONTENT_SECURITY_POLICY.split(';').map((d) => {
        const [name = '', ...values] = d.trim().split(/\s+/);
        return [name, values] as const;
      }),
    );
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(WEB_CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(WEB_CONTENT_SECURITY_POLICY).not.toContain('unsafe-eval');
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(directives.get('base-uri')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
  });

  it('serves fingerprinted assets as immutable and other files as revalidated', async () => {
    const asset = await request(app).get('/assets/index-abc123.js').expect(200);
    expect(asset.headers['cache-control']).toContain('immutable');
    expect(asset.headers['content-security-policy']).toBe(WEB_CONTENT_SECURITY_POLICY);
    const icon = await request(app).get('/favicon.svg').expect(200);
    expect(icon.headers['cache-control']).toBe('no-cache');
  });

  it('leaves /api, health checks, missing files and non-GET methods to the API', async () => {
    await request(app).get('/api/packages').expect(200, { data: [] });
    await request(app).get('/api/nope').expect(404, { error: 'Not found' });
    await request(app).get('/healthz').expect(404);
    await request(app).get('/assets/missing.js').expect(404);
    await request(app).post('/@acme/code-review').expect(404);
  });

  it('is an empty router when the UI is not built', async () => {
    const bare = express();
    bare.use(webStatic({ distDir: path.join(dist, 'missing') }));
    bare.use((_req, res) => {
      res.status(404).end();
    });
    await request(bare).get('/').expect(404);
  });
});
