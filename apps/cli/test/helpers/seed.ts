import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestDatabase } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { tempDir } from './cli.js';

// Packages reach the registry the way production gets them: SKILL.md files committed to a git
// repository, indexed by @pkgreg/indexer (decisions.md: Registry / Indexing, "a local git repository is
// a source too").

const run = promisify(execFile);

export interface SkillFixture {
  owner: string;
  repo: string;
  /** Folder of the skill inside the repository ('' for the root). */
  path: string;
  name: string;
  description: string;
  body?: string;
  allowedTools?: string[];
  /** Other files of the skill's folder, by relative path. */
  extraFiles?: Record<string, string>;
}

export function skillMarkdown(skill: SkillFixture): string {
  const tools = skill.allowedTools?.length
    ? `allowed-tools:\n${skill.allowedTools.map((t) => `  - ${t}\n`).join('')}`
    : '';
  return `---\nname: ${skill.name}\ndescription: ${skill.description}\nlicense: MIT\n${tools}---\n\n# ${skill.name}\n\n${skill.body ?? 'Use this skill well.'}\n`;
}

/** Git's blob id, what the registry reports as lastCommitSha. */
export function blobSha(text: string): string {
  const content = Buffer.from(text, 'utf8');
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

let root: string | undefined;

async function git(cwd: string, args: string[]): Promise<void> {
  await run('git', ['-c', 'user.name=pkgreg test', '-c', 'user.email=test@pkgreg.invalid', ...args], { cwd });
}

async function repoDir(skill: SkillFixture): Promise<string> {
  root ??= await tempDir('repos');
  const dir = join(root, skill.owner, skill.repo);
  if (!existsSync(join(dir, '.git'))) {
    await mkdir(dir, { recursive: true });
    await git(dir, ['init', '-q', '-b', 'main']);
  }
  return dir;
}

/** Commits the skills' SKILL.md files and indexes each repository touched. */
export async function seedSkills(database: TestDatabase, skills: SkillFixture[]): Promise<void> {
  const repos = new Map<string, { dir: string; owner: string }>();
  for (const skill of skills) {
    const dir = await repoDir(skill);
    const folder = join(dir, ...skill.path.split('/').filter(Boolean));
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'SKILL.md'), skillMarkdown(skill));
    for (const [file, text] of Object.entries(skill.extraFiles ?? {})) {
      await mkdir(join(folder, file, '..'), { recursive: true });
      await writeFile(join(folder, file), text);
    }
    repos.set(dir, { dir, owner: skill.owner });
  }
  for (const { dir, owner } of repos.values()) {
    await git(dir, ['add', '-A']);
    await git(dir, ['commit', '-q', '--allow-empty', '-m', 'skills']);
    const summary = await indexSource({ db: database.db }, { kind: 'git', locator: dir, owner });
    if (summary.status !== 'succeeded' || summary.rejections.length > 0) {
      throw new Error(`indexing ${dir} failed: ${JSON.stringify(summary)}`);
    }
  }
}

/** A new commit of the skill's SKILL.md, re-indexed: the registry now serves the new content. */
export const updateSkill = (database: TestDatabase, skill: SkillFixture) => seedSkills(database, [skill]);
