#!/usr/bin/env node
// Node 24 and the pinned pnpm for this project, without replacing the machine's own: the machine's when
// they are those versions, else the project's .toolchain/ (brought by scripts/bootstrap.sh with npm).
// `node scripts/toolchain.mjs <command> [args…]` runs a command with them first on PATH and the
// dependencies installed (how `npm test` works on a machine with only an older Node and npm);
// scripts/dev.mjs uses `ensureToolchain()`. Node built-ins only: it runs before anything is installed.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const toolchainBin = path.join(root, '.toolchain', 'bin');
const pinnedPnpm = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).packageManager.split(
  '@',
)[1];

function withFirst(dir, pathList = '') {
  const rest = pathList.split(path.delimiter).filter((entry) => entry && entry !== dir);
  return [dir, ...rest].join(path.delimiter);
}

function versionOf(command, env) {
  const result = spawnSync(command, ['--version'], { env, encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : '';
}

function satisfied(env) {
  return /^v24\./.test(versionOf('node', env)) && versionOf('pnpm', env) === pinnedPnpm;
}

/**
 * Puts .toolchain/bin first on this process's PATH (children inherit it) and bootstraps it when the
 * `node` or `pnpm` found there is not Node 24 or the pinned pnpm. Returns whether this very process
 * runs on Node 24 (otherwise the caller re-runs itself under the PATH's `node`).
 */
export function ensureToolchain(log = (message) => console.error(message)) {
  process.env.PATH = withFirst(toolchainBin, process.env.PATH);
  if (!satisfied(process.env)) {
    log(
      `node ${versionOf('node', process.env) || 'missing'}, pnpm ${versionOf('pnpm', process.env) || 'missing'}: bringing Node 24 and pnpm ${pinnedPnpm} into .toolchain/ (the machine's own stay as they are)`,
    );
    const result = spawnSync('bash', [path.join(root, 'scripts/bootstrap.sh')], { stdio: 'inherit' });
    if (result.status !== 0 || !satisfied(process.env)) {
      console.error('could not set up Node 24 and pnpm (see above)');
      process.exit(1);
    }
  }
  return process.versions.node.split('.')[0] === '24';
}

/** `pnpm install` when node_modules is missing or older than the lockfile. */
export function ensureDependencies(log = (message) => console.error(message)) {
  const modules = path.join(root, 'node_modules/.modules.yaml');
  if (existsSync(modules) && statSync(path.join(root, 'pnpm-lock.yaml')).mtimeMs <= statSync(modules).mtimeMs)
    return;
  log('installing dependencies');
  const result = spawnSync('pnpm', ['install', '--frozen-lockfile'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command, ...args] = process.argv.slice(2);
  if (!command) {
    console.error('usage: node scripts/toolchain.mjs <command> [args…]');
    process.exit(2);
  }
  ensureToolchain();
  ensureDependencies();
  process.env.PATH = withFirst(path.join(root, 'node_modules', '.bin'), process.env.PATH);
  process.env.PATH = withFirst(toolchainBin, process.env.PATH);
  const result = spawnSync(command, args, { stdio: 'inherit' });
  if (result.error) console.error(`${command}: ${result.error.message}`);
  if (result.signal) process.kill(process.pid, result.signal);
  process.exit(result.status ?? 1);
}
