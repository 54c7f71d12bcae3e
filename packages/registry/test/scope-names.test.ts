import { describe, expect, it } from 'vitest';
import { sanitizeScope } from '../src/index.js';

// The scope an owner login names (docs/publishing.md).

describe('scope names', () => {
  it('scope sanitizing follows the name rule', () => {
    expect(sanitizeScope('Acme_Labs')).toBe('acme-labs');
    expect(sanitizeScope('--Weird..Owner--')).toBe('weird-owner');
    expect(sanitizeScope('___')).toBeNull();
  });
});
