import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import {
  AGENTS,
  type Agent,
  agentList,
  detectAgents,
  findAgent,
  type Roots,
  rootsFor,
  SHARED_SKILLS_DIR,
  skillsDirOf,
  UNIVERSAL_AGENT,
} from '../agents.js';
import type { Context } from '../context.js';
import { CliError, EXIT, usageError } from '../errors.js';
import { absoluteDir, LOCKFILE_NAME, type Lockfile, lockDirOf } from '../lockfile/lockfile.js';
import type { PackageRef } from '../names.js';
import { badSegment, foldPath, type GuardedFolder, guardFolder } from '../safe-folders.js';

// Where install, update and remove write: the project or (--global) the user's folders, an agent's
// skills folder, a --dir, and each folder checked on disk before it is written or deleted.

/** Where skills are written and which lockfile records them. */
export interface InstallTarget {
  /** Folder the lockfile's folders are relative to: the project, or the home folder with --global. */
  base: string;
  lockPath: string;
  global: boolean;
  roots: Roots;
}

export function installTarget(ctx: Context, global: boolean, cwd = process.cwd()): InstallTarget {
  const roots = rootsFor(ctx.env, cwd);
  // A global install is recorded beside the config file, not in whichever project the user stands in.
  if (global) return { base: ctx.env.home, lockPath: join(ctx.env.configDir, LOCKFILE_NAME), global, roots };
  return { base: cwd, lockPath: join(cwd, LOCKFILE_NAME), global, roots };
}

/** A lockfile folder as the user reads it (`~/…` for global installs). */
export function displayDir(target: InstallTarget, dir: string): string {
  return target.global && !dir.startsWith('/') ? `~/${dir}` : dir;
}

/** The agents named by --agent (ids or aliases); an unknown one is a usage error. */
export function agentsFromOption(names: readonly string[]): Agent[] {
  const agents: Agent[] = [];
  for (const name of names) {
    const agent = findAgent(name);
    if (!agent) {
      throw usageError(
        `--agent: unknown agent "${name}"; known agents: ${AGENTS.map((a) => a.id).join(', ')} (or --dir <path>)`,
      );
    }
    if (!agents.includes(agent)) agents.push(agent);
  }
  return agents;
}

/**
 * A --dir skills folder, absolute; it must lie inside the project (or the home folder with --global)
 * and be made of plain folder names (safe-folders.ts). Links on disk are checked before writing.
 */
export function customSkillsDir(target: InstallTarget, value: string, cwd = process.cwd()): string {
  const where = target.global ? 'your home folder' : 'the project folder';
  const absolute = resolve(cwd, value);
  const rel = relative(target.base, absolute);
  if (rel === '') throw usageError(`--dir ${value} is ${where} itself; name a skills folder inside it`);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw usageError(`--dir ${value} is outside ${where} (${target.base})`);
  }
  for (const segment of rel.split(sep)) {
    if (foldPath(segment) === '.git') throw usageError(`--dir ${value} is inside a .git folder`);
    const why = badSegment(segment);
    if (why) throw usageError(`--dir ${value} has ${why}`);
  }
  return absolute;
}

/** The folders a lockfile folder may lie in: the project, or with --global the user's, most specific first. */
function rootsOf(target: InstallTarget): string[] {
  if (!target.global) return [target.base];
  const { home, config, claude, codex } = target.roots;
  return [...new Set([claude, codex, config, home])].sort((a, b) => b.length - a.length);
}

/**
 * Checks a lockfile folder on disk before pkgreg writes to or deletes it (safe-folders.ts): inside its
 * root, no symbolic link from the root down, no name a case-insensitive file system would merge.
 * Returns the real path to use; throws exit 5.
 */
export function guardDir(target: InstallTarget, dir: string): GuardedFolder {
  const absolute = absoluteDir(target.base, dir);
  const name = (path: string) => displayDir(target, lockDirOf(target.base, path));
  const root = rootsOf(target).find((candidate) => {
    const rel = relative(candidate, absolute);
    return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
  });
  if (root === undefined) {
    const where = target.global ? "your home folder and the agents' folders" : 'the project folder';
    throw new CliError(EXIT.integrity, `${name(absolute)} is outside ${where}`);
  }
  return guardFolder(root, absolute, name);
}

/** The same check again, right before a rename: the folder must still be where it was found. */
export function recheck(target: InstallTarget, dir: string, path: string): () => void {
  return () => {
    if (guardDir(target, dir).path !== path) {
      throw new CliError(EXIT.integrity, `${displayDir(target, dir)} moved while pkgreg was changing it`);
    }
  };
}

