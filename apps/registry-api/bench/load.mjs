// Load generator, run as its own process (pinned by run.mjs to the core the server does not use).
// Input: one JSON argument {url, connections, duration, method, paths, headers?, forwardedFor?};
// output: one JSON line. `forwardedFor: n` sends each request from one of n client addresses (an
// X-Forwarded-For the server trusts from loopback), picked at random.
import autocannon from 'autocannon';

const spec = JSON.parse(process.argv[2]);
const paths = spec.paths;
const times = [];
const instance = autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.duration,
  pipelining: 1,
  requests: [
    {
      method: spec.method ?? 'GET',
      headers: spec.headers ?? {},
      // A fresh random path per request (uniform over `paths`; one path = one hot key).
      setupRequest: (request) => {
        const path = paths[Math.floor(Math.random() * paths.length)];
        if (!spec.forwardedFor) return { ...request, path };
        const n = Math.floor(Math.random() * spec.forwardedFor);
        const from = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
        return { ...request, path, headers: { ...request.headers, 'x-forwarded-for': from } };
      },
    },
  ],
});
// Every response time, for exact percentiles (autocannon's summary has no p95).
instance.on('response', (_client, _status, _bytes, responseTime) => times.push(responseTime));
const result = await new Promise((resolve, reject) => instance.on('done', resolve).on('error', reject));
times.sort((a, b) => a - b);
const pct = (p) =>
  times.length ? times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))] : 0;
process.stdout.write(
  `${JSON.stringify({
    rps: result.requests.average,
    requests: result.requests.total,
    p50: pct(50),
    p95: pct(95),
    p99: pct(99),
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  })}\n`,
);
