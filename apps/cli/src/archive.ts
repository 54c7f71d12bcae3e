import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { normalizeSkillFilePath, type VersionDetail } from '@pkgreg/contracts';
import { CliError, EXIT } from './errors.js';
import { FILE_MODES, type LockedFile, lockedFilesOf, sha256Hex } from './lockfile/lockfile.js';
import type { SkillFile } from './skill-files.js';

// A version's archive.tgz (docs/versions.md): entries under `<name>/`, regular files and symbolic links
// only. Nothing in it is trusted until it matches the manifest entry by entry; nothing reaches the disk
// before the whole archive has been checked.

/** SRI sha512 of some bytes, as `integrity` names the archive. */
export function integrityOf(bytes: Uint8Array): string {
  return `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
}

/**
 * The most a version's archive may weigh, compressed or not: its files plus tar's headers (a pax header
 * for a long path, 512-byte blocks) and a margin. A bigger download or gzip bomb stops at this bound.
 */
export function archiveBound(version: Pick<VersionDetail, 'totalBytes' | 'fileCount'>): number {
  return version.totalBytes + (version.fileCount + 2) * 16_384 + 1_048_576;
}

function refuse(label: string, message: string): CliError {
  return new CliError(EXIT.integrity, `${label}: ${message}`);
}

/**
 * Checks the archive against `integrity`, unpacks it in memory and checks every entry against the
 * manifest (path, kind, bytes, executable bit, link target). Throws exit 5 on the first difference.
 */
export async function unpackArchive(
  label: string,
  packageName: string,
  version: VersionDetail,
  archive: Uint8Array,
): Promise<SkillFile[]> {
  if (integrityOf(archive) !== version.integrity) {
    throw new CliError(
      EXIT.integrity,
      `Integrity mismatch: the archive of ${label} does not match its integrity ${version.integrity}`,
    );
  }
  let tar: Buffer;
  try {
    tar = gunzipSync(archive, { maxOutputLength: archiveBound(version) });
  } catch (error) {
    throw refuse(label, `the archive cannot be unpacked (${(error as Error).message})`);
  }
  const { extract } = await import('tar-stream');
  const expected = lockedFilesOf(version);
  const links = new Map(version.files.map((file) => [file.path, file.linkTarget]));
  const prefix = `${packageName}/`;
  const files = new Map<string, SkillFile>();
  const reader = extract();
  const done = (async () => {
    for await (const entry of reader) {
      const { header } = entry;
      const name = header.name;
      const path = name.startsWith(prefix) ? name.slice(prefix.length) : null;
      if (path === null || normalizeSkillFilePath(path) === null) {
        entry.resume();
        throw refuse(label, `the archive holds "${name}", which would escape the skill folder`);
      }
      const want = expected[path];
      if (!want) {
        entry.resume();
        throw refuse(label, `the archive holds ${path}, which is not in the manifest`);
      }
      if (files.has(path)) {
        entry.resume();
        throw refuse(label, `the archive holds ${path} twice`);
      }
      if (header.type === 'symlink') {
        entry.resume();
        const target = header.linkname ?? '';
        if (want.mode !== FILE_MODES.symlink || links.get(path) !== target) {
          throw refuse(label, `${path} in the archive is a link to ${target}, not what the manifest says`);
        }
        files.set(path, { path, mode: FILE_MODES.symlink, content: Buffer.from(target, 'utf8') });
        continue;
      }
      if (header.type !== 'file') {
        entry.resume();
        throw refuse(
          label,
          `the archive holds ${path} as a ${header.type}; only files and links are installed`,
        );
      }
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      const content = Buffer.concat(chunks);
      const executable = ((header.mode ?? 0o644) & 0o111) !== 0;
      const got: LockedFile = {
        mode: executable ? FILE_MODES.executable : FILE_MODES.file,
        sha256: sha256Hex(content),
      };
      if (got.sha256 !== want.sha256) throw refuse(label, `${path} in the archive differs from the manifest`);
      if (got.mode !== want.mode) {
        throw refuse(
          label,
          `${path} in the archive has the wrong executable bit (${got.mode}, manifest ${want.mode})`,
        );
      }
      files.set(path, { path, mode: got.mode, content });
    }
  })();
  reader.end(tar);
  try {
    await done;
  } catch (error) {
    reader.destroy();
    if (error instanceof CliError) throw error;
    throw refuse(label, `the archive cannot be read (${(error as Error).message})`);
  }
  const absent = Object.keys(expected).filter((path) => !files.has(path));
  if (absent.length) throw refuse(label, `the archive lacks ${absent.join(', ')}`);
  // Links whose bytes are the target: the manifest's hash covers them as well.
  for (const file of files.values()) {
    if (file.mode === FILE_MODES.symlink && sha256Hex(file.content) !== expected[file.path]?.sha256) {
      throw refuse(label, `the link ${file.path} differs from the manifest`);
    }
  }
  return [...files.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
}
