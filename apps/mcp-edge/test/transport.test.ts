import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResultMembers, SerializedResult, StaticResult, writeResult } from '../src/mcp/transport.js';

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
    const [kind, spliced] = decodeURIComponent(req.url?.slice(1) ?? '').split('|');
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
    const length = res.headers.get('content-length');
    if (length !== null) expect(Number(length)).toBe(Buffer.byteLength(text));
  });

  it.each(Object.keys(results))('%s: without members, the result as it is', async (kind) => {
    const body = (await (await fetch(`${url}/${encodeURIComponent(kind)}`)).json()) as { result: unknown };
    expect(body.result).toEqual(kind.includes('empty') ? {} : { a: 1 });
  });
});
