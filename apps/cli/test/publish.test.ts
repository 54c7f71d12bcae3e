import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PackageDetailSchema, PublishRunSchema, WebhookSetupSchema } from '@pkgreg/contracts';
import { testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { skillMd } from '@pkgreg/indexer/testing';
import {
  deliverWebhook,
  FakeGitHub,
  type FakeRepo,
  type OidcIssuer,
  pushEvent,
  startOidcIssuer,
} from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, type RunOptions, runCli, tempDir } from './helpers/cli.js';
import { type RunningRegistry, startRegistry } from './helpers/registry.js';
import { type RunningWorker, startWorker } from './helpers/worker.js';

// `pkgreg publish`, `deprecate` and `yank` end to end (docs/publishing.md): the built CLI as a process,
// the real registry-api and runtime worker as processes on the real Postgres and Redis, and local
// servers speaking the real protocols for what lives outside (@pkgreg/testing): GitHub Actions' OIDC
// issuer and token endpoint, and GitHub's REST API with accounts and permissions.

const database = useTestDatabase();
const prefix = testKeyPrefix('cli-publish');
let gh: FakeGitHub;
let issuer: OidcIssuer;
let registry: RunningRegistry;
let worker: RunningWorker;
let home: string;

const GITHUB_WEB = 'https://github.example';

const repo = (owner: string, name: string, files: Record<string, string>): FakeRepo => ({
  owner,
  name,
  defaultBranch: 'main',
  stars: 5,
  license: 'MIT',
  homepage: null,
  files,
});

beforeAll(async () => {
  gh = new FakeGitHub('', GITHUB_WEB);
  await gh.start();
  gh.addRepo(
    repo('octo', 'skills', {
      'pdf/SKILL.md': skillMd(['name: pdf', 'description: Fill PDF forms.', 'version: 1.0.0']),
      'pdf/scripts/fill.sh': 'echo fill\n',
      'notes/SKILL.md': skillMd(['name: notes', 'description: Take notes.', 'colour: blue']),
      'broken/SKILL.md': skillMd(['name: Broken Name', 'description: d']),
    }),
  );
  gh.addRepo(repo('octo', 'other', { 'x/SKILL.md': skillMd(['name: x', 'description: X.']) }));
  gh.addRepo(repo('acme', 'tools', { 'lint/SKILL.md': skillMd(['name: lint', 'description: Lint code.']) }));
  gh.addRepo(repo('sam', 'kit', { 'kit/SKILL.md': skillMd(['name: kit', 'description: A kit.']) }));
  gh.addUser('ghu_octo', 'octo');
  gh.addUser('ghu_acme', 'acme');
  gh.addUser('ghu_sam', 'sam');
  gh.addUser('ghu_reader', 'reader', { 'acme/tools': 'pull' });
  gh.addUser('ghu_revoked', 'revoked', { 'acme/tools': 'admin' });
  gh.revoked.add('ghu_revoked');
  issuer = await startOidcIssuer();
  const codeHost = { GITHUB_API_URL: gh.apiUrl, GITHUB_WEB_URL: GITHUB_WEB };
  registry = await startRegistry(database.url, {
    ...codeHost,
    OIDC_ISSUER: issuer.issuer,
    QUEUE_PREFIX: prefix,
  });
  worker = await startWorker(database.url, prefix, codeHost);
  home = await tempDir('home');
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await registry?.stop();
  await issuer?.close();
  await gh?.stop();
});

function cli(args: string[], options: Partial<RunOptions> = {}): Promise<CliResult> {
  return runCli(['--registry', registry.url, ...args], { cwd: home, home, timeoutMs: 120_000, ...options });
}

