import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { crc32, gzip } from 'node:zlib';
import { manifestText } from '@pkgreg/contracts';
import semver from 'semver';
import { Header } from 'tar/header';
import { pack as tarPack } from 'tar-stream';

// A version's identity (digest), its string (declared or pseudo) and its archive: docs/versions.md.

/** Git's file modes: a regular file, an executable one, a symbolic link (its blob is the target). */
export type FileMode = '100644' | '100755' | '120000';

/** One file of a version as its manifest records it. */
export interface ManifestFile {
  /** Relative to the skill folder, `/`-separated. */
  path: string;
  mode: FileMode;
  sha256: string;
  gitSha1: string;
  size: number;
  /** A symbolic link's target (its blob's text); null for regular files. */
  linkTarget: string | null;
}

const byPath = (a: ManifestFile, b: ManifestFile) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** `sha256:` + hex SHA-256 of the manifest text: path, mode and bytes of every file, nothing else. */
export function manifestDigest(files: ManifestFile[]): string {
  return `sha256:${createHash('sha256').update(manifestText(files)).digest('hex')}`;
}

/** `yyyymmddhhmmss` in UTC. */
function timestamp(time: Date): string {
  return time.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/**
 * Go's pseudo-version forms over a semver base: `0.0.0-T-H` with no base, `X.Y.(Z+1)-0.T-H` after a
 * release, `X.Y.Z-pre.0.T-H` after a pre-release, where `T` is `time` as `yyyymmddhhmmss` UTC and `H`
 * the first 12 hex characters of `revision` (a commit hash, or a `sha256:` digest). `T-H` is one
 * identifier, so it is valid semver whatever hex digits H holds.
 */
export function pseudoVersion(base: string | null, time: Date, revision: string): string {
  const hash = revision
    .replace(/^sha256:/, '')
    .slice(0, 12)
    .toLowerCase();
  const suffix = `${timestamp(time)}-${hash}`;
  const parsed = base ? semver.parse(base) : null;
  if (!parsed) return `0.0.0-${suffix}`;
  if (parsed.prerelease.length > 0) return `${parsed.version}.0.${suffix}`;
  return `${parsed.major}.${parsed.minor}.${parsed.patch + 1}-0.${suffix}`;
}

/** The commit a version's bytes were read at, as Go names pseudo-versions from it. */
export interface SourceCommit {
  /** Git's hex object name (SHA-1, or SHA-256 in a SHA-256 repository). */
  hash: string;
  /** The committer date (not the author date): what Go's pseudo-versions carry. */
  time: Date;
}

const COMMIT_HASH = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;

export interface VersionChoice {
  /** The SKILL.md's declared version, normalised; null when it declares none. */
  declared: string | null;
  /** Every version string the package already has. */
  used: ReadonlySet<string>;
  /** The package's last declared version (its newest version that declared one); null when none. */
  lastDeclared: string | null;
  /** The commit the bytes come from, with its time; null when not known (an upload). */
  commit: SourceCommit | null;
  /** The run's start time: names a pseudo-version only without `commit`. */
  time: Date;
  digest: string;
}

/**
 * The declared version when it is new to the package; else a pseudo-version after the best base, named
 * from the commit (its time and hash, so every registry names the same bytes alike) when it is known,
 * else from the run's time and the digest.
 */
export function chooseVersion(choice: VersionChoice): string {
  if (choice.declared && !choice.used.has(choice.declared)) return choice.declared;
  const { commit } = choice;
  const [time, revision] =
    commit && COMMIT_HASH.test(commit.hash) && !Number.isNaN(commit.time.getTime())
      ? [commit.time, commit.hash]
      : [choice.time, choice.digest];
  const pseudo = pseudoVersion(choice.declared ?? choice.lastDeclared, time, revision);
  // One commit and one package give one string, unless it is taken already: a branch reset to an older
  // commit after a newer one, rules that now cut the folder differently, two runs without a commit
  // in one second.
  let candidate = pseudo;
  for (let n = 1; choice.used.has(candidate); n += 1) candidate = `${pseudo}.${n}`;
  return candidate;
}

const gzipAsync = promisify(gzip);

/** npm pack's fixed mtime: archives of the same files are the same bytes whenever they are built. */
const ARCHIVE_MTIME = new Date('1985-10-26T08:15:00Z');

/** Every file of a version as tar entries named `<prefix><path>`, by the archive's fixed rules. */
async function tarOf(
  prefix: string,
  files: ManifestFile[],
  bytesOf: (file: ManifestFile) => Buffer,
  ustarNames: boolean,
): Promise<Buffer> {
  const pack = tarPack();
  const chunks: Buffer[] = [];
  pack.on('data', (chunk) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', resolve);
    pack.on('error', reject);
  });
  const common = { mtime: ARCHIVE_MTIME, uid: 0, gid: 0, uname: '', gname: '' };
  const sorted = [...files].sort(byPath);
  for (const file of sorted) {
    const entryName = `${prefix}${file.path}`;
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (file.linkTarget !== null) {
        pack.entry(
          { ...common, name: entryName, type: 'symlink', linkname: file.linkTarget, mode: 0o777 },
          done,
        );
      } else {
        const mode = file.mode === '100755' ? 0o755 : 0o644;
        pack.entry({ ...common, name: entryName, type: 'file', mode }, bytesOf(file), done);
      }
    });
  }
  pack.finalize();
  await ended;
  const tar = Buffer.concat(chunks);
  if (!ustarNames) return tar;
  const entries = sorted.map((file) => ({
    name: `${prefix}${file.path}`,
    linkname: file.linkTarget ?? undefined,
  }));
  return nameUstarHeaders(tar, entries);
}

