import { createHash } from 'node:crypto';
import type { Db } from '@pkgreg/db';
import {
  type AgentSkillArchiveForm,
  buildAgentSkillArchive,
  listVersionFiles,
  type ManifestFile,
} from '@pkgreg/registry';
import { LRUCache } from 'lru-cache';
import { ApiError } from '../http/api-error.js';
import type { ContentCache } from '../versions/content-cache.js';

// A version as the discovery RFC's archive (docs/discovery.md): its files at the root of a tar in
// gzip's stored blocks (buildAgentSkillArchive), built from the stored files whenever it is served.
// The bytes are a pure function of the version's files and the form, so the digest an index names (of
// v2, the form indexes name) is computed once per process and version and holds for every process.

/** Versions whose digest one process remembers (a digest and a key: about 150 bytes each). */
const DIGESTS_KEPT = 100_000;

export interface AgentSkillArchives {
  /** The archive of a version (by id), v2 unless `form` says otherwise. */
  build(versionId: string, form?: AgentSkillArchiveForm): Promise<Buffer>;
  /** `sha256:<hex>` of build(versionId)'s bytes (v2). */
  digestOf(versionId: string): Promise<string>;
}

export function sha256Digest(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

export function createAgentSkillArchives(db: Db, content: ContentCache): AgentSkillArchives {
  const digests = new LRUCache<string, string>({ max: DIGESTS_KEPT });
  const computing = new Map<string, Promise<string>>();

  async function build(versionId: string, form: AgentSkillArchiveForm = 'v2'): Promise<Buffer> {
    const rows = await listVersionFiles(db, versionId);
    const files: ManifestFile[] = rows.map((row) => ({
      path: row.path,
      mode: row.link_target !== null ? '120000' : row.executable ? '100755' : '100644',
      sha256: row.sha256,
      gitSha1: row.git_sha1,
      size: Number(row.size),
      linkTarget: row.link_target,
    }));
    const wanted = files.filter((file) => file.linkTarget === null).map((file) => file.sha256);
    const bytes = await content.getMany(wanted);
    const absent = wanted.find((sha256) => !bytes.has(sha256));
    // A version row names its bytes; their absence is the store's fault, not the caller's.
    if (absent) throw new ApiError('internal', 'Internal server error', { cause: `blob ${absent} missing` });
    return buildAgentSkillArchive(files, (file) => bytes.get(file.sha256) as Buffer, form);
  }

  return {
    build,
    async digestOf(versionId) {
      const known = digests.get(versionId);
      if (known) return known;
      // Concurrent index requests naming one version build it once.
      let pending = computing.get(versionId);
      if (!pending) {
        pending = build(versionId).then((bytes) => {
          const digest = sha256Digest(bytes);
          digests.set(versionId, digest);
          return digest;
        });
        computing.set(versionId, pending);
        pending.finally(() => computing.delete(versionId)).catch(() => {});
      }
      return pending;
    },
  };
}
