import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix, relative, sep } from 'node:path';
import { normalizeSkillFilePath, type VersionDetail } from '@pkgreg/contracts';
import validVersion from 'semver/functions/valid.js';
import validRange from 'semver/ranges/valid.js';
import { z } from 'zod';
import { findAgent } from './agents.js';
import { LOCKFILE_NAME } from './constants.js';
import { CliError, EXIT } from './errors.js';
import { badSegment, foldCollision } from './safe-folders.js';

export { LOCKFILE_NAME };
export const LOCKFILE_VERSION = 2;

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be a hex SHA-256' });
const SCOPED_NAME = /^@[a-z0-9-]+\/([a-z0-9-]+)$/;

/** Git's file modes, as the version's digest names them (docs/versions.md). */
export const FILE_MODES = { file: '100644', executable: '100755', symlink: '120000' } as const;
export type FileMode = (typeof FILE_MODES)[keyof typeof FILE_MODES];

export const LockedFileSchema = z.object({
  mode: z.enum([FILE_MODES.file, FILE_MODES.executable, FILE_MODES.symlink]),
  /** SHA-256 (hex) of the bytes; for a symbolic link, of its target path. */
  sha256: Sha256Schema,
});
export type LockedFile = z.infer<typeof LockedFileSchema>;

export const LockEntrySchema = z.object({
  /** `@scope/name`. */
  name: z.string(),
  /** The exact version installed. */
  version: z.string().refine((value) => validVersion(value) === value, { error: 'must be a semver version' }),
  /** The version or range asked for at install (`^1.2`); null follows the latest version. */
  requested: z
    .string()
    .refine((value) => validRange(value) !== null, { error: 'must be a semver range' })
    .nullable(),
  /** SRI sha512 of the version's archive. */
  integrity: z.string().regex(/^sha512-[A-Za-z0-9+/]{86}==$/, { error: 'must be an SRI sha512' }),
  sourceRepo: z.string(),
  sourcePath: z.string(),
  sourceCommit: z.string().nullable(),
  /** Agents the package was installed for (ids of the agents table; informative). */
  agents: z.array(z.string()),
  /** Folders holding the package, relative to the lockfile's base, forward slashes. */
  dirs: z.array(z.string()).min(1),
  /** Every file of the version by path. */
  files: z.record(z.string(), LockedFileSchema),
  /**
   * What the locked version declares it needs (`@scope/name` -> range, null for the latest); every one
   * is locked too. Absent: none (and in lockfiles written before dependencies existed).
   */
  dependencies: z
    .record(
      z.string().regex(SCOPED_NAME, { error: 'must be @scope/name' }),
      z
        .string()
        .refine((value) => validRange(value) !== null, { error: 'must be a semver range' })
        .nullable(),
    )
    .optional(),
  /** The locked packages whose `dependencies` name this one (kept by pkgreg from them). Absent: none. */
  dependencyOf: z.array(z.string()).optional(),
  /** False when it was installed only as a dependency (not named by you). Absent: true. */
  direct: z.boolean().optional(),
});
export type LockEntry = z.infer<typeof LockEntrySchema>;

export interface Lockfile {
  lockfileVersion: typeof LOCKFILE_VERSION;
  packages: Record<string, LockEntry>;
}

/** Lockfiles of pkgreg 0.1 (SKILL.md only), read so they can be upgraded. */
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

/** A path of the lockfile's own choosing must stay inside the base: a cloned project's lockfile decides
 * where `install` writes and what `remove` deletes. */
function safeRelative(path: string): boolean {
  return normalizeSkillFilePath(path) !== null;
}

/**
 * A folder is `<parents…>/<name>`; the global lockfile may also hold absolute folders (CODEX_HOME).
 * Every name must be one plain folder name on every file system: no `..`, backslash, drive letter or
 * stream (`C:`), name Windows cuts (a trailing dot or space), control character, or `.git`.
 */
export function validLockDir(dir: string, name: string, global: boolean): boolean {
  const names = global && posix.isAbsolute(dir) ? dir.slice(1).split('/') : dir.split('/');
  if (names.some((segment) => badSegment(segment) !== undefined)) return false;
  if (global && posix.isAbsolute(dir)) {
    const rest = dir.slice(1);
    return rest !== '' && safeRelative(rest) && posix.basename(dir) === name && rest.includes('/');
  }
  return safeRelative(dir) && dir.includes('/') && posix.basename(dir) === name;
}

/** Paths that cannot coexist: a file cannot also be a folder holding another file. */
export function pathConflict(paths: Iterable<string>): string | undefined {
  const all = new Set(paths);
  for (const path of all) {
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const parent = segments.slice(0, i).join('/');
      if (all.has(parent)) return path;
    }
  }
  return undefined;
}