/** Where a ustar header holds `text`'s UTF-8 bytes: name (100 bytes) and prefix (155, split at a `/`). */
function ustarFields(text: string): { name: Buffer; prefix: Buffer } | undefined {
  const bytes = Buffer.from(text);
  if (bytes.length <= 100) return { name: bytes, prefix: Buffer.alloc(0) };
  for (
    let slash = bytes.indexOf(0x2f);
    slash !== -1 && slash <= 155;
    slash = bytes.indexOf(0x2f, slash + 1)
  ) {
    const name = bytes.subarray(slash + 1);
    if (name.length > 0 && name.length <= 100) return { name, prefix: bytes.subarray(0, slash) };
  }
  return undefined;
}

/**
 * `tar` with each PAX entry's own header naming its path, as GNU tar writes it. tar-stream gives a path
 * ustar cannot hold as it writes it (not ASCII, or past 100 bytes with no split) a PAX record and names the
 * entry's header `PaxHeader`, which a reader that skips PAX records (vercel's `skills` CLI) writes as a file
 * of that name. The header now gets the path's UTF-8 bytes where name and prefix hold them whole, else an
 * empty name, which such a reader refuses rather than write a file under a cut path. The paths are the
 * entries' own (`entries`, in the tar's order), never read back from the records: a path may hold a line
 * break, and a record parser that splits lines would take a forged `path=` from it. Entries without a
 * record keep their bytes. node-tar's Header only reads each header's type and size.
 */
function nameUstarHeaders(tar: Buffer, entries: readonly { name: string; linkname?: string }[]): Buffer {
  let next = 0;
  let recorded = false;
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = new Header(tar, at);
    if (header.nullBlock) break;
    const start = at;
    at += 512 + Math.ceil((header.size ?? 0) / 512) * 512;
    if (header.type === 'ExtendedHeader') {
      recorded = true;
      continue;
    }
    const entry = entries[next++];
    if (!recorded || entry === undefined) continue;
    recorded = false;
    const path = ustarFields(entry.name);
    const link = entry.linkname === undefined ? undefined : Buffer.from(entry.linkname);
    tar.fill(0, start, start + 100);
    tar.fill(0, start + 345, start + 500);
    if (path) {
      path.name.copy(tar, start);
      path.prefix.copy(tar, start + 345);
    }
    // A target past 100 bytes keeps tar-stream's placeholder: an empty linkname makes node-tar drop the
    // link and give its PAX record to the next entry.
    if (link && link.length <= 100) {
      tar.fill(0, start + 157, start + 257);
      link.copy(tar, start + 157);
    }
    // The checksum (ustar): the header's bytes summed with its own field read as spaces.
    tar.fill(0x20, start + 148, start + 156);
    let sum = 0;
    for (let i = start; i < start + 512; i++) sum += tar[i] as number;
    // Written as tar-stream writes it: six octal digits, a space, a NUL.
    tar.write(`${sum.toString(8).padStart(6, '0')} \0`, start + 148, 'latin1');
  }
  return tar;
}

