import { z } from 'zod';
import { VersionDependencySchema } from './dependencies.js';
import { ListQuerySchema } from './registry.js';
import { RiskSchema, ScanFindingSchema } from './risk.js';

// Immutable versions of a package: each one the whole skill folder at one indexing run (docs/versions.md).

export const VERSION_NOT_FOUND_MESSAGE = 'Version not found';
export const FILE_NOT_FOUND_MESSAGE = 'File not found';
export const INVALID_VERSION_MESSAGE = 'Invalid version: expected a semver version or "latest"';
export const INVALID_FILE_PATH_MESSAGE =
  'Invalid file path: expected a relative path inside the skill folder';

/** `{version}` in a path: an exact semver string, or `latest` for the newest version. */
export const LATEST_VERSION = 'latest';

const IsoTimestamp = z.iso.datetime({ offset: true });
const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const VersionFileSchema = z.object({
  /** Path relative to the skill folder, `/`-separated. */
  path: z.string(),
  /** Size in bytes (for a symlink: of its target path). */
  size: z.number().int().nonnegative(),
  /** SHA-256 (hex) of the bytes. */
  sha256: Sha256Hex,
  /** Git blob SHA-1 of the bytes, as the source repository names them. */
  gitBlobSha: z.string().regex(/^[0-9a-f]{40}$/),
  /** Whether the file is executable (git mode 100755). */
  executable: z.boolean(),
  /** For a symbolic link, its target (relative, inside the skill folder); null for a regular file. */
  linkTarget: z.string().nullable(),
});
export type VersionFile = z.infer<typeof VersionFileSchema>;

export const VersionSummarySchema = z.object({
  /** Semver: the declared version, or a pseudo-version (docs/versions.md). */
  version: z.string(),
  /** `sha256:<hex>` over every file's path, mode and content: the same folder, the same digest. */
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  /** SRI sha512 of the version's archive (`archive.tgz`). */
  integrity: z.string().regex(/^sha512-[A-Za-z0-9+/]{86}==$/),
  fileCount: z.number().int().nonnegative(),
  /** Sum of the files' sizes. */
  totalBytes: z.number().int().nonnegative(),
  /** Commit of the source repository the version was indexed at (null when the source did not say). */
  sourceCommit: z.string().nullable(),
  /** When the version was created (ISO 8601). */
  createdAt: IsoTimestamp,
  /** What the indexer tolerated in this version (a long description, a symlink left out, ...). */
  warnings: z.array(z.string()),
  /** The version's risk scan: its highest severity, or `none`; null for a version not scanned yet. */
  risk: RiskSchema.nullable().default(null),
  /**
   * Yanked by its owner: still fetchable by exact version (lockfiles keep working), never chosen by a
   * range or `latest`.
   */
  yanked: z.boolean().default(false),
  /** The owner's reason for the yank; null when not yanked or none given. */
  yankReason: z.string().nullable().default(null),
});
export type VersionSummary = z.infer<typeof VersionSummarySchema>;

/** One registry signature of a version (npm's `dist.signatures` entry). */
export const VersionSignatureSchema = z.object({
  keyid: z.string().min(1).max(200),
  sig: z.string().min(1).max(400),
});
export type VersionSignature = z.infer<typeof VersionSignatureSchema>;

/** GET /api/keys: every key the registry ever signed with (npm's `/-/npm/v1/keys` shape). */
export const RegistryKeysResponseSchema = z.object({
  keys: z.array(
    z.object({
      /** `SHA256:` + base64 SHA-256 of the key's SPKI DER. */
      keyid: z.string(),
      keytype: z.literal('ed25519'),
      scheme: z.literal('ed25519'),
      /** Base64 SPKI DER of the public key. */
      key: z.string(),
      /** When the key stopped being trusted for new signatures (ISO 8601); null while current. */
      expires: z.string().nullable(),
    }),
  ),
});
export type RegistryKeysResponse = z.infer<typeof RegistryKeysResponseSchema>;

/** A DSSE envelope (secure-systems-lab/dsse): a payload and signatures over its PAE encoding. */
export const DsseEnvelopeSchema = z.object({
  /** `application/vnd.in-toto+json` for an in-toto statement. */
  payloadType: z.string(),
  /** Base64 of the serialized statement. */
  payload: z.string(),
  /** Registry signatures over `DSSEv1 <len(type)> <type> <len(payload)> <payload>` (base64 Ed25519). */
  signatures: z.array(VersionSignatureSchema),
});
export type DsseEnvelope = z.infer<typeof DsseEnvelopeSchema>;

