import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';
import yauzl from 'yauzl';
import type { ArchiveType } from './formats.js';
import type { ScanFile } from './types.js';

// Opening archives so the rules read what is inside: zip (and jar, whl, docx, …) with yauzl, tar with
// tar-stream, gzip with node:zlib. Every read is bounded (entries, bytes per entry, bytes per version),
// so a zip bomb costs at most the budget; what is left unread makes the archive's finding medium.

export const ARCHIVE_LIMITS = {
  /** Entries read across a version's archives. */
  entries: 4096,
  /** Bytes of one entry (declared or actual, whichever is checked first). */
  entryBytes: 8 * 1024 * 1024,
  /** Bytes unpacked across a version's archives. */
  totalBytes: 64 * 1024 * 1024,
  /** Archives inside archives opened (a zip in a tgz is depth 2). */
  depth: 3,
} as const;

/** What is left of a version's unpacking budget; shared by all its archives. */
export interface ArchiveBudget {
  entries: number;
  bytes: number;
}

export function newBudget(): ArchiveBudget {
  return { entries: ARCHIVE_LIMITS.entries, bytes: ARCHIVE_LIMITS.totalBytes };
}

export interface Unpacked {
  /** Files inside (paths relative to the archive); links are left out and checked for escapes. */
  files: ScanFile[];
  /** A gzip holding a tar: said in the finding. */
  innerTar: boolean;
  /** Why not every entry was read, or null when all were. */
  incomplete: string | null;
  /** Entries that would be written outside the folder they are unpacked into. */
  escapes: string[];
}

/** An entry's path or link target leaves the folder: absolute, a drive, or `..` past the top. */
function escapes(path: string, from = ''): boolean {
  const p = path.replace(/\\/g, '/');
  if (/^(?:\/|[a-zA-Z]:)/.test(p)) return true;
  const parts = from ? from.split('/').slice(0, -1) : [];
  for (const part of p.split('/')) {
    if (part === '..') {
      if (parts.length === 0) return true;
      parts.pop();
    } else if (part !== '.' && part !== '') parts.push(part);
  }
  return false;
}

function take(budget: ArchiveBudget, size: number): boolean {
  if (budget.entries <= 0 || size > ARCHIVE_LIMITS.entryBytes || size > budget.bytes) return false;
  budget.entries -= 1;
  budget.bytes -= size;
  return true;
}

/** Opens an archive; `name` (its file name) names what a plain gzip holds: `notes.md.gz` holds `notes.md`. */
export async function unpack(
  type: ArchiveType,
  bytes: Uint8Array,
  budget: ArchiveBudget,
  name = 'content',
): Promise<Unpacked> {
  if (type === 'zip') return unzip(bytes, budget);
  if (type === 'tar') return untar(bytes, budget);
  let inflated: Buffer;
  try {
    inflated = gunzipSync(bytes, {
      maxOutputLength: Math.max(1, Math.min(budget.bytes, ARCHIVE_LIMITS.totalBytes)),
    });
  } catch (error) {
    const tooBig = (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
    return {
      files: [],
      innerTar: false,
      incomplete: tooBig ? 'it unpacks to more than the scan reads' : 'it is damaged',
      escapes: [],
    };
  }
  const text = inflated.subarray(257, 262).toString('latin1');
  if (text === 'ustar') return { ...(await untar(inflated, budget)), innerTar: true };
  if (!take(budget, inflated.length)) {
    return { files: [], innerTar: false, incomplete: 'it unpacks to more than the scan reads', escapes: [] };
  }
  const inner = name.replace(/\.(?:gz|gzip|z)$/i, '') || 'content';
  return { files: [{ path: inner, bytes: inflated }], innerTar: false, incomplete: null, escapes: [] };
}

async function untar(bytes: Uint8Array, budget: ArchiveBudget): Promise<Unpacked> {
  const out: Unpacked = { files: [], innerTar: false, incomplete: null, escapes: [] };
  const extract = tarExtract();
  Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]).pipe(extract);
  try {
    for await (const entry of extract) {
      const { name, type, size, linkname, mode } = entry.header;
      if (escapes(name)) out.escapes.push(name);
      if (
        (type === 'symlink' || type === 'link') &&
        linkname != null &&
        escapes(linkname, type === 'symlink' ? name : '')
      ) {
        out.escapes.push(`${name} -> ${linkname}`);
      }
      if (type !== 'file' && type !== 'contiguous-file') {
        entry.resume();
        continue;
      }
      if (!take(budget, size ?? 0)) {
        out.incomplete ??= 'it holds more than the scan reads';
        entry.resume();
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      out.files.push({
        path: name.replace(/^(?:\.\/)+/, ''),
        bytes: Buffer.concat(chunks),
        executable: ((mode ?? 0) & 0o111) !== 0,
      });
    }
  } catch {
    out.incomplete ??= 'it is damaged';
  }
  return out;
}

async function unzip(bytes: Uint8Array, budget: ArchiveBudget): Promise<Unpacked> {
  const out: Unpacked = { files: [], innerTar: false, incomplete: null, escapes: [] };
  let zip: yauzl.ZipFile;
  try {
    // Names are decoded and checked here, not by yauzl: it stops at the first unsafe name, and the
    // finding should list them.
    zip = await yauzl.fromBufferPromise(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
      lazyEntries: true,
      decodeStrings: false,
      validateEntrySizes: true,
    });
  } catch {
    return { ...out, incomplete: 'it is damaged' };
  }
  try {
    for await (const entry of zip.eachEntry()) {
      const name = yauzl.getFileNameLowLevel(
        entry.generalPurposeBitFlag,
        entry.fileNameRaw,
        entry.extraFields,
        false,
      );
      if (escapes(name)) out.escapes.push(name);
      const mode = entry.externalFileAttributes >>> 16;
      if (name.endsWith('/')) continue;
      if (entry.isEncrypted() || !entry.canDecodeFileData()) {
        out.incomplete ??= 'some entries are encrypted or compressed in a way the scan does not read';
        continue;
      }
      if (!take(budget, entry.uncompressedSize)) {
        out.incomplete ??= 'it holds more than the scan reads';
        continue;
      }
      const stream = await zip.openReadStreamPromise(entry);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      const data = Buffer.concat(chunks);
      if ((mode & 0o170000) === 0o120000) {
        const target = data.toString('utf8');
        if (escapes(target, name)) out.escapes.push(`${name} -> ${target}`);
        continue;
      }
      out.files.push({ path: name, bytes: data, executable: (mode & 0o111) !== 0 });
    }
  } catch {
    out.incomplete ??= 'it is damaged';
  } finally {
    zip.close();
  }
  return out;
}
