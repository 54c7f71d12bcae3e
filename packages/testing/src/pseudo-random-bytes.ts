import { createCipheriv } from 'node:crypto';

/**
 * `length` bytes that nothing compresses and that are the same on every run for one `seed` (AES-CTR's
 * keystream): a large download or asset without a test that passes or fails by the luck of its bytes.
 */
export function pseudoRandomBytes(length: number, seed = 1): Buffer {
  return createCipheriv('aes-256-ctr', Buffer.alloc(32, seed), Buffer.alloc(16)).update(Buffer.alloc(length));
}
