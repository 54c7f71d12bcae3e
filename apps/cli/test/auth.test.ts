import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CreatedTokenSchema, MeSchema, TokenListSchema } from '@pkgreg/contracts';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENTRY, type CliResult, runCli, tempDir } from './helpers/cli.js';
import { type RunningRegistry, startRegistry } from './helpers/registry.js';
import { type SkillFixture, seedSkills } from './helpers/seed.js';

// docs/cli-auth.md: `pkgreg login` (browser with a loopback redirect, device code), logout, whoami,
// token create/list/revoke, the credentials file and PKGREG_TOKEN, the credentials every read sends,
// a refused token, and a lockfile of private packages restored with a read token and without one.
// The real CLI (built bundle) against the real registry-api, one registry for the whole file; the
// tests play the person in the browser over HTTP.

const SECRET: SkillFixture = {
  owner: 'secretco',
  repo: 'skills',
  path: 'runbook',
  name: 'runbook',
  description: 'How secretco runs its on-call',
};
const OPEN: SkillFixture = {
  owner: 'openco',
  repo: 'skills',
  path: 'notes',
  name: 'notes',
  description: 'Public notes helper',
};

const database = useTestDatabase();
let registry: RunningRegistry;

beforeAll(async () => {
  await seedSkills(database, [SECRET, OPEN]);
  registry = await startRegistry(database.url, { DEV_SIGN_IN: 'true' });
}, 120_000);

afterAll(async () => {
  await registry?.stop();
});

function cli(args: string[], home: string, env: Record<string, string> = {}, cwd = home): Promise<CliResult> {
  return runCli(['--registry', registry.url, ...args], { cwd, home, env: { DO_NOT_TRACK: '1', ...env } });
}

