// Load generator for large bodies (autocannon's parser tops out near 15 req/s on 1 MB answers here):
// `connections` keep-alive loops of GET for `duration` seconds. Input: one JSON argument {url,
// connections, duration, paths, bytes}; output: one JSON line like load.mjs's ({rps, ok, non2xx, ...}).
import http from 'node:http';

const spec = JSON.parse(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
const target = new URL(spec.url);
const end = Date.now() + spec.duration * 1000;
let ok = 0;
let non2xx = 0;
let errors = 0;
let wrongSize = 0;

function one() {
  return new Promise((resolve) => {
    const req = http.get({ host: target.hostname, port: target.port, path: spec.paths[0], agent }, (res) => {
      let size = 0;
      res.on('data', (chunk) => {
        size += chunk.length;
      });
      res.on('end', () => {
        if (res.statusCode !== 200) non2xx += 1;
        else if (spec.bytes && size !== spec.bytes) wrongSize += 1;
        else ok += 1;
        resolve();
      });
    });
    req.on('error', () => {
      errors += 1;
      resolve();
    });
  });
}

async function loop() {
  while (Date.now() < end) await one();
}

const started = Date.now();
await Promise.all(Array.from({ length: spec.connections }, loop));
const seconds = (Date.now() - started) / 1000;
agent.destroy();
process.stdout.write(`${JSON.stringify({ rps: ok / seconds, ok, non2xx, errors, wrongSize })}\n`);
