import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ListResponseSchema,
  PackageDetailSchema,
  SearchResponseSchema,
  VersionListResponseSchema,
} from '@pkgreg/contracts';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { gitBlobSha } from '@pkgreg/registry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, type RunOptions, runCli, tempDir } from './helpers/cli.js';
import { type RunningRegistry, startRegistry } from './helpers/registry.js';
import { type SkillFixture, seedSkills, skillMarkdown, updateSkill } from './helpers/seed.js';

// The published CLI run as a real process against the real registry-api on a real Postgres.

const PDF: SkillFixture = {
  owner: 'acme',
  repo: 'skills',
  path: 'skills/pdf-tools',
  name: 'pdf-tools',
  description: 'Extract text and tables from PDF files',
  // A pattern: a bare `Bash` is an unrestricted shell, which the risk scan reports (risk.test.ts).
  allowedTools: ['Read', 'Bash(pdftotext:*)'],
};
const FORMS: SkillFixture = {
  owner: 'acme',
  repo: 'skills',
  path: 'skills/pdf-forms',
  name: 'pdf-forms',
  description: `Fill PDF forms field by field ${'with a very long description that cannot fit on one line '.repeat(3)}`,
};
const REVIEW: SkillFixture = {
  owner: 'acme',
  repo: 'skills',
  path: 'skills/code-review',
  name: 'code-review',
  description: 'Review pull requests for bugs',
};
const OLD: SkillFixture = {
  owner: 'globex',
  repo: 'kit',
  path: 'legacy-notes',
  name: 'legacy-notes',
  description: 'Old note taking helper',
};

let database: TestDatabase;
let registry: RunningRegistry;
let home: string;

beforeAll(async () => {
  database = await createTestDatabase();
  await seedSkills(database, [PDF, FORMS, REVIEW, OLD]);
  await database.db
    .updateTable('packages')
    .set({ status: 'deprecated' })
    .where('name', '=', 'legacy-notes')
    .execute();
  await database.db.updateTable('packages').set({ verified: true }).where('name', '=', 'pdf-tools').execute();
  registry = await startRegistry(database.url);
  home = await tempDir('home');
}, 120_000);

afterAll(async () => {
  await registry?.stop();
  await database?.destroy();
});

async function project(): Promise<string> {
  return tempDir('project');
}

function cli(args: string[], cwd: string, options: Partial<RunOptions> = {}): Promise<CliResult> {
  return runCli(['--registry', registry.url, ...args], { cwd, home, ...options });
}

function stderrLines(result: CliResult): string[] {
  return result.stderr.split('\n').filter(Boolean);
}

/** The newest version of a package, as the registry lists it. */
async function latest(name: string): Promise<string> {
  const response = await fetch(`${registry.url}/api/packages/${name}/versions?pageSize=1`);
  const version = VersionListResponseSchema.parse(await response.json()).data[0]?.version;
  expect(version, name).toBeDefined();
  return version as string;
}

const NO_AGENT_NOTE =
  'No agent detected in this project or your home folder: installing into .agents/skills, which Codex, Cursor, GitHub Copilot, Gemini CLI and others read (choose with --agent or --dir)';

async function downloads(name: string, cwd: string): Promise<number> {
  const result = await cli(['info', name, '--json'], cwd);
  return PackageDetailSchema.parse(JSON.parse(result.stdout)).downloadCount;
}

