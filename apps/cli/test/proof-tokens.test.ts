import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { indexSource } from '@pkgreg/indexer';
import { skillMd } from '@pkgreg/indexer/testing';
import { FakeGitHub, type OidcIssuer, startOidcIssuer } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENTRY, type CliResult, type RunOptions, runCli, tempDir } from './helpers/cli.js';
import { type RunningRegistry, startRegistry } from './helpers/registry.js';

// Where `pkgreg publish`, `deprecate` and `yank` send a proof of ownership (docs/publishing.md, "Where
// a proof goes"): the built CLI as a process against the real registry-api, with GitHub's REST API and
// Actions' OIDC issuer as local servers. A GitHub token usually can push to every repository of its
// user: it never travels in clear text (https, or http on this machine only), a token the user did not
// hand over (GITHUB_TOKEN, `gh auth token`) reaches a registry other than the default only with their
// consent, and an OIDC token only the registry it was issued for. Each refusal is checked to have sent
// nothing: no publish run, no token check at GitHub, no OIDC token requested.

const database = useTestDatabase();
const prefix = testKeyPrefix('cli-proof-tokens');
const run = promisify(execFile);
const SOCKET = `pkgreg-proof-test-${process.pid}`;
let gh: FakeGitHub;
let issuer: OidcIssuer;
let registry: RunningRegistry;
let home: string;
/** A folder with a stand-in for the GitHub CLI: `gh auth token` prints a token, as when logged in. */
let ghBin: string;

beforeAll(async () => {
  gh = new FakeGitHub('', 'https://github.example');
  await gh.start();
  gh.addRepo({
    owner: 'alice',
    name: 'kit',
    defaultBranch: 'main',
    stars: 1,
    license: 'MIT',
    homepage: null,
    files: { 'kit/SKILL.md': skillMd(['name: kit', 'description: A kit.', 'version: 1.0.0']) },
  });
  gh.addUser('ghu_alice', 'alice');
  gh.addUser('ghu_alice_env', 'alice');
  gh.addUser('ghu_alice_gh', 'alice');
  issuer = await startOidcIssuer();
  // On every IPv4 address of the machine: a registry that an http URL naming another host than
  // loopback (0.0.0.0, the LAN address) would reach, if the CLI sent anything there.
  registry = await startRegistry(database.url, {
    GITHUB_API_URL: gh.apiUrl,
    GITHUB_WEB_URL: 'https://github.example',
    OIDC_ISSUER: issuer.issuer,
    QUEUE_PREFIX: prefix,
    REGISTRY_HOST: '0.0.0.0',
  });
  await indexSource(
    { db: database.db, github: { apiUrl: gh.apiUrl, webUrl: 'https://github.example' } },
    { kind: 'github', locator: 'alice/kit' },
  );
  home = await tempDir('proof-home');
  ghBin = await tempDir('proof-gh');
  await writeFile(
    join(ghBin, 'gh'),
    '#!/bin/sh\nif [ "$1 $2" = "auth token" ]; then echo ghu_alice_gh; exit 0; fi\nexit 1\n',
    { mode: 0o755 },
  );
}, 120_000);

afterAll(async () => {
  await run('tmux', ['-L', SOCKET, 'kill-server']).catch(() => {});
  await registry?.stop();
  await issuer?.close();
  await gh?.stop();
});

function cli(registryUrl: string, args: string[], options: Partial<RunOptions> = {}): Promise<CliResult> {
  return runCli(['--registry', registryUrl, ...args], { cwd: home, home, timeoutMs: 60_000, ...options });
}

/** The environment of a GitHub Actions step with `permissions: id-token: write`. */
function actionsEnv(options: { audience?: string | string[] } = {}): Record<string, string> {
  return {
    GITHUB_ACTIONS: 'true',
    GITHUB_REPOSITORY: 'alice/kit',
    ...issuer.actionsJob(
      { repository: 'alice/kit', ownerId: gh.accountId('alice'), repositoryId: gh.repoId('alice', 'kit') },
      undefined,
      options.audience === undefined ? {} : { audience: options.audience },
    ),
  };
}

