import { PublishResultSchema, QUEUES } from '@pkgreg/contracts';
import { testKeyPrefix } from '@pkgreg/db/testing';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { skillMd } from '@pkgreg/indexer/testing';
import { createPublishRun, findPublishRun } from '@pkgreg/registry';
import { FakeGitHub, type FakeRepo } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeWorker } from '../src/worker.js';
import { createTestWorker, until } from './helpers.js';

// A publish's registry.index job (docs/publishing.md) on a real worker, against the local server that
// speaks GitHub's REST API: the publish run goes queued -> running -> succeeded with a result per skill,
// or failed with a message for the publisher, once, without retries for what a retry cannot fix.

const prefix = testKeyPrefix('publishing');
const tdb = useTestDatabase();
let gh: FakeGitHub;
let worker: RuntimeWorker;

const repo = (owner: string, name: string): FakeRepo => ({
  owner,
  name,
  defaultBranch: 'main',
  stars: 12,
  license: 'MIT',
  homepage: null,
  files: {
    'skills/pdf/SKILL.md': skillMd(['name: pdf', 'description: Fill PDF forms.', 'version: 1.0.0']),
    'skills/pdf/scripts/fill.py': 'print("fill")\n',
    'skills/notes/SKILL.md': skillMd(['name: notes', 'description: Take notes.', 'colour: blue']),
    'skills/broken/SKILL.md': skillMd(['name: Broken Name', 'description: d']),
  },
});

beforeAll(async () => {
  gh = new FakeGitHub('', 'https://github.example');
  await gh.start();
  gh.addRepo(repo('octo', 'skills'));
  gh.addRepo(repo('sam', 'kit'));
  worker = createTestWorker(tdb.db, prefix, {
    concurrency: 1,
    indexing: true,
    indexer: { github: { apiUrl: gh.apiUrl, webUrl: 'https://github.example', maxRateLimitWaitMs: 0 } },
  });
});

afterAll(async () => {
  await worker?.close(5000);
  await gh?.stop();
});

/** A publish run as the API records it, and its job as the API enqueues it. */
async function publishRun(
  locator: string,
  options: {
    ref?: string | null;
    ownerId?: number;
    jobId?: string;
    runId?: string;
    repositoryId?: number;
    proof?: 'token' | 'oidc' | 'webhook';
  } = {},
) {
  const run = options.runId
    ? { id: options.runId }
    : await createPublishRun(tdb.db, {
        repository: locator,
        locator,
        scope: locator.split('/')[0] ?? '',
        ref: options.ref ?? null,
        proof: options.proof ?? 'token',
      });
  const [owner = ''] = locator.split('/');
  const job = await worker.queue.enqueue(
    'registry.index',
    {
      kind: 'github',
      locator,
      ref: options.ref ?? null,
      proof: options.proof ?? 'token',
      ownerId: options.ownerId ?? gh.accountId(owner),
      ...(options.repositoryId !== undefined ? { repositoryId: options.repositoryId } : {}),
      publishRunId: run.id,
    },
    { jobId: options.jobId ?? `publish-${run.id}` },
  );
  const finished = await until(
    async () => {
      const found = await worker.queue.queue(QUEUES.indexing).getJob(job.id ?? '');
      return found?.finishedOn ? found : undefined;
    },
    'the publish job to finish',
    30_000,
  );
  const row = await findPublishRun(tdb.db, run.id);
  return { job: finished, run: row };
}