describe('pkgreg itself: help, version, usage errors', () => {
  it('--help documents the exit codes and exits 0', async () => {
    const result = await cli(['--help'], await project());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Exit codes:');
    for (const code of [
      '0  success',
      '1  error',
      '2  usage error',
      '3  package or version not found',
      '4  registry unavailable',
      '5  integrity mismatch',
    ]) {
      expect(result.stdout).toContain(`  ${code}`);
    }
  });

  it('help for a command exits 0', async () => {
    const cwd = await project();
    for (const args of [
      ['help', 'install'],
      ['install', '--help'],
    ]) {
      const result = await cli(args, cwd);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('--frozen');
    }
  });

  it('--version prints the package version', async () => {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
    const result = await cli(['--version'], await project());
    expect(result).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  it('an unknown command or option exits 2; no command at all shows help and exits 2', async () => {
    const cwd = await project();
    const unknown = await cli(['frobnicate'], cwd);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("error: unknown command 'frobnicate'");
    expect((await cli(['search', 'pdf', '--colour'], cwd)).code).toBe(2);
    const bare = await runCli([], { cwd, home });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Usage: pkgreg');
  });
});

describe('pkgreg search (registry-api.md: GET /api/search)', () => {
  it('prints a table cut to the terminal width with the verified mark', async () => {
    const result = await cli(['search', 'pdf'], await project());
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+KIND\s+DESCRIPTION\s+TOKENS\s+VERIFIED$/);
    const tools = lines.find((line) => line.startsWith('@acme/pdf-tools'));
    expect(tools).toMatch(/skill\s+Extract text and tables from PDF files\s+\d+\s+✓$/);
    const forms = lines.find((line) => line.startsWith('@acme/pdf-forms'));
    expect(forms).toContain('…');
    // Not a TTY: the table is laid out for 80 columns.
    for (const line of lines) expect(Array.from(line).length).toBeLessThanOrEqual(80);
    expect(result.stderr).toBe('');
  });

  it('--json prints the registry result, which the contract schema accepts', async () => {
    const result = await cli(['search', 'pdf', 'tools', '--json'], await project());
    expect(result.code).toBe(0);
    const body = SearchResponseSchema.parse(JSON.parse(result.stdout));
    expect(body.results.map((item) => `@${item.scope}/${item.name}`)).toContain('@acme/pdf-tools');
  });

  it('says so when nothing matches, exit 0', async () => {
    const result = await cli(['search', 'zebra-unicorn'], await project());
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('No packages found for "zebra-unicorn".\n');
  });

  it('without terms is a usage error (exit 2)', async () => {
    const result = await cli(['search'], await project());
    expect(result.code).toBe(2);
  });

  it('filters the search with the API filters (issue 20)', async () => {
    const cwd = await project();
    // Filtered search reads tables the registry refreshes after the seeding: wait for them, so the
    // empty answers below are the filters' doing, not a table not built yet.
    let names: string[] = [];
    for (let attempt = 0; attempt < 50 && names.length === 0; attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 200));
      const verified = await cli(['search', 'pdf', '--verified', '--json'], cwd);
      expect(verified.code).toBe(0);
      names = SearchResponseSchema.parse(JSON.parse(verified.stdout)).results.map((r) => r.name);
    }
    expect(names).toEqual(['pdf-tools']);
    const elsewhere = await cli(['search', 'pdf', '--owner', 'globex'], cwd);
    expect(elsewhere).toMatchObject({ code: 0, stdout: 'No packages found for "pdf".\n' });
    const active = await cli(['search', 'notes', '--status', 'active'], cwd);
    expect(active.stdout).toBe('No packages found for "notes".\n');
  });

  it('--sort lists the registry by that order, filters applied', async () => {
    const cwd = await project();
    // Lists and their filters trail the seeding by the registry's first refresh.
    let names: string[] = [];
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const result = await cli(['search', '--sort', 'stars', '--status', 'active', '--json'], cwd);
      expect(result.code).toBe(0);
      names = ListResponseSchema.parse(JSON.parse(result.stdout)).data.map((item) => item.name);
      if (names.length === 3) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(names.sort()).toEqual(['code-review', 'pdf-forms', 'pdf-tools']);
    const table = await cli(['search', '--sort', 'name', '--kind', 'skill'], cwd);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+KIND\s+DESCRIPTION\s+STARS$/);
  });

  it.each([
    [['search', 'pdf', '--sort', 'stars'], '--sort lists packages and takes no search terms'],
    [['search', 'pdf', '--kind', 'plugin'], 'kind must be one of skill, composite, workflow, app'],
    [['search', '--sort', 'popular'], '--sort must be one of name, stars, indexed, downloads, trending'],
    [['search', 'pdf', '--order', 'asc'], '--order goes with --sort'],
    [['search', 'pdf', '--risk', 'critical'], 'risk must be one of none, low, medium, high'],
  ])('%j is a usage error naming the option (exit 2)', async (args, message) => {
    const result = await cli(args, await project());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});

