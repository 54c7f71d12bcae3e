import { resolveSkillLink } from '@pkgreg/contracts';
import {
  buildArchive,
  type ContentStore,
  type DerivedPackage,
  type ManifestFile,
  manifestDigest,
  type PreparedVersion,
  type StoredBlob,
  sriSha512,
} from '@pkgreg/registry';
import { type ScanFile, type ScanResult, scanVersion } from '@pkgreg/scan';
import { IndexingError } from './errors.js';
import { detectLicenseText, isLicenseFileName } from './license.js';
import type { SkillFolder } from './skill-folders.js';
import { analyzeSkill, MAX_SKILL_MD_BYTES } from './skill-md.js';
import type { RepoMeta, SkillSource, TreeFile } from './types.js';

// Skill folders -> analysed packages, each with its manifest, digest and (when the folder changed) a
// stored archive. Reads only the blobs the content store lacks, a bounded batch of folders at a time.

/** A folder whose SKILL.md passed the rules, as @pkgreg/registry writes it. */
export type PreparedSkill = PreparedVersion;

export type PreparedOutcome =
  | { ok: true; skill: PreparedSkill }
  | { ok: false; path: string; reason: string };

export interface PrepareInput {
  /** Where blobs the store lacks are read: a repository, or an upload's files (uploaded-skill.ts). */
  source: Pick<SkillSource, 'readBlobs'>;
  store: ContentStore;
  folders: SkillFolder[];
  /** LICENSE-like files at the repository root, read when a skill has no license of its own. */
  rootLicenseFiles: TreeFile[];
  repo: RepoMeta;
  scope: string;
  sourceRepo: string;
  /** The digest of the package's latest version (`scope/name`), when it has one. */
  latestDigest(name: string): string | undefined;
}

/** Blobs read from the source per batch: bounds memory, and one tarball per batch from GitHub. */
const MAX_BATCH_BYTES = 128 * 1024 * 1024;

/** Which stored blob and (when read in this batch) which bytes each git SHA names. */
class BatchContent {
  private readonly stored = new Map<string, StoredBlob>();
  private readonly bytes = new Map<string, Buffer>();

  constructor(private readonly store: ContentStore) {}

  /**
   * Bytes of stored blobs every folder needs whether or not it changed (SKILL.md, license files, link
   * targets), in one read for the batch instead of one per folder.
   */
  async prefetch(files: TreeFile[]): Promise<void> {
    const wanted = [...new Set(files.map((f) => f.sha))].filter((sha) => !this.bytes.has(sha));
    const found = await this.store.get(wanted.map((sha) => this.blob(sha).sha256));
    for (const sha of wanted) {
      const bytes = found.get(this.blob(sha).sha256);
      if (bytes) this.bytes.set(sha, bytes);
    }
  }

  /** Finds what the store has; reads the rest from the source and stores it. */
  async load(source: Pick<SkillSource, 'readBlobs'>, files: TreeFile[]): Promise<void> {
    const shas = [...new Set(files.map((f) => f.sha))].filter((sha) => !this.stored.has(sha));
    for (const [sha, blob] of await this.store.findByGitSha(shas)) this.stored.set(sha, blob);
    const missing = shas.filter((sha) => !this.stored.has(sha));
    if (missing.length === 0) return;
    const read = await source.readBlobs(missing);
    const order = missing.map((sha) => {
      const bytes = read.get(sha);
      if (!bytes) throw new IndexingError('source_error', `blob ${sha} could not be read`);
      return bytes;
    });
    const identities = await this.store.put(order);
    for (const [i, sha] of missing.entries()) {
      this.stored.set(sha, identities[i] as StoredBlob);
      this.bytes.set(sha, order[i] as Buffer);
    }
  }

  blob(sha: string): StoredBlob {
    const blob = this.stored.get(sha);
    if (!blob) throw new IndexingError('source_error', `blob ${sha} was not loaded`);
    return blob;
  }

  /** The bytes of these blobs: from this batch's reads, else from the store. */
  async bytesOf(shas: string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    const fromStore: string[] = [];
    for (const sha of new Set(shas)) {
      const held = this.bytes.get(sha);
      if (held) out.set(sha, held);
      else fromStore.push(this.blob(sha).sha256);
    }
    if (fromStore.length > 0) {
      const found = await this.store.get(fromStore);
      for (const sha of new Set(shas)) {
        if (out.has(sha)) continue;
        const bytes = found.get(this.blob(sha).sha256);
        if (!bytes) throw new IndexingError('source_error', `stored blob for ${sha} is missing`);
        out.set(sha, bytes);
      }
    }
    return out;
  }
}

