import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix, relative, sep } from 'node:path';
import {
  AGENT_SKILL_DIGEST_PATTERN,
  AGENT_SKILL_NAME_PATTERN,
  normalizeSkillFilePath,
  type VersionDetail,
} from '@pkgreg/contracts';
import validVersion from 'semver/functions/valid.js';
import validRange from 'semver/ranges/valid.js';
import { z } from 'zod';
import { LOCKFILE_NAME } from '../constants.js';
import { CliError, EXIT } from '../errors.js';
import { badSegment, foldCollision } from '../safe-folders.js';

export { LOCKFILE_NAME };
export const LOCKFILE_VERSION = 2;

// pkgreg-lock.json, lockfileVersion 2 (README: The lockfile): its schema, what an entry records, and
// writing it. Reading it, and a version 1 file upgraded as it is read, is read.ts; version 1 is v1.ts.

export const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be a hex SHA-256' });
/** `@scope/name`; the name is the first group. */
export const SCOPED_NAME = /^@[a-z0-9-]+\/([a-z0-9-]+)$/;

/** Git's file modes, as the version's digest names them (docs/versions.md). */
export const FILE_MODES = { file: '100644', executable: '100755', symlink: '120000' } as const;
export type FileMode = (typeof FILE_MODES)[keyof typeof FILE_MODES];

export const LockedFileSchema = z.object({
  mode: z.enum([FILE_MODES.file, FILE_MODES.executable, FILE_MODES.symlink]),
  /** SHA-256 (hex) of the bytes; for a symbolic link, of its target path. */
  sha256: Sha256Schema,
});
export type LockedFile = z.infer<typeof LockedFileSchema>;

/** What a skill declares it needs, as locked: `@scope/name` -> range, null for the latest. */
const DependenciesSchema = z.record(
  z.string().regex(SCOPED_NAME, { error: 'must be @scope/name' }),
  z
    .string()
    .refine((value) => validRange(value) !== null, { error: 'must be a semver range' })
    .nullable(),
);
export type LockedDependencies = z.infer<typeof DependenciesSchema>;

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
  /**
   * The registry key whose signature of this version was verified when it was installed
   * (docs/provenance.md). Absent: not verified (the registry publishes no keys, --no-verify, or a
   * lockfile written before signatures).
   */
  signature: z.object({ keyid: z.string().min(1).max(200) }).optional(),
  /**
   * The version's leaf in the registry's transparency log, as its record said at install; `verify`
   * proves the leaf is this version with this integrity. Absent: not logged then (or an older lockfile).
   */
  log: z.object({ index: z.number().int().nonnegative() }).optional(),
  /**
   * A provenance attestation by the registry verified at install (docs/provenance.md): `verify` then
   * requires one naming this archive, `sourceRepo` and `sourceCommit`. Absent: none was served.
   */
  attested: z.literal(true).optional(),
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
  dependencies: DependenciesSchema.optional(),
  /**
   * The locked packages (`@scope/name`) and site skills (their `sites` key) whose `dependencies` name
   * this one (kept by pkgreg from them). Absent: none.
   */
  dependencyOf: z.array(z.string()).optional(),
  /** False when it was installed only as a dependency (not named by you). Absent: true. */
  direct: z.boolean().optional(),
});
export type LockEntry = z.infer<typeof LockEntrySchema>;

/**
 * Where a skill installed from a site came from (docs/discovery.md): the site as given to
 * `pkgreg install <url> --skill <name>` and the skill's name in its discovery index.
 */
export const SiteSourceSchema = z.object({
  kind: z.literal('well-known'),
  /** The site: origin and path, no query, fragment or trailing slash. */
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  /** The skill's name in the site's index, and its folders' name. */
  skill: z.string().regex(AGENT_SKILL_NAME_PATTERN, { error: 'must be a skill name' }),
});
export type SiteSource = z.infer<typeof SiteSourceSchema>;

/** A skill installed from a site's Agent Skills discovery index rather than from the registry. */
export const SiteEntrySchema = z.object({
  source: SiteSourceSchema,
  /** The index read at install. */
  index: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  /** The artifact's kind: the SKILL.md alone, or an archive of the folder. */
  type: z.enum(['skill-md', 'archive']),
  /** The artifact, as the index named it (resolved): a restore downloads it again. */
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  /** `sha256:<hex>` of the artifact, as the index listed it and the download matched. */
  digest: z.string().regex(AGENT_SKILL_DIGEST_PATTERN, { error: 'must be sha256:<hex>' }),
  /** Agents the skill was installed for (informative). */
  agents: z.array(z.string()),
  /** Folders holding it, relative to the lockfile's base, forward slashes. */
  dirs: z.array(z.string()).min(1),
  /** Every file of the skill by path. */
  files: z.record(z.string(), LockedFileSchema),
  /**
   * What its SKILL.md declares in `metadata.dependencies`: registry packages of the configured registry,
   * locked in `packages` like any dependency. Absent: none (and in lockfiles written before).
   */
  dependencies: DependenciesSchema.optional(),
});
export type SiteEntry = z.infer<typeof SiteEntrySchema>;

