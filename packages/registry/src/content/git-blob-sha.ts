import { createHash } from 'node:crypto';

/** Git's blob SHA-1: sha1("blob <size>\0" + bytes), the id `git hash-object` prints. */
export function gitBlobSha(content: Buffer | string): string {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}
