import { posix } from 'node:path';
import type { VersionDetail } from '@pkgreg/contracts';
import { z } from 'zod';
import { type Agent, findAgent } from '../agents.js';
import type { Context } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import type { InstallJob } from '../install/plan.js';
import { agentDir, type InstallTarget } from '../install/targets.js';
import { type PackageRef, parsePackageArg } from '../names.js';
import type { Progress } from '../progress.js';
import { listVersions } from '../versions.js';
import {
  byCodePoint,
  emptyLockfile,
  FILE_MODES,
  LOCKFILE_NAME,
  type LockEntry,
  type LockedFile,
  type Lockfile,
  lockedFilesOf,
  SCOPED_NAME,
  Sha256Schema,
} from './lockfile.js';

// Lockfiles of pkgreg 0.1 (lockfileVersion 1: SKILL.md only), all in this file. Commands that change
// installs upgrade one once, as it is read (read.ts): each entry becomes the version 2 entry of the
// version holding its SKILL.md, in today's folders of its agents, and the file is written back as
// version 2. `list` and `remove` read one without the registry (`installedV1`, `serializeV1`).

export const V1_AGENT_DIRS = {
  claude: '.claude/skills',
  codex: '.codex/skills',
  cursor: '.cursor/skills',
  generic: '.agents/skills',
} as const;
export type V1Agent = keyof typeof V1_AGENT_DIRS;
/** The agents of v1 lockfiles by today's ids. */
export const V1_AGENT_IDS: Record<V1Agent, string> = {
  claude: 'claude-code',
  codex: 'codex',
  cursor: 'cursor',
  generic: 'universal',
};

export const LockEntryV1Schema = z.object({
  name: z.string(),
  sourceRepo: z.string(),
  sourceRef: z.string(),
  sourcePath: z.string(),
  /** Git blob SHA-1 of SKILL.md as the registry reported it at install time. */
  lastCommitSha: z.string().nullable(),
  /** SHA-256 (hex) of the SKILL.md bytes written. */
  sha256: Sha256Schema,
  agents: z.array(z.enum(Object.keys(V1_AGENT_DIRS) as [V1Agent, ...V1Agent[]])),
  paths: z.array(z.string()),
});
export type LockEntryV1 = z.infer<typeof LockEntryV1Schema>;

export interface LockfileV1 {
  lockfileVersion: 1;
  packages: Record<string, LockEntryV1>;
}

export const LockfileV1Schema = z
  .object({
    lockfileVersion: z.literal(1),
    packages: z.record(z.string(), LockEntryV1Schema),
  })
  .superRefine((lock, ctx) => {
    for (const [key, entry] of Object.entries(lock.packages)) {
      const name = SCOPED_NAME.exec(key)?.[1];
      if (!name || entry.name !== key) {
        ctx.addIssue({
          code: 'custom',
          path: ['packages', key, 'name'],
          message: 'must be the @scope/name key',
        });
        continue;
      }
      const allowed = new Set(entry.agents.map((agent) => `${V1_AGENT_DIRS[agent]}/${name}/SKILL.md`));
      for (const path of entry.paths) {
        if (!allowed.has(path)) {
          ctx.addIssue({
            code: 'custom',
            path: ['packages', key, 'paths'],
            message: `unexpected path ${path}`,
          });
        }
      }
    }
  });

/** A v1 lockfile written back as it was read, minus what `remove` took out. */
export function serializeV1(lock: LockfileV1): string {
  const packages: Record<string, unknown> = {};
  for (const key of Object.keys(lock.packages).sort(byCodePoint)) {
    const entry = lock.packages[key];
    if (!entry) continue;
    packages[key] = {
      name: entry.name,
      sourceRepo: entry.sourceRepo,
      sourceRef: entry.sourceRef,
      sourcePath: entry.sourcePath,
      lastCommitSha: entry.lastCommitSha,
      sha256: entry.sha256,
      agents: [...entry.agents].sort(),
      paths: [...entry.paths].sort(),
    };
  }
  return `${JSON.stringify({ lockfileVersion: lock.lockfileVersion, packages }, null, 2)}\n`;
}

/** The version whose SKILL.md is the one a v1 entry locked (by SHA-256, else by git blob id). */
export function matchesV1Entry(entry: LockEntryV1, version: VersionDetail): boolean {
  const skill = version.files.find((file) => file.path === 'SKILL.md');
  if (!skill) return false;
  return (
    skill.sha256 === entry.sha256 ||
    (entry.lastCommitSha !== null && skill.gitBlobSha === entry.lastCommitSha)
  );
}

/** v1's agent names by today's ids (unknown ones cannot occur: the v1 schema allows four). */
export function upgradedAgents(entry: LockEntryV1): string[] {
  return [...new Set(entry.agents.map((agent) => findAgent(V1_AGENT_IDS[agent])?.id ?? V1_AGENT_IDS[agent]))];
}

/** The folders a v1 entry wrote SKILL.md into. */
export function v1Dirs(entry: LockEntryV1): string[] {
  return [...new Set(entry.paths.map((path) => posix.dirname(path)))];
}

/** What v1 recorded of a folder: its SKILL.md. */
function v1Files(entry: LockEntryV1): Record<string, LockedFile> {
  return { 'SKILL.md': { mode: FILE_MODES.file, sha256: entry.sha256 } };
}

/**
 * The v2 entry for a v1 entry and the version holding its SKILL.md. The folders are today's folders of
 * its agents (`dirFor`): v1 put Codex and Cursor skills where those agents no longer look.
 */