/** A site skill as messages and `list` name it: `<skill> (<site URL>)`. */
export function siteLabel(source: Pick<SiteSource, 'url' | 'skill'>): string {
  return `${source.skill} (${source.url})`;
}

/** A site skill's digest where a package's version would be (tables): `sha256:` and 12 hex digits. */
export function shortDigest(digest: string): string {
  return digest.slice(0, 'sha256:'.length + 12);
}

/** A site skill's key in `sites`: `<site URL>#<skill>`. */
export function siteKey(source: Pick<SiteSource, 'url' | 'skill'>): string {
  return `${source.url}#${source.skill}`;
}

export interface Lockfile {
  lockfileVersion: typeof LOCKFILE_VERSION;
  packages: Record<string, LockEntry>;
  /**
   * Skills installed from sites (docs/discovery.md), by siteKey. Absent when there are none, so older
   * lockfiles read and round-trip unchanged (older pkgreg versions ignore the field).
   */
  sites?: Record<string, SiteEntry>;
}

/** The site skills of a lockfile, by key. */
export function siteEntries(lock: Pick<Lockfile, 'sites'>): [string, SiteEntry][] {
  return Object.entries(lock.sites ?? {}).sort(([a], [b]) => byCodePoint(a, b));
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

/** A folder's files as a lockfile records them: paths inside it, SKILL.md present, none inside another. */
function checkFiles(
  files: Record<string, LockedFile>,
  issue: (field: string, message: string) => void,
): void {
  for (const path of Object.keys(files)) {
    if (!safeRelative(path)) issue('files', `unexpected path ${path}`);
  }
  if (!files['SKILL.md']) issue('files', 'SKILL.md is missing');
  const conflict = pathConflict(Object.keys(files));
  if (conflict) issue('files', `${conflict} is inside another file`);
}

/** The schema of a version 2 lockfile: a global one may name absolute folders (CODEX_HOME). */
export function lockfileSchema(global: boolean) {
  return z
    .object({
      lockfileVersion: z.literal(LOCKFILE_VERSION),
      packages: z.record(z.string(), LockEntrySchema),
      sites: z.record(z.string(), SiteEntrySchema).optional(),
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
        checkFiles(entry.files, issue);
      }
      for (const [key, entry] of Object.entries(lock.sites ?? {})) {
        const issue = (field: string, message: string) =>
          ctx.addIssue({ code: 'custom', path: ['sites', key, field], message });
        if (key !== siteKey(entry.source)) {
          issue('source', 'must be the <url>#<skill> key');
          continue;
        }
        for (const dir of entry.dirs) {
          if (!validLockDir(dir, entry.source.skill, global)) issue('dirs', `unexpected folder ${dir}`);
        }
        checkFiles(entry.files, issue);
      }
      // Folders one name apart on a case-insensitive file system are one folder there (safe-folders.ts).
      const clash = foldCollision(lockedDirs(lock));
      if (clash) {
        ctx.addIssue({
          code: 'custom',
          path: ['packages'],
          message: `${clash[0]} and ${clash[1]} are the same folder on a case-insensitive file system`,
        });
      }
    });
}

