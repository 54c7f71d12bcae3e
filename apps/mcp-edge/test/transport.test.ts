import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RejectError } from '@pkgreg/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeRpcError } from '../src/mcp/rpc-error.js';
import {
  ResultMembers,
  SerializedResult,
  StaticResult,
  writeAccepted,
  writeResult,
} from '../src/mcp/transport.js';

// writeResult splices a 2026-07-28 result's members into the result, whether it was encoded once at start
// (StaticResult), serialized per call or is a plain object, and whether the result has members already.

const members = new ResultMembers('"resultType":"complete","ttlMs":60000');
const results: Record<string, () => object> = {
  'static, with members': () => new StaticResult(new SerializedResult('{"a":1}')),
  'static, empty': () => new StaticResult(new SerializedResult('{}')),
  'serialized, with members': () => new SerializedResult('{"a":1}'),
  'serialized, empty': () => new SerializedResult('{}'),
  'a plain object': () => ({ a: 1 }),
  'an empty object': () => ({}),
};

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const [kind, spliced, wide] = decodeURIComponent(req.url?.slice(1) ?? '').split('|');
    if (kind === 'error') {
      const error = new RejectError('rate_limited', 'more than 5 “x” requests', { retryAfterSeconds: 3 });
      writeRpcError(res, { id: 'id-ü', requestId: 'req-1', resourceMetadataUrl: 'http://x/' }, error);
      return;
    }
    if (kind === 'accepted') {
      writeAccepted(res, 'req-1');
      return;
    }
    if (wide) {
      // Text of more than one UTF-8 byte a character in the id, the result and the members.
      const json = '{"t":"é ✓ 𝄞"}';
      const result = kind === 'static' ? new StaticResult(new SerializedResult(json)) : JSON.parse(json);
      writeResult(res, 'req-1', 'id-ü', result, spliced ? new ResultMembers('"n":"∑"') : undefined);
      return;
    }
    writeResult(res, 'req-1', 7, (results[kind as string] as () => object)(), spliced ? members : undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('writeResult', () => {
  it.each(Object.keys(results))('%s: the members added, valid JSON, the right length', async (kind) => {
    const res = await fetch(`${url}/${encodeURIComponent(`${kind}|spliced`)}`);
    const text = await res.text();
    const has = kind.includes('empty') ? {} : { a: 1 };
    expect(JSON.parse(text)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { ...has, resultType: 'complete', ttlMs: 60000 },
    });
    expect(res.headers.get('x-request-id')).toBe('req-1');
    // One piece with its length, never chunked (transport.ts, writeResult).
    expect(res.headers.get('transfer-encoding')).toBeNull();
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text));
  });

  it.each([
    ['static', ''],
    ['static', 'spliced'],
    ['plain', ''],
    ['plain', 'spliced'],
  ])('a %s result %s with multi-byte text: its length in bytes, not characters', async (kind, spliced) => {
    const res = await fetch(`${url}/${encodeURIComponent(`${kind}|${spliced}|wide`)}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
    expect(JSON.parse(bytes.toString('utf8'))).toEqual({
      jsonrpc: '2.0',
      id: 'id-ü',
      result: spliced ? { t: 'é ✓ 𝄞', n: '∑' } : { t: 'é ✓ 𝄞' },
    });
  });

  it('errors and accepted notifications too: their length, never chunked', async () => {
    const error = await fetch(`${url}/error`);
    const bytes = Buffer.from(await error.arrayBuffer());
    expect(error.status).toBe(429);
    expect(error.headers.get('transfer-encoding')).toBeNull();
    expect(Number(error.headers.get('content-length'))).toBe(bytes.length);
    expect(JSON.parse(bytes.toString('utf8')).error.message).toBe('more than 5 “x” requests');
    const accepted = await fetch(`${url}/accepted`);
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('transfer-encoding')).toBeNull();
    expect(accepted.headers.get('content-length')).toBe('0');
    expect(await accepted.text()).toBe('');
  });

  it.each(Object.keys(results))('%s: without members, the result as it is', async (kind) => {
    const body = (await (await fetch(`${url}/${encodeURIComponent(kind)}`)).json()) as { result: unknown };
    expect(body.result).toEqual(kind.includes('empty') ? {} : { a: 1 });
  });
});
