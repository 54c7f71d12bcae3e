// What the HTTP request metrics cost a request, in-process: the same loop over real IncomingMessage and
// ServerResponse objects (a handler naming its route, then the response's close) with and without
// createHttpMetrics' wrapper; prints the median difference in ns per request. Built code (pnpm build).
//   node packages/server-kit/bench/metrics.mjs      (holds the bench lock, pins itself to core 0)
import { spawnSync } from 'node:child_process';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

if (!process.env.PKGREG_BENCH_LOCKED) {
  const r = spawnSync(
    'flock',
    ['/tmp/pkgreg-bench.lock', 'taskset', '-c', '0', process.execPath, ...process.argv.slice(1)],
    { stdio: 'inherit', env: { ...process.env, PKGREG_BENCH_LOCKED: '1' } },
  );
  process.exit(r.status ?? 1);
}

const kit = await import('../dist/metrics.js');
const http = kit.createHttpMetrics(kit.createMetricsRegistry());
const socket = new Socket();
const handler = (req, res) => {
  kit.setRouteTemplate(req, '/api/packages/:scope/:name');
  res.statusCode = 200;
};
const instrumented = http.instrument(handler);

function run(listener, n) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i += 1) {
    const req = new IncomingMessage(socket);
    req.method = 'GET';
    const res = new ServerResponse(req);
    listener(req, res);
    res.emit('close');
  }
  return Number(process.hrtime.bigint() - started) / n;
}

const N = 200_000;
const ROUNDS = 7;
run(handler, N);
run(instrumented, N);
const without = [];
const withMetrics = [];
for (let r = 0; r < ROUNDS; r += 1) {
  without.push(run(handler, N));
  withMetrics.push(run(instrumented, N));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `without ${median(without).toFixed(0)} ns/request, with metrics ${median(withMetrics).toFixed(0)} ns/request: ` +
    `the metrics cost ${(median(withMetrics) - median(without)).toFixed(0)} ns a request`,
);