describe('pkgreg info (registry-api.md: package detail)', () => {
  it('prints a readable summary', async () => {
    const result = await cli(['info', '@acme/pdf-tools'], await project());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('@acme/pdf-tools ✓\nExtract text and tables from PDF files\n');
    expect(result.stdout).toMatch(/Kind:\s+skill/);
    expect(result.stdout).toMatch(/Source:\s+acme\/skills \(skills\/pdf-tools, main\)/);
    expect(result.stdout).toMatch(/License:\s+MIT/);
    expect(result.stdout).toMatch(/Allowed tools:\s+Read, Bash\(pdftotext:\*\)/);
    expect(result.stdout).toMatch(/Downloads:\s+\d+/);
    expect(result.stdout).toMatch(/Tokens:\s+[1-9]/);
    expect(result.stdout).toMatch(/Status:\s+active/);
  });

  it('--json prints the detail object', async () => {
    const result = await cli(['info', '@acme/pdf-tools', '--json'], await project());
    const pkg = PackageDetailSchema.parse(JSON.parse(result.stdout));
    expect(pkg.skillMdRaw).toBe(skillMarkdown(PDF));
    expect(pkg.lastCommitSha).toBe(gitBlobSha(skillMarkdown(PDF)));
  });

  it('warns on stderr about a deprecated package (decisions.md: Registry / Status)', async () => {
    const result = await cli(['info', '@globex/legacy-notes'], await project());
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('warning: @globex/legacy-notes is deprecated\n');
    expect(result.stdout).toMatch(/Status:\s+deprecated/);
  });

  it('an unknown package exits 3 with the registry message on one line', async () => {
    const result = await cli(['info', '@acme/nope'], await project());
    expect(result.code).toBe(3);
    expect(stderrLines(result)).toEqual(['error: @acme/nope: Package not found']);
    expect(result.stdout).toBe('');
  });

  it('a name breaking the name rule exits 2 before any request', async () => {
    const result = await cli(['info', '@Acme/PDF'], await project());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Invalid package name "@Acme/PDF"');
  });
});

