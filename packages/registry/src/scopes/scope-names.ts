import { PACKAGE_SEGMENT_PATTERN } from '@pkgreg/contracts';

// The scope an owner login or a directory name stands for: the registry's scope/name rule.

/** Turns an owner login or directory name into a valid scope: lowercased, other characters to `-`. */
export function sanitizeScope(value: string): string | null {
  const cleaned = value
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return PACKAGE_SEGMENT_PATTERN.test(cleaned) ? cleaned : null;
}