/** Everything a sent proof leaves: publish runs, token checks at GitHub, OIDC token requests. */
async function sent() {
  const runs = await database.db
    .selectFrom('publish_runs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return {
    runs: Number(runs.n),
    tokenChecks: gh.requests.filter((r) => typeof r.headers.authorization === 'string').length,
    oidcRequests: issuer.tokenRequests.length,
  };
}

/** Runs the CLI and asserts it refused with exit 1 and `message`, having sent nothing anywhere. */
async function refusedToSend(call: () => Promise<CliResult>, message: string | RegExp): Promise<CliResult> {
  const before = await sent();
  const result = await call();
  expect(result.code, result.stderr).toBe(1);
  if (typeof message === 'string') expect(result.stderr).toContain(message);
  else expect(result.stderr).toMatch(message);
  expect(await sent()).toEqual(before);
  return result;
}

const lanAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i?.family === 'IPv4' && !i.internal)?.address;

describe('a proof goes only over https, or http on this machine', () => {
  it('http to any other host: exit 1, nothing asked for or sent, whatever the proof and the command', async () => {
    const port = registry.port;
    const hosts = [
      '0.0.0.0', // reaches this machine's registry, but is no loopback name or address
      ...(lanAddress ? [lanAddress] : []),
      '10.255.255.1',
      'registry.invalid',
      '127.0.0.1.nip.io',
      'localhost.evil.invalid',
      '[fd00::1]',
    ];
    const attempts: Array<[string[], Record<string, string>]> = [
      [['publish', 'alice/kit', '--token', 'ghu_alice', '--no-wait'], {}],
      [['publish', 'alice/kit', '--yes', '--no-wait'], { GITHUB_TOKEN: 'ghu_alice_env' }],
      [['publish', 'alice/kit', '--no-wait'], actionsEnv()],
      [['deprecate', '@alice/kit', '--token', 'ghu_alice'], {}],
      [['yank', '@alice/kit@1.0.0', '--yes'], { PATH: `${ghBin}:${process.env.PATH}` }],
      [['unyank', '@alice/kit@1.0.0'], actionsEnv()],
    ];
    for (const [i, host] of hosts.entries()) {
      const origin = `http://${host}:${port}`;
      // Every proof and command against the registry this machine serves; one each elsewhere.
      const chosen = host === '0.0.0.0' ? attempts : attempts.filter((_, j) => j === i % attempts.length);
      for (const [args, env] of chosen) {
        await refusedToSend(
          () => cli(origin, args, { env }),
          `Refusing to send a proof of ownership to ${origin}: it is not https`,
        );
      }
    }
    // From PKGREG_REGISTRY too.
    await refusedToSend(
      () =>
        runCli(['publish', 'alice/kit', '--token', 'ghu_alice'], {
          cwd: home,
          home,
          env: { PKGREG_REGISTRY: `http://0.0.0.0:${port}/` },
        }),
      /Refusing to send a proof of ownership to http:\/\/0\.0\.0\.0:\d+/,
    );
  });

  it('http on this machine (localhost, 127.0.0.0/8, ::1): the proof is sent', async () => {
    const port = registry.port;
    for (const host of ['127.0.0.1', 'localhost', '127.1', '127.0.0.2', 'LOCALHOST']) {
      const before = await sent();
      const result = await cli(`http://${host}:${port}`, [
        'publish',
        'alice/kit',
        '--token',
        'ghu_alice',
        '--no-wait',
      ]);
      expect(result.code, `${host}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toMatch(/^[0-9a-f-]{36}$/m);
      expect((await sent()).runs).toBe(before.runs + 1);
    }
    // Nobody listens on ::1 here: the CLI tried (unavailable, exit 4), it did not refuse.
    const v6 = await cli(`http://[::1]:${port}`, ['publish', 'alice/kit', '--token', 'ghu_alice']);
    expect(v6.stderr).not.toContain('Refusing');
    expect(v6.code, v6.stderr).toBe(4);
  });
});

describe('a token from GITHUB_TOKEN or gh goes to a registry other than the default only with consent', () => {
  const host = () => `127.0.0.1:${registry.port}`;

  it('without a terminal and without --yes: exit 1 naming the registry and how to consent, nothing sent', async () => {
    const env = { GITHUB_TOKEN: 'ghu_alice_env' };
    const ghEnv = { PATH: `${ghBin}:${process.env.PATH}` };
    const commands = [
      ['publish', 'alice/kit', '--no-wait'],
      ['deprecate', '@alice/kit', '--message', 'x'],
      ['undeprecate', '@alice/kit'],
      ['yank', '@alice/kit@1.0.0'],
      ['unyank', '@alice/kit@1.0.0'],
    ];
    for (const args of commands) {
      const result = await refusedToSend(
        () => cli(registry.url, args, { env }),
        `Not sending your GitHub token (from GITHUB_TOKEN) to ${host()}, which is not the default registry`,
      );
      expect(result.stderr).toContain('Pass --yes to send it, or --token with a fine-grained token');
      expect(result.stderr).not.toContain('ghu_alice_env');
    }
    await refusedToSend(
      () => cli(registry.url, ['publish', 'alice/kit', '--no-wait'], { env: ghEnv }),
      `Not sending your GitHub token (from gh auth token) to ${host()}`,
    );
    // Wherever the registry address came from: the environment, the config file.
    await refusedToSend(
      () =>
        runCli(['publish', 'alice/kit', '--no-wait'], {
          cwd: home,
          home,
          env: { ...env, PKGREG_REGISTRY: `http://localhost:${registry.port}` },
        }),
      `to localhost:${registry.port}, which is not the default registry`,
    );
    const configHome = await tempDir('proof-config');
    await mkdir(join(configHome, 'pkgreg'), { recursive: true });
    await writeFile(join(configHome, 'pkgreg', 'config.json'), JSON.stringify({ registry: registry.url }));
    await refusedToSend(
      () =>
        runCli(['deprecate', '@alice/kit'], {
          cwd: home,
          home,
          env: { ...ghEnv, XDG_CONFIG_HOME: configHome },
        }),
      `Not sending your GitHub token (from gh auth token) to ${host()}`,
    );
  });

  it('--yes (or -y) sends it; --token is consent of its own', async () => {
    const env = { GITHUB_TOKEN: 'ghu_alice_env' };
    const checksWith = (token: string) =>
      gh.requests.filter((r) => r.headers.authorization === `Bearer ${token}`).length;
    const envChecks = checksWith('ghu_alice_env');
    const published = await cli(registry.url, ['publish', 'alice/kit', '--no-wait', '--yes'], { env });
    expect(published.code, published.stderr).toBe(0);
    const deprecated = await cli(registry.url, ['deprecate', '@alice/kit', '-y'], { env });
    expect(deprecated.code, deprecated.stderr).toBe(0);
    expect(deprecated.stdout).toBe('@alice/kit is deprecated\n');
    expect(checksWith('ghu_alice_env')).toBe(envChecks + 2);
    const ghEnv = { PATH: `${ghBin}:${process.env.PATH}` };
    const lifted = await cli(registry.url, ['undeprecate', '@alice/kit', '--yes'], { env: ghEnv });
    expect(lifted.code, lifted.stderr).toBe(0);
    expect(checksWith('ghu_alice_gh')).toBe(1);
    // --token names the token to send: no question, even with GITHUB_TOKEN and gh there too.
    const explicit = await cli(registry.url, ['yank', '@alice/kit@1.0.0', '--token', 'ghu_alice'], {
      env: { ...env, ...ghEnv },
    });
    expect(explicit.code, explicit.stderr).toBe(0);
    const undone = await cli(registry.url, ['unyank', '@alice/kit@1.0.0', '--token', 'ghu_alice']);
    expect(undone.code, undone.stderr).toBe(0);
  });

  it('on a terminal: the question names the registry; yes sends the token, anything else does not', async () => {
    const cwd = await tempDir('proof-tty');
    const tmux = (args: string[]) => run('tmux', ['-L', SOCKET, ...args]);
    const screenOf = async (session: string) => (await tmux(['capture-pane', '-p', '-t', session])).stdout;
    for (const [keys, code] of [
      [['y', 'Enter'], 0],
      [['yes', 'Enter'], 0],
      [['n', 'Enter'], 1],
      [['Enter'], 1],
      [['C-d'], 1], // end of input
    ] as const) {
      const session = `tty-${keys.join('-').toLowerCase()}`;
      await writeFile(
        join(cwd, `${session}.sh`),
        `env -i PATH="$PATH" HOME=${cwd} GITHUB_TOKEN=ghu_alice_env ${process.execPath} ${CLI_ENTRY} --registry ${registry.url} publish alice/kit --no-wait\necho "EXIT=$?"\n`,
      );
      const before = await sent();
      await tmux(['new-session', '-d', '-x', '220', '-y', '20', '-s', session, '-c', cwd, 'sh']);
      await tmux(['send-keys', '-t', session, `clear; sh ${session}.sh`, 'Enter']);
      let screen = '';
      for (let i = 0; i < 600 && !screen.includes('[y/N]'); i++) {
        await sleep(50);
        screen = await screenOf(session);
      }
      expect(screen).toContain(
        `Send your GitHub token (from GITHUB_TOKEN) to 127.0.0.1:${registry.port}? It is not the default registry`,
      );
      // Nothing is sent while the question waits.
      expect(await sent()).toEqual(before);
      await tmux(['send-keys', '-t', session, ...keys]);
      for (let i = 0; i < 600 && !/EXIT=\d+/.test(screen); i++) {
        await sleep(50);
        screen = await screenOf(session);
      }
      expect(screen).toContain(`EXIT=${code}`);
      expect(screen).not.toContain('ghu_alice_env');
      expect((await sent()).runs).toBe(before.runs + (code === 0 ? 1 : 0));
      if (code === 0) expect(screen).toMatch(/^[0-9a-f-]{36}$/m);
      else expect(screen).toContain('Not sent: your GitHub token (from GITHUB_TOKEN) stays here');
    }
  });
});

describe('an OIDC token goes only to the registry it was issued for', () => {
  it('a token for another audience from the runner: exit 1, not sent', async () => {
    const url = registry.url;
    for (const audience of [
      'https://registry.pkgreg.dev',
      `${url}/`,
      `http://127.0.0.1:${registry.port + 1}`,
      [url, 'https://elsewhere.example'],
    ]) {
      const before = await sent();
      const result = await cli(url, ['publish', 'alice/kit', '--no-wait'], { env: actionsEnv({ audience }) });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(
        `GitHub Actions issued an OIDC token for ${[audience].flat().join(', ')}, not for ${url} it was asked for: not sending it`,
      );
      const after = await sent();
      // Asked for (of the runner), never sent (to the registry).
      expect(after).toEqual({ ...before, oidcRequests: before.oidcRequests + 1 });
      expect(issuer.tokenRequests.at(-1)?.audience).toBe(url);
    }
  });

  it('an OIDC token needs no consent: it is good for this registry only', async () => {
    const result = await cli(registry.url, ['publish', 'alice/kit', '--no-wait'], {
      env: { ...actionsEnv(), GITHUB_TOKEN: 'ghu_alice_env' },
    });
    // The registry's own audience is its REGISTRY_PUBLIC_URL (http://0.0.0.0:port here), so it refuses
    // the token the CLI sent: what counts is that it was sent, unasked.
    expect(result.stderr).not.toContain('Not sending');
    expect(result.stderr).toContain('wrong audience');
  });
});
