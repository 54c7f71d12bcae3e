import { describe, expect, it } from 'vitest';
import { frontmatterRows, frontmatterText, stripFrontmatter } from '../../src/frontmatter.js';

// Issue 7: the frontmatter shows as a table from the detail's `frontmatter`; the block is cut from the body.
describe('stripFrontmatter', () => {
  it('cuts a leading --- block', () => {
    expect(stripFrontmatter('---\nname: a\ndescription: b\n---\n# Title\n')).toBe('# Title\n');
  });

  it('handles CRLF, a BOM and an empty block', () => {
    expect(stripFrontmatter('\uFEFF---\r\nname: a\r\n---\r\nBody')).toBe('Body');
    expect(stripFrontmatter('---\n---\nBody')).toBe('Body');
  });

  it('leaves a body without frontmatter, and a later horizontal rule, alone', () => {
    expect(stripFrontmatter('# Title\n\n---\n\ntext')).toBe('# Title\n\n---\n\ntext');
    expect(stripFrontmatter('---\nname: a\n---\nintro\n\n---\nmore')).toBe('intro\n\n---\nmore');
  });

  it('does not cut an unterminated block', () => {
    const text = '---\nname: a\n# no closing fence';
    expect(stripFrontmatter(text)).toBe(text);
  });
});

describe('frontmatterRows', () => {
  it('renders scalars as text, string lists as chips and nested objects as JSON', () => {
    const rows = frontmatterRows({
      name: 'code-review',
      'allowed-tools': ['Read', 'Grep'],
      metadata: { version: '2.1.0' },
      draft: false,
      empty: null,
    });
    expect(rows).toEqual([
      { key: 'name', value: 'code-review', list: null },
      { key: 'allowed-tools', value: 'Read, Grep', list: ['Read', 'Grep'] },
      { key: 'metadata', value: '{\n  "version": "2.1.0"\n}', list: null },
      { key: 'draft', value: 'false', list: null },
      { key: 'empty', value: '', list: null },
    ]);
  });
});

describe('frontmatterRows order', () => {
  it('follows the SKILL.md block, not the key order jsonb hands back', () => {
    const markdown =
      '---\nname: x\ndescription: "y: z"\nlicense: MIT\nallowed-tools:\n  - Read\nmetadata:\n  a: b\n---\nbody';
    const fromJsonb = {
      name: 'x',
      license: 'MIT',
      metadata: { a: 'b' },
      description: 'y: z',
      'allowed-tools': ['Read'],
    };
    expect(frontmatterRows(fromJsonb, markdown).map((r) => r.key)).toEqual([
      'name',
      'description',
      'license',
      'allowed-tools',
      'metadata',
    ]);
  });

  it('puts keys it cannot find in the block last, keeping their order', () => {
    expect(frontmatterRows({ b: 1, a: 2, name: 'n' }, '---\nname: n\n---\n').map((r) => r.key)).toEqual([
      'name',
      'b',
      'a',
    ]);
  });
});

describe('frontmatterText', () => {
  it('gives the YAML between the fences as written (an older version has no parsed object)', () => {
    expect(frontmatterText('---\nname: a\nversion: 1.0.0\n---\n# Body\n')).toBe('name: a\nversion: 1.0.0');
    expect(frontmatterText('\uFEFF---\r\nname: a\r\n...\r\nbody')).toBe('name: a');
    expect(frontmatterText('---\n---\n')).toBe('');
  });

  it('is null without a block', () => {
    expect(frontmatterText('# Just a body\n\n---\n')).toBeNull();
    expect(frontmatterText('---\nname: a\n')).toBeNull();
  });
});
