import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentSkillsIndexSchema } from '@pkgreg/contracts';
import { insertOrganisation } from '@pkgreg/db/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { runBinary, runCli, tempDir } from './helpers/cli.js';
import { snapshot } from './helpers/folders.js';
import type { SkillFixture } from './helpers/seed.js';
import { useSeededRegistry } from './helpers/seeded-registry.js';

// Interop (docs/discovery.md): vercel's `skills` CLI (the real one, from the registry: a devDependency
// of this package) installs skills from a running pkgreg through its discovery indexes (a scope's, a
// package's, an organisation's, the root), and what it writes is byte for byte what `pkgreg install`
// writes for the same skill, paths tar holds only as UTF-8 or split included; a skill with a path tar's
// ustar header cannot hold at all it refuses, rather than write a wrong file. It runs offline: telemetry
// off, HOME and the project in throwaway folders, no prompt (-y, --agent), with nothing of this
// machine's environment but PATH.

const SKILLS_CLI = fileURLToPath(new URL('../node_modules/skills/bin/cli.mjs', import.meta.url));

const LONG_PATH = `reference/${'très-long-'.repeat(8)}/${'détails-'.repeat(8)}.md`;
const PDF: SkillFixture = {
  owner: 'acme',
  repo: 'skills',
  path: 'skills/pdf-kit',
  name: 'pdf-kit',
  description: 'Fill PDF forms',
  body: 'Run `scripts/fill.sh`; the fields are in [forms](reference/forms.md).',
  extraFiles: {
    'scripts/fill.sh': { content: '#!/bin/sh\necho fill "$@"\n', executable: true },
    'reference/forms.md': '# Forms\n\nEvery field, with ünïcödé.\n',
    // Paths tar's ustar header holds only as UTF-8, or split into its prefix and name (174 bytes).
    'références/é.md': '# É\n',
    [LONG_PATH]: '# Détails\n',
  },
};
// A path ustar cannot hold at all (a 123-byte file name): vercel's CLI refuses the archive.
const INTL: SkillFixture = {
  owner: 'acme',
  repo: 'skills',
  path: 'skills/intl',
  name: 'intl',
  description: 'Translate',
  extraFiles: { [`refs/${'x'.repeat(120)}.md`]: '# X\n' },
};
const NOTES: SkillFixture = {
  owner: 'acme',
  repo: 'skills',
  path: 'skills/notes',
  name: 'notes',
  description: 'Take notes',
};

const { database, registry } = useSeededRegistry([PDF, NOTES, INTL]);
let home: string;

beforeAll(async () => {
  home = await tempDir('interop-home');
  // The organisation `acme-corp` holds the scope @acme (its settings name it).
  await insertOrganisation(database.db, {
    id: 'org-acme',
    slug: 'acme-corp',
    name: 'Acme Corp',
    scopes: { acme: 'public' },
  });
});

/** `skills add <source> …` in `cwd`: telemetry off, non-interactive, project scope, one agent folder. */
function skillsAdd(source: string, skill: string, cwd: string) {
  return runBinary(
    process.execPath,
    [SKILLS_CLI, 'add', source, '--skill', skill, '--agent', 'universal', '--yes'],
    {
      cwd,
      home,
      env: {
        DISABLE_TELEMETRY: '1',
        DO_NOT_TRACK: '1',
        NO_COLOR: '1',
        XDG_CONFIG_HOME: join(home, '.config'),
      },
      timeoutMs: 30_000,
    },
  );
}

/** Every file's path and bytes (vercel's CLI writes no executable bit: bytes are what is compared). */
async function contents(dir: string): Promise<string[]> {
  return (await snapshot(dir)).map(
    (entry) => `${entry.path} ${entry.kind === 'link' ? 'link' : 'file'} ${entry.content}`,
  );
}

describe("vercel's skills CLI against a running pkgreg", () => {
  it("installs a scope's archive skill with the same bytes as pkgreg install", async () => {
    const theirs = await tempDir('interop-skills');
    const added = await skillsAdd(`${registry.url}/@acme`, 'pdf-kit', theirs);
    expect(added.code, `${added.stdout}\n${added.stderr}`).toBe(0);
    const ours = await tempDir('interop-pkgreg');
    const installed = await runCli(
      ['--registry', registry.url, 'install', '@acme/pdf-kit', '--agent', 'universal'],
      {
        cwd: ours,
        home,
        env: { DO_NOT_TRACK: '1' },
      },
    );
    expect(installed.code, installed.stderr).toBe(0);
    const theirFiles = await contents(join(theirs, '.agents/skills/pdf-kit'));
    expect(theirFiles.map((line) => line.split(' ')[0])).toEqual([
      'SKILL.md',
      'reference/forms.md',
      LONG_PATH,
      'références/é.md',
      'scripts/fill.sh',
    ]);
    expect(theirFiles).toEqual(await contents(join(ours, '.agents/skills/pdf-kit')));
    // It recorded the digest our index lists for the skill.
    const index = AgentSkillsIndexSchema.parse(
      await (await fetch(`${registry.url}/@acme/.well-known/agent-skills/index.json`)).json(),
    );
    const lock = JSON.parse(await readFile(join(theirs, 'skills-lock.json'), 'utf8')) as {
      skills: Record<string, { sourceType: string; wellKnownDigest: string }>;
    };
    expect(lock.skills['pdf-kit']).toMatchObject({
      sourceType: 'well-known',
      wellKnownDigest: index.skills.find((s) => s.name === 'pdf-kit')?.digest,
    });
  });

  it("installs a SKILL.md-only skill from the root index, the package's own address and an organisation's", async () => {
    const ours = await tempDir('interop-pkgreg-notes');
    expect(
      (
        await runCli(['--registry', registry.url, 'install', '@acme/notes', '--agent', 'universal'], {
          cwd: ours,
          home,
          env: { DO_NOT_TRACK: '1' },
        })
      ).code,
    ).toBe(0);
    const expected = await contents(join(ours, '.agents/skills/notes'));
    for (const source of [registry.url, `${registry.url}/@acme/notes`, `${registry.url}/orgs/acme-corp`]) {
      const theirs = await tempDir('interop-skills-notes');
      const added = await skillsAdd(source, 'notes', theirs);
      expect(added.code, `${source}\n${added.stdout}\n${added.stderr}`).toBe(0);
      expect(await contents(join(theirs, '.agents/skills/notes'))).toEqual(expected);
      const skillMd = await readFile(join(theirs, '.agents/skills/notes/SKILL.md'));
      expect(createHash('sha256').update(skillMd).digest('hex')).toBe(
        (await snapshot(join(ours, '.agents/skills/notes')))[0]?.content,
      );
    }
  });

  it('refuses a skill with a path ustar cannot hold, rather than write it under another name', async () => {
    const theirs = await tempDir('interop-skills-intl');
    const added = await skillsAdd(`${registry.url}/@acme`, 'intl', theirs);
    // The entry's ustar name is empty, which it takes for an unsafe path: the skill is left out.
    expect(added.code).toBe(1);
    expect(added.stdout + added.stderr).toContain('No matching skills found for: intl');
    expect(existsSync(join(theirs, '.agents/skills/intl'))).toBe(false);
  });
});
