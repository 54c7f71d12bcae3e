import { performance } from 'node:perf_hooks';
import { maxRisk, type Risk } from '@pkgreg/contracts';
import { commandFindings, payloadFindings } from './rules/commands.js';
import { allowedToolsFindings, binaryFinding, executableFormat, symlinkFindings } from './rules/files.js';
import { findSecrets, type SecretHit, type SecretInput, secretFinding } from './rules/secrets.js';
import { characterFindings, hiddenFindings, injectionFindings } from './rules/text-rules.js';
import { codeSegments, markdownParts, type Segment } from './segments.js';
import { decodeText, excerptOf, fileKind, isShellScript, Lines } from './text.js';
import type { Finding, RawFinding, RuleId, ScanFile, ScanResult } from './types.js';

/** Rules whose presence in a file raises that file's network and process findings to medium. */
const RAISING: ReadonlySet<RuleId> = new Set([
  'remote-code-execution',
  'executable-download',
  'encoded-execution',
  'encoded-blob',
  'secret',
  'secret-exfiltration',
]);

/** Data formats nothing executes: the command rules skip them (the text rules still read them). */
const DATA_FILE = /\.(?:xsd|xml|dtd|xsl|xslt|csv|tsv|svg|lock)$/i;

const SEVERITY_RANK = { low: 1, medium: 2, high: 3 } as const;

export interface ScanOptions {
  /** Run secretlint (default true). */
  secrets?: boolean;
}

/**
 * Scans a version's files: every rule over every text file, magic numbers of binary ones, links
 * against the folder. `risk` is the highest severity found, `none` when nothing is. Never throws on
 * content: a file the rules cannot read is binary to them.
 */
export async function scanVersion(files: ScanFile[], options: ScanOptions = {}): Promise<ScanResult> {
  const started = performance.now();
  const raw: RawFinding[] = symlinkFindings(files);
  const texts: SecretInput[] = [];
  let bytes = 0;
  let binaryFiles = 0;
  for (const file of files) {
    if (file.linkTarget != null) continue;
    bytes += file.bytes.length;
    const text = decodeText(file.bytes);
    if (text === null) {
      binaryFiles += 1;
      const format = executableFormat(file.bytes);
      if (format) raw.push(binaryFinding(file.path, format));
      continue;
    }
    const lines = new Lines(text);
    texts.push({ path: file.path, text, lines });
    const kind = fileKind(file.path, text, file.executable ?? false);
    let code: Segment[];
    let prose: Segment[];
    if (kind === 'markdown') {
      const parts = markdownParts(lines);
      code = parts.code;
      prose = parts.prose;
      raw.push(...hiddenFindings(file.path, parts.hidden, lines));
    } else {
      code = DATA_FILE.test(file.path) ? [] : codeSegments(lines);
      prose = [];
      for (let n = 1; n <= lines.count; n += 1) prose.push({ text: lines.line(n), line: n });
    }
    const ctx = {
      file: file.path,
      script: kind === 'script',
      shell: kind === 'script' && isShellScript(file.path, text),
    };
    if (!DATA_FILE.test(file.path)) {
      raw.push(...commandFindings(code, ctx));
      raw.push(...payloadFindings(code, ctx, text));
    }
    raw.push(...injectionFindings({ file: file.path, lines, segments: prose, code: kind !== 'markdown' }));
    raw.push(...characterFindings(file.path, text, lines, kind === 'script'));
    if (file.path === 'SKILL.md') raw.push(...allowedToolsFindings(file.path, text, lines));
  }

  const secrets: SecretHit[] = options.secrets === false ? [] : await findSecrets(texts);
  const masks = new Map<string, Array<[number, number]>>();
  const byPath = new Map(texts.map((t) => [t.path, t]));
  for (const hit of secrets) {
    const key = `${hit.path}\0${hit.line}`;
    masks.set(key, [...(masks.get(key) ?? []), [hit.start, hit.end]]);
    raw.push(secretFinding(hit, byPath.get(hit.path)?.lines.line(hit.line) ?? ''));
  }

  const raising = new Set(raw.filter((f) => RAISING.has(f.rule)).map((f) => f.file));
  // One finding per rule, file and line: the most severe.
  const strongest = new Map<string, RawFinding>();
  for (const f of raw) {
    const key = `${f.rule}\0${f.file}\0${f.line}`;
    const held = strongest.get(key);
    if (!held || SEVERITY_RANK[f.severity] > SEVERITY_RANK[held.severity]) strongest.set(key, f);
  }
  const findings: Finding[] = [];
  let risk: Risk = 'none';
  for (const f of strongest.values()) {
    const raised =
      (f.rule === 'network-access' || f.rule === 'process-spawn') && raising.has(f.file)
        ? 'medium'
        : f.severity;
    const lineMasks = f.line === null ? [] : (masks.get(`${f.file}\0${f.line}`) ?? []);
    findings.push({
      rule: f.rule,
      severity: raised,
      file: f.file,
      line: f.line,
      excerpt: excerptOf(f.text, f.column ?? 0, lineMasks),
      message: f.message,
    });
    risk = maxRisk(risk, raised);
  }
  findings.sort(
    (a, b) =>
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
      (a.line ?? 0) - (b.line ?? 0) ||
      (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0),
  );
  return {
    risk,
    findings,
    stats: {
      files: files.length,
      textFiles: texts.length,
      binaryFiles,
      bytes,
      ms: performance.now() - started,
    },
  };
}
