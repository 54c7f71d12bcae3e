import { RejectError, SKILL_URI_LEGACY_UNTIL } from '@pkgreg/contracts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseSkillFolderUri, parseSkillUri, sameSkillUri } from '../src/catalog/skill-uri.js';

/** The RejectError parseSkillUri throws for `uri` (it fails the test when it parses). */
function refusal(uri: string, parse: (uri: string) => unknown = parseSkillUri): RejectError {
  try {
    parse(uri);
  } catch (error) {
    if (error instanceof RejectError) return error;
    throw error;
  }
  throw new Error(`${uri} parsed`);
}

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

// SEP-2640 clients count a segment that decodes to hold `/` as outside the skill, and a skill:// URI the
// edge writes has no query or fragment: both are URI-form errors (-32602 request_schema_invalid), not a
// missing file.
describe('URI forms the edge refuses', () => {
  it.each([
    ['an encoded / joining two segments', 'skill://acme/pdf/references%2FFORMS.md'],
    ['an encoded / in lower case', 'skill://acme/1.0.0/pdf/references%2fFORMS.md'],
    ['..', 'skill://acme/pdf/references/../SKILL.md'],
    ['an encoded ..', 'skill://acme/pdf/%2e%2e/secret'],
    ['an empty segment', 'skill://acme/pdf/references//FORMS.md'],
    ['a malformed escape', 'skill://acme/pdf/a%zz.md'],
    ['NUL', 'skill://acme/pdf/a%00.md'],
  ])('%s → request_schema_invalid', (_label, uri) => {
    const error = refusal(uri);
    expect(error.reason).toBe('request_schema_invalid');
    expect(error.details).toEqual({ uri });
  });

  it.each([
    ['a query', 'skill://acme/pdf/SKILL.md?x=1'],
    ['a fragment', 'skill://acme/pdf/SKILL.md#top'],
    ['a query on a deprecated form', 'skill://@acme/pdf/SKILL.md?x=1'],
    ['an empty query', 'skill://acme/1.0.0/pdf/SKILL.md?'],
  ])('%s → request_schema_invalid saying so', (_label, uri) => {
    const error = refusal(uri);
    expect(error.reason).toBe('request_schema_invalid');
    expect(error.message).toBe('uri must not have a query or fragment');
    expect(refusal(uri, parseSkillFolderUri).message).toBe('uri must not have a query or fragment');
  });

  it('a name holding ? or # is read encoded', () => {
    expect(parseSkillUri('skill://acme/pdf/Q%3FA%23.md').path).toBe('Q?A#.md');
  });
});

// docs/decisions.md, "Skills over MCP, URIs": the deprecated forms are read until SKILL_URI_LEGACY_UNTIL
// (its last day, UTC), by the clock every other check of the edge reads (Date.now, faked here as in
// delegated-reads.test.ts).
describe('the deprecated skill://@scope/… forms end after SKILL_URI_LEGACY_UNTIL', () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const lastMoment = Date.parse(`${SKILL_URI_LEGACY_UNTIL}T23:59:59.999Z`);

  it('read on its last day, refused from the next, a URI read before included', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(lastMoment);
    const latest = 'skill://@acme/pdf/SKILL.md';
    const exact = 'skill://@acme/pdf@1.2.0/references/FORMS.md';
    expect(parseSkillUri(latest)).toEqual({ scope: 'acme', name: 'pdf', version: null, path: 'SKILL.md' });
    expect(parseSkillUri(exact)).toMatchObject({ version: '1.2.0', path: 'references/FORMS.md' });
    expect(parseSkillFolderUri('skill://@acme/pdf@1.2.0')).toMatchObject({ version: '1.2.0', path: '' });
    vi.setSystemTime(lastMoment + 1);
    for (const uri of [latest, exact]) {
      const error = refusal(uri);
      expect(error.reason).toBe('request_schema_invalid');
      expect(error.message).toContain(`read until ${SKILL_URI_LEGACY_UNTIL}`);
    }
    expect(refusal('skill://@acme/pdf', parseSkillFolderUri).reason).toBe('request_schema_invalid');
    // The current forms are not touched by the date.
    expect(parseSkillUri('skill://acme/1.2.0/pdf/SKILL.md').version).toBe('1.2.0');
  });
});

describe('sameSkillUri: one URI as SEP-2640 clients compare them', () => {
  it('reads the deprecated latest form as the current one, never an exact one or an escaped name', () => {
    expect(sameSkillUri('skill://acme/pdf/SKILL.md', 'skill://acme/pdf/SKILL.md')).toBe(true);
    expect(sameSkillUri('skill://@acme/pdf/SKILL.md', 'skill://acme/pdf/SKILL.md')).toBe(true);
    expect(sameSkillUri('skill://@acme/pdf@1.2.0/SKILL.md', 'skill://acme/1.2.0/pdf/SKILL.md')).toBe(false);
    expect(sameSkillUri('skill://acme/pdf/SKILL%2Emd', 'skill://acme/pdf/SKILL.md')).toBe(false);
    expect(sameSkillUri('not a uri', 'skill://acme/pdf/SKILL.md')).toBe(false);
  });
});
