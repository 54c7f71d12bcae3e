import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module shared with the bench, without type declarations.
import { corpusFigures, ENCODINGS, loadCorpus } from '../bench/corpus.mjs';
import type { Finding, Risk, ScanFile } from '../src/index.js';
import { scanVersion } from '../src/index.js';

interface Case {
  id: string;
  kind: 'malicious' | 'benign';
  /** For a case written again in another encoding (`<case>@<encoding>`). */
  encoding?: string;
  files: ScanFile[];
  expected: {
    risk: Risk;
    findings: Array<Pick<Finding, 'rule' | 'severity' | 'file' | 'line' | 'encoding'>>;
  };
}

const cases: Case[] = await loadCorpus();
const shape = (f: Finding) => ({
  rule: f.rule,
  severity: f.severity,
  file: f.file,
  line: f.line,
  ...(f.encoding ? { encoding: f.encoding } : {}),
});

describe('the malicious corpus is caught, rule by rule and line by line', () => {
  for (const c of cases.filter((x) => x.kind === 'malicious')) {
    it(c.id, async () => {
      const result = await scanVersion(c.files);
      expect(result.findings.map(shape)).toEqual(c.expected.findings);
      expect(result.risk).toBe(c.expected.risk);
    });
  }
});

describe('benign look-alikes raise nothing above low', () => {
  for (const c of cases.filter((x) => x.kind === 'benign')) {
    it(c.id, async () => {
      const result = await scanVersion(c.files);
      expect(result.findings.map(shape)).toEqual(c.expected.findings);
      expect(['none', 'low']).toContain(result.risk);
    });
  }
});

describe('the corpus as a whole', () => {
  it('covers every rule at least twice, with full recall and precision', async () => {
    const results = [];
    for (const c of cases) results.push({ ...c, result: await scanVersion(c.files) });
    const perRule = new Map<string, number>();
    for (const c of cases.filter((x) => x.kind === 'malicious')) {
      for (const f of c.expected.findings) perRule.set(f.rule, (perRule.get(f.rule) ?? 0) + 1);
    }
    const { RULES } = await import('../src/types.js');
    for (const rule of RULES) expect(perRule.get(rule) ?? 0, rule).toBeGreaterThanOrEqual(2);
    const figures = corpusFigures(results);
    expect(figures.missed).toEqual([]);
    expect(figures.unexpected).toEqual([]);
    expect(figures.maliciousCaught).toBe(figures.malicious);
    expect(figures.benignFlagged).toBe(0);
  });

  it('covers every text rule at least once in each encoding, each finding naming it', async () => {
    const { RULES } = await import('../src/types.js');
    const notText = new Set(['symlink-escape', 'binary-executable', 'archive', 'undecodable-script']);
    // Latin-1 has no bidirectional control character to write.
    const cannot: Record<string, string[]> = { latin1: ['bidi-control'] };
    for (const encoding of ENCODINGS as string[]) {
      const found = new Set<string>();
      for (const c of cases.filter((x) => x.kind === 'malicious' && x.encoding === encoding)) {
        for (const f of c.expected.findings) if (f.encoding === encoding) found.add(f.rule);
      }
      const wanted = RULES.filter((r) => !notText.has(r) && !(cannot[encoding] ?? []).includes(r));
      expect(
        wanted.filter((r) => !found.has(r)),
        encoding,
      ).toEqual([]);
    }
  });

  it('never puts a whole secret in an excerpt', async () => {
    const secrets = cases.find((c) => c.id === 'malicious/secrets') as Case;
    const result = await scanVersion(secrets.files);
    const texts = secrets.files.map((f) => Buffer.from(f.bytes).toString('utf8')).join('\n');
    const tokens = texts.match(/ghp_\w{36}|xoxb-[\w-]{40,}|[A-Za-z0-9/+]{40}(?=")/g) ?? [];
    expect(tokens.length).toBeGreaterThanOrEqual(3);
    for (const finding of result.findings) {
      for (const token of tokens) expect(finding.excerpt).not.toContain(token.slice(0, 12));
      expect(finding.excerpt.length).toBeLessThanOrEqual(120);
    }
  });
});