function lockfileSchema(global: boolean) {
  return z
    .object({
      lockfileVersion: z.literal(LOCKFILE_VERSION),
      packages: z.record(z.string(), LockEntrySchema),
    })
    .superRefine((lock, ctx) => {
      for (const [key, entry] of Object.entries(lock.packages)) {
        const issue = (field: string, message: string) =>
          ctx.addIssue({ code: 'custom', path: ['packages', key, field], message });
        const name = SCOPED_NAME.exec(key)?.[1];
        if (!name || entry.name !== key) {
          issue('name', 'must be the @scope/name key');
          continue;
        }
        for (const dir of entry.dirs) {
          if (!validLockDir(dir, name, global)) issue('dirs', `unexpected folder ${dir}`);
        }
        for (const path of Object.keys(entry.files)) {
          if (!safeRelative(path)) issue('files', `unexpected path ${path}`);
        }
        if (!entry.files['SKILL.md']) issue('files', 'SKILL.md is missing');
        const conflict = pathConflict(Object.keys(entry.files));
        if (conflict) issue('files', `${conflict} is inside another file`);
      }
      // Folders one name apart on a case-insensitive file system are one folder there (safe-folders.ts).
      const clash = foldCollision(Object.values(lock.packages).flatMap((entry) => entry.dirs));
      if (clash) {
        ctx.addIssue({
          code: 'custom',
          path: ['packages'],
          message: `${clash[0]} and ${clash[1]} are the same folder on a case-insensitive file system`,
        });
      }
    });
}

const LockfileV1Schema = z
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

export type ReadLockfile = { version: 2; lock: Lockfile } | { version: 1; lock: LockfileV1 };

export function sha256Hex(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

export function emptyLockfile(): Lockfile {
  return { lockfileVersion: LOCKFILE_VERSION, packages: {} };
}

function invalid(path: string, error: z.ZodError): CliError {
  const issue = error.issues[0];
  return new CliError(
    EXIT.error,
    `${path} is not a valid lockfile: ${issue?.path.join('.') || 'root'}: ${issue?.message}`,
  );
}

/** Parses lockfile text: version 2, or version 1 to be upgraded. Throws exit 1 on anything else. */
export function parseLockfile(text: string, path: string, global: boolean): ReadLockfile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError(EXIT.error, `${path} is not valid JSON`);
  }
  const version = (json as { lockfileVersion?: unknown } | null)?.lockfileVersion;
  if (version === 1) {
    const parsed = LockfileV1Schema.safeParse(json);
    if (!parsed.success) throw invalid(path, parsed.error);
    return { version: 1, lock: parsed.data };
  }
  if (typeof version === 'number' && version > LOCKFILE_VERSION) {
    throw new CliError(
      EXIT.error,
      `${path} has lockfileVersion ${version}, newer than this pkgreg understands (${LOCKFILE_VERSION}); upgrade pkgreg`,
    );
  }
  const parsed = lockfileSchema(global).safeParse(json);
  if (!parsed.success) throw invalid(path, parsed.error);
  return { version: 2, lock: parsed.data as Lockfile };
}

export async function readLockfile(path: string, global: boolean): Promise<ReadLockfile | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(EXIT.error, `Cannot read ${path}: ${(error as Error).message}`);
  }
  return parseLockfile(text, path, global);
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Stable output: packages, lists and files sorted, fields in schema order, trailing newline. */
export function serializeLockfile(lock: Lockfile | LockfileV1): string {
  const packages: Record<string, unknown> = {};
  for (const key of Object.keys(lock.packages).sort(byCodePoint)) {
    const entry = lock.packages[key];
    if (!entry) continue;
    if ('paths' in entry) {
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
      continue;
    }
    const files: Record<string, LockedFile> = {};
    for (const path of Object.keys(entry.files).sort(byCodePoint)) {
      const file = entry.files[path] as LockedFile;
      files[path] = { mode: file.mode, sha256: file.sha256 };
    }
    packages[key] = {
      name: entry.name,
      version: entry.version,
      requested: entry.requested,
      integrity: entry.integrity,
      sourceRepo: entry.sourceRepo,
      sourcePath: entry.sourcePath,
      sourceCommit: entry.sourceCommit,
      agents: [...new Set(entry.agents)].sort(byCodePoint),
      dirs: [...new Set(entry.dirs)].sort(byCodePoint),
      files,
      // Written only when they say something, so lockfiles without dependencies stay as they were.
      ...dependencyFields(entry),
    };
  }
  return `${JSON.stringify({ lockfileVersion: lock.lockfileVersion, packages }, null, 2)}\n`;
}

function dependencyFields(entry: LockEntry): Partial<LockEntry> {
  const fields: Partial<LockEntry> = {};
  const names = Object.keys(entry.dependencies ?? {}).sort(byCodePoint);
  if (names.length > 0)
    fields.dependencies = Object.fromEntries(names.map((name) => [name, entry.dependencies?.[name] ?? null]));
  const of = [...new Set(entry.dependencyOf ?? [])].sort(byCodePoint);
  if (of.length > 0) fields.dependencyOf = of;
  if (entry.direct === false) fields.direct = false;
  return fields;
}

/** Whether you named the package (true for entries written before dependencies existed). */
export function isDirect(entry: { direct?: boolean }): boolean {
  return entry.direct !== false;
}

