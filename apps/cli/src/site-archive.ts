import { gunzipSync } from 'node:zlib';
import { normalizeSkillFilePath } from '@pkgreg/contracts';
import { CliError, EXIT } from './errors.js';
import { FILE_MODES } from './lockfile/lockfile.js';
import { checkFolderShape, type SkillFile } from './skill-files.js';

// A skill folder as a site's discovery index serves it (docs/discovery.md; the RFC's "Archive
// Distribution"): a .tar.gz or .zip with the folder's files at its root. Read whole in memory within
// bounds (a bomb stops at them), every entry checked (regular files and links inside the folder only;
// directories skipped; anything else refused), nothing written before the whole folder passed.

/** The most a skill from a site may weigh, unpacked, and the most files it may hold. */
export const SITE_SKILL_MAX_BYTES = 64 * 1024 * 1024;
export const SITE_SKILL_MAX_FILES = 2_000;

function refuse(label: string, message: string): CliError {
  return new CliError(EXIT.integrity, `${label}: ${message}`);
}

/** A path as an archive names it, `./` and a trailing `/` left out; null when it is no relative path. */
function entryPath(name: string): string | null {
  const trimmed = name.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  return normalizeSkillFilePath(trimmed);
}

/** Collects files within the bounds, refusing a path given twice. */
class Collected {
  readonly files = new Map<string, SkillFile>();
  private bytes = 0;

  constructor(private readonly label: string) {}

  add(name: string, mode: SkillFile['mode'], content: Buffer): void {
    const path = entryPath(name);
    if (path === null)
      throw refuse(this.label, `the archive holds "${name}", which would escape the skill folder`);
    if (this.files.has(path)) throw refuse(this.label, `the archive holds ${path} twice`);
    if (this.files.size + 1 > SITE_SKILL_MAX_FILES)
      throw refuse(this.label, `the archive holds more than ${SITE_SKILL_MAX_FILES} files`);
    this.bytes += content.length;
    if (this.bytes > SITE_SKILL_MAX_BYTES)
      throw refuse(this.label, `the archive unpacks to more than ${SITE_SKILL_MAX_BYTES} bytes`);
    this.files.set(path, { path, mode, content });
  }

  /** The files, their shape checked as a manifest's is (SKILL.md at the root, links inside). */
  done(): SkillFile[] {
    const files = [...this.files.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
    checkFolderShape(
      this.label,
      'the archive',
      files.map((file) => ({
        path: file.path,
        linkTarget: file.mode === FILE_MODES.symlink ? file.content.toString('utf8') : null,
      })),
    );
    return files;
  }
}

const isGzip = (bytes: Uint8Array) => bytes[0] === 0x1f && bytes[1] === 0x8b;
const isZip = (bytes: Uint8Array) => bytes[0] === 0x50 && bytes[1] === 0x4b;

/**
 * The files of an archive a site serves: a .tar.gz or a .zip, told apart by their first bytes (more
 * reliable than a Content-Type, which a static host guesses from the name).
 */
export async function unpackSiteArchive(label: string, bytes: Uint8Array): Promise<SkillFile[]> {
  if (isGzip(bytes)) return unpackTarGz(label, bytes);
  if (isZip(bytes)) return unpackZip(label, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  throw refuse(label, 'the archive is neither a .tar.gz nor a .zip');
}

const modeOf = (unixMode: number): SkillFile['mode'] =>
  (unixMode & 0o111) !== 0 ? FILE_MODES.executable : FILE_MODES.file;

async function unpackTarGz(label: string, bytes: Uint8Array): Promise<SkillFile[]> {
  let tar: Buffer;
  try {
    // A tar's headers take 512 bytes an entry, and a long name a pax header more.
    tar = gunzipSync(bytes, { maxOutputLength: SITE_SKILL_MAX_BYTES + (SITE_SKILL_MAX_FILES + 2) * 2_048 });
  } catch (error) {
    throw refuse(label, `the archive cannot be unpacked (${(error as Error).message})`);
  }
  const { extract } = await import('tar-stream');
  const collected = new Collected(label);
  const reader = extract();
  const done = (async () => {
    for await (const entry of reader) {
      const { header } = entry;
      if (header.type === 'directory') {
        entry.resume();
        if (entryPath(header.name) === null && header.name.replace(/^(\.\/)+/, '') !== '')
          throw refuse(label, `the archive holds "${header.name}", which would escape the skill folder`);
        continue;
      }
      if (header.type === 'symlink') {
        entry.resume();
        collected.add(header.name, FILE_MODES.symlink, Buffer.from(header.linkname ?? '', 'utf8'));
        continue;
      }
      if (header.type !== 'file' && header.type !== 'contiguous-file') {
        entry.resume();
        throw refuse(
          label,
          `the archive holds ${header.name} as a ${header.type}; only files and links are installed`,
        );
      }
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      collected.add(header.name, modeOf(header.mode ?? 0o644), Buffer.concat(chunks));
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
  return collected.done();
}

/**
 * A .zip's files through yauzl (the zip reader packages/scan uses): stored or deflated entries, names
 * and sizes checked by it, unix modes where the archive has them (links, the executable bit). Encrypted
 * entries are refused; each entry stops at the declared size (a bomb stops at the bounds).
 */
async function unpackZip(label: string, zip: Buffer): Promise<SkillFile[]> {
  const bad = (message: string) => refuse(label, `the zip archive ${message}`);
  const yauzl = await import('yauzl');
  const collected = new Collected(label);
  let archive: import('yauzl').ZipFile | undefined;
  try {
    archive = await new Promise<import('yauzl').ZipFile>((resolve, reject) =>
      yauzl.fromBuffer(
        zip,
        { lazyEntries: true, decodeStrings: true, strictFileNames: true },
        (error, file) => (error ? reject(error) : resolve(file)),
      ),
    );
    const opened = archive;
    for (;;) {
      const entry = await new Promise<import('yauzl').Entry | null>((resolve, reject) => {
        opened.once('entry', resolve);
        opened.once('end', () => resolve(null));
        opened.once('error', reject);
        opened.readEntry();
      });
      opened.removeAllListeners('entry').removeAllListeners('end').removeAllListeners('error');
      if (entry === null) break;
      const name = entry.fileName;
      if (entry.isEncrypted()) throw bad(`holds ${name} encrypted`);
      // Unix modes ride in the upper half of the external attributes when the archive was made on unix (3).
      const unixMode = entry.versionMadeBy >> 8 === 3 ? entry.externalFileAttributes >>> 16 : 0;
      const kind = unixMode & 0o170000;
      if (name.endsWith('/') || kind === 0o040000) {
        if (entryPath(name) === null && name.replace(/^(\.\/)+/, '') !== '')
          throw bad(`holds "${name}", which would escape the skill folder`);
        continue;
      }
      if (kind !== 0 && kind !== 0o100000 && kind !== 0o120000)
        throw bad(`holds ${name}, which is neither a file nor a link`);
      if (entry.uncompressedSize > SITE_SKILL_MAX_BYTES)
        throw bad(`holds ${name}, larger than ${SITE_SKILL_MAX_BYTES} bytes`);
      const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
        opened.openReadStream(entry, (error, readable) => (error ? reject(error) : resolve(readable))),
      );
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      const mode = kind === 0o120000 ? FILE_MODES.symlink : modeOf(unixMode);
      collected.add(name, mode, Buffer.concat(chunks));
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw bad(`cannot be read (${(error as Error).message})`);
  } finally {
    archive?.close();
  }
  return collected.done();
}