/** The environment of a GitHub Actions step of `repository`'s workflow with `permissions: id-token: write`. */
function actionsEnv(repository: string, ref?: string): Record<string, string> {
  const [owner = '', name = ''] = repository.split('/');
  return {
    GITHUB_ACTIONS: 'true',
    GITHUB_REPOSITORY: repository,
    ...issuer.actionsJob({
      repository,
      ownerId: gh.accountId(owner),
      repositoryId: gh.repoId(owner, name),
      ...(ref ? { ref } : {}),
    }),
  };
}

const runOf = (result: CliResult) =>
  PublishRunSchema.extend({ webhook: WebhookSetupSchema.nullable() }).parse(JSON.parse(result.stdout));

/** Publishes with a user token, rotating the webhook secret: the new secret. */
async function newWebhookSecret(repository: string, token: string): Promise<string> {
  const published = await cli(['publish', repository, '--token', token, '--rotate-webhook-secret', '--json']);
  expect(published.code, published.stderr).toBe(0);
  return runOf(published).webhook?.secret ?? '';
}

describe('pkgreg publish', () => {
  it('--help lists publish, deprecate and yank with the proofs they send, and exit code 6', async () => {
    const help = await cli(['--help']);
    for (const command of [
      'publish [options] [repository-or-folder]',
      'deprecate [options] <package>',
      'undeprecate',
      'yank',
      'unyank',
    ])
      expect(help.stdout).toContain(command);
    expect(help.stdout).toContain('  6  publish finished, but some skills were rejected');
    const publishHelp = await cli(['publish', '--help']);
    expect(publishHelp.stdout).toContain(
      'in GitHub Actions with "permissions: id-token: write", an OIDC token',
    );
  });

  it('from a simulated GitHub Actions run: fetches the OIDC token itself, waits, reports per skill (exit 6: one rejected)', async () => {
    const result = await cli(['publish', 'octo/skills'], { env: actionsEnv('octo/skills') });
    expect(result.code, result.stderr).toBe(6);
    expect(issuer.tokenRequests.at(-1)?.audience).toBe(registry.url);
    expect(result.stderr).toContain(
      'Publishing octo/skills into @octo with a GitHub Actions OIDC token: run ',
    );
    expect(result.stderr).toMatch(
      /\[1\/2\] queued, waiting for a worker\n\[2\/2\] indexing on the runtime worker/,
    );
    const lines = result.stdout.split('\n');
    expect(lines).toContain(
      '  rejected     broken/SKILL.md: invalid name "Broken Name": 1-64 of a-z 0-9 -, no leading, trailing or double -',
    );
    expect(result.stdout).toMatch(
      / {2}new version {2}@octo\/notes@0\.0\.0-\S+\n {2}warning {6}@octo\/notes: .*colour/,
    );
    expect(lines).toContain('  new version  @octo/pdf@1.0.0');
    expect(lines).toContain('3 skills: 2 new version, 1 rejected, 1 warning');
    // A CI log may be public: no webhook secret there.
    expect(result.stdout).not.toContain('Secret');
    const detail = PackageDetailSchema.parse(
      await (await fetch(`${registry.url}/api/packages/@octo/pdf`)).json(),
    );
    expect(detail).toMatchObject({ version: '1.0.0', verified: true, sourceRepo: 'octo/skills' });
  });

  it('the repository defaults to the checkout origin; --json prints the run; unchanged the second time', async () => {
    const checkout = await tempDir('checkout');
    const git = promisify(execFile);
    await git('git', ['init', '-q'], { cwd: checkout });
    await git('git', ['remote', 'add', 'origin', `git@github.example:octo/skills.git`], { cwd: checkout });
    const result = await cli(['publish', '--json'], { cwd: checkout, env: actionsEnv('octo/skills') });
    expect(result.code, result.stderr).toBe(6);
    const run = runOf(result);
    expect(run).toMatchObject({
      repository: 'octo/skills',
      scope: 'octo',
      proof: 'oidc',
      status: 'succeeded',
      webhook: null,
    });
    expect(run.result?.skills.map((s) => [s.name ?? s.path, s.outcome])).toEqual([
      ['broken/SKILL.md', 'rejected'],
      ['@octo/notes', 'unchanged'],
      ['@octo/pdf', 'unchanged'],
    ]);
  });

  it('with a user token: the webhook set-up is shown once; --no-wait prints the run id; --run waits for it', async () => {
    const result = await cli(['publish', 'acme/tools', '--token', 'ghu_acme']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('with a GitHub token (--token)');
    expect(result.stdout).toContain('  new version  @acme/lint@0.0.0-');
    expect(result.stdout).toContain(`  Payload URL:  ${registry.url}/api/hooks/github`);
    expect(result.stdout).toMatch(/ {2}Secret: {7}whsec_[0-9a-f]{64}/);

    // GITHUB_TOKEN goes to a registry other than the default with consent only (proof-tokens.test.ts).
    const queued = await cli(['publish', 'acme/tools', '--no-wait', '--yes'], {
      env: { GITHUB_TOKEN: 'ghu_acme' },
    });
    expect(queued.code, queued.stderr).toBe(0);
    const runId = queued.stdout.trim();
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(queued.stdout).not.toContain('Secret');
    const waited = await cli(['publish', '--run', runId, '--json']);
    expect(waited.code, waited.stderr).toBe(0);
    expect(PublishRunSchema.parse(JSON.parse(waited.stdout))).toMatchObject({
      runId,
      status: 'succeeded',
      proof: 'token',
    });
  });

  it('a signed push webhook re-indexes the repository', async () => {
    const secret = await newWebhookSecret('acme/tools', 'ghu_acme');
    const tools = gh.repos.get('acme/tools') as FakeRepo;
    tools.files['lint/SKILL.md'] = skillMd(['name: lint', 'description: Lint code.', 'version: 2.0.0']);
    const hookRepo = {
      fullName: 'acme/tools',
      id: gh.repoId('acme', 'tools'),
      ownerId: gh.accountId('acme'),
    };
    const unsigned = await deliverWebhook(`${registry.url}/api/hooks/github`, {
      event: 'push',
      payload: pushEvent(hookRepo),
    });
    expect(unsigned.status).toBe(401);
    const response = await deliverWebhook(`${registry.url}/api/hooks/github`, {
      event: 'push',
      payload: pushEvent(hookRepo),
      secret,
    });
    expect(response.status).toBe(202);
    const { runId } = (await response.json()) as { runId: string };
    const waited = await cli(['publish', '--run', runId, '--json']);
    expect(waited.code, waited.stderr).toBe(0);
    const run = PublishRunSchema.parse(JSON.parse(waited.stdout));
    expect(run).toMatchObject({ proof: 'webhook', status: 'succeeded' });
    expect(run.result?.skills).toEqual([
      expect.objectContaining({ name: '@acme/lint', outcome: 'new-version', version: '2.0.0' }),
    ]);
    const info = await cli(['info', '@acme/lint']);
    expect(info.stdout).toMatch(/Version: +2\.0\.0/);
    expect(info.stdout).toMatch(/Verified: +yes/);
  });

  it("a delivery signed with a repository's secret re-indexes that repository only, whatever it names", async () => {
    const secret = await newWebhookSecret('acme/tools', 'ghu_acme');
    const url = `${registry.url}/api/hooks/github`;
    const acme = { id: gh.repoId('acme', 'tools'), ownerId: gh.accountId('acme') };
    // Another repository and its owner, signed with acme's secret: refused before anything is queued.
    const hijack = await deliverWebhook(url, {
      event: 'push',
      payload: pushEvent({ ...acme, fullName: 'octo/other', ownerId: gh.accountId('octo') }),
      secret,
    });
    expect(hijack.status).toBe(403);
    // Another repository's name under acme's own owner: acme/tools is what the worker reads and indexes.
    const deliveryId = randomUUID();
    const payload = pushEvent({ ...acme, fullName: 'octo/other' });
    const named = await deliverWebhook(url, { event: 'push', payload, secret, deliveryId });
    expect(named.status).toBe(202);
    const { runId } = (await named.json()) as { runId: string };
    const waited = await cli(['publish', '--run', runId, '--json']);
    expect(waited.code, waited.stderr).toBe(0);
    const run = PublishRunSchema.parse(JSON.parse(waited.stdout));
    expect(run).toMatchObject({ repository: 'acme/tools', proof: 'webhook', status: 'succeeded' });
    expect(run.result?.sourceRepo).toBe('acme/tools');
    // octo/other was never read, let alone marked verified.
    expect((await fetch(`${registry.url}/api/packages/@octo/x`)).status).toBe(404);
    // The same delivery again (GitHub's redelivery, or a replay): a duplicate that queues nothing.
    const again = await deliverWebhook(url, { event: 'push', payload, secret, deliveryId });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ action: 'duplicate', runId: null });
  });

  it('refused proofs: clear messages, exit 1 (2 when there is none to send)', async () => {
    const reader = await cli(['publish', 'acme/tools', '--token', 'ghu_reader']);
    expect(reader.code).toBe(1);
    expect(reader.stderr).toContain(
      "The token's user cannot push to acme/tools: push or admin access is required",
    );
    const revoked = await cli(['publish', 'acme/tools', '--token', 'ghu_revoked']);
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toContain('GitHub refused the token (bad credentials, expired or revoked)');
    const otherRepo = await cli(['publish', 'octo/other'], { env: actionsEnv('octo/skills') });
    expect(otherRepo.code).toBe(1);
    expect(otherRepo.stderr).toContain('The OIDC token is for repository octo/skills, not octo/other');
    const branch = await cli(['publish', 'octo/skills', '--ref', 'release'], {
      env: actionsEnv('octo/skills'),
    });
    expect(branch.code).toBe(1);
    expect(branch.stderr).toContain('issued to a run on refs/heads/main, not refs/heads/release');
    const none = await cli(['publish', 'acme/tools']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('No proof of ownership to send: pass --token, set GITHUB_TOKEN');
    const noIdToken = await cli(['publish', 'acme/tools'], { env: { GITHUB_ACTIONS: 'true' } });
    expect(noIdToken.stderr).toContain('give the job `permissions: id-token: write`');
  });

  it('a renamed owner keeps its scope; a new account that took the freed login gets nothing', async () => {
    expect((await cli(['publish', 'sam/kit', '--token', 'ghu_sam'])).code).toBe(0);
    gh.renameOwner('sam', 'samuel');
    const renamed = await cli(['publish', 'samuel/kit', '--json'], { env: actionsEnv('samuel/kit') });
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(runOf(renamed)).toMatchObject({ repository: 'samuel/kit', scope: 'sam', status: 'succeeded' });
    const kit = PackageDetailSchema.parse(
      await (await fetch(`${registry.url}/api/packages/@sam/kit`)).json(),
    );
    expect(kit).toMatchObject({ sourceRepo: 'samuel/kit', repoOwner: 'samuel' });

    gh.takeLogin('sam');
    gh.addRepo(
      repo('sam', 'kit', { 'kit/SKILL.md': skillMd(['name: kit', 'description: Not the real kit.']) }),
    );
    gh.addUser('ghu_impostor', 'sam');
    const impostor = await cli(['publish', 'sam/kit', '--token', 'ghu_impostor']);
    expect(impostor.code).toBe(1);
    expect(impostor.stderr).toMatch(
      /scope @sam belongs to the code-host account with id \d+ \(last seen as "samuel"\); "sam" is now account \d+, another account/,
    );
    const still = PackageDetailSchema.parse(
      await (await fetch(`${registry.url}/api/packages/@sam/kit`)).json(),
    );
    expect(still.description).toBe('A kit.');
  });
});