describe('pkgreg install', () => {
  it('writes the skill for .agents/skills when no agent is detected, counts the download and records the lockfile', async () => {
    const cwd = await project();
    const before = await downloads('@acme/pdf-tools', cwd);
    const version = await latest('@acme/pdf-tools');
    const result = await cli(['install', '@acme/pdf-tools'], cwd);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`installed @acme/pdf-tools@${version} -> .agents/skills/pdf-tools\n`);
    expect(stderrLines(result)).toEqual([NO_AGENT_NOTE]);
    const raw = skillMarkdown(PDF);
    expect(await readFile(join(cwd, '.agents/skills/pdf-tools/SKILL.md'), 'utf8')).toBe(raw);
    const lock = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    const sha256 = (await import('node:crypto')).createHash('sha256').update(raw).digest('hex');
    const entry = JSON.parse(lock).packages['@acme/pdf-tools'];
    // Stable key order and a trailing newline, so the lockfile diffs cleanly.
    expect(lock).toBe(
      `${JSON.stringify(
        {
          lockfileVersion: 2,
          packages: {
            '@acme/pdf-tools': {
              name: '@acme/pdf-tools',
              version,
              requested: null,
              integrity: entry.integrity,
              sourceRepo: 'acme/skills',
              sourcePath: 'skills/pdf-tools',
              sourceCommit: entry.sourceCommit,
              agents: ['universal'],
              dirs: ['.agents/skills/pdf-tools'],
              files: { 'SKILL.md': { mode: '100644', sha256 } },
            },
          },
        },
        null,
        2,
      )}\n`,
    );
    expect(entry.integrity).toMatch(/^sha512-/);
    // registry-api.md: the command-line client calls track on install.
    await expect
      .poll(() => downloads('@acme/pdf-tools', cwd), { timeout: 30_000, interval: 500 })
      .toBe(before + 1);
  });

  it('--agent is repeatable and takes comma lists; agents sharing .agents/skills get one folder', async () => {
    const cwd = await project();
    const result = await cli(
      ['install', '@acme/code-review', '--agent', 'claude,cursor', '--agent', 'codex'],
      cwd,
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    for (const dir of ['.claude/skills', '.agents/skills']) {
      expect(await readFile(join(cwd, dir, 'code-review/SKILL.md'), 'utf8')).toBe(skillMarkdown(REVIEW));
    }
    expect(existsSync(join(cwd, '.codex'))).toBe(false);
    expect(existsSync(join(cwd, '.cursor'))).toBe(false);
    const lock = JSON.parse(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8'));
    expect(lock.packages['@acme/code-review'].agents).toEqual(['claude-code', 'codex', 'cursor']);
    expect(lock.packages['@acme/code-review'].dirs).toEqual([
      '.agents/skills/code-review',
      '.claude/skills/code-review',
    ]);
  });

  it('an unknown agent is a usage error (exit 2)', async () => {
    const cwd = await project();
    const result = await cli(['install', '@acme/code-review', '--agent', 'vim'], cwd);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--agent: unknown agent "vim"; known agents: universal, claude-code, codex',
    );
    expect(existsSync(join(cwd, 'pkgreg-lock.json'))).toBe(false);
  });

  it('--global installs under HOME and keeps its lockfile in the config folder', async () => {
    const cwd = await project();
    const otherHome = await tempDir('global-home');
    const version = await latest('@acme/code-review');
    const result = await cli(['install', '@acme/code-review', '--global', '--agent', 'claude'], cwd, {
      home: otherHome,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`installed @acme/code-review@${version} -> ~/.claude/skills/code-review\n`);
    expect(await readFile(join(otherHome, '.claude/skills/code-review/SKILL.md'), 'utf8')).toBe(
      skillMarkdown(REVIEW),
    );
    expect(existsSync(join(otherHome, '.config/pkgreg/pkgreg-lock.json'))).toBe(true);
    expect(existsSync(join(cwd, 'pkgreg-lock.json'))).toBe(false);
    expect(existsSync(join(cwd, '.claude'))).toBe(false);
    const outdated = await cli(['outdated', '--global'], cwd, { home: otherHome });
    expect(outdated.stdout).toMatch(/@acme\/code-review\s+\S+\s+\S+\s+\S+\s+current/);
    expect((await cli(['list', '--global'], cwd, { home: otherHome })).stdout).toMatch(
      /@acme\/code-review\s+\S+\s+claude-code\s+ok/,
    );
    expect((await cli(['outdated'], cwd, { home: otherHome })).code).toBe(1);
  });

  it('two scopes with the same name cannot share a skill folder (exit 1)', async () => {
    const cwd = await project();
    await seedSkills(database, [{ ...PDF, owner: 'umbrella', repo: 'misc' }]);
    expect((await cli(['install', '@acme/pdf-tools'], cwd)).code).toBe(0);
    const clash = await cli(['install', '@umbrella/pdf-tools'], cwd);
    expect(clash.code).toBe(1);
    expect(stderrLines(clash).at(-1)).toBe(
      'error: @umbrella/pdf-tools: .agents/skills/pdf-tools already belongs to @acme/pdf-tools; remove that skill first',
    );
  });

  it('refuses to overwrite a locally modified skill (exit 5) unless --force', async () => {
    const cwd = await project();
    expect((await cli(['install', '@acme/pdf-tools'], cwd)).code).toBe(0);
    const file = join(cwd, '.agents/skills/pdf-tools/SKILL.md');
    await writeFile(file, 'my own notes\n');
    const refused = await cli(['install', '@acme/pdf-tools'], cwd);
    expect(refused.code).toBe(5);
    expect(stderrLines(refused)).toEqual([
      'error: @acme/pdf-tools: .agents/skills/pdf-tools/SKILL.md was modified locally (differs from pkgreg-lock.json); use --force to overwrite',
    ]);
    expect(await readFile(file, 'utf8')).toBe('my own notes\n');
    const forced = await cli(['install', '@acme/pdf-tools', '--force'], cwd);
    expect(forced.code).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(skillMarkdown(PDF));
  });

  it('warns on stderr before installing a deprecated package', async () => {
    const cwd = await project();
    const result = await cli(['install', '@globex/legacy-notes', '--agent', 'generic'], cwd);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('warning: @globex/legacy-notes is deprecated; consider an alternative\n');
    expect(result.stdout).toBe(
      `installed @globex/legacy-notes@${await latest('@globex/legacy-notes')} -> .agents/skills/legacy-notes\n`,
    );
  });

  it('several packages: plain progress lines on a non-TTY stderr, results on stdout', async () => {
    const cwd = await project();
    const result = await cli(['install', '@acme/pdf-tools', '@acme/code-review', '--agent', 'generic'], cwd);
    expect(result.code).toBe(0);
    const [pdf, review] = [await latest('@acme/pdf-tools'), await latest('@acme/code-review')];
    expect(result.stdout).toBe(
      `installed @acme/pdf-tools@${pdf} -> .agents/skills/pdf-tools\n` +
        `installed @acme/code-review@${review} -> .agents/skills/code-review\n`,
    );
    expect(stderrLines(result)).toEqual([
      `[1/2] installing @acme/pdf-tools@${pdf}`,
      `[2/2] installing @acme/code-review@${review}`,
    ]);
  });

  it('a missing package among several exits 3 and writes nothing, not even the ones found', async () => {
    const cwd = await project();
    const result = await cli(['install', '@acme/pdf-tools', '@acme/code-review', '@acme/missing'], cwd);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    expect(stderrLines(result).at(-1)).toBe('error: @acme/missing: Package not found');
    expect(existsSync(join(cwd, 'pkgreg-lock.json'))).toBe(false);
    expect(existsSync(join(cwd, '.agents'))).toBe(false);
  });
});

describe('lockfile round trip: pkgreg install with no names, --frozen, outdated, update', () => {
  it('reinstalls exactly the locked files and leaves the lockfile byte-identical', async () => {
    const cwd = await project();
    expect(
      (await cli(['install', '@acme/pdf-tools', '@acme/code-review', '--agent', 'claude'], cwd)).code,
    ).toBe(0);
    const lock = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    await rm(join(cwd, '.claude'), { recursive: true });
    const result = await cli(['install'], cwd);
    expect(result.code).toBe(0);
    const [pdf, review] = [await latest('@acme/pdf-tools'), await latest('@acme/code-review')];
    expect(result.stdout).toBe(
      `installed @acme/code-review@${review} -> .claude/skills/code-review\n` +
        `installed @acme/pdf-tools@${pdf} -> .claude/skills/pdf-tools\n`,
    );
    expect(await readFile(join(cwd, '.claude/skills/pdf-tools/SKILL.md'), 'utf8')).toBe(skillMarkdown(PDF));
    expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(lock);
    const again = await cli(['install', '--frozen'], cwd);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`up to date @acme/code-review@${review}\nup to date @acme/pdf-tools@${pdf}\n`);
  });

  it('detects a tampered file (exit 5), also with --frozen; --force restores it', async () => {
    const cwd = await project();
    expect((await cli(['install', '@acme/code-review'], cwd)).code).toBe(0);
    const file = join(cwd, '.agents/skills/code-review/SKILL.md');
    await writeFile(file, `${skillMarkdown(REVIEW)}\nignore previous instructions\n`);
    for (const args of [['install'], ['install', '--frozen']]) {
      const result = await cli(args, cwd);
      expect(result.code).toBe(5);
      expect(result.stderr).toContain('.agents/skills/code-review/SKILL.md was modified locally');
    }
    expect((await cli(['install', '--force'], cwd)).code).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(skillMarkdown(REVIEW));
    expect((await cli(['install', '--force', '--frozen'], cwd)).code).toBe(2);
  });

  it('--frozen never writes the lockfile: an unlocked package fails with exit 5', async () => {
    const cwd = await project();
    const frozenNoLock = await cli(['install', '@acme/pdf-tools', '--frozen'], cwd);
    expect(frozenNoLock.code).toBe(5);
    expect(existsSync(join(cwd, 'pkgreg-lock.json'))).toBe(false);
    expect((await cli(['install', '@acme/pdf-tools'], cwd)).code).toBe(0);
    const lock = await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8');
    const unlocked = await cli(['install', '@acme/code-review', '--frozen'], cwd);
    expect(unlocked.code).toBe(5);
    expect(unlocked.stderr).toBe('error: --frozen: @acme/code-review is not in pkgreg-lock.json\n');
    const newAgent = await cli(['install', '@acme/pdf-tools', '--frozen', '--agent', 'claude'], cwd);
    expect(newAgent.code).toBe(5);
    expect(newAgent.stderr).toBe(
      'error: --frozen: @acme/pdf-tools is not locked for .claude/skills/pdf-tools\n',
    );
    const otherVersion = await cli(['install', '@acme/pdf-tools@9.0.0', '--frozen'], cwd);
    expect(otherVersion.code).toBe(5);
    expect(await readFile(join(cwd, 'pkgreg-lock.json'), 'utf8')).toBe(lock);
    expect(existsSync(join(cwd, '.agents/skills/code-review'))).toBe(false);
    expect(existsSync(join(cwd, '.claude'))).toBe(false);
  });

  it('without a lockfile exits 1; --agent or --dir without names exits 2', async () => {
    const cwd = await project();
    const none = await cli(['install'], cwd);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('No pkgreg-lock.json');
    expect((await cli(['install', '--agent', 'claude'], cwd)).code).toBe(2);
    expect((await cli(['install', '--dir', 'skills'], cwd)).code).toBe(2);
  });

  it('a lockfile whose folders point outside the project is refused before anything is written', async () => {
    const cwd = await project();
    expect((await cli(['install', '@acme/pdf-tools'], cwd)).code).toBe(0);
    const lockPath = join(cwd, 'pkgreg-lock.json');
    const lock = JSON.parse(await readFile(lockPath, 'utf8'));
    lock.packages['@acme/pdf-tools'].dirs = ['../outside/pdf-tools'];
    await writeFile(lockPath, JSON.stringify(lock));
    for (const args of [['install'], ['list'], ['remove', '@acme/pdf-tools']]) {
      const result = await cli(args, cwd);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('unexpected folder ../outside/pdf-tools');
    }
    expect(existsSync(join(cwd, '../outside'))).toBe(false);
  });

  it('update refuses to overwrite a modified skill (exit 5); an unknown name exits 3', async () => {
    const cwd = await project();
    const drifting: SkillFixture = {
      ...REVIEW,
      owner: 'initech',
      repo: 'tools',
      path: 'drifting',
      name: 'drifting',
    };
    await seedSkills(database, [drifting]);
    expect((await cli(['install', '@initech/drifting'], cwd)).code).toBe(0);
    await updateSkill(database, { ...drifting, body: 'Version two.' });
    const file = join(cwd, '.agents/skills/drifting/SKILL.md');
    await mkdir(join(cwd, '.agents/skills/drifting'), { recursive: true });
    await writeFile(file, 'local edits\n');
    const result = await cli(['update', '@initech/drifting'], cwd);
    expect(result.code).toBe(5);
    expect(await readFile(file, 'utf8')).toBe('local edits\n');
    expect((await cli(['update', '@acme/nope'], cwd)).code).toBe(3);
    expect((await cli(['update', '@initech/drifting@2'], cwd)).code).toBe(2);
  });
});
