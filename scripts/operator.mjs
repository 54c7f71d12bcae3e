#!/usr/bin/env node
// `pnpm registry …` / `pnpm edge …`: builds the app when its sources changed, then runs its operator CLI
// with the arguments. Only the command's own output reaches the terminal, so it can be piped: turbo's
// output (telemetry notice, task summary, build logs) is kept and shown only when the build fails.
// Node built-ins only.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const APPS = {
  registry: { pkg: '@pkgreg/registry-api', dir: 'apps/registry-api' },
  edge: { pkg: '@pkgreg/mcp-edge', dir: 'apps/mcp-edge' },
};
const [name, ...args] = process.argv.slice(2);
const app = APPS[name];
if (!app) {
  console.error(`usage: node scripts/operator.mjs <${Object.keys(APPS).join('|')}> [command …]`);
  process.exit(2);
}

const turbo = path.join(root, 'node_modules/.bin/turbo');
const build = spawnSync(turbo, ['run', 'build', `--filter=${app.pkg}...`, '--output-logs=errors-only'], {
  cwd: root,
  encoding: 'utf8',
  // Per-process opt-outs: nothing is written to the user's turbo config.
  env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', TURBO_NO_UPDATE_NOTIFIER: '1', DO_NOT_TRACK: '1' },
  maxBuffer: 64 * 1024 * 1024,
});
if (build.status !== 0) {
  process.stderr.write(`${build.stdout ?? ''}${build.stderr ?? ''}`);
  if (build.error) console.error(`could not run turbo: ${build.error.message}`);
  console.error(`${app.pkg} did not build; nothing was run`);
  process.exit(build.status || 1);
}

// The CLI runs from the app's folder, as `pnpm --filter … run cli` did; pnpm's INIT_CWD passes through
// so relative paths in arguments resolve against the folder the command was typed in.
const run = spawnSync(process.execPath, [path.join(root, app.dir, 'dist/cli.js'), ...args], {
  cwd: path.join(root, app.dir),
  stdio: 'inherit',
  env: { ...process.env, INIT_CWD: process.env.INIT_CWD ?? process.cwd() },
});
if (run.signal) process.kill(process.pid, run.signal);
process.exit(run.status ?? 1);