export function upgradeV1Entry(
  entry: LockEntryV1,
  version: VersionDetail,
  dirFor: (agentId: string) => string,
): LockEntry {
  const agents = upgradedAgents(entry);
  return {
    name: entry.name,
    version: version.version,
    requested: null,
    integrity: version.integrity,
    sourceRepo: entry.sourceRepo,
    sourcePath: entry.sourcePath,
    sourceCommit: version.sourceCommit,
    agents,
    dirs: [...new Set(agents.map(dirFor))],
    files: lockedFilesOf(version),
  };
}

/** A v1 entry as `list` and `remove` show it: no version yet, SKILL.md only. */
export function installedV1(entry: LockEntryV1) {
  return {
    name: entry.name,
    version: null,
    requested: null,
    agents: upgradedAgents(entry),
    dirs: v1Dirs(entry),
    files: v1Files(entry),
    dependencies: [],
    dependencyOf: [],
    direct: true,
  };
}

/** A v1 entry read against the registry: the version holding its SKILL.md, if any, and today's folders. */
export interface V1Entry {
  v1: LockEntryV1;
  ref: PackageRef;
  /** The version whose SKILL.md v1 locked; null when none has it. */
  match: VersionDetail | null;
  /** The upgraded entry (null without a match). */
  entry: LockEntry | null;
  /** Today's folders of its agents. */
  dirs: string[];
  /** What v1 wrote: SKILL.md, in the v1 folders (removed once no agent reads them, when unmodified). */
  stale: { dirs: string[]; files: Record<string, LockedFile> };
}

/** The version holding the SKILL.md a v1 entry locked, newest first; null when no version has it. */
async function findV1Version(
  ctx: Context,
  ref: PackageRef,
  entry: LockEntryV1,
): Promise<VersionDetail | null> {
  for (const summary of await listVersions(ctx, ref)) {
    const version = await ctx.client.version(ref.scope, ref.name, summary.version);
    if (matchesV1Entry(entry, version)) return version;
  }
  return null;
}

/** A v1 lockfile upgraded: version 2 entries for the entries a version matches, and every entry read. */
export async function upgradeV1(
  ctx: Context,
  target: InstallTarget,
  lockV1: LockfileV1,
  progress: Progress,
): Promise<{ lock: Lockfile; v1: Map<string, V1Entry> }> {
  const lock = emptyLockfile();
  const v1 = new Map<string, V1Entry>();
  for (const entry of Object.values(lockV1.packages)) {
    const ref = parsePackageArg(entry.name);
    progress.status(`reading ${ref.full} (${LOCKFILE_NAME} version 1)`);
    const dirFor = (id: string) => agentDir(target, findAgent(id) as Agent, ref);
    let match: VersionDetail | null;
    try {
      match = await findV1Version(ctx, ref, entry);
    } catch (error) {
      if (error instanceof CliError && error.exitCode === EXIT.notFound) match = null;
      else throw error;
    }
    const upgraded = match ? upgradeV1Entry(entry, match, dirFor) : null;
    if (upgraded) lock.packages[ref.full] = upgraded;
    v1.set(ref.full, {
      v1: entry,
      ref,
      match,
      entry: upgraded,
      dirs: [...new Set(upgradedAgents(entry).map(dirFor))],
      stale: { dirs: v1Dirs(entry), files: v1Files(entry) },
    });
  }
  return { lock, v1 };
}

/** What was installed before, measured against: the upgraded entry's files, else the v1 SKILL.md. */
export function v1Previous(entry: V1Entry): Record<string, LockedFile> {
  return entry.entry?.files ?? v1Files(entry.v1);
}

export function frozenV1Error(): CliError {
  return new CliError(
    EXIT.integrity,
    `--frozen: ${LOCKFILE_NAME} is lockfileVersion 1 (SKILL.md only); run "pkgreg install" once without --frozen to upgrade it, and commit it`,
  );
}

export function unmatchedError(entry: V1Entry): CliError {
  return new CliError(
    EXIT.integrity,
    `${entry.ref.full}: ${LOCKFILE_NAME} (lockfileVersion 1) locks a SKILL.md (sha256 ${entry.v1.sha256.slice(0, 12)}) that no version of ${entry.ref.full} holds; run "pkgreg update ${entry.ref.full}" to install its latest version, or "pkgreg remove ${entry.ref.full}"`,
  );
}

/** The job restoring a v1 entry as the version holding its SKILL.md, in today's folders (exit 5 without one). */
export function upgradeJob(entry: V1Entry): InstallJob {
  if (!entry.match || !entry.entry) throw unmatchedError(entry);
  return {
    ref: entry.ref,
    version: entry.match,
    entry: entry.entry,
    previous: entry.entry.files,
    stale: entry.stale,
    quietWhenIntact: true,
  };
}

/** The jobs a v1 lockfile's upgrade needs beyond the packages `asked` for: it is upgraded whole. */
export function upgradeJobs(
  v1: ReadonlyMap<string, V1Entry>,
  asked: (name: string) => boolean,
): InstallJob[] {
  return [...v1.values()].filter((entry) => !asked(entry.ref.full)).map(upgradeJob);
}

/** Said once the upgraded lockfile is written. */
export function upgradedNote(ctx: Context): void {
  ctx.warn(`${LOCKFILE_NAME} upgraded to lockfileVersion 2 (every file of each version)`);
}
