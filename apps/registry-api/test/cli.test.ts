import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The operator command as a process (`pnpm registry ...` runs `node dist/cli.js ...`), against its own
// database. decisions.md: Registry / Indexing (rejections are reported with their reasons).

const CLI = resolve(import.meta.dirname, '../dist/cli.js');
const t = useTestDatabase();
let root: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'pkgreg-registry-cli-')));
});
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, DATABASE_URL: t.url, INIT_CWD: root, LOG_LEVEL: 'silent' }, timeout: 60_000 },
      (error, stdout, stderr) => {
        done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

function repoWith(owner: string, name: string, files: Record<string, string>): string {
  const dir = join(root, owner, name);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@pkgreg.invalid', ...args], { cwd: dir });
  git('init', '-q', '-b', 'main');
  git('add', '--all');
  git('commit', '-q', '-m', 'skills');
  return dir;
}

describe('registry CLI', { timeout: 60_000 }, () => {
  it('index <path>: a progress line per repository, a summary, and each rejection with its reason', async () => {
    repoWith('cli-owner', 'skills', {
      'good/SKILL.md': '---\nname: good\ndescription: A good skill.\n---\n# Good\n',
      'bad/SKILL.md': '---\nname: Not Valid\ndescription: Misnamed.\n---\n',
    });
    // A relative path resolves against where pnpm was started (INIT_CWD).
    const result = await cli(['index', './cli-owner/skills']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      '[1/1] git cli-owner/skills: 1 indexed, 0 updated, 0 unchanged, 0 delisted, 1 rejected',
    );
    expect(result.stdout).toMatch(/^ {4}new version @cli-owner\/good@0\.0\.0-\d{14}-[0-9a-f]{12}$/m);
    expect(result.stdout).toContain(
      'cli-owner/skills: bad/SKILL.md: invalid name "Not Valid": 1-64 of a-z 0-9 -, no leading, trailing or double -',
    );
    const row = await t.db
      .selectFrom('packages')
      .selectAll()
      .where('scope', '=', 'cli-owner')
      .executeTakeFirst();
    expect(row).toMatchObject({ name: 'good', status: 'active' });

    const again = await cli(['index', join(root, 'cli-owner/skills'), '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual([
      expect.objectContaining({ status: 'succeeded', indexed: 0, unchanged: 1, rejected: 1 }),
    ]);
  });

  it('a failing source exits 1 and says why; the others still run', async () => {
    const result = await cli(['index', join(root, 'missing'), './cli-owner/skills']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/FAILED invalid_locator: no such directory/);
    expect(result.stdout).toContain('[2/2] git cli-owner/skills: 0 indexed');
  });

  it('sources lists what was indexed; seed-demo is idempotent', async () => {
    const sources = await cli(['sources']);
    expect(sources.code).toBe(0);
    expect(sources.stdout).toContain('cli-owner/skills');

    const dir = join(root, 'demo');
    const first = await cli(['seed-demo', '--dir', dir]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /4 repositories: 1[0-9] indexed, 0 updated, 0 unchanged, 0 delisted, 0 rejected/,
    );
    const second = await cli(['seed-demo', '--dir', dir]);
    expect(second.stdout).toMatch(
      /4 repositories: 0 indexed, 0 updated, 1[0-9] unchanged, 0 delisted, 0 rejected/,
    );
    // The demo's private skill was private from its first row: its scope was set before indexing.
    const privateRows = await t.db
      .selectFrom('packages')
      .select(['name', 'private'])
      .where('scope', '=', 'demo-team')
      .execute();
    expect(privateRows).toEqual([{ name: 'deploy-runbook', private: true }]);
    expect(
      await t.db
        .selectFrom('packages')
        .select('scope')
        .where('private', '=', true)
        .where('scope', '!=', 'demo-team')
        .execute(),
    ).toEqual([]);
  });

  it('accounts: suspend an account (its sessions end); an unknown one is exit 1 (the rest: packages/accounts tests)', async () => {
    const email = 'developer@dev.pkgreg.invalid';
    const account = await t.db
      .selectFrom('auth_user')
      .select('id')
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    await t.db
      .insertInto('auth_session')
      .values({
        id: 's1',
        token: 'session-token',
        userId: account.id,
        expiresAt: new Date(Date.now() + 60_000),
        updatedAt: new Date(),
      })
      .execute();
    const suspended = await cli(['suspend', email, '--reason', 'spam']);
    expect(suspended.code).toBe(0);
    expect(
      await t.db.selectFrom('auth_session').select('id').where('userId', '=', account.id).execute(),
    ).toEqual([]);
    const row = await t.db
      .selectFrom('auth_user')
      .select(['banned', 'banReason'])
      .where('id', '=', account.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ banned: true, banReason: 'spam' });
    const missing = await cli(['org', 'take-over', 'no-such-org', '--to', email, '--reason', 'x']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No organisation no-such-org');
  });

  it('quarantine, reports, release and rescan (docs/risk-scan.md)', async () => {
    const missing = await cli(['quarantine', '@cli-owner/nope', '--reason', 'x']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No package @cli-owner/nope');
    expect((await cli(['quarantine', '@cli-owner/good'])).code).toBe(2);
    expect((await cli(['quarantine', 'not-a-name', '--reason', 'x'])).code).toBe(2);

    const held = await cli(['quarantine', '@cli-owner/good', '--reason', 'reported: exfiltrates tokens']);
    expect(held.code).toBe(0);
    expect(held.stdout).toContain('quarantined @cli-owner/good: reported: exfiltrates tokens');
    const row = await t.db
      .selectFrom('packages')
      .select(['id', 'quarantine_reason'])
      .where('scope', '=', 'cli-owner')
      .where('name', '=', 'good')
      .executeTakeFirstOrThrow();
    expect(row.quarantine_reason).toBe('reported: exfiltrates tokens');

    expect((await cli(['reports'])).stdout).toContain('No reports.');
    await t.db
      .insertInto('package_reports')
      .values({
        package_id: row.id,
        reason: 'sends ~/.ssh away',
        details: 'line 3',
        client_address: '192.0.2.7',
      })
      .execute();
    const reports = await cli(['reports', '@cli-owner/good']);
    expect(reports.code).toBe(0);
    expect(reports.stdout).toMatch(/@cli-owner\/good \(quarantined, risk none\) {2}from 192\.0\.2\.7/);
    expect(reports.stdout).toContain('    sends ~/.ssh away');
    expect(JSON.parse((await cli(['reports', '--json'])).stdout)).toEqual([
      expect.objectContaining({ scope: 'cli-owner', name: 'good', reason: 'sends ~/.ssh away' }),
    ]);

    expect((await cli(['release', '@cli-owner/good'])).stdout).toContain('released @cli-owner/good');
    const again = await cli(['release', '@cli-owner/good']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('is not quarantined');

    // Every version was scanned when indexed: nothing to backfill until --all.
    expect((await cli(['rescan'])).stdout).toMatch(/^0 versions scanned/m);
    const all = await cli(['rescan', '--all', '@cli-owner/good', '--json']);
    expect(JSON.parse(all.stdout)).toMatchObject({ versions: 1, byRisk: { none: 1 } });
  });

  it('gc-blobs deletes the blobs no version references and keeps the rest (docs/versions.md, Storage)', async () => {
    const blobs = async () =>
      (await t.db.selectFrom('content_blobs').select('sha256').orderBy('sha256').execute()).map(
        (r) => r.sha256,
      );
    const referenced = (
      await t.db
        .selectFrom('package_version_files')
        .select('sha256')
        .union(t.db.selectFrom('package_versions').select('archive_sha256 as sha256'))
        .orderBy('sha256')
        .execute()
    ).map((r) => r.sha256);
    expect(referenced.length).toBeGreaterThan(0);
    // Besides this stray one, the runs above stored the files of the folders they rejected.
    await t.db
      .insertInto('content_blobs')
      .values({ sha256: 'f'.repeat(64), git_sha1: 'f'.repeat(40), size: 5, bytes: Buffer.from('stray') })
      .execute();
    const unreferenced = (await blobs()).length - referenced.length;
    const result = await cli(['gc-blobs']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(`^${unreferenced} unreferenced blobs deleted \\(\\d+ bytes\\)\\n$`),
    );
    expect(await blobs()).toEqual(referenced);
    const json = await cli(['gc-blobs', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ blobs: 0, bytes: 0, busy: false });
  });

  it('bad usage exits 2', async () => {
    expect((await cli(['index'])).code).toBe(2);
    expect((await cli(['no-such-command'])).code).toBe(2);
    // An empty target (an unset shell variable) is refused, not taken for the current directory.
    for (const target of ['', '  ', 'git:', 'github:']) {
      const empty = await cli(['index', target]);
      expect(empty.code).toBe(2);
      expect(empty.stderr).toContain('an empty target names no repository');
    }
  });
});
