// Baseline: a bare node:http server answering the same bytes from memory, to compare the API against
// what one core can do without Express, Postgres or any logic. Arguments: the body (or `@file` to read
// it from a file), the port, and the Content-Type (JSON by default).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const arg = process.argv[2] ?? '{}';
const body = arg.startsWith('@') ? readFileSync(arg.slice(1)) : Buffer.from(arg);
const port = Number(process.argv[3] ?? 4799);
const type = process.argv[4] ?? 'application/json; charset=utf-8';
createServer((_req, res) => {
  res.writeHead(200, { 'content-type': type, 'content-length': body.length });
  res.end(body);
}).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
