import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CreatedTokenSchema, PackageDetailSchema, UploadResultSchema } from '@pkgreg/contracts';
import { useTestDatabase } from '@pkgreg/db/vitest';
import {
  attestPendingVersions,
  registerSigningKey,
  signerFromPem,
  signPendingVersions,
} from '@pkgreg/registry';
import { actionsClaims, gitlabClaims, type OidcIssuer, startOidcIssuer } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, type RunOptions, runCli, tempDir } from './helpers/cli.js';
import { type RunningRegistry, startRegistry } from './helpers/registry.js';

// `pkgreg publish <folder>` end to end (docs/publishing.md, "Uploading (hosted packages)"): the built
// CLI as a process against the real registry-api (one for every case), with a publish token from the
// development sign-in, and trusted publishing from a simulated GitHub Actions job and a GitLab job's
// id_tokens variable (a local OIDC issuer).

const database = useTestDatabase();
let registry: RunningRegistry;
let issuer: OidcIssuer;
let home: string;
let cookie: string;
let publishToken: string;
let readToken: string;

async function call(path: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${registry.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', origin: registry.url, cookie },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

async function token(permission: 'read' | 'publish'): Promise<string> {
  const res = await call('/api/tokens', {
    method: 'POST',
    body: { name: permission, permission, expiresInDays: 7 },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return CreatedTokenSchema.parse(res.body).token;
}

beforeAll(async () => {
  issuer = await startOidcIssuer();
  registry = await startRegistry(database.url, {
    DEV_SIGN_IN: 'true',
    TRUSTED_PUBLISHING_ISSUERS: issuer.issuer,
  });
  home = await tempDir('home');
  const signIn = await fetch(`${registry.url}/api/auth/dev/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: registry.url },
    body: JSON.stringify({ handle: 'dana' }),
  });
  expect(signIn.status).toBe(200);
  cookie = (signIn.headers.getSetCookie() ?? []).map((c) => c.split(';')[0]).join('; ');
  publishToken = await token('publish');
  readToken = await token('read');
}, 120_000);

afterAll(async () => {
  await registry?.stop();
  await issuer?.close();
});

function cli(args: string[], options: Partial<RunOptions> = {}): Promise<CliResult> {
  return runCli(['--registry', registry.url, ...args], { cwd: home, home, timeoutMs: 60_000, ...options });
}

async function skillFolder(
  root: string,
  name: string,
  frontmatter: string[] = [],
  extra: Record<string, string> = {},
) {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'SKILL.md'),
    `---\nname: ${name}\ndescription: The ${name} skill.\n${frontmatter.map((l) => `${l}\n`).join('')}---\n\n# ${name}\n`,
  );
  for (const [path, content] of Object.entries(extra)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

describe('pkgreg publish <folder>', () => {
  it('uploads one skill with PKGREG_TOKEN: the version from SKILL.md, a hosted package', async () => {
    const root = await tempDir('one');
    const dir = await skillFolder(root, 'tool', ['metadata:', '  version: "1.0"'], {
      'scripts/run.sh': 'echo run\n',
    });
    await chmod(join(dir, 'scripts/run.sh'), 0o755);
    const result = await cli(['publish', dir, '--scope', 'dana'], { env: { PKGREG_TOKEN: publishToken } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('published  @dana/tool@1.0.0 (2 files, risk');
    const detail = PackageDetailSchema.parse((await call('/api/packages/@dana/tool')).body);
    expect(detail).toMatchObject({ hosted: true, version: '1.0.0', sourceRepo: '@dana/tool' });
    const version = (await call('/api/packages/@dana/tool/versions/1.0.0')).body as {
      files: Array<{ path: string; executable: boolean }>;
    };
    expect(version.files.map((f) => [f.path, f.executable])).toEqual([
      ['SKILL.md', false],
      ['scripts/run.sh', true],
    ]);

    // The same version again: the registry's refusal, exit 1.
    const again = await cli(['publish', dir, '--scope', '@dana', '--json'], {
      env: { PKGREG_TOKEN: publishToken },
    });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/@dana\/tool@1\.0\.0 already exists/);
  });

  it('every skill under a folder, --set-version for all; --json prints each result', async () => {
    const root = await tempDir('many');
    await skillFolder(root, 'alpha');
    await skillFolder(join(root, 'nested'), 'beta');
    await skillFolder(join(root, '.claude', 'skills'), 'installed-copy');
    const result = await cli([
      'publish',
      root,
      '--scope',
      'dana',
      '--set-version',
      '0.3.0',
      '--json',
      '--token',
      publishToken,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const outcomes = JSON.parse(result.stdout) as Array<{ result: unknown }>;
    expect(outcomes.map((o) => UploadResultSchema.parse(o.result).name)).toEqual([
      '@dana/alpha',
      '@dana/beta',
    ]);
  });

  it('usage errors (exit 2) before anything is sent: no version, a version SKILL.md contradicts, no scope, no credentials', async () => {
    const root = await tempDir('usage');
    const plain = await skillFolder(root, 'plain');
    const noVersion = await cli(['publish', plain, '--scope', 'dana', '--token', publishToken]);
    expect(noVersion.code).toBe(2);
    expect(noVersion.stderr).toMatch(/declares no version: add `version: 1\.0\.0`.*or pass --set-version/);
    const declared = await skillFolder(root, 'declared', ['version: 2.0.0']);
    const contradicted = await cli([
      'publish',
      declared,
      '--scope',
      'dana',
      '--set-version',
      '2.1.0',
      '--token',
      publishToken,
    ]);
    expect(contradicted.code).toBe(2);
    expect(contradicted.stderr).toMatch(/declares version 2\.0\.0, not 2\.1\.0/);
    expect((await cli(['publish', declared, '--token', publishToken])).stderr).toMatch(/--scope <scope>/);
    const none = await cli(['publish', declared, '--scope', 'dana']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/No credentials to upload with/);
    expect((await call('/api/packages/@dana/declared')).status).toBe(404);
  });

  it("deprecate and yank act with the account's token; a refused one is exit 8, a refused --token exit 1", async () => {
    const dir = await skillFolder(await tempDir('owner'), 'owned', ['version: 1.0.0']);
    const asOwner = { env: { PKGREG_TOKEN: publishToken } };
    expect((await cli(['publish', dir, '--scope', 'dana'], asOwner)).code).toBe(0);
    const deprecated = await cli(['deprecate', '@dana/owned', '-m', 'use @dana/tool'], asOwner);
    expect(deprecated.code, deprecated.stderr).toBe(0);
    expect(deprecated.stdout).toContain('@dana/owned is deprecated: use @dana/tool');
    const yanked = await cli(['yank', '@dana/owned@1.0.0'], asOwner);
    expect(yanked.code, yanked.stderr).toBe(0);
    expect(yanked.stdout).toContain('@dana/owned@1.0.0 is yanked');

    const read = await cli(['undeprecate', '@dana/owned'], { env: { PKGREG_TOKEN: readToken } });
    expect(read.code).toBe(1);
    expect(read.stderr).toMatch(/only read/);
    const unknown = `pkgreg_${'a'.repeat(30)}000000`;
    const refused = await cli(['undeprecate', '@dana/owned'], { env: { PKGREG_TOKEN: unknown } });
    expect(refused.code).toBe(8);
    expect(refused.stderr).toMatch(/Your token for .* \(from PKGREG_TOKEN\) was refused/);
    // A proof handed over with --token is not the CLI's token: its refusal is the registry's reason, exit 1.
    const proof = await cli(['undeprecate', '@dana/owned', '--token', unknown], asOwner);
    expect(proof.code).toBe(1);
    expect(proof.stderr).not.toMatch(/Your token/);
    expect(PackageDetailSchema.parse((await call('/api/packages/@dana/owned')).body).status).toBe(
      'deprecated',
    );
  });

  it('a read token is refused by the registry (exit 1, its reason)', async () => {
    const root = await tempDir('read');
    const dir = await skillFolder(root, 'readonly', ['version: 1.0.0']);
    const result = await cli(['publish', dir, '--scope', 'dana'], { env: { PKGREG_TOKEN: readToken } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/may only read/);
  });

  it('trusted publishing: a GitHub Actions job and a GitLab job upload without a stored secret', async () => {
    const root = await tempDir('ci');
    // The job's checkout: the upload names the skill's folder in it for the attestation.
    execFileSync('git', ['init', '-q', root]);
    const dir = await skillFolder(join(root, 'skills'), 'tool', ['version: 1.1.0']);
    const added = await call('/api/packages/@dana/tool/trusted-publishers', {
      method: 'POST',
      body: { issuer: issuer.issuer, repository: 'dana/tool-src', workflow: 'publish.yml' },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const job = issuer.actionsJob({ repository: 'dana/tool-src', ownerId: 1, repositoryId: 2 });
    const actions = await cli(['publish', dir, '--scope', 'dana'], {
      env: { GITHUB_ACTIONS: 'true', ...job },
    });
    expect(actions.code, actions.stderr).toBe(0);
    expect(actions.stdout).toContain('published  @dana/tool@1.1.0');
    expect(actions.stdout).toContain(
      `           from ${issuer.issuer}/dana/tool-src at aaaaaaaaaaaa by ${issuer.issuer}/dana/tool-src/actions/runs/4242/attempts/1\n`,
    );
    expect(issuer.tokenRequests.at(-1)?.audience).toBe(registry.url);

    // Another repository's job: not a trusted publisher.
    const other = issuer.actionsJob({ repository: 'mallory/tool-src', ownerId: 3, repositoryId: 4 });
    const dir2 = await skillFolder(join(root, 'v2'), 'tool', ['version: 1.2.0']);
    const refused = await cli(['publish', dir2, '--scope', 'dana'], {
      env: { GITHUB_ACTIONS: 'true', ...other },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/mallory\/tool-src.*is not a trusted publisher of @dana\/tool/);

    const gitlab = await call('/api/packages/@dana/tool/trusted-publishers', {
      method: 'POST',
      body: { issuer: issuer.issuer, repository: 'dana-group/tool' },
    });
    expect(gitlab.status).toBe(201);
    const idToken = await issuer.issue(gitlabClaims({ project: 'dana-group/tool', projectId: 5 }), {
      audience: registry.url,
    });
    const fromGitlab = await cli(
      ['publish', dir2, '--scope', 'dana', '--oidc-token-env', 'CI_PKGREG_TOKEN'],
      {
        env: { CI_PKGREG_TOKEN: idToken },
      },
    );
    expect(fromGitlab.code, fromGitlab.stderr).toBe(0);
    expect(fromGitlab.stdout).toContain('published  @dana/tool@1.2.0');
    // A token for another audience stays here.
    const elsewhere = await issuer.issue(
      actionsClaims({ repository: 'dana/tool-src', ownerId: 1, repositoryId: 2 }),
      {
        audience: 'https://elsewhere.example',
      },
    );
    const kept = await cli(['publish', dir2, '--scope', 'dana', '--set-version', '1.2.0'], {
      env: { PKGREG_ID_TOKEN: elsewhere },
    });
    expect(kept.code).toBe(1);
    expect(kept.stderr).toMatch(/PKGREG_ID_TOKEN issued an OIDC token for https:\/\/elsewhere\.example/);
  });

  it("install verifies a CI upload's attestation and records it; verify then requires it", async () => {
    // The registry's signer, as the API runs it: publish a key, sign, attest.
    const signer = signerFromPem(
      generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
    await registerSigningKey(database.db, signer);
    await signPendingVersions(database.db, signer);
    expect(await attestPendingVersions(database.db, signer, { builderId: registry.url })).toBeGreaterThan(0);
    const cwd = await tempDir('attested');
    const installed = await cli(['install', '--agent', 'universal', '@dana/tool@1.1.0'], { cwd });
    expect(installed.code, installed.stderr).toBe(0);
    const lock = JSON.parse(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8'));
    expect(lock.packages['@dana/tool']).toMatchObject({
      version: '1.1.0',
      sourceRepo: '@dana/tool',
      signature: { keyid: signer.keyId },
      attested: true,
    });
    // The attestation names the folder the CLI found in the job's checkout.
    const [{ envelope } = { envelope: { payload: '' } }] = (
      (await call('/api/packages/@dana/tool/versions/1.1.0/attestations')).body as {
        attestations: Array<{ envelope: { payload: string } }>;
      }
    ).attestations;
    const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
    expect(statement.predicate.buildDefinition.externalParameters).toMatchObject({
      repository: `${issuer.issuer}/dana/tool-src`,
      commit: 'a'.repeat(40),
      path: 'skills/tool',
    });
    const verified = await cli(['verify'], { cwd });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    // The attestation taken away: verify says so.
    await database.db.deleteFrom('version_attestations').execute();
    const missing = await cli(['verify'], { cwd });
    expect(missing.code).toBe(9);
    expect(missing.stdout).toContain('  attestation: attestation missing');
  });

  it('pkgreg trust add, list and remove manage the trusted publishers with an access token', async () => {
    const env = { PKGREG_TOKEN: publishToken };
    const added = await cli(
      [
        'trust',
        'add',
        '@dana/alpha',
        '--repository',
        'dana/alpha-src',
        '--workflow',
        'release.yml',
        '--issuer',
        issuer.issuer,
      ],
      { env },
    );
    expect(added.code, added.stderr).toBe(0);
    const listed = await cli(['trust', 'list', '@dana/alpha', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const settings = JSON.parse(listed.stdout) as {
      trustedPublishers: Array<{ id: string; repository: string; workflow: string }>;
    };
    expect(settings.trustedPublishers).toEqual([
      expect.objectContaining({
        repository: 'dana/alpha-src',
        workflow: 'release.yml',
        package: '@dana/alpha',
      }),
    ]);
    const id = settings.trustedPublishers[0]?.id ?? '';
    expect((await cli(['trust', 'list', '@dana/alpha'], { env })).stdout).toContain(
      `${id}  ${issuer.issuer}  dana/alpha-src, workflow release.yml`,
    );
    const removed = await cli(['trust', 'remove', '@dana/alpha', id], { env });
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('@dana/alpha: no trusted publishers');
    const none = await cli(['trust', 'list', '@dana/alpha']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/pass --token or set PKGREG_TOKEN/);
  });
});
