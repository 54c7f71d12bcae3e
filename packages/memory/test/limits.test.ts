import {
  MEMORY_LIMITS,
  MemoryDeleteArgsSchema,
  MemoryGetArgsSchema,
  MemoryPutArgsSchema,
  MemorySearchArgsSchema,
} from '@pkgreg/contracts';
import { describe, expect, it } from 'vitest';
import { ns } from './helpers.js';

// decisions.md, Memory entry: content ≤ 16384 bytes, ≤ 32 tags of ≤ 64 chars, ≤ 32 metadata keys with
// values ≤ 1024 chars; topK 1..50. The service trusts parsed args, so the schemas must hold the line.
const namespace = ns('limits');
const base = { namespace, tier: 'stm', content: 'ok' };

describe('memory argument limits are enforced by the contract schemas (decisions.md)', () => {
  it('content: 16384 bytes pass, one byte more (or multibyte overflow) fails, empty fails', () => {
    expect(
      MemoryPutArgsSchema.safeParse({ ...base, content: 'a'.repeat(MEMORY_LIMITS.maxContentBytes) }).success,
    ).toBe(true);
    expect(
      MemoryPutArgsSchema.safeParse({ ...base, content: 'a'.repeat(MEMORY_LIMITS.maxContentBytes + 1) })
        .success,
    ).toBe(false);
    // 6000 × 3-byte chars = 18000 bytes, though only 6000 UTF-16 units.
    expect(MemoryPutArgsSchema.safeParse({ ...base, content: '€'.repeat(6000) }).success).toBe(false);
    expect(MemoryPutArgsSchema.safeParse({ ...base, content: '' }).success).toBe(false);
  });

  it('tags: 32 of 64 chars pass; 33 tags or a 65-char tag fail', () => {
    const tags = Array.from({ length: 32 }, (_, i) => `${i}`.padEnd(64, 't'));
    expect(MemoryPutArgsSchema.safeParse({ ...base, tags }).success).toBe(true);
    expect(MemoryPutArgsSchema.safeParse({ ...base, tags: [...tags, 'x'] }).success).toBe(false);
    expect(MemoryPutArgsSchema.safeParse({ ...base, tags: ['t'.repeat(65)] }).success).toBe(false);
  });

  it('metadata: 32 keys with 1024-char values pass; 33 keys or a 1025-char value fail', () => {
    const metadata = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, 'v'.repeat(1024)]));
    expect(MemoryPutArgsSchema.safeParse({ ...base, metadata }).success).toBe(true);
    expect(MemoryPutArgsSchema.safeParse({ ...base, metadata: { ...metadata, k32: 'v' } }).success).toBe(
      false,
    );
    expect(MemoryPutArgsSchema.safeParse({ ...base, metadata: { k: 'v'.repeat(1025) } }).success).toBe(false);
    expect(MemoryPutArgsSchema.safeParse({ ...base, metadata: { k: 1 } }).success).toBe(false);
  });

  it('supersede needs supersedesEntryId and only supersede may carry one', () => {
    const id = '00000000-0000-4000-8000-000000000000';
    expect(MemoryPutArgsSchema.safeParse({ ...base, mode: 'supersede' }).success).toBe(false);
    expect(MemoryPutArgsSchema.safeParse({ ...base, supersedesEntryId: id }).success).toBe(false);
    expect(MemoryPutArgsSchema.safeParse({ ...base, mode: 'supersede', supersedesEntryId: id }).success).toBe(
      true,
    );
  });

  it('search topK 1..50 (mcp-edge.md: maxSearchTopK 50), default 10', () => {
    const s = { namespace, query: 'x' };
    expect(MemorySearchArgsSchema.parse(s).topK).toBe(10);
    expect(MemorySearchArgsSchema.safeParse({ ...s, topK: 50 }).success).toBe(true);
    expect(MemorySearchArgsSchema.safeParse({ ...s, topK: 51 }).success).toBe(false);
    expect(MemorySearchArgsSchema.safeParse({ ...s, topK: 0 }).success).toBe(false);
  });

  it('get and delete need a UUID entryId and a well-formed namespace', () => {
    expect(MemoryGetArgsSchema.safeParse({ namespace, entryId: 'nope' }).success).toBe(false);
    expect(
      MemoryDeleteArgsSchema.safeParse({ namespace: 'app:xyz', entryId: crypto.randomUUID() }).success,
    ).toBe(false);
  });
});
