import { captureLogs } from '@pkgreg/testing';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/index.js';

// STYLE.md, Habits: never log tokens, secrets or Authorization headers; COMMON.md: no secrets in logs.

function capture() {
  const logs = captureLogs();
  return { stream: logs.destination, lines: logs.lines, records: () => logs.records };
}

const SECRET = 'hunter2-s3cr3t-value';

describe('createLogger (STYLE.md Habits: never log tokens, secrets or Authorization headers)', () => {
  it('writes JSON lines with the name and respects the level', () => {
    const out = capture();
    const logger = createLogger('registry-api', 'info', out.stream);
    logger.debug('hidden');
    logger.info({ requestId: 'r-1' }, 'hello');
    const records = out.records();
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ name: 'registry-api', msg: 'hello', requestId: 'r-1', level: 30 });
  });

  it.each([
    ['req.headers.authorization', { req: { headers: { authorization: `Bearer ${SECRET}`, host: 'x' } } }],
    ['headers.authorization', { headers: { authorization: `Bearer ${SECRET}` } }],
    ['authorization', { authorization: `Bearer ${SECRET}` }],
    ['token', { token: SECRET }],
    ['accessToken', { accessToken: SECRET }],
    ['access_token', { access_token: SECRET }],
    ['secret', { secret: SECRET }],
    ['clientSecret', { clientSecret: SECRET }],
    ['client_secret', { client_secret: SECRET }],
    ['password', { password: SECRET }],
    ['cookie', { req: { headers: { cookie: `sid=${SECRET}` } } }],
    ['nested token', { client: { token: SECRET } }],
    ['nested secret', { session: { secret: SECRET } }],
    ['nested client_secret', { body: { client_secret: SECRET } }],
    ['nested password', { user: { password: SECRET } }],
    ['nested authorization', { request: { authorization: `Bearer ${SECRET}` } }],
    ['nested accessToken', { oauth: { accessToken: SECRET } }],
    ['nested access_token', { response: { access_token: SECRET } }],
    ['nested clientSecret', { registration: { clientSecret: SECRET } }],
  ])('redacts %s', (_label, fields) => {
    const out = capture();
    createLogger('edge', 'info', out.stream).info(fields, 'request');
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).not.toContain(SECRET);
    expect(out.lines[0]).toContain('[redacted]');
  });

  it('keeps the fields that are not secret', () => {
    const out = capture();
    createLogger('edge', 'info', out.stream).info(
      {
        req: { method: 'POST', headers: { authorization: `Bearer ${SECRET}`, host: 'mcp.local' } },
        tool: 'x',
      },
      'request',
    );
    const [record] = out.records();
    expect(record).toMatchObject({
      req: { method: 'POST', headers: { host: 'mcp.local', authorization: '[redacted]' } },
      tool: 'x',
    });
  });
});
