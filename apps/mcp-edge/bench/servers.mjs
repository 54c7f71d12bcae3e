// Servers under test, one per child process (pinned to CPU 0 by run.mjs). Usage:
//   node servers.mjs <edge|echo|pg|sdk|skillmd|fixed> <json-config>
// Prints `READY <port>` once listening. Built code only (dist): run `pnpm build` first.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [kind, rawConfig] = process.argv.slice(2);
const config = JSON.parse(rawConfig ?? '{}');

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function edge() {
  // config.dist: another build of the edge (bench/ab.mjs compares two builds); default the current one.
  // Its packages are loaded from where that build resolves them: a Db made by another copy of
  // @pkgreg/db is not one the build's own code accepts.
  const dist = new URL(`${config.dist ?? '../dist'}/`, import.meta.url);
  const resolveFromDist = createRequire(new URL('app.js', dist));
  const load = (name) => import(pathToFileURL(resolveFromDist.resolve(name)).href);
  const { createDb } = await load('@pkgreg/db');
  const { createLogger } = await load('@pkgreg/server-kit');
  const { Redis } = await load('ioredis');
  const { createEdge } = await import(new URL('app.js', dist).href);
  const { loadEnv } = await import(new URL('env.js', dist).href);
  const env = loadEnv(config.env);
  const db = createDb(env.DATABASE_URL, { max: 10 });
  // As src/index.ts: auto-pipelining batches the rate-limit scripts of concurrent requests into one write.
  const redis = new Redis(env.REDIS_URL, { keyPrefix: config.redisPrefix, enableAutoPipelining: true });
  const built = createEdge({ db, redis, logger: createLogger('bench', 'silent'), env });
  return createServer(built.handler);
}

// A bare JSON-RPC echo: parse, answer with the params. The floor any JSON-RPC server stands on.
function echo() {
  return createServer(async (req, res) => {
    const msg = JSON.parse(await readBody(req));
    send(res, 200, { jsonrpc: '2.0', id: msg.id, result: msg.params ?? {} });
  });
}

// resources/read of a SKILL.md as a bare server would answer it: parse the JSON-RPC request, answer the
// same bytes the edge answers (`config.text` as the one text item), built once; no admission, no catalog.
function skillMd() {
  const tail = Buffer.from(
    `,"result":${JSON.stringify({ contents: [{ uri: config.uri, mimeType: 'text/markdown', text: config.text }] })}}`,
  );
  return createServer(async (req, res) => {
    const msg = JSON.parse(await readBody(req));
    const body = Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)}`), tail]);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
    res.end(body);
  });
}

// A bare JSON-RPC server answering one fixed result (`config.result`, JSON text) to every request: the
// floor for an answer the edge builds (the 2026-07-28 resources/read, its members included).
function fixed() {
  const tail = Buffer.from(`,"result":${config.result}}`);
  return createServer(async (req, res) => {
    const msg = JSON.parse(await readBody(req));
    const body = Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)}`), tail]);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
    res.end(body);
  });
}

// The same SQL memory.get runs (one row by namespace + id), with pg directly and no admission at all.
async function barePg() {
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10 });
  return createServer(async (req, res) => {
    const msg = JSON.parse(await readBody(req));
    const args = msg.params.arguments;
    const { rows } = await pool.query('select * from memory_entries where namespace = $1 and entry_id = $2', [
      args.namespace,
      args.entryId,
    ]);
    send(res, 200, { jsonrpc: '2.0', id: msg.id, result: { entry: rows[0] ?? null } });
  });
}

// The MCP SDK's documented stateless pattern: a new McpServer and transport per request, one tool.
async function sdk() {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { StreamableHTTPServerTransport } = await import(
    '@modelcontextprotocol/sdk/server/streamableHttp.js'
  );
  return createServer(async (req, res) => {
    const body = JSON.parse(await readBody(req));
    const server = new McpServer({ name: 'sdk-bench', version: '1.0.0' });
    server.registerTool('info', { description: 'trivial' }, async () => ({
      content: [{ type: 'text', text: '{"ok":true}' }],
    }));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
}

const factories = { edge, echo, pg: barePg, sdk, skillmd: skillMd, fixed };
const server = await factories[kind]();
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => console.log(`READY ${server.address().port}`));
process.on('SIGTERM', () => process.exit(0));
