import { RejectError } from '@pkgreg/contracts';
import { describe, expect, it } from 'vitest';
import { parseSkillUri } from '../src/catalog/skill-uri.js';

// parseSkillUri keeps each URI's parts (reads ask for the same few again and again): what it hands out
// must be what a fresh parse gives, and no caller may change it for the next read.
describe('parseSkillUri', () => {
  it('gives the same parts for a URI read again, frozen', () => {
    const uri = 'skill://acme/code-review/references/a%20b.md';
    const first = parseSkillUri(uri);
    expect(first).toEqual({ scope: 'acme', name: 'code-review', version: null, path: 'references/a b.md' });
    expect(parseSkillUri(`${uri}`)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => {
      (first as { path: string }).path = 'SKILL.md';
    }).toThrow(TypeError);
    expect(parseSkillUri('skill://acme/1.2.0/code-review/SKILL.md')).toEqual({
      scope: 'acme',
      name: 'code-review',
      version: '1.2.0',
      path: 'SKILL.md',
    });
  });

  it('refuses a bad URI every time, and parses right after the memo has started over', () => {
    for (let i = 0; i < 2; i++) {
      expect(() => parseSkillUri('skill://acme/code-review/../secret')).toThrow(RejectError);
    }
    for (let i = 0; i < 1500; i++) {
      expect(parseSkillUri(`skill://acme/skill-${i}/SKILL.md`).name).toBe(`skill-${i}`);
    }
    // A long URI is parsed as any other, and again each time (it is not kept).
    const long = `skill://acme/code-review/references/${'a'.repeat(2000)}.md`;
    expect(parseSkillUri(long)).not.toBe(parseSkillUri(long));
    expect(parseSkillUri(long).path).toBe(`references/${'a'.repeat(2000)}.md`);
    expect(parseSkillUri('skill://acme/skill-7/SKILL.md')).toEqual({
      scope: 'acme',
      name: 'skill-7',
      version: null,
      path: 'SKILL.md',
    });
  });
});
