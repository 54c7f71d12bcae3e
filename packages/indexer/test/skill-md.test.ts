import { execFileSync } from 'node:child_process';
import { type DerivedPackage, gitBlobSha } from '@pkgreg/registry';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { type Analysis, analyzeSkill, normalizeVersion, type RepoMeta } from '../src/index.js';
import { skillMd } from '../src/testing.js';

// decisions.md: Registry / Indexing, and the agentskills.io SKILL.md rules.

const repo: RepoMeta = {
  owner: 'Acme-Labs',
  name: 'skills',
  defaultBranch: 'main',
  stars: 42,
  license: 'Apache-2.0',
  homepageUrl: 'https://acme.example',
  repoUrl: 'https://github.com/Acme-Labs/skills',
};

function analyze(raw: string, options: { dir?: string; dirFiles?: string[] } = {}): Analysis {
  return analyzeSkill({
    raw,
    sha: gitBlobSha(raw),
    dir: options.dir ?? 'skills/pdf-tools',
    dirFiles: options.dirFiles ?? ['SKILL.md'],
    repo,
    scope: 'acme-labs',
    sourceRepo: 'Acme-Labs/skills',
  });
}

function ok(result: Analysis): DerivedPackage {
  if (!result.ok) throw new Error(`expected ok, got: ${result.reason}`);
  return result.pkg;
}

function reason(result: Analysis): string {
  if (result.ok) throw new Error('expected a rejection');
  return result.reason;
}

const base = ['name: pdf-tools', 'description: Extract text and tables from PDF files.'];

describe('agentskills.io rules: name', () => {
  it('uses frontmatter name when present', () => {
    expect(ok(analyze(skillMd(base))).name).toBe('pdf-tools');
  });

  it('falls back to the directory name when name is missing', () => {
    expect(ok(analyze(skillMd(['description: d'])))).toMatchObject({ name: 'pdf-tools' });
  });

  it('rejects a missing name when the directory name is not valid', () => {
    expect(reason(analyze(skillMd(['description: d']), { dir: 'skills/PDF_Tools' }))).toMatch(
      /name is missing and the directory name "PDF_Tools" is not a valid name/,
    );
  });

  it.each([
    ['PDF-Tools', /invalid name/],
    ['-pdf', /invalid name/],
    ['pdf-', /invalid name/],
    ['pdf--tools', /invalid name/],
    ['pdf_tools', /invalid name/],
    ['a'.repeat(65), /invalid name/],
  ])('rejects name %s', (name, pattern) => {
    expect(reason(analyze(skillMd([`name: "${name}"`, 'description: d']), { dir: name }))).toMatch(pattern);
  });

  it('accepts a 64-character name', () => {
    const name = 'a'.repeat(64);
    expect(ok(analyze(skillMd([`name: ${name}`, 'description: d']), { dir: `x/${name}` })).name).toBe(name);
  });

  it('indexes a name that does not match its directory, with a warning (agents load by name)', () => {
    const pkg = ok(analyze(skillMd(['name: other', 'description: d'])));
    expect(pkg.name).toBe('other');
    expect(pkg.warnings).toEqual([
      'name "other" does not match its directory "pdf-tools"; it is installed as "other"',
    ]);
  });

  it('does not require the name to match at the repository root (the checkout name is not the author’s)', () => {
    expect(ok(analyze(skillMd(['name: root-skill', 'description: d']), { dir: '' })).sourcePath).toBe('');
  });

  it('rejects a non-string name', () => {
    expect(reason(analyze(skillMd(['name: 12', 'description: d'])))).toBe('name must be a string');
  });
});