/**
 * The version's `archive.tgz`: entries under `<name>/`, sorted by path, no directory entries, fixed
 * mtime and owner, modes 0644/0755 (links 0777), gzip level 9. Built once and stored: the bytes, not
 * this function, are what `integrity` covers.
 */
export async function buildArchive(
  name: string,
  files: ManifestFile[],
  bytesOf: (file: ManifestFile) => Buffer,
): Promise<Buffer> {
  const tar = await tarOf(`${name}/`, files, bytesOf, true);
  // On libuv's thread pool: the run's database writes go on meanwhile.
  return gzipAsync(tar, { level: 9 });
}

/**
 * The forms of the discovery RFC's archive: `v1` at `agent-skill.tar.gz`, a PAX entry's header named
 * `PaxHeader` as tar-stream writes it, kept for the URLs and digests lockfiles recorded; `v2` at
 * `agent-skill.v2.tar.gz`, the one indexes name, with nameUstarHeaders. The same bytes for a version
 * whose paths ustar holds as tar-stream writes them (ASCII, split when long).
 */
export type AgentSkillArchiveForm = 'v1' | 'v2';

/**
 * The version as the Agent Skills discovery RFC's archive (docs/discovery.md): the same tar as
 * `archive.tgz` but with the folder's files at the root (no `<name>/`), in gzip's stored blocks. Never
 * stored: a pure function of the files, the same bytes from every process, Node and zlib, so the
 * `sha256:` digest an index names (computed once per process) is the digest of what any process serves.
 */
export async function buildAgentSkillArchive(
  files: ManifestFile[],
  bytesOf: (file: ManifestFile) => Buffer,
  form: AgentSkillArchiveForm = 'v2',
): Promise<Buffer> {
  return gzipStored(await tarOf('', files, bytesOf, form === 'v2'));
}

/** Deflate's largest stored block (RFC 1951 3.2.4: LEN is 16 bits). */
const STORED_BLOCK_BYTES = 65_535;

/**
 * `bytes` as a gzip member (RFC 1952) of stored deflate blocks: valid gzip that every gunzip reads,
 * written here byte by byte, so no compressor's choices (zlib's differ by version and CPU features)
 * can change it. Header: no name, mtime 0, OS unknown.
 */
export function gzipStored(bytes: Buffer): Buffer {
  const blocks = Math.max(1, Math.ceil(bytes.length / STORED_BLOCK_BYTES));
  const out = Buffer.alloc(10 + blocks * 5 + bytes.length + 8);
  out.set([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff], 0);
  let at = 10;
  for (let block = 0; block < blocks; block += 1) {
    const chunk = bytes.subarray(block * STORED_BLOCK_BYTES, (block + 1) * STORED_BLOCK_BYTES);
    // BFINAL on the last block, BTYPE 00 (stored); the header byte leaves the stream byte-aligned.
    out[at] = block === blocks - 1 ? 1 : 0;
    out.writeUInt16LE(chunk.length, at + 1);
    out.writeUInt16LE(~chunk.length & 0xffff, at + 3);
    chunk.copy(out, at + 5);
    at += 5 + chunk.length;
  }
  out.writeUInt32LE(crc32(bytes), at);
  // ISIZE: the length modulo 2^32.
  out.writeUInt32LE(bytes.length % 2 ** 32, at + 4);
  return out;
}

/** Subresource Integrity of bytes: `sha512-<base64>`, as npm's lockfiles and `ssri` write it. */
export function sriSha512(bytes: Buffer): string {
  return `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