/** GET …/versions/:version/attestations: the registry's provenance attestations of the version. */
export const VersionAttestationsResponseSchema = z.object({
  attestations: z.array(
    z.object({
      /** The statement's predicate type: `https://slsa.dev/provenance/v1`. */
      predicateType: z.string(),
      /** The signed in-toto statement (docs/provenance.md, "Provenance attestations"). */
      envelope: DsseEnvelopeSchema,
    }),
  ),
});
export type VersionAttestationsResponse = z.infer<typeof VersionAttestationsResponseSchema>;

export const VersionDetailSchema = VersionSummarySchema.extend({
  scope: z.string(),
  name: z.string(),
  /** Every file of the folder, sorted by path (code-point order). */
  files: z.array(VersionFileSchema),
  /** What the version's scan found, by file and line (docs/risk-scan.md). */
  findings: z.array(ScanFindingSchema).default([]),
  /** What the version's SKILL.md declares it needs (`metadata.dependencies`), in declared order. */
  dependencies: z.array(VersionDependencySchema).default([]),
  /**
   * The registry's signatures over `@scope/name@version:integrity` (docs/provenance.md), newest key
   * first: `keyid` names a key of GET /api/keys, `sig` is the base64 Ed25519 signature. Empty until the
   * registry's signer has signed it (seconds after it is created), or when the registry signs nothing.
   */
  signatures: z.array(VersionSignatureSchema).default([]),
  /**
   * The version's leaf in the registry's transparency log (docs/provenance.md): its index, for an
   * inclusion proof against a checkpoint. Null while not logged yet (seconds), and always for a private
   * package (the public log never names one).
   */
  log: z.object({ index: z.number().int().nonnegative() }).nullable().default(null),
});
export type VersionDetail = z.infer<typeof VersionDetailSchema>;

/** Query of GET /api/packages/@scope/name/versions: the list's paging rules. */
export const VersionListQuerySchema = ListQuerySchema.pick({ page: true, pageSize: true });
export type VersionListQuery = z.infer<typeof VersionListQuerySchema>;

export const VersionListResponseSchema = z.object({
  /** Newest first. */
  data: z.array(VersionSummarySchema),
  total: z.number().int().nonnegative(),
  page: z.number().int().min(1),
  pageSize: z.number().int().min(1).max(100),
});
export type VersionListResponse = z.infer<typeof VersionListResponseSchema>;

// Control characters (C0 and DEL): a line break in a name let a PAX record parser that splits lines read a
// forged `path=` (node-tar), and they rewrite terminals that print a file list.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * A file path as a URL or manifest names it: relative, `/`-separated, no empty, `.` or `..` segment, no
 * backslash or control character (NUL, line breaks, escapes). Returns the path, or null when it could name
 * something outside the folder or is not a name a skill may hold.
 */
export function normalizeSkillFilePath(path: string): string | null {
  if (path === '' || path.length > 4096 || path.includes('\\') || CONTROL_CHARACTER.test(path)) return null;
  const segments = path.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return null;
  return path;
}

/** How many links a path may pass through: deeper is treated as a loop. */
const MAX_LINK_DEPTH = 40;

/**
 * Where a symbolic link of a skill folder leads, resolved the way the kernel would: each link met on the
 * way is followed too (`m -> d/l/../x` with `d/l -> ..` leaves the folder though neither target says so
 * as text). `links` maps each link's path to its target. Returns the resolved path ('' for the folder
 * itself), or null when it leaves the folder, is absolute, or loops.
 */
export function resolveSkillLink(linkPath: string, links: ReadonlyMap<string, string>): string | null {
  const follow = (from: string[], target: string, depth: number): string[] | null => {
    if (depth > MAX_LINK_DEPTH || target.startsWith('/') || target.includes('\\') || target.includes('\0'))
      return null;
    let at = [...from];
    for (const segment of target.split('/')) {
      if (segment === '' || segment === '.') continue;
      if (segment === '..') {
        if (at.length === 0) return null;
        at.pop();
        continue;
      }
      at.push(segment);
      const next = links.get(at.join('/'));
      if (next !== undefined) {
        const resolved = follow(at.slice(0, -1), next, depth + 1);
        if (resolved === null) return null;
        at = resolved;
      }
    }
    return at;
  };
  const target = links.get(linkPath);
  if (target === undefined) return null;
  const resolved = follow(linkPath.split('/').slice(0, -1), target, 0);
  return resolved === null ? null : resolved.join('/');
}

/**
 * The text a version's `digest` hashes (docs/versions.md): `<mode> <sha256> <path>\n` per file, sorted
 * by path in code-point order. `digest` = `sha256:` + hex SHA-256 of it.
 */
export function manifestText(files: ReadonlyArray<{ path: string; mode: string; sha256: string }>): string {
  return [...files]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((file) => `${file.mode} ${file.sha256} ${file.path}\n`)
    .join('');
}
