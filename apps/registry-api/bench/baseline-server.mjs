// Baseline: a bare node:http server answering the same JSON from memory, to compare the API against
// what one core can do without Express, Postgres or any logic.
import { createServer } from 'node:http';

const body = Buffer.from(process.argv[2] ?? '{}');
const port = Number(process.argv[3] ?? 4799);
createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
}).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
