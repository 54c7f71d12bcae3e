#!/usr/bin/env node
// An app's `dev` task: recompiles on change (tsc --watch) and restarts the process (node --watch).
// Both children die with this process, whether it is signalled or its parent (turbo) goes away.
import { spawn } from 'node:child_process';

const entry = process.argv[2] ?? 'dist/index.js';
const children = [
  spawn('tsc', ['-p', 'tsconfig.build.json', '--watch', '--preserveWatchOutput'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  }),
  spawn(process.execPath, ['--watch', entry], { stdio: ['ignore', 'inherit', 'inherit'] }),
];

function stop() {
  for (const child of children) child.kill('SIGTERM');
  setTimeout(() => {
    for (const child of children) child.kill('SIGKILL');
    process.exit(0);
  }, 3000).unref();
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
process.on('SIGHUP', stop);
const parent = process.ppid;
setInterval(() => {
  // Orphaned: our parent is gone (ppid changed), so nobody will signal us.
  if (process.ppid !== parent) stop();
}, 1000).unref();
for (const child of children)
  child.on('exit', () => children.every((c) => c.exitCode !== null || c.signalCode) && process.exit(0));