describe('pkgreg deprecate / yank', () => {
  beforeAll(async () => {
    const octo = gh.repos.get('octo/skills') as FakeRepo;
    octo.files['pdf/SKILL.md'] = skillMd(['name: pdf', 'description: Fill PDF forms.', 'version: 1.1.0']);
    const result = await cli(['publish', 'octo/skills', '--token', 'ghu_octo']);
    expect(result.stdout).toContain('  new version  @octo/pdf@1.1.0');
  });

  it('deprecate with a message: info and install show it; undeprecate lifts it', async () => {
    const done = await cli(['deprecate', '@octo/pdf', '--message', 'Use @octo/pdf-pro instead'], {
      env: actionsEnv('octo/skills'),
    });
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toBe('@octo/pdf is deprecated: Use @octo/pdf-pro instead\n');
    const info = await cli(['info', '@octo/pdf']);
    expect(info.stderr).toContain('warning: @octo/pdf is deprecated: Use @octo/pdf-pro instead');
    expect(info.stdout).toMatch(/Status: +deprecated: Use @octo\/pdf-pro instead/);
    const project = await tempDir('deprecated');
    const install = await cli(['install', '@octo/pdf', '--dir', 'skills'], { cwd: project });
    expect(install.code, install.stderr).toBe(0);
    expect(install.stderr).toContain('warning: @octo/pdf is deprecated: Use @octo/pdf-pro instead');
    const lifted = await cli(['undeprecate', '@octo/pdf', '--token', 'ghu_octo']);
    expect(lifted.stdout).toBe('@octo/pdf is no longer deprecated\n');
    expect((await cli(['info', '@octo/pdf'])).stderr).not.toContain('deprecated');
  });

  it('a yanked version is never chosen by a range or latest, still installs by exact version; unyank', async () => {
    const yanked = await cli(['yank', '@octo/pdf@1.1.0', '--reason', 'broke forms', '--token', 'ghu_octo']);
    expect(yanked.code, yanked.stderr).toBe(0);
    expect(yanked.stdout).toContain('latest is now 1.0.0');
    const project = await tempDir('yanked');
    const byRange = await cli(['install', '@octo/pdf@^1.0', '--dir', 'skills'], { cwd: project });
    expect(byRange.code, byRange.stderr).toBe(0);
    const lock = JSON.parse(await readFile(join(project, 'pkgreg-lock.json'), 'utf8'));
    expect(lock.packages['@octo/pdf'].version).toBe('1.0.0');
    const exact = await cli(['install', '@octo/pdf@1.1.0', '--dir', 'skills'], { cwd: project });
    expect(exact.code, exact.stderr).toBe(0);
    expect(exact.stderr).toContain('warning: @octo/pdf@1.1.0 is yanked by its owner (broke forms)');
    const outdated = await cli(['outdated', '--json'], { cwd: project });
    expect(JSON.parse(outdated.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: '@octo/pdf', latest: '1.0.0' })]),
    );
    const refused = await cli(['yank', '@octo/pdf@1.0.0', '--token', 'ghu_reader']);
    expect(refused.code).toBe(1);
    const undone = await cli(['unyank', '@octo/pdf@1.1.0', '--token', 'ghu_octo']);
    expect(undone.stdout).toContain('latest is now 1.1.0');
    const again = await cli(['install', '@octo/pdf@^1.0', '--dir', 'skills'], { cwd: project });
    expect(again.code, again.stderr).toBe(0);
    expect(
      JSON.parse(await readFile(join(project, 'pkgreg-lock.json'), 'utf8')).packages['@octo/pdf'].version,
    ).toBe('1.1.0');
  });

  it('yank takes an exact version (exit 2)', async () => {
    const range = await cli(['yank', '@octo/pdf@^1.0', '--token', 'ghu_octo']);
    expect(range.code).toBe(2);
    expect(range.stderr).toContain('yank takes an exact version');
  });
});
