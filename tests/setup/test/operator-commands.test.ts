import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

// `pnpm registry …` and `pnpm edge …` as an operator types them on a machine where turbo never ran: the
// output is the command's own, byte for byte (turbo's first-run telemetry notice and its build summary
// would otherwise come first), so it can be piped.

const root = fileURLToPath(new URL('../../..', import.meta.url));
const home = mkdtempSync(join(tmpdir(), 'pkgreg-operator-home-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** A user's environment: their PATH and a HOME of their own, none of the variables a test runner sets. */
const userEnv = { PATH: process.env.PATH ?? '', HOME: home, LANG: 'C.UTF-8' };

function run(command: string, args: string[]) {
  return spawnSync(command, args, { cwd: root, env: userEnv, encoding: 'utf8' });
}

for (const [name, app] of [
  ['registry', 'registry-api'],
  ['edge', 'mcp-edge'],
] as const) {
  it(`pnpm --silent ${name} --help prints exactly the CLI's help`, () => {
    // Through pnpm first: it builds the app when its sources changed.
    const viaPnpm = run('pnpm', ['--silent', name, '--help']);
    const direct = run(process.execPath, [`apps/${app}/dist/cli.js`, '--help']);
    expect(direct.status).toBe(0);
    expect(direct.stdout).toMatch(/^Usage: /);
    expect(viaPnpm.stderr).toBe('');
    expect(viaPnpm.stdout).toBe(direct.stdout);
    expect(viaPnpm.status).toBe(0);
  });
}

it('passes the CLI exit code and its error through, and nothing else', () => {
  const viaPnpm = run('pnpm', ['--silent', 'registry', 'no-such-command']);
  const direct = run(process.execPath, ['apps/registry-api/dist/cli.js', 'no-such-command']);
  expect(direct.status).not.toBe(0);
  expect(viaPnpm.status).toBe(direct.status);
  expect(viaPnpm.stderr).toBe(direct.stderr);
  expect(viaPnpm.stdout).toBe('');
});