/** The CLI running in the background, its stderr read as it comes. */
function startCli(args: string[], home: string, env: Record<string, string> = {}) {
  const child: ChildProcess = spawn(process.execPath, [CLI_ENTRY, '--registry', registry.url, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH ?? '', HOME: home, DO_NOT_TRACK: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const done = new Promise<CliResult>((resolve) =>
    child.once('exit', (code) => resolve({ code: code ?? -1, stdout, stderr })),
  );
  return {
    done,
    /** Waits for stderr to match. */
    async waitFor(pattern: RegExp): Promise<RegExpExecArray> {
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const match = pattern.exec(stderr);
        if (match) return match;
        if (child.exitCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`CLI never printed ${pattern}: ${stderr}`);
    },
  };
}

/** A browser signed in by the development sign-in: its session cookie. */
async function browserSession(handle: string): Promise<string> {
  const res = await fetch(`${registry.url}/api/auth/dev/sign-in`, {
    method: 'POST',
    headers: { origin: registry.url, 'content-type': 'application/json' },
    body: JSON.stringify({ handle }),
  });
  expect(res.status).toBe(200);
  return res.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
}

function browser(cookie: string, path: string, init: RequestInit = {}) {
  return fetch(new URL(path, registry.url), {
    redirect: 'manual',
    ...init,
    headers: { cookie, origin: registry.url, ...(init.headers as Record<string, string>) },
  });
}

async function credentialsOf(home: string): Promise<Record<string, { token: string; accountEmail: string }>> {
  return JSON.parse(await readFile(join(home, '.config/pkgreg/credentials.json'), 'utf8'));
}

async function apiMe(token: string): Promise<Response> {
  return fetch(`${registry.url}/api/me`, { headers: { authorization: `Bearer ${token}` } });
}

let browserHome: string;
let deviceHome: string;

describe('pkgreg login', () => {
  it('in the browser: the loopback redirect brings the code back; the token is stored 0600 in a 0700 folder', async () => {
    browserHome = await tempDir('home-browser');
    const run = startCli(['login', '--browser'], browserHome);
    const [url] = await run.waitFor(/http:\/\/127\.0\.0\.1:\d+\/api\/cli\/authorize\?\S+/);
    // The person: signed in, shown the approval page, clicking Approve.
    const cookie = await browserSession('cli-browser');
    const page = await browser(cookie, url);
    const html = await page.text();
    expect(html).toContain('Sign in pkgreg CLI on this computer as cli-browser@dev.pkgreg.invalid?');
    const fields = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
        m[1],
        String(m[2]).replace(/&amp;/g, '&'),
      ]),
    );
    const approved = await browser(cookie, '/api/cli/authorize', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, decision: 'approve' }).toString(),
    });
    expect(approved.status).toBe(303);
    const location = String(approved.headers.get('location'));
    expect(location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/);
    // The browser follows the redirect to the CLI's own server.
    const landing = await fetch(location);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain('pkgreg CLI signed in');

    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Logged in to ${registry.url} as cli-browser@dev.pkgreg.invalid`);
    const file = join(browserHome, '.config/pkgreg/credentials.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(browserHome, '.config/pkgreg'))).mode & 0o777).toBe(0o700);
    const entry = (await credentialsOf(browserHome))[registry.url];
    expect(entry).toMatchObject({ accountEmail: 'cli-browser@dev.pkgreg.invalid' });
    expect(entry?.token).toMatch(/^pkgreg_/);
    expect(result.stdout + result.stderr).not.toContain(entry?.token);
    expect(MeSchema.parse(await (await apiMe(entry?.token ?? '')).json()).token?.permission).toBe('publish');
  });

  it('with a device code (no browser here, so `login` falls back to it); the device session is ended', async () => {
    deviceHome = await tempDir('home-device');
    const run = startCli(['login'], deviceHome);
    const [, , userCode] = await run.waitFor(/open (\S+)\nand check that it shows the code (\S+)/);
    const cookie = await browserSession('cli-device');
    expect((await browser(cookie, `/api/auth/device?user_code=${userCode}`)).status).toBe(200);
    const approved = await browser(cookie, '/api/auth/device/approve', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userCode }),
    });
    expect(approved.status).toBe(200);
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('No browser here (no DISPLAY): signing in with a device code instead.');
    expect(result.stdout).toContain('as cli-device@dev.pkgreg.invalid');
    const token = (await credentialsOf(deviceHome))[registry.url]?.token ?? '';
    expect((await apiMe(token)).status).toBe(200);
    // Only the browser's own session is left: the device flow's was signed out.
    const sessions = await database.db
      .selectFrom('auth_session')
      .innerJoin('auth_user', 'auth_user.id', 'auth_session.userId')
      .select('auth_session.id')
      .where('auth_user.email', '=', 'cli-device@dev.pkgreg.invalid')
      .execute();
    expect(sessions).toHaveLength(1);
  }, 60_000);
});

describe('whoami, PKGREG_TOKEN, the credentials file', () => {
  it('whoami names the account, how it authenticated, its organisations', async () => {
    const result = await cli(['whoami'], browserHome);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('cli-browser@dev.pkgreg.invalid');
    expect(result.stdout).toMatch(/Authenticated: a token from .*credentials\.json \(publish\)/);
    const json = await cli(['whoami', '--json'], browserHome);
    expect(MeSchema.parse(JSON.parse(json.stdout)).via).toBe('token');
  });

  it('PKGREG_TOKEN wins over the file', async () => {
    const deviceToken = (await credentialsOf(deviceHome))[registry.url]?.token ?? '';
    const result = await cli(['whoami'], browserHome, { PKGREG_TOKEN: deviceToken });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('cli-device@dev.pkgreg.invalid');
    expect(result.stdout).toContain('a token from PKGREG_TOKEN');
  });

  it('a credentials file others can read is ignored with a warning (exit 8: not logged in)', async () => {
    const home = await tempDir('home-leaky');
    await mkdir(join(home, '.config/pkgreg'), { recursive: true });
    await copyFile(
      join(browserHome, '.config/pkgreg/credentials.json'),
      join(home, '.config/pkgreg/credentials.json'),
    );
    await chmod(join(home, '.config/pkgreg/credentials.json'), 0o644);
    const result = await cli(['whoami'], home);
    expect(result.code).toBe(8);
    expect(result.stderr).toMatch(/credentials\.json can be read by other users \(mode 644\): ignoring it/);
    expect(result.stderr).toContain('Not logged in');
    // A search still works, without the token.
    expect((await cli(['search', 'notes'], home)).code).toBe(0);
  });

  it('no token goes to a plain-http registry elsewhere than this machine', async () => {
    const home = await tempDir('home-http');
    const result = await runCli(['--registry', 'http://registry.invalid', 'search', 'x'], {
      cwd: home,
      home,
      env: { PKGREG_TOKEN: `pkgreg_${'a'.repeat(36)}`, PKGREG_TIMEOUT_MS: '1000' },
    });
    expect(result.stderr).toContain('not sending your token (PKGREG_TOKEN) to http://registry.invalid');
    expect(result.code).toBe(4);
  });

  it('a refused PKGREG_TOKEN: a clear message and exit 8, the token never printed', async () => {
    // Well-formed but for its checksum: refused before any lookup.
    const bad = `pkgreg_${'a'.repeat(30)}000000`;
    const home = await tempDir('home-refused');
    const result = await cli(['search', 'notes'], home, { PKGREG_TOKEN: bad });
    expect(result.code).toBe(8);
    expect(result.stderr).toContain(
      `error: Your token for ${new URL(registry.url).host} (from PKGREG_TOKEN) was refused: The token is malformed: a pkgreg token is pkgreg_ followed by 36 letters and digits; set PKGREG_TOKEN to a valid token, or unset it and run pkgreg login`,
    );
    expect(result.stderr).not.toContain(bad);
  });
});

describe('pkgreg token', () => {
  it('create (read, scoped; the secret printed once), list, revoke', async () => {
    const created = await cli(
      [
        'token',
        'create',
        '--name',
        'ci read',
        '--read',
        '--scope',
        '@secretco',
        '--expires-in-days',
        '7',
        '--json',
      ],
      browserHome,
    );
    expect(created.code, created.stderr).toBe(0);
    const token = CreatedTokenSchema.parse(JSON.parse(created.stdout));
    expect(token).toMatchObject({ name: 'ci read', permission: 'read', scopes: ['secretco'] });
    const plain = await cli(['token', 'create', '--name', 'plain', '--read'], browserHome);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout.trim()).toMatch(/^pkgreg_[0-9A-Za-z]{36}$/);
    expect(plain.stderr).toContain('shown this once');

    const list = await cli(['token', 'list'], browserHome);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(
      /ci read\s+read\s+@secretco\s+\d{4}-\d\d-\d\d\s+-\s+pkgreg_\w{4}\s+[0-9a-f-]{36}/,
    );
    expect(list.stdout).not.toContain(token.token);
    const json = TokenListSchema.parse({
      data: JSON.parse((await cli(['token', 'list', '--json'], browserHome)).stdout),
    });
    expect(json.data.map((t) => t.name)).toContain(`pkgreg CLI on ${hostname()}`);

    const revoked = await cli(['token', 'revoke', token.id], browserHome);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain('Revoked token "ci read"');
    expect((await apiMe(token.token)).status).toBe(401);

    // Wider than the token it is made with: refused by the registry (exit 1), with its reason.
    const wider = await cli(
      ['token', 'create', '--name', 'long', '--read', '--expires-in-days', '365'],
      browserHome,
    );
    expect(wider.code).toBe(1);
    expect(wider.stderr).toContain('outlive');
    // Usage errors: neither or both permissions.
    expect((await cli(['token', 'create', '--name', 'x'], browserHome)).code).toBe(2);
    expect((await cli(['token', 'create', '--name', 'x', '--read', '--publish'], browserHome)).code).toBe(2);
  });
});

describe('a lockfile of private packages', () => {
  it('restores with a read token in another HOME, and fails with exit 3 and the way out without one', async () => {
    // Installed while the scope is public, so the lockfile names it.
    const project = await tempDir('project-private');
    const installed = await cli(['install', '@secretco/runbook'], browserHome, {}, project);
    expect(installed.code, installed.stderr).toBe(0);
    const lock = await readFile(join(project, 'pkgreg-lock.json'), 'utf8');

    // secretco's scope moves into an organisation of cli-browser's and becomes private.
    const cookie = await browserSession('cli-browser');
    const org = await browser(cookie, '/api/auth/organization/create', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Secret Co', slug: 'secretco-org' }),
    });
    expect(org.status).toBe(200);
    const orgId = ((await org.json()) as { id: string }).id;
    await database.db
      .insertInto('scope_settings')
      .values({ scope: 'secretco', organization_id: orgId, visibility: 'private' })
      .execute();

    const readToken = CreatedTokenSchema.parse(
      JSON.parse(
        (
          await cli(
            [
              'token',
              'create',
              '--name',
              'restore',
              '--read',
              '--scope',
              'secretco',
              '--expires-in-days',
              '1',
              '--json',
            ],
            browserHome,
          )
        ).stdout,
      ),
    ).token;

    const withToken = await tempDir('project-with-token');
    await writeFile(join(withToken, 'pkgreg-lock.json'), lock);
    const otherHome = await tempDir('home-ci');
    const restored = await cli(['install'], otherHome, { PKGREG_TOKEN: readToken }, withToken);
    expect(restored.code, restored.stderr).toBe(0);
    expect(existsSync(join(withToken, '.agents/skills/runbook/SKILL.md'))).toBe(true);

    // A package the registry does not find at all: not found (exit 3) either way; without credentials
    // the message says it may be private and how to sign in.
    const ghostLock = lock.replaceAll('@secretco/runbook', '@ghostco/runbook');
    const ghost = await tempDir('project-ghost');
    await writeFile(join(ghost, 'pkgreg-lock.json'), ghostLock);
    const anonymous = await cli(['install'], await tempDir('home-ghost'), {}, ghost);
    expect(anonymous.code, anonymous.stderr).toBe(3);
    expect(anonymous.stderr).toContain(`@ghostco/runbook@`);
    expect(anonymous.stderr).toContain(
      `If it is private, you have no token for ${new URL(registry.url).host}: run pkgreg login (or set PKGREG_TOKEN to a read token) and try again`,
    );
    const signedIn = await cli(['install'], await tempDir('home-ghost'), { PKGREG_TOKEN: readToken }, ghost);
    expect(signedIn.code, signedIn.stderr).toBe(3);

    // Without credentials the private package looks missing: exit 3, and what to do.
    const without = await tempDir('project-without-token');
    await writeFile(join(without, 'pkgreg-lock.json'), lock);
    const refused = await cli(['install'], await tempDir('home-none'), {}, without);
    expect(refused.stderr).toContain('If it is private, you have no token for');
    expect(refused.code).toBe(3);
    expect(existsSync(join(without, '.agents/skills/runbook/SKILL.md'))).toBe(false);
  });
});

describe('pkgreg logout', () => {
  it('revokes the stored token on the registry and forgets it', async () => {
    const token = (await credentialsOf(browserHome))[registry.url]?.token ?? '';
    const result = await cli(['logout'], browserHome);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('the token is revoked and forgotten');
    expect((await credentialsOf(browserHome))[registry.url]).toBeUndefined();
    const after = await apiMe(token);
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: string }).error).toMatch(/revoked/);
    // Logged out: whoami says so (exit 8); a second logout has nothing to do.
    expect((await cli(['whoami'], browserHome)).code).toBe(8);
    expect((await cli(['logout'], browserHome)).stdout).toContain('Not logged in');
  });

  it('a stored token revoked elsewhere: every command says to log in again (exit 8)', async () => {
    const token = (await credentialsOf(deviceHome))[registry.url]?.token ?? '';
    await fetch(`${registry.url}/api/tokens/current`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    // search: the detail route (info) is answered before the registry's credential check today.
    const result = await cli(['search', 'notes'], deviceHome);
    expect(result.code).toBe(8);
    expect(result.stderr).toMatch(
      /Your token for .* \(from credentials file\) was refused: The token was revoked; run pkgreg login/,
    );
  });
});