describe('a publish run on the worker', () => {
  it('succeeds with a result per skill: new version, warnings, rejected with its reason; verified', async () => {
    const { run, job } = await publishRun('octo/skills');
    expect(run?.status, run?.error ?? '').toBe('succeeded');
    expect(run?.started_at).toBeInstanceOf(Date);
    expect(run?.finished_at).toBeInstanceOf(Date);
    expect(run?.indexing_run_id).toBeTruthy();
    expect(job.returnvalue).toMatchObject({ status: 'succeeded', publishRunId: run?.id });
    const result = PublishResultSchema.parse(run?.result);
    expect(result.sourceRepo).toBe('octo/skills');
    expect(result.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(result.skills).toEqual([
      {
        path: 'skills/broken/SKILL.md',
        name: null,
        outcome: 'rejected',
        version: null,
        warnings: [],
        reason: expect.stringMatching(/name/),
      },
      {
        path: 'skills/notes/SKILL.md',
        name: '@octo/notes',
        outcome: 'new-version',
        version: expect.stringMatching(/^0\.0\.0-/),
        warnings: [expect.stringMatching(/colour/)],
        reason: null,
      },
      {
        path: 'skills/pdf/SKILL.md',
        name: '@octo/pdf',
        outcome: 'new-version',
        version: '1.0.0',
        warnings: [],
        reason: null,
      },
    ]);
    const rows = await tdb.db.selectFrom('packages').select(['name', 'verified']).orderBy('name').execute();
    expect(rows).toEqual([
      { name: 'notes', verified: true },
      { name: 'pdf', verified: true },
    ]);
    const owner = await tdb.db.selectFrom('scope_owners').selectAll().executeTakeFirst();
    expect(owner).toMatchObject({ scope: 'octo', owner_id: gh.accountId('octo'), bound_by: 'publish' });
  });

  it('again with nothing changed: every skill unchanged, rejections carried over', async () => {
    const { run } = await publishRun('octo/skills');
    const result = PublishResultSchema.parse(run?.result);
    expect(result.notModified).toBe(true);
    expect(result.skills.map((s) => [s.path, s.outcome, s.version])).toEqual([
      ['skills/broken/SKILL.md', 'rejected', null],
      ['skills/notes/SKILL.md', 'unchanged', expect.stringMatching(/^0\.0\.0-/)],
      ['skills/pdf/SKILL.md', 'unchanged', '1.0.0'],
    ]);
  });

  it('a skill whose SKILL.md is gone is reported delisted', async () => {
    const octo = gh.repos.get('octo/skills') as FakeRepo;
    delete octo.files['skills/notes/SKILL.md'];
    octo.files['skills/pdf/SKILL.md'] = skillMd([
      'name: pdf',
      'description: Fill PDF forms.',
      'version: 1.1.0',
    ]);
    const { run } = await publishRun('octo/skills');
    const result = PublishResultSchema.parse(run?.result);
    expect(result.skills.map((s) => [s.name ?? s.path, s.outcome, s.version])).toEqual([
      ['skills/broken/SKILL.md', 'rejected', null],
      ['@octo/notes', 'delisted', null],
      ['@octo/pdf', 'new-version', '1.1.0'],
    ]);
  });

  it('a branch that does not exist fails the run with a message, without retries', async () => {
    const { run, job } = await publishRun('octo/skills', { ref: 'nope' });
    expect(run).toMatchObject({ status: 'failed', error: 'branch "nope" not found in octo/skills' });
    expect(job.attemptsMade).toBe(1);
  });

  it('a scope bound to another account fails the run: a re-registered login gets nothing', async () => {
    await tdb.db
      .insertInto('scope_owners')
      .values({ scope: 'sam', owner_id: 1, owner_login: 'sam-before', bound_by: 'publish' })
      .execute();
    const { run, job } = await publishRun('sam/kit');
    expect(run?.status).toBe('failed');
    expect(run?.error).toMatch(
      /scope @sam belongs to the code-host account with id 1 \(last seen as "sam-before"\)/,
    );
    expect(job.attemptsMade).toBe(1);
    const written = await tdb.db.selectFrom('packages').select('name').where('scope', '=', 'sam').execute();
    expect(written).toEqual([]);
  });

  it('a repository that changed owner since the proof fails the run', async () => {
    const { run } = await publishRun('octo/skills', { ownerId: 999_999 });
    expect(run).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/not 999999 that the proof named/),
    });
  });

  it('a second delivery of a run that ended does nothing', async () => {
    const first = await publishRun('octo/skills');
    const again = await publishRun('octo/skills', { runId: first.run?.id, jobId: `again-${first.run?.id}` });
    expect(again.job.returnvalue).toEqual({ skipped: 'ended', publishRunId: first.run?.id });
    expect(again.run?.finished_at).toEqual(first.run?.finished_at);
  });
});