describe('agentskills.io rules: description and frontmatter', () => {
  it('requires a description', () => {
    expect(reason(analyze(skillMd(['name: pdf-tools'])))).toBe('description is missing');
  });

  it('rejects an empty description', () => {
    expect(reason(analyze(skillMd(['name: pdf-tools', 'description: "  "'])))).toBe('description is empty');
  });

  it('indexes a description over 1024 characters with a warning (agents load such skills)', () => {
    const exact = ok(analyze(skillMd(['name: pdf-tools', `description: ${'d'.repeat(1024)}`])));
    expect(exact.description).toHaveLength(1024);
    expect(exact.warnings).toEqual([]);
    const long = ok(analyze(skillMd(['name: pdf-tools', `description: ${'d'.repeat(1025)}`])));
    expect(long.description).toHaveLength(1025);
    expect(long.warnings).toEqual([
      expect.stringMatching(/^description is longer than 1024 characters \(1025\)/),
    ]);
  });

  it('rejects a file without frontmatter', () => {
    expect(reason(analyze('# Just markdown\n'))).toMatch(/missing YAML frontmatter/);
  });

  it('rejects invalid YAML', () => {
    expect(reason(analyze('---\nname: [unclosed\n---\nbody\n'))).toMatch(/frontmatter is not valid YAML/);
  });

  it('rejects a file with NUL bytes (it could not be stored)', () => {
    expect(reason(analyze(skillMd(base, 'binary\u0000junk\n')))).toMatch(/NUL bytes/);
    expect(reason(analyze(skillMd(['name: pdf-tools', 'description: "a\\0b"'])))).toBe(
      'frontmatter contains a NUL character',
    );
    // A YAML escape can also make a lone surrogate, which jsonb refuses; a pair (an emoji) is fine.
    expect(reason(analyze(skillMd(['name: pdf-tools', 'description: "lone \\uD800 half"'])))).toBe(
      'frontmatter contains a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape)',
    );
    expect(reason(analyze(skillMd([...base, 'metadata:', '  "k\\uDC00": v'])))).toMatch(/lone UTF-16/);
    expect(ok(analyze(skillMd(['name: pdf-tools', 'description: "emoji \\uD83D\\uDE00"']))).description).toBe(
      'emoji \u{1F600}',
    );
    // Nesting is bounded (walked without recursion, and the JSON round trip after it recurses).
    const deep = `${'['.repeat(40)}x${']'.repeat(40)}`;
    expect(reason(analyze(skillMd([...base, `metadata: {deep: ${deep}}`])))).toBe(
      'frontmatter nests deeper than 32 levels',
    );
    // The literal text \u0000 (a backslash, not NUL) is fine.
    expect(ok(analyze(skillMd(['name: pdf-tools', "description: 'see \\u0000'"]))).description).toBe(
      'see \\u0000',
    );
  });

  it('rejects frontmatter that is not a mapping', () => {
    expect(reason(analyze('---\n- a\n- b\n---\n'))).toBe('frontmatter must be a YAML mapping');
  });

  it('indexes compatibility over 500 characters with a warning', () => {
    const pkg = ok(analyze(skillMd([...base, `compatibility: ${'c'.repeat(501)}`])));
    expect(pkg.compatibility).toEqual(['c'.repeat(501)]);
    expect(pkg.warnings).toEqual([expect.stringMatching(/compatibility is longer than 500/)]);
  });

  it('warns about top-level keys the specification does not define, and only about those', () => {
    const known = ok(analyze(skillMd([...base, 'license: MIT', 'version: 1.0.0', 'allowed-tools: Read'])));
    expect(known.warnings).toEqual([]);
    const pkg = ok(analyze(skillMd([...base, 'x-custom: 1', 'model: opus'])));
    expect(pkg.warnings).toEqual([expect.stringMatching(/^unknown frontmatter keys "x-custom", "model"/)]);
  });

  it('rejects metadata that is not a mapping', () => {
    expect(reason(analyze(skillMd([...base, 'metadata: just-a-string'])))).toBe('metadata must be a mapping');
  });

  it('keeps unknown keys in the stored frontmatter', () => {
    const pkg = ok(analyze(skillMd([...base, 'x-custom: 1', 'nested:', '  deep: [a, b]'])));
    expect(pkg.frontmatter).toEqual({
      name: 'pdf-tools',
      description: 'Extract text and tables from PDF files.',
      'x-custom': 1,
      nested: { deep: ['a', 'b'] },
    });
  });

  it('accepts CRLF line endings and a BOM', () => {
    const raw = `\uFEFF---\r\nname: pdf-tools\r\ndescription: d\r\n---\r\nbody\r\n`;
    expect(ok(analyze(raw)).name).toBe('pdf-tools');
  });
});

