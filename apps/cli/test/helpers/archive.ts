import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { VersionDetail } from '@pkgreg/contracts';
import { gitBlobSha } from '@pkgreg/registry';
import { pack } from 'tar-stream';

// Archives and manifests built the way docs/versions.md describes them, so the CLI's checks can be run
// on good ones and on deliberately broken ones without a registry.

export interface FixtureFile {
  path: string;
  content?: string | Buffer;
  executable?: boolean;
  /** A symbolic link to this target instead of a file. */
  linkTarget?: string;
}

export interface RawEntry {
  name: string;
  type: 'file' | 'symlink' | 'directory' | 'link' | 'fifo';
  mode?: number;
  content?: Buffer;
  linkname?: string;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function bytesOf(file: FixtureFile): Buffer {
  if (file.linkTarget !== undefined) return Buffer.from(file.linkTarget, 'utf8');
  return Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content ?? '', 'utf8');
}

/** The tar entries of a well-formed archive: sorted, under `<name>/`, no folders. */
export function entriesOf(name: string, files: readonly FixtureFile[]): RawEntry[] {
  return [...files]
    .sort((a, b) => (a.path < b.path ? -1 : 1))
    .map((file) =>
      file.linkTarget !== undefined
        ? { name: `${name}/${file.path}`, type: 'symlink', mode: 0o777, linkname: file.linkTarget }
        : {
            name: `${name}/${file.path}`,
            type: 'file',
            mode: file.executable ? 0o755 : 0o644,
            content: bytesOf(file),
          },
    );
}

export async function tgz(entries: readonly RawEntry[]): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (chunk) => {
    chunks.push(chunk as Buffer);
  });
  const ended = new Promise<void>((resolve, reject) => {
    tar.on('end', resolve);
    tar.on('error', reject);
  });
  for (const entry of entries) {
    await new Promise<void>((resolve, reject) => {
      const header = {
        name: entry.name,
        type: entry.type,
        mode: entry.mode ?? 0o644,
        linkname: entry.linkname,
        mtime: new Date('1985-10-26T08:15:00Z'),
        size: entry.type === 'file' ? (entry.content?.length ?? 0) : 0,
      };
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (entry.type === 'file') tar.entry(header, entry.content ?? Buffer.alloc(0), done);
      else tar.entry(header, done);
    });
  }
  tar.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks), { level: 9 });
}

export function integrityOf(bytes: Buffer): string {
  return `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
}

/** The manifest of a file list, with its digest; integrity is the archive's. */
export function manifestOf(
  name: string,
  version: string,
  files: readonly FixtureFile[],
  archive: Buffer,
): VersionDetail {
  const rows = [...files]
    .sort((a, b) => (a.path < b.path ? -1 : 1))
    .map((file) => {
      const bytes = bytesOf(file);
      return {
        path: file.path,
        size: bytes.length,
        sha256: sha256(bytes),
        gitBlobSha: gitBlobSha(bytes),
        executable: file.executable === true,
        linkTarget: file.linkTarget ?? null,
      };
    });
  const lines = rows
    .map(
      (row) =>
        `${row.linkTarget !== null ? '120000' : row.executable ? '100755' : '100644'} ${row.sha256} ${row.path}\n`,
    )
    .join('');
  return {
    scope: 'acme',
    name,
    version,
    digest: `sha256:${sha256(Buffer.from(lines))}`,
    integrity: integrityOf(archive),
    fileCount: rows.length,
    totalBytes: rows.reduce((sum, row) => sum + row.size, 0),
    sourceCommit: null,
    createdAt: '2026-11-25T12:00:00.000Z',
    warnings: [],
    risk: null,
    findings: [],
    yanked: false,
    yankReason: null,
    files: rows,
    dependencies: [],
    signatures: [],
    log: null,
  };
}

/** A well-formed archive and its manifest. */
export async function fixtureVersion(name: string, version: string, files: readonly FixtureFile[]) {
  const archive = await tgz(entriesOf(name, files));
  return { archive, manifest: manifestOf(name, version, files, archive) };
}