export function sha256Hex(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

export function emptyLockfile(): Lockfile {
  return { lockfileVersion: LOCKFILE_VERSION, packages: {} };
}

/** A lockfile its schema refuses (exit 1), naming the first issue. */
export function invalidLockfile(path: string, error: z.ZodError): CliError {
  const issue = error.issues[0];
  return new CliError(
    EXIT.error,
    `${path} is not a valid lockfile: ${issue?.path.join('.') || 'root'}: ${issue?.message}`,
  );
}

export const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Stable output: packages, lists and files sorted, fields in schema order, trailing newline. */
export function serializeLockfile(lock: Lockfile): string {
  const packages: Record<string, unknown> = {};
  for (const key of Object.keys(lock.packages).sort(byCodePoint)) {
    const entry = lock.packages[key];
    if (!entry) continue;
    const files = sortedFiles(entry.files);
    packages[key] = {
      name: entry.name,
      version: entry.version,
      requested: entry.requested,
      integrity: entry.integrity,
      ...(entry.signature ? { signature: { keyid: entry.signature.keyid } } : {}),
      ...(entry.log ? { log: { index: entry.log.index } } : {}),
      ...(entry.attested ? { attested: true } : {}),
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
  const sites: Record<string, unknown> = {};
  for (const [key, entry] of siteEntries(lock)) {
    sites[key] = {
      source: { kind: entry.source.kind, url: entry.source.url, skill: entry.source.skill },
      index: entry.index,
      type: entry.type,
      url: entry.url,
      digest: entry.digest,
      agents: [...new Set(entry.agents)].sort(byCodePoint),
      dirs: [...new Set(entry.dirs)].sort(byCodePoint),
      files: sortedFiles(entry.files),
      ...(entry.dependencies && Object.keys(entry.dependencies).length > 0
        ? { dependencies: sortedDependencies(entry.dependencies) }
        : {}),
    };
  }
  // `sites` only when it says something, so lockfiles without site skills stay as they were.
  const body = Object.keys(sites).length > 0 ? { sites } : {};
  return `${JSON.stringify({ lockfileVersion: lock.lockfileVersion, packages, ...body }, null, 2)}\n`;
}

function sortedFiles(files: Record<string, LockedFile>): Record<string, LockedFile> {
  const sorted: Record<string, LockedFile> = {};
  for (const path of Object.keys(files).sort(byCodePoint)) {
    const file = files[path] as LockedFile;
    sorted[path] = { mode: file.mode, sha256: file.sha256 };
  }
  return sorted;
}

function sortedDependencies(dependencies: LockedDependencies): LockedDependencies {
  const names = Object.keys(dependencies).sort(byCodePoint);
  return Object.fromEntries(names.map((name) => [name, dependencies[name] ?? null]));
}

function dependencyFields(entry: LockEntry): Partial<LockEntry> {
  const fields: Partial<LockEntry> = {};
  if (Object.keys(entry.dependencies ?? {}).length > 0)
    fields.dependencies = sortedDependencies(entry.dependencies ?? {});
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
 * A locked entry that may declare dependencies: a package (`@scope/name`) or a site skill (its `sites`
 * key), as messages name it and as `pkgreg install` takes it again.
 */
export interface Requirer {
  /** `@scope/name`, or the site skill's key: what `dependencyOf` lists. */
  key: string;
  /** `@scope/name@version`, or the site skill's key. */
  label: string;
  /** The arguments of `pkgreg install` that install it again. */
  install: string;
  dependencies: LockedDependencies;
}

/** Every package and site skill of the lockfile with what it declares it needs. */
export function requirersOf(lock: Pick<Lockfile, 'packages' | 'sites'>): Requirer[] {
  return [
    ...Object.values(lock.packages).map((entry) => ({
      key: entry.name,
      label: `${entry.name}@${entry.version}`,
      install: entry.name,
      dependencies: entry.dependencies ?? {},
    })),
    ...siteEntries(lock).map(([key, entry]) => ({
      key,
      label: key,
      install: `${entry.source.url} --skill ${entry.source.skill}`,
      dependencies: entry.dependencies ?? {},
    })),
  ];
}

/**
 * Sets every package's `dependencyOf` from the others' (and the site skills') `dependencies`: the graph
 * has one source, and these lists (for remove, list and whoever reads the file) are derived from it on
 * every write.
 */
export function linkDependants(lock: Lockfile): void {
  const of = new Map<string, Set<string>>();
  for (const requirer of requirersOf(lock)) {
    for (const name of Object.keys(requirer.dependencies)) {
      if (!of.has(name)) of.set(name, new Set());
      of.get(name)?.add(requirer.key);
    }
  }
  for (const entry of Object.values(lock.packages)) {
    const names = [...(of.get(entry.name) ?? [])].sort(byCodePoint);
    if (names.length > 0) entry.dependencyOf = names;
    else delete entry.dependencyOf;
  }
}

/** Says which dependencies no package or site skill needs any more (kept: remove them by name). */
export function warnOrphans(lock: Lockfile, warn: (line: string) => void): void {
  for (const entry of Object.values(lock.packages)) {
    if (isDirect(entry) || (entry.dependencyOf?.length ?? 0) > 0) continue;
    warn(
      `${entry.name} was installed as a dependency and nothing needs it now; "pkgreg remove ${entry.name}" removes it`,
    );
  }
}

/**
 * The first dependency a locked package or site skill declares that the lockfile does not lock at a
 * version its range allows, or undefined: a restore must never leave a skill without what it needs.
 */
export function unlockedDependency(
  lock: Lockfile,
  satisfies: (version: string, range: string) => boolean,
): { by: Requirer; name: string; range: string | null; locked: string | null } | undefined {
  for (const by of requirersOf(lock).sort((a, b) => byCodePoint(a.key, b.key))) {
    for (const [name, range] of Object.entries(by.dependencies)) {
      const locked = lock.packages[name];
      if (!locked || (range !== null && !satisfies(locked.version, range)))
        return { by, name, range, locked: locked?.version ?? null };
    }
  }
  return undefined;
}

export function writeLockfile(path: string, lock: Lockfile): Promise<void> {
  return writeLockfileText(path, serializeLockfile(lock));
}

export async function writeLockfileText(path: string, text: string): Promise<void> {
  // Write then rename, so an interrupted run never leaves half a lockfile behind. The temporary name is
  // unguessable and created exclusively: a link planted under it is never written through.
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, text, { flag: 'wx' });
  await rename(temporary, path);
}

/** Every folder the lockfile records, for the check that no two are one folder in another case. */
export function lockedDirs(lock: Pick<Lockfile, 'packages' | 'sites'>): string[] {
  return [
    ...Object.values(lock.packages).flatMap((entry) => entry.dirs),
    ...Object.values(lock.sites ?? {}).flatMap((entry) => entry.dirs),
  ];
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
