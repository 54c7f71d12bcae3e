import { describe, expect, it } from 'vitest';
import { formatBytes, formatCount, formatRelative, safeHttpUrl } from '../../src/format.js';

describe('format', () => {
  it('compacts large counts', () => {
    expect(formatCount(999)).toBe('999');
    expect(formatCount(12840)).toBe('12.8K');
  });

  it('says how long ago', () => {
    const now = Date.parse('2026-11-21T12:00:00Z');
    expect(formatRelative('2026-11-20T12:00:00Z', now)).toBe('yesterday');
    expect(formatRelative('2026-11-21T11:59:30Z', now)).toBe('just now');
    expect(formatRelative('2026-09-21T12:00:00Z', now)).toBe('2 months ago');
  });

  it('links only http(s) URLs from package data (SKILL.md and frontmatter are untrusted)', () => {
    expect(safeHttpUrl('https://example.com/x')).toBe('https://example.com/x');
    expect(safeHttpUrl('javascript:alert(1)')).toBeNull();
    expect(safeHttpUrl('data:text/html,<script>')).toBeNull();
    expect(safeHttpUrl('not a url')).toBeNull();
    expect(safeHttpUrl(null)).toBeNull();
  });

  it('states sizes in binary units, as docs/versions.md states the limits', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1024)).toBe('1 KiB');
    expect(formatBytes(320_000)).toBe('312.5 KiB');
    expect(formatBytes(10 * 1024 * 1024)).toBe('10 MiB');
    expect(formatBytes(150 * 1024 * 1024)).toBe('150 MiB');
  });
});
