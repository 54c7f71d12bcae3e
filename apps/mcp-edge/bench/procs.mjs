// The processes of the edge benchmarks (run.mjs, ab.mjs): servers pinned to CPU 0, the load generator
// (autocannon, load.mjs) in a process of its own pinned to CPU 1.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const servers = [];

/** Starts `servers.mjs <kind>` with `config`; resolves with the child and its port once it listens. */
export function startServer(kind, config, nodeArgs = []) {
  const child = spawn(
    'taskset',
    ['-c', '0', process.execPath, ...nodeArgs, here('./servers.mjs'), kind, JSON.stringify(config)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  servers.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /READY (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`${kind} server exited ${code}`)));
  });
}

/** Stops every server started here. */
export function stopServers() {
  for (const child of servers) child.kill('SIGTERM');
}

/** One autocannon run (load.mjs options); resolves with its summary. */
export function load(opts) {
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', ['-c', '1', process.execPath, here('./load.mjs'), JSON.stringify(opts)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split('\n').pop()))
        : reject(new Error(`load exited ${code}`)),
    );
  });
}