/** Splits folders into batches of at most MAX_BATCH_BYTES of files (a larger folder is its own batch). */
function batchesOf(folders: SkillFolder[]): SkillFolder[][] {
  const batches: SkillFolder[][] = [];
  let current: SkillFolder[] = [];
  let bytes = 0;
  for (const folder of folders) {
    const size = folder.files.reduce((sum, f) => sum + (f.size ?? 0), 0);
    if (current.length > 0 && bytes + size > MAX_BATCH_BYTES) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(folder);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** The package's license: declared, else its own LICENSE file's, else the root's, else the host's. */
async function resolveLicense(
  content: BatchContent,
  folder: SkillFolder,
  pkg: DerivedPackage,
  input: PrepareInput,
): Promise<string | null> {
  if (pkg.declaredLicense) return pkg.declaredLicense;
  const own = folder.files.filter((f) => !f.relativePath.includes('/') && isLicenseFileName(f.relativePath));
  // A skill's own license file governs it even when its text matches no SPDX license.
  const candidates = own.length > 0 ? own : input.rootLicenseFiles;
  const texts = await content.bytesOf(candidates.filter((f) => f.mode !== '120000').map((f) => f.sha));
  for (const file of candidates) {
    const text = texts.get(file.sha);
    const id = text ? detectLicenseText(text.toString('utf8')) : null;
    if (id) return id;
  }
  return own.length > 0 ? null : input.repo.license;
}

async function prepareOne(
  content: BatchContent,
  folder: SkillFolder,
  input: PrepareInput,
): Promise<PreparedOutcome> {
  const path = folder.skillMd.path;
  if ((folder.skillMd.size ?? 0) > MAX_SKILL_MD_BYTES) {
    return { ok: false, path, reason: `SKILL.md is larger than ${MAX_SKILL_MD_BYTES} bytes` };
  }
  const raw = (await content.bytesOf([folder.skillMd.sha])).get(folder.skillMd.sha)?.toString('utf8') ?? '';
  const analysis = analyzeSkill({
    raw,
    sha: folder.skillMd.sha,
    dir: folder.dir,
    dirFiles: folder.files.map((f) => f.relativePath),
    repo: input.repo,
    scope: input.scope,
    sourceRepo: input.sourceRepo,
  });
  if (!analysis.ok) return { ok: false, path, reason: analysis.reason };
  const { pkg } = analysis;

  const warnings = [...pkg.warnings];
  const linkBytes = await content.bytesOf(folder.files.filter((f) => f.mode === '120000').map((f) => f.sha));
  const links = new Map(
    folder.files
      .filter((f) => f.mode === '120000')
      .map((f) => [f.relativePath, linkBytes.get(f.sha)?.toString('utf8') ?? ''] as const),
  );
  const manifest: ManifestFile[] = [];
  const leftOut: ScanFile[] = [];
  for (const file of folder.files) {
    const blob = content.blob(file.sha);
    const linkTarget = links.get(file.relativePath) ?? null;
    if (linkTarget !== null && resolveSkillLink(file.relativePath, links) === null) {
      warnings.push(`symlink ${file.relativePath} points outside the skill folder; left out`);
      // Out of the version, but the scan still says where it pointed (~/.ssh reads differently from ../x).
      leftOut.push({ path: file.relativePath, bytes: new Uint8Array(), linkTarget });
      continue;
    }
    manifest.push({
      path: file.relativePath,
      mode: file.mode,
      sha256: blob.sha256,
      gitSha1: file.sha,
      size: blob.size,
      linkTarget,
    });
  }
  const digest = manifestDigest(manifest);
  let archive: PreparedSkill['archive'] = null;
  let scan: ScanResult | null = null;
  if (input.latestDigest(pkg.name) !== digest) {
    const bytes = await content.bytesOf(manifest.filter((f) => f.linkTarget === null).map((f) => f.gitSha1));
    const tgz = await buildArchive(pkg.name, manifest, (f) => bytes.get(f.gitSha1) as Buffer);
    const [stored] = await input.store.put([tgz]);
    archive = { sha256: (stored as StoredBlob).sha256, integrity: sriSha512(tgz) };
    // Scanned before the version exists: it becomes installable with its risk, never without.
    scan = await scanVersion([
      ...manifest.map((f) => ({
        path: f.path,
        bytes: f.linkTarget === null ? (bytes.get(f.gitSha1) as Buffer) : new Uint8Array(),
        executable: f.mode === '100755',
        linkTarget: f.linkTarget,
      })),
      ...leftOut,
    ]);
  }
  return {
    ok: true,
    skill: {
      path,
      pkg: { ...pkg, fileCount: manifest.length },
      license: await resolveLicense(content, folder, pkg, input),
      manifest,
      digest,
      totalBytes: manifest.reduce((sum, f) => sum + f.size, 0),
      warnings,
      archive,
      scan,
    },
  };
}

/** Every folder analysed and, where it passed, turned into a manifest (and an archive when changed). */
export async function prepareSkills(input: PrepareInput): Promise<PreparedOutcome[]> {
  const outcomes: PreparedOutcome[] = [];
  for (const batch of batchesOf(input.folders)) {
    const content = new BatchContent(input.store);
    // Root license files are read once (the first batch stores them; later ones find them stored).
    await content.load(input.source, [...batch.flatMap((folder) => folder.files), ...input.rootLicenseFiles]);
    await content.prefetch([
      ...batch.flatMap((folder) =>
        folder.files.filter(
          (f) =>
            f.relativePath === 'SKILL.md' ||
            f.mode === '120000' ||
            (!f.relativePath.includes('/') && isLicenseFileName(f.relativePath)),
        ),
      ),
      ...input.rootLicenseFiles,
    ]);
    for (const folder of batch) outcomes.push(await prepareOne(content, folder, input));
  }
  return outcomes;
}