describe('the repository a job names by its id (docs/publishing.md, Webhooks)', () => {
  const single = (owner: string, name: string, description: string): FakeRepo => ({
    ...repo(owner, name),
    files: { [`${name}/SKILL.md`]: skillMd([`name: ${name}`, `description: ${description}`]) },
  });
  const packagesOf = (sourceRepo: string) =>
    tdb.db
      .selectFrom('packages')
      .select(['scope', 'name', 'description', 'source_repo', 'verified', 'status'])
      .where('source_repo', '=', sourceRepo)
      .orderBy('name')
      .execute();

  it('a renamed repository whose old name was taken again: the id is read, never the name', async () => {
    gh.addRepo(single('tess', 'old', 'The real one.'));
    const id = gh.repoId('tess', 'old');
    const first = await publishRun('tess/old', { repositoryId: id, proof: 'webhook' });
    expect(first.run?.status, first.run?.error ?? '').toBe('succeeded');
    gh.rename('tess/old', 'new');
    gh.addRepo(single('tess', 'old', 'Someone else at the old name.'));
    const { run } = await publishRun('tess/old', { repositoryId: id, proof: 'webhook' });
    expect(run?.status, run?.error ?? '').toBe('succeeded');
    expect(PublishResultSchema.parse(run?.result).sourceRepo).toBe('tess/new');
    expect(await packagesOf('tess/new')).toEqual([
      {
        scope: 'tess',
        name: 'old',
        description: 'The real one.',
        source_repo: 'tess/new',
        verified: true,
        status: 'active',
      },
    ]);
    expect(await packagesOf('tess/old')).toEqual([]);
  });

  it("a webhook job whose locator is another repository's source: refused, nothing written", async () => {
    gh.addRepo(single('uma', 'mine', 'Uma keeps this.'));
    gh.addRepo(single('uma', 'theirs', 'Not to be written over mine.'));
    const mine = await publishRun('uma/mine', { repositoryId: gh.repoId('uma', 'mine') });
    expect(mine.run?.status).toBe('succeeded');
    const before = await packagesOf('uma/mine');
    for (const proof of ['webhook'] as const) {
      const { run, job } = await publishRun('uma/mine', { repositoryId: gh.repoId('uma', 'theirs'), proof });
      expect(run).toMatchObject({
        status: 'failed',
        error: `uma/mine is indexed as repository ${gh.repoId('uma', 'mine')}; this webhook is for repository ${gh.repoId('uma', 'theirs')}`,
      });
      expect(job.attemptsMade).toBe(1);
    }
    expect(await packagesOf('uma/mine')).toEqual(before);
    expect(await packagesOf('uma/theirs')).toEqual([]);
  });

  it('a repository transferred since the proof: refused, nothing written under either owner', async () => {
    gh.addRepo(single('vic', 'kit', 'Vic kit.'));
    const id = gh.repoId('vic', 'kit');
    gh.transfer('vic/kit', 'wes');
    for (const proof of ['webhook', 'token'] as const) {
      const { run } = await publishRun('vic/kit', { repositoryId: id, ownerId: gh.accountId('vic'), proof });
      expect(run).toMatchObject({
        status: 'failed',
        error: `wes/kit now belongs to account ${gh.accountId('wes')}, not ${gh.accountId('vic')} that the proof named`,
      });
    }
    expect(await packagesOf('vic/kit')).toEqual([]);
    expect(await packagesOf('wes/kit')).toEqual([]);
  });

  it('an id the code host does not know: the run fails at once, whatever the locator', async () => {
    for (const locator of ['octo/skills', 'nobody/here']) {
      const { run, job } = await publishRun(locator, { repositoryId: 987_654_321, proof: 'webhook' });
      expect(run?.status).toBe('failed');
      expect(run?.error).toMatch(/not found/);
      expect(job.attemptsMade).toBe(1);
    }
  });
});