/** The lockfile folder of a package under an absolute skills folder. */
export function packageDir(target: InstallTarget, skillsDir: string, ref: Pick<PackageRef, 'name'>): string {
  return lockDirOf(target.base, join(skillsDir, ref.name));
}

export function agentDir(target: InstallTarget, agent: Agent, ref: Pick<PackageRef, 'name'>): string {
  return packageDir(target, skillsDirOf(agent, target.roots, target.global), ref);
}

/** The skills folders (lockfile form, without the package) that a set of agents reads, for messages. */
function skillsDirsOf(target: InstallTarget, agents: readonly Agent[]): string[] {
  const dirs = agents.map((agent) =>
    displayDir(target, lockDirOf(target.base, skillsDirOf(agent, target.roots, target.global))),
  );
  return [...new Set(dirs)];
}

/**
 * The agents to install for when none was named: those detected in the project or the home folder, or
 * the universal `.agents/skills` when there is none. The choice is said on stderr.
 */
export function defaultAgents(target: InstallTarget, note: (line: string) => void): Agent[] {
  const detected = detectAgents(target.roots, target.global);
  if (detected.length) {
    note(
      `Detected ${agentList(detected)}: installing into ${skillsDirsOf(target, detected).join(', ')} (choose with --agent or --dir)`,
    );
    return detected;
  }
  const universal = findAgent(UNIVERSAL_AGENT) as Agent;
  const shared = AGENTS.filter(
    (agent) => agent.projectDir === SHARED_SKILLS_DIR && agent.id !== UNIVERSAL_AGENT,
  )
    .slice(0, 4)
    .map((agent) => agent.displayName);
  note(
    `No agent detected ${target.global ? 'in your home folder' : 'in this project or your home folder'}: installing into ${skillsDirsOf(target, [universal]).join(', ')}, which ${shared.join(', ')} and others read (choose with --agent or --dir)`,
  );
  return [universal];
}

/** `a` is `b` or inside it, compared as a case-insensitive file system would (`.Claude` is `.claude`). */
function inside(a: string, b: string): boolean {
  const [x, y] = [foldPath(a), foldPath(b)];
  return x === y || x.startsWith(`${y}/`);
}

/**
 * Two packages with the same name in different scopes would share a folder, and so would a package and
 * a site skill of that name; nested folders clash too. `owner` is the one installing: a package's
 * `@scope/name`, or a site skill's key.
 */
export function checkDirOwners(
  lock: Lockfile,
  owner: string,
  dirs: readonly string[],
  target: InstallTarget,
): void {
  const others: [string, { dirs: string[] }][] = [
    ...Object.entries(lock.packages),
    ...Object.entries(lock.sites ?? {}),
  ];
  for (const [key, entry] of others) {
    if (key === owner) continue;
    for (const dir of dirs) {
      const clash = entry.dirs.find((other) => inside(dir, other) || inside(other, dir));
      if (clash) {
        throw new CliError(
          EXIT.error,
          `${owner}: ${displayDir(target, clash)} already belongs to ${key}; remove that skill first`,
        );
      }
    }
  }
}

/** Who writes which folders in one run: a package's `@scope/name` or a site skill's key, and a label. */
export interface FolderOwner {
  owner: string;
  /** How the owner is named in a refusal (default: `owner`), e.g. with who needs it. */
  label?: string;
  dirs: readonly string[];
}

/**
 * The lockfile's check (checkDirOwners) among the skills of one run, which it does not record yet: a
 * dependency goes beside what needs it (`<skills folder>/<name>`), so one named like a site skill or a
 * package of the same run lands in that one's folder. `one` may not write a folder another of `others`
 * writes, nor one inside it or around it: the second staging would remove the first's. Refused (exit 1)
 * before anything is written.
 */
export function refuseSharedFolder(
  target: InstallTarget,
  one: FolderOwner,
  others: readonly FolderOwner[],
): void {
  for (const other of others) {
    if (other === one) continue;
    for (const dir of one.dirs) {
      const clash = other.dirs.find((theirs) => inside(dir, theirs) || inside(theirs, dir));
      if (clash === undefined) continue;
      const where =
        foldPath(clash) === foldPath(dir)
          ? `${displayDir(target, dir)} is also where ${other.owner} is installed in this run`
          : `${displayDir(target, dir)} and ${displayDir(target, clash)}, where ${other.owner} is installed in this run, are one inside the other`;
      throw new CliError(EXIT.error, `${one.label ?? one.owner}: ${where}; two skills cannot share a folder`);
    }
  }
}
