import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { normalizeSkillFilePath } from '@pkgreg/contracts';
import { extract } from 'tar-stream';

// Reading a skill folder someone else packed (an upload, docs/publishing.md "Uploading"): the same form
// as the registry's own archive.tgz (versioning.ts buildArchive: entries under `<name>/`), checked by the
// same rules the CLI holds a downloaded archive to (a path must stay in the skill folder, each path
// once, regular files only) and by the indexer's size limits. Nothing is trusted until every entry
// passed: the caller gets all the files or one reason.

/** How large a skill may be: the indexer's limits (its DEFAULT_SKILL_LIMITS, INDEX_MAX_* settings). */
export interface ArchiveLimits {
  maxFileBytes: number;
  maxSkillBytes: number;
  maxSkillFiles: number;
}

export interface ArchiveFile {
  /** Relative to the skill folder, `/`-separated. */
  path: string;
  executable: boolean;
  bytes: Buffer;
}

/** `malformed`: not a skill archive (400); `too_large`: past a limit (413). */
export type ArchiveProblem = 'malformed' | 'too_large';

export type ArchiveRead =
  | { ok: true; files: ArchiveFile[] }
  | { ok: false; problem: ArchiveProblem; reason: string };

/**
 * The most the tar inside an archive of `totalBytes` in `fileCount` files may weigh: the files, tar's
 * headers (a pax header for a long path, 512-byte blocks) and a margin. A gzip bomb stops here.
 */
export function tarBound(totalBytes: number, fileCount: number): number {
  return totalBytes + (fileCount + 2) * 16_384 + 1_048_576;
}

const gunzipAsync = promisify(gunzip);

class Refusal extends Error {
  constructor(
    readonly problem: ArchiveProblem,
    message: string,
  ) {
    super(message);
  }
}

function mib(bytes: number): string {
  return `${+(bytes / (1024 * 1024)).toFixed(2)} MiB`;
}

/** `name` shown in a message: printable, and short. */
function shown(name: string): string {
  return JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name);
}

/** Why an entry's path is refused, or null; `rest` is the path under `<folder>/`. */
function pathProblem(name: string, folder: string): string | null {
  if (name.includes('\uFFFD')) return `the entry name ${shown(name)} is not valid UTF-8`;
  if (name.startsWith('/')) return `${shown(name)} is an absolute path`;
  if (!name.startsWith(`${folder}/`)) {
    return `${shown(name)} is not under ${folder}/: an upload holds the skill's files under a folder named after it, as the registry's archives do`;
  }
  return null;
}

/**
 * The files of an uploaded `<folder>/…` tar.gz, or why it is refused. Directory entries are skipped
 * (they hold nothing); links, devices and fifos are refused, as are paths leaving the folder, a path
 * given twice, names that are not UTF-8, a missing `<folder>/SKILL.md` and anything past `limits`.
 */
export async function readSkillArchive(
  tgz: Buffer,
  folder: string,
  limits: ArchiveLimits,
): Promise<ArchiveRead> {
  let tar: Buffer;
  const bound = tarBound(limits.maxSkillBytes, limits.maxSkillFiles);
  try {
    tar = await gunzipAsync(tgz, { maxOutputLength: bound });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
      return { ok: false, problem: 'too_large', reason: `the archive unpacks to more than ${mib(bound)}` };
    }
    return {
      ok: false,
      problem: 'malformed',
      reason: `the body is not a gzip file (${(error as Error).message})`,
    };
  }
  const files = new Map<string, ArchiveFile>();
  let total = 0;
  const reader = extract();
  const done = (async () => {
    for await (const entry of reader) {
      const { header } = entry;
      const name = header.name;
      const problem = pathProblem(name, folder);
      if (problem) throw new Refusal('malformed', problem);
      const rest = name.slice(folder.length + 1).replace(/\/+$/, '');
      if (header.type === 'directory') {
        if (rest !== '' && normalizeSkillFilePath(rest) === null)
          throw new Refusal('malformed', `${shown(name)} would escape the skill folder`);
        entry.resume();
        continue;
      }
      if (normalizeSkillFilePath(rest) === null) {
        throw new Refusal('malformed', `${shown(name)} would escape the skill folder`);
      }
      if (header.type === 'symlink' || header.type === 'link') {
        throw new Refusal(
          'malformed',
          `${rest} is a ${header.type === 'link' ? 'hard' : 'symbolic'} link; an upload holds regular files only`,
        );
      }
      if (header.type !== 'file') {
        throw new Refusal(
          'malformed',
          `${rest} is a ${header.type ?? 'special'} entry; an upload holds regular files only`,
        );
      }
      if (files.has(rest)) throw new Refusal('malformed', `the archive holds ${rest} twice`);
      if (files.size + 1 > limits.maxSkillFiles) {
        throw new Refusal(
          'too_large',
          `the skill has more than ${limits.maxSkillFiles} files; the limit is ${limits.maxSkillFiles} files a skill`,
        );
      }
      const size = header.size ?? 0;
      if (size > limits.maxFileBytes) {
        throw new Refusal(
          'too_large',
          `${rest} is ${mib(size)}; the limit is ${mib(limits.maxFileBytes)} a file`,
        );
      }
      total += size;
      if (total > limits.maxSkillBytes) {
        throw new Refusal(
          'too_large',
          `the skill's files add up to more than ${mib(limits.maxSkillBytes)}, the limit of a skill`,
        );
      }
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      const executable = ((header.mode ?? 0o644) & 0o111) !== 0;
      files.set(rest, { path: rest, executable, bytes: Buffer.concat(chunks) });
    }
  })();
  reader.end(tar);
  try {
    await done;
  } catch (error) {
    reader.destroy();
    if (error instanceof Refusal) return { ok: false, problem: error.problem, reason: error.message };
    return {
      ok: false,
      problem: 'malformed',
      reason: `the body is not a tar.gz archive (${(error as Error).message})`,
    };
  }
  if (files.size === 0) return { ok: false, problem: 'malformed', reason: 'the archive holds no files' };
  if (!files.has('SKILL.md')) {
    return { ok: false, problem: 'malformed', reason: `the archive has no ${folder}/SKILL.md` };
  }
  const byPath = (a: ArchiveFile, b: ArchiveFile) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  return { ok: true, files: [...files.values()].sort(byPath) };
}