/**
 * Sets every entry's `dependencyOf` from the others' `dependencies`: the graph has one source, and
 * these lists (for remove, list and whoever reads the file) are derived from it on every write.
 */
export function linkDependants(lock: Lockfile): void {
  const of = new Map<string, Set<string>>();
  for (const entry of Object.values(lock.packages)) {
    for (const name of Object.keys(entry.dependencies ?? {})) {
      if (!of.has(name)) of.set(name, new Set());
      of.get(name)?.add(entry.name);
    }
  }
  for (const entry of Object.values(lock.packages)) {
    const names = [...(of.get(entry.name) ?? [])].sort(byCodePoint);
    if (names.length > 0) entry.dependencyOf = names;
    else delete entry.dependencyOf;
  }
}

/**
 * The first dependency a locked entry declares that the lockfile does not lock at a version its range
 * allows, or undefined: a restore must never leave a skill without what it needs.
 */
export function unlockedDependency(
  lock: Lockfile,
  satisfies: (version: string, range: string) => boolean,
): { entry: LockEntry; name: string; range: string | null; locked: string | null } | undefined {
  for (const entry of Object.values(lock.packages).sort((a, b) => byCodePoint(a.name, b.name))) {
    for (const [name, range] of Object.entries(entry.dependencies ?? {})) {
      const locked = lock.packages[name];
      if (!locked || (range !== null && !satisfies(locked.version, range)))
        return { entry, name, range, locked: locked?.version ?? null };
    }
  }
  return undefined;
}

export async function writeLockfile(path: string, lock: Lockfile | LockfileV1): Promise<void> {
  // Write then rename, so an interrupted run never leaves half a lockfile behind. The temporary name is
  // unguessable and created exclusively: a link planted under it is never written through.
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, serializeLockfile(lock), { flag: 'wx' });
  await rename(temporary, path);
}

/** A version's dependencies as the lockfile records them; undefined when it declares none. */
export function lockedDependenciesOf(version: VersionDetail): Record<string, string | null> | undefined {
  if (version.dependencies.length === 0) return undefined;
  return Object.fromEntries(version.dependencies.map((d) => [d.name, d.range]));
}

/** A version's files as the lockfile records them. */
export function lockedFilesOf(version: VersionDetail): Record<string, LockedFile> {
  const files: Record<string, LockedFile> = {};
  for (const file of version.files) {
    const mode =
      file.linkTarget !== null
        ? FILE_MODES.symlink
        : file.executable
          ? FILE_MODES.executable
          : FILE_MODES.file;
    files[file.path] = { mode, sha256: file.sha256 };
  }
  return files;
}

/** Same paths, modes and hashes. */
export function sameFiles(a: Record<string, LockedFile>, b: Record<string, LockedFile>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((path) => {
    const other = b[path];
    return other !== undefined && other.mode === a[path]?.mode && other.sha256 === a[path]?.sha256;
  });
}

/** A lockfile folder, as an absolute path. */
export function absoluteDir(base: string, dir: string): string {
  return posix.isAbsolute(dir) ? dir : join(base, ...dir.split('/'));
}

/** An absolute folder as the lockfile records it: relative to the base, or absolute when outside it. */
export function lockDirOf(base: string, absolute: string): string {
  const rel = relative(base, absolute);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return absolute.split(sep).join('/');
  return rel.split(sep).join('/');
}

// ---- upgrading lockfileVersion 1 ---------------------------------------------------------------------

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

/** What list and remove need of a lockfile entry, whichever lockfile version holds it. */
export interface InstalledPackage {
  name: string;
  /** Null for a v1 entry (SKILL.md only, no version yet). */
  version: string | null;
  requested: string | null;
  agents: string[];
  dirs: string[];
  files: Record<string, LockedFile>;
  /** What the locked version needs (names), and who needs it. */
  dependencies: string[];
  dependencyOf: string[];
  /** Named by you (false: installed only as a dependency). */
  direct: boolean;
}

export function installedPackages(read: ReadLockfile): InstalledPackage[] {
  const rows: InstalledPackage[] =
    read.version === 2
      ? Object.values(read.lock.packages).map((entry) => ({
          name: entry.name,
          version: entry.version,
          requested: entry.requested,
          agents: entry.agents,
          dirs: entry.dirs,
          files: entry.files,
          dependencies: Object.keys(entry.dependencies ?? {}).sort(byCodePoint),
          dependencyOf: [...(entry.dependencyOf ?? [])],
          direct: isDirect(entry),
        }))
      : Object.values(read.lock.packages).map((entry) => ({
          name: entry.name,
          version: null,
          requested: null,
          agents: upgradedAgents(entry),
          dirs: v1Dirs(entry),
          files: { 'SKILL.md': { mode: FILE_MODES.file, sha256: entry.sha256 } },
          dependencies: [],
          dependencyOf: [],
          direct: true,
        }));
  return rows.sort((a, b) => byCodePoint(a.name, b.name));
}
