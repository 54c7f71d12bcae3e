import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PackageDetail } from '@pkgreg/contracts';
import { type AgentName, absolutePath, skillFilePath } from './agents.js';
import type { Context } from './context.js';
import { CliError, EXIT } from './errors.js';
import { gitBlobSha1, LOCKFILE_NAME, type LockEntry, type Lockfile, sha256Hex } from './lockfile.js';
import type { PackageRef } from './names.js';
import type { Progress } from './progress.js';

/** Where skills are written and which lockfile records them. */
export interface InstallTarget {
  /** Folder the agent skill paths are relative to: the project, or the home folder with --global. */
  base: string;
  lockPath: string;
  global: boolean;
}

export function installTarget(ctx: Context, global: boolean, cwd = process.cwd()): InstallTarget {
  // A global install is recorded beside the config file, not in whichever project the user stands in.
  if (global) return { base: ctx.env.home, lockPath: join(ctx.env.configDir, LOCKFILE_NAME), global };
  return { base: cwd, lockPath: join(cwd, LOCKFILE_NAME), global };
}

export function displayPath(target: InstallTarget, relative: string): string {
  return target.global ? `~/${relative}` : relative;
}

async function fileHash(path: string): Promise<string | undefined> {
  try {
    return sha256Hex(await readFile(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function writeAtomically(path: string, content: Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, content);
  await rename(temporary, path);
}

/** The registry's content, checked against its own blob id before anything is written. */
export function verifiedContent(ref: PackageRef, pkg: PackageDetail): { content: Buffer; sha256: string } {
  const content = Buffer.from(pkg.skillMdRaw, 'utf8');
  if (pkg.lastCommitSha !== null && gitBlobSha1(content) !== pkg.lastCommitSha) {
    throw new CliError(
      EXIT.integrity,
      `Integrity mismatch: the SKILL.md served for ${ref.full} does not match its blob id ${pkg.lastCommitSha}`,
    );
  }
  return { content, sha256: sha256Hex(content) };
}

/**
 * Refuses to overwrite a file the user changed: a recorded path whose hash differs from the lockfile,
 * or an unrecorded file that differs from what would be written (decisions: refuse unless --force).
 */
export async function checkLocalFiles(
  target: InstallTarget,
  paths: string[],
  locked: LockEntry | undefined,
  incomingSha256: string | undefined,
): Promise<string[]> {
  const modified: string[] = [];
  for (const relative of paths) {
    const current = await fileHash(absolutePath(target.base, relative));
    if (current === undefined) continue;
    const expected = locked?.paths.includes(relative) ? locked.sha256 : incomingSha256;
    if (current !== expected) modified.push(displayPath(target, relative));
  }
  return modified;
}

export function modifiedError(ref: PackageRef, modified: string[], hint: string): CliError {
  return new CliError(
    EXIT.integrity,
    `${ref.full}: ${modified.join(', ')} ${modified.length === 1 ? 'was' : 'were'} modified locally (hash differs from ${LOCKFILE_NAME}); ${hint}`,
  );
}

export function deprecationWarning(progress: Progress, ref: PackageRef, pkg: PackageDetail): void {
  if (pkg.status === 'deprecated')
    progress.note(`warning: ${ref.full} is deprecated; consider an alternative`);
}

/** Counts the install. A failed count never fails the install: the files are the user's goal. */
export async function trackInstall(ctx: Context, progress: Progress, ref: PackageRef): Promise<void> {
  try {
    await ctx.client.track(ref.scope, ref.name);
  } catch (error) {
    progress.note(`warning: could not record the download of ${ref.full}: ${(error as Error).message}`);
  }
}

/** The paths whose file is missing or differs from the given content hash. */
export async function pathsNeedingWrite(
  target: InstallTarget,
  paths: string[],
  sha256: string,
): Promise<string[]> {
  const needed: string[] = [];
  for (const relative of paths) {
    if ((await fileHash(absolutePath(target.base, relative))) !== sha256) needed.push(relative);
  }
  return needed;
}

/** Writes the content to every path whose file is missing or differs; returns the paths written. */
export async function writeSkillFiles(
  target: InstallTarget,
  paths: string[],
  content: Buffer,
  sha256: string,
): Promise<string[]> {
  const written: string[] = [];
  for (const relative of paths) {
    const absolute = absolutePath(target.base, relative);
    if ((await fileHash(absolute)) === sha256) continue;
    await writeAtomically(absolute, content);
    written.push(relative);
  }
  return written;
}

export function lockEntryFor(
  ref: PackageRef,
  pkg: PackageDetail,
  sha256: string,
  agents: AgentName[],
  paths: string[],
): LockEntry {
  return {
    name: ref.full,
    sourceRepo: pkg.sourceRepo,
    sourceRef: pkg.sourceRef,
    sourcePath: pkg.sourcePath,
    lastCommitSha: pkg.lastCommitSha,
    sha256,
    agents: [...new Set(agents)].sort(),
    paths: [...new Set(paths)].sort(),
  };
}

export function pathsFor(agents: AgentName[], packageName: string): string[] {
  return agents.map((agent) => skillFilePath(agent, packageName));
}

/** Two packages with the same name in different scopes would share a skill folder. */
export function checkPathOwners(lock: Lockfile, ref: PackageRef, paths: string[]): void {
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (key === ref.full) continue;
    const clash = entry.paths.find((path) => paths.includes(path));
    if (clash) {
      throw new CliError(
        EXIT.error,
        `${ref.full}: ${clash} already belongs to ${key}; remove that skill first`,
      );
    }
  }
}