describe('field mapping (decisions.md: Registry / Indexing)', () => {
  it('kind comes from metadata.kind, default skill, validated against the four kinds', () => {
    expect(ok(analyze(skillMd(base))).kind).toBe('skill');
    for (const kind of ['skill', 'composite', 'workflow', 'app']) {
      expect(ok(analyze(skillMd([...base, 'metadata:', `  kind: ${kind}`]))).kind).toBe(kind);
    }
    expect(reason(analyze(skillMd([...base, 'metadata:', '  kind: plugin'])))).toMatch(
      /metadata.kind "plugin" is not one of skill, composite, workflow, app/,
    );
  });

  it('allowed-tools: space-separated string (parenthesised arguments kept whole) or list', () => {
    expect(
      ok(analyze(skillMd([...base, 'allowed-tools: Read Grep Bash(git status:*)']))).allowedTools,
    ).toEqual(['Read', 'Grep', 'Bash(git status:*)']);
    expect(ok(analyze(skillMd([...base, 'allowed-tools: [Read, Write]']))).allowedTools).toEqual([
      'Read',
      'Write',
    ]);
    expect(ok(analyze(skillMd(base))).allowedTools).toEqual([]);
    expect(reason(analyze(skillMd([...base, 'allowed-tools: {a: 1}'])))).toMatch(/allowed-tools must be/);
  });

  it('compatibility: comma-separated string or list', () => {
    expect(
      ok(analyze(skillMd([...base, 'compatibility: claude-code, codex ,cursor']))).compatibility,
    ).toEqual(['claude-code', 'codex', 'cursor']);
    expect(ok(analyze(skillMd([...base, 'compatibility: [claude-code, codex]']))).compatibility).toEqual([
      'claude-code',
      'codex',
    ]);
  });

  it('category, tags, author, language, version from metadata, else top level', () => {
    const fromMeta = ok(
      analyze(
        skillMd([
          ...base,
          'metadata:',
          '  category: documents',
          '  tags: pdf, tables extraction',
          '  author: Jane Doe',
          '  language: en',
          '  version: 1.2.3',
        ]),
      ),
    );
    expect(fromMeta).toMatchObject({
      category: 'documents',
      tags: ['pdf', 'tables', 'extraction'],
      author: 'Jane Doe',
      language: 'en',
      declaredVersion: '1.2.3',
    });
    const topLevel = ok(
      analyze(
        skillMd([...base, 'category: docs', 'tags: [pdf, ocr]', 'author: {name: Bob}', 'version: "2.0"']),
      ),
    );
    expect(topLevel).toMatchObject({
      category: 'docs',
      tags: ['pdf', 'ocr'],
      author: 'Bob',
      declaredVersion: '2.0.0',
    });
    const none = ok(analyze(skillMd(base)));
    expect(none).toMatchObject({
      category: null,
      tags: [],
      author: null,
      language: null,
      declaredVersion: null,
    });
  });

  it('version is semver or null', () => {
    expect(normalizeVersion('1.0.0-beta.2')).toBe('1.0.0-beta.2');
    expect(normalizeVersion('v3')).toBe('3.0.0');
    expect(normalizeVersion('1.2')).toBe('1.2.0');
    expect(normalizeVersion('latest')).toBeNull();
    expect(normalizeVersion('1.2.3.4')).toBeNull();
    expect(normalizeVersion(undefined)).toBeNull();
  });

  it('license: the frontmatter as an SPDX expression, corrected when it names one loosely', () => {
    expect(ok(analyze(skillMd([...base, 'license: MIT']))).declaredLicense).toBe('MIT');
    expect(ok(analyze(skillMd([...base, 'license: Apache 2']))).declaredLicense).toBe('Apache-2.0');
    expect(ok(analyze(skillMd([...base, 'license: MIT OR Apache-2.0']))).declaredLicense).toBe(
      'MIT OR Apache-2.0',
    );
    // Free text names no license (spdx-correct alone would guess MPL-2.0 here): the files decide.
    const prose = ok(analyze(skillMd([...base, 'license: Proprietary. LICENSE.txt has complete terms'])));
    expect(prose.declaredLicense).toBeNull();
    expect(prose.frontmatter.license).toBe('Proprietary. LICENSE.txt has complete terms');
    expect(ok(analyze(skillMd([...base, 'license: UNLICENSED']))).declaredLicense).toBeNull();
    expect(ok(analyze(skillMd(base))).declaredLicense).toBeNull();
  });

  it('repository fields come from the repository', () => {
    const pkg = ok(analyze(skillMd(base)));
    expect(pkg).toMatchObject({
      scope: 'acme-labs',
      sourceRepo: 'Acme-Labs/skills',
      sourcePath: 'skills/pdf-tools',
      sourceRef: 'main',
      repoOwner: 'Acme-Labs',
      repoStars: 42,
      repoUrl: 'https://github.com/Acme-Labs/skills',
      homepageUrl: 'https://acme.example',
    });
  });

  it('lastCommitSha is the git blob SHA-1 of SKILL.md', () => {
    const raw = skillMd(base);
    expect(ok(analyze(raw)).lastCommitSha).toBe(gitBlobSha(raw));
    // The well-known blob id of "hello\n".
    expect(gitBlobSha('hello\n')).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
  });

  it('tokenCount is the o200k_base token count of the whole file', () => {
    const raw = skillMd(base, '# PDF tools\n\nUse pdftotext -layout for tables; keep page numbers.\n');
    const pkg = ok(analyze(raw));
    expect(pkg.tokenCount).toBe(encode(raw).length);
    expect(pkg.tokenCount).toBeGreaterThan(20);
  });

  it('the tokenizer is loaded by the first count, not by importing the indexer', () => {
    // A process that imports the indexer and never counts (the API, the operator commands) must not
    // load its tables: a child process records every module it resolves.
    const script = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.push(r.url); return r; } });
      const indexer = await import(${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)});
      const loaded = () => seen.some((url) => url.includes('gpt-tokenizer'));
      const before = loaded();
      const analysis = indexer.analyzeSkill(${JSON.stringify({ raw: skillMd(base), sha: 'a'.repeat(40), dir: 'skills/pdf-tools', dirFiles: ['SKILL.md'], repo, scope: 'acme-labs', sourceRepo: 'Acme-Labs/skills' })});
      if (!analysis.ok) throw new Error(analysis.reason);
      console.log(JSON.stringify({ before, after: loaded() }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ before: false, after: true });
  });

  it('fileCount is the number of files in the directory', () => {
    expect(ok(analyze(skillMd(base), { dirFiles: ['SKILL.md', 'a.md', 'x/y.py'] })).fileCount).toBe(3);
  });

  it('progressiveDisclosure: references/, scripts/ or assets/ present', () => {
    for (const dirFile of ['references/api.md', 'scripts/run.sh', 'assets/logo.png']) {
      expect(ok(analyze(skillMd(base), { dirFiles: ['SKILL.md', dirFile] })).progressiveDisclosure).toBe(
        true,
      );
    }
  });

  it('progressiveDisclosure: a linked file beyond SKILL.md in the directory', () => {
    const linked = skillMd(
      base,
      'See [the guide](./guide.md#setup) and [site](https://x.example/guide.md).\n',
    );
    expect(ok(analyze(linked, { dirFiles: ['SKILL.md', 'guide.md'] })).progressiveDisclosure).toBe(true);
    // A link to a file that is not there, or an unlinked file, is not disclosure.
    expect(ok(analyze(linked, { dirFiles: ['SKILL.md', 'other.md'] })).progressiveDisclosure).toBe(false);
    const external = skillMd(base, 'See [site](https://x.example/guide.md).\n');
    expect(ok(analyze(external, { dirFiles: ['SKILL.md', 'guide.md'] })).progressiveDisclosure).toBe(false);
    expect(ok(analyze(skillMd(base), { dirFiles: ['SKILL.md'] })).progressiveDisclosure).toBe(false);
  });

  it('status: metadata.status deprecated marks the package deprecated', () => {
    expect(ok(analyze(skillMd([...base, 'metadata:', '  status: deprecated']))).status).toBe('deprecated');
    expect(ok(analyze(skillMd(base))).status).toBe('active');
  });
});
