import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { Db } from '@pkgreg/db';
import { type RegistrySigner, signerFromPem } from '@pkgreg/registry';
import { packageRow } from './fixtures.js';

// Versions for the transparency log's tests, stored as the indexer stores them (a package row, its
// archive blob, the version row), and a registry key to sign checkpoints with.

export function newSigner(): RegistrySigner {
  return signerFromPem(
    generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  );
}

/** A package of `@scope/name` with versions 1.0.0 … 1.0.(count-1); the versions' ids. */
export async function addVersions(
  db: Db,
  key: { scope: string; name: string },
  count: number,
  options: { createdAt?: Date; visibility?: 'public' | 'private' } = {},
): Promise<string[]> {
  const pkg = await db
    .insertInto('packages')
    .values(packageRow({ ...key, visibility: options.visibility ?? 'public' }))
    .returning('id')
    .executeTakeFirstOrThrow();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const sha = randomUUID().replaceAll('-', '');
    await db
      .insertInto('content_blobs')
      .values({ sha256: sha, git_sha1: sha, size: 1, bytes: Buffer.from(sha) })
      .execute();
    const version = await db
      .insertInto('package_versions')
      .values({
        package_id: pkg.id,
        version: `1.0.${i}`,
        digest: `sha256:${sha}`,
        integrity: `sha512-${Buffer.from(sha, 'hex').toString('base64')}`,
        archive_sha256: sha,
        file_count: 1,
        total_bytes: 1,
        ...(options.createdAt ? { created_at: options.createdAt } : {}),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.push(version.id);
  }
  return ids;
}
