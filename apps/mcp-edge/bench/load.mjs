// The load generator, in its own process (pinned to CPU 1 by run.mjs). Usage:
//   node load.mjs <json: {url, headers, body, connections, duration, amount?}>
// Prints autocannon's summary as one JSON line.
import autocannon from 'autocannon';

const opts = JSON.parse(process.argv[2]);
const result = await autocannon({
  url: opts.url,
  method: 'POST',
  headers: opts.headers,
  body: opts.body,
  connections: opts.connections,
  pipelining: 1,
  ...(opts.amount ? { amount: opts.amount } : { duration: opts.duration }),
});
console.log(
  JSON.stringify({
    rps: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  }),
);
