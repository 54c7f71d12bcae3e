import { performance } from 'node:perf_hooks';
import { maxRisk, type Risk } from '@pkgreg/contracts';
import { ARCHIVE_LIMITS, newBudget, type Unpacked, unpack } from './archives.js';
import { type DecodedFile, decodeFile, looksBinary, type TextEncoding, type TextView } from './decode.js';
import { type FileFormat, fileFormat } from './formats.js';
import { commandFindings, payloadFindings } from './rules/commands.js';
import { allowedToolsFindings, binaryFinding, symlinkFindings } from './rules/files.js';
import { findSecrets, type SecretHit, type SecretInput, secretFinding } from './rules/secrets.js';
import { characterFindings, hiddenFindings, injectionFindings } from './rules/text-rules.js';
import { codeSegments, markdownParts, type Segment } from './segments.js';
import { excerptOf, fileKind, isScriptName, isShellScript, Lines } from './text.js';
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

/** A file as the rules take it: a version's own, or one unpacked from an archive (`a.zip!/b`). */
interface Entry {
  path: string;
  bytes: Uint8Array;
  executable: boolean;
  format: FileFormat | null;
}

/** How many leading bytes decide whether a file of a binary format holds text after all. */
const SNIFF_BYTES = 8192;

/**
 * Scans a version's files: every rule over the text of every file a shell or an agent could read
 * (decode.ts says how bytes become text), magic numbers of the rest, archives opened, links against the
 * folder. `risk` is the highest severity found, `none` when nothing is. Never throws on content.
 */
export async function scanVersion(files: ScanFile[], options: ScanOptions = {}): Promise<ScanResult> {
  const started = performance.now();
  const raw: RawFinding[] = symlinkFindings(files);
  const texts: Array<SecretInput & { encoding: TextEncoding }> = [];
  const entries: Entry[] = [];
  const budget = newBudget();
  let bytes = 0;

  // Archives are opened first: what they hold is read like the version's own files.
  const expand = async (list: ScanFile[], prefix: string, depth: number) => {
    for (const file of list) {
      if (file.linkTarget != null) continue;
      const path = `${prefix}${file.path}`;
      const format = fileFormat(path, file.bytes);
      entries.push({ path, bytes: file.bytes, executable: file.executable ?? false, format });
      if (format?.kind === 'executable') raw.push(binaryFinding(path, format.name, format.bytecode));
      if (format?.kind !== 'archive') continue;
      if (!format.opens || depth > ARCHIVE_LIMITS.depth) {
        raw.push(archiveFinding(path, format.name, null, format.opens ? 'it is nested too deep' : null));
        continue;
      }
      const unpacked = await unpack(format.opens, file.bytes, budget, path.slice(path.lastIndexOf('/') + 1));
      const name = unpacked.innerTar ? 'gzip-compressed tar archive' : format.name;
      raw.push(archiveFinding(path, name, unpacked));
      await expand(unpacked.files, `${path}!/`, depth + 1);
    }
  };
  for (const file of files) if (file.linkTarget == null) bytes += file.bytes.length;
  await expand(files, '', 1);

  const binaries: Array<{ entry: Entry; decoded: DecodedFile | null }> = [];
  const read = (entry: Entry, decoded: DecodedFile, run: boolean) => {
    const lines = new Lines(decoded.text);
    texts.push({ path: entry.path, text: decoded.text, lines, encoding: decoded.encoding });
    raw.push(...stamp(textFindings(entry, decoded, lines, run), decoded.encoding));
    if (decoded.shellView)
      raw.push(...stamp(shellFindings(entry, decoded.shellView), decoded.shellView.encoding));
  };
  for (const entry of entries) {
    // Images, fonts, archives and programs are not read as text unless their first bytes are text or
    // their name makes them a script (a polyglot named `x.sh`).
    if (entry.format && !isScriptName(entry.path) && looksBinary(entry.bytes, SNIFF_BYTES)) {
      binaries.push({ entry, decoded: null });
      continue;
    }
    const decoded = decodeFile(entry.bytes);
    if (decoded.binary) binaries.push({ entry, decoded });
    else read(entry, decoded, false);
  }
  // A script that is not text: the shell runs what nobody can read, so every line of it is read. Other
  // binary data is read where it is text. Programs and archives have their own finding; a binary
  // format's executable bit alone is a checkout's accident, not a script.
  const reasons = binaries.map(({ entry, decoded }) =>
    entry.format?.kind === 'executable' || entry.format?.kind === 'archive'
      ? null
      : scriptReason(entry, decoded, texts),
  );
  binaries.forEach(({ entry, decoded }, i) => {
    const why = reasons[i];
    if (!why) {
      if (decoded) read(entry, decoded, false);
      return;
    }
    const text = decoded ?? decodeFile(entry.bytes);
    read(entry, text, true);
    raw.push(...stamp([undecodableFinding(entry, why, text.encoding)], text.encoding));
  });

  const secrets: SecretHit[] = options.secrets === false ? [] : await findSecrets(texts);
  const masks = new Map<string, Array<[number, number]>>();
  const byPath = new Map(texts.map((t) => [t.path, t]));
  for (const hit of secrets) {
    const key = `${hit.path}\0${hit.line}`;
    masks.set(key, [...(masks.get(key) ?? []), [hit.start, hit.end]]);
    const text = byPath.get(hit.path);
    raw.push(...stamp([secretFinding(hit, text?.lines.line(hit.line) ?? '')], text?.encoding ?? 'utf-8'));
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
      ...(f.encoding ? { encoding: f.encoding } : {}),
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
      binaryFiles: binaries.length,
      archiveFiles: entries.length - files.filter((f) => f.linkTarget == null).length,
      bytes,
      ms: performance.now() - started,
    },
  };
}

/** The decoding on each finding, when it was not plain UTF-8. */
function stamp(found: RawFinding[], encoding: TextEncoding): RawFinding[] {
  if (encoding !== 'utf-8') for (const f of found) f.encoding = encoding;
  return found;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: a line holding control characters is binary.
const GARBAGE = /[\u0000-\u0008\u000e-\u001a\u001c-\u001f\u007f-\u009f\ufffd]/;

const ALNUM = /[A-Za-z0-9]/g;

/**
 * A line of binary data rather than text: a control character (C0, DEL, C1: Windows-1252 maps five bytes
 * to C1) or a replacement character, mostly non-ASCII (random bytes read as Latin-1 are half high bytes;
 * text in a binary file is mostly ASCII), or too few letters and digits to be words, or no space between
 * them (a short run of random bytes between two newlines: few hold a space).
 */
function isGarbageLine(line: string): boolean {
  if (GARBAGE.test(line) || !line.includes(' ')) return true;
  let high = 0;
  for (let i = 0; i < line.length; i += 1) if (line.charCodeAt(i) > 0x7f) high += 1;
  return high * 4 > line.length || (line.match(ALNUM)?.length ?? 0) < 8;
}

/**
 * Every rule that reads text, over a file's decoded text. In binary data only the lines that are text
 * throughout are read (random bytes make the odd command word, `>`, `|` or zero-width character), unless
 * the file is `run` as a script: a shell runs every line of it.
 */
function textFindings(entry: Entry, decoded: DecodedFile, all: Lines, run: boolean): RawFinding[] {
  const out: RawFinding[] = [];
  const { path } = entry;
  const textual = decoded.binary ? textLines(all) : all;
  const lines = run ? all : textual;
  const kind = fileKind(path, decoded.text, entry.executable);
  let code: Segment[];
  let prose: Segment[];
  if (kind === 'markdown') {
    const parts = markdownParts(lines);
    code = parts.code;
    prose = parts.prose;
    out.push(...hiddenFindings(path, parts.hidden, lines));
  } else {
    code = DATA_FILE.test(path) ? [] : codeSegments(lines);
    prose = [];
    for (let n = 1; n <= lines.count; n += 1) prose.push({ text: lines.line(n), line: n });
  }
  const ctx = {
    file: path,
    script: kind === 'script',
    shell: kind === 'script' && isShellScript(path, decoded.text),
  };
  if (!DATA_FILE.test(path)) {
    out.push(...commandFindings(code, ctx));
    out.push(...payloadFindings(code, ctx, lines.text));
  }
  out.push(...injectionFindings({ file: path, lines, segments: prose, code: kind !== 'markdown' }));
  // Even in a script, random bytes decode to the odd zero-width or bidi character; read as Latin-1 they
  // hold a soft hyphen (byte 0xAD) every 256 bytes, a byte there, not a character anyone typed.
  const chars =
    decoded.binary && decoded.encoding === 'latin1'
      ? new Lines(textual.text.replaceAll('\u00ad', '-'))
      : textual;
  out.push(...characterFindings(path, chars.text, chars, kind === 'script'));
  if (path === 'SKILL.md') out.push(...allowedToolsFindings(path, decoded.text, all));
  return out;
}

/** The lines of binary data that are text, the others blanked so line numbers hold. */
function textLines(lines: Lines): Lines {
  const kept = Array.from({ length: lines.count }, (_, i) => {
    const line = lines.line(i + 1);
    return isGarbageLine(line) ? '' : line;
  });
  return new Lines(kept.join('\n'));
}

/** What a shell reads of a UTF-16/32 file (its bytes, NULs dropped): the command rules and injection. */
function shellFindings(entry: Entry, view: TextView): RawFinding[] {
  const lines = new Lines(view.text);
  const ctx = { file: entry.path, script: true, shell: true };
  const code = codeSegments(lines);
  const all: Segment[] = [];
  for (let n = 1; n <= lines.count; n += 1) all.push({ text: lines.line(n), line: n });
  return [
    ...commandFindings(code, ctx),
    ...payloadFindings(code, ctx, view.text),
    ...injectionFindings({ file: entry.path, lines, segments: all, code: true }),
  ].filter((f) => f.rule !== 'network-access' && f.rule !== 'process-spawn');
}

/** Shells and interpreters running a file named after them: `bash x`, `python3 x`, `source x`, `sh < x`. */
const RUNNER =
  /(?:^|[\s;&|(`"'])(?:sudo\s+|exec\s+|nohup\s+|time\s+)*(?:\S*\/)?(?:sh|bash|zsh|ksh|dash|ash|fish|csh|tcsh|source|\.|python[0-9.]*|py|node|nodejs|deno(?:\s+run)?|bun(?:\s+run)?|tsx|ts-node|perl|ruby|php|lua|pwsh|powershell(?:\.exe)?|osascript|cscript|wscript|rscript|cmd(?:\.exe)?\s+\/c)\s+(?:-\S+\s+)*(?:<\s*)?["']?[^\s;&|)"'`]*$/i;
/** A file read out (`cat x`, `strings x`, `dd if=x`, …): the part of a line before its name. */
const READ_OUT =
  /(?:^|[\s;&|(`"'])(?:(?:cat|type|get-content|gc|strings|tail|head)\s+(?:-\S+\s+(?:[+\d]\S*\s+)?)*|dd\s+(?:\S+\s+)*if=)["']?[^\s;&|)"'`]*$/i;
/** ...piped to a shell, or an interpreter reading its program from stdin: the part after the name. */
const PIPED_TO_RUNNER =
  /^["']?[^|;&]*\|\s*(?:sudo\s+)?(?:\S*\/)?(?:(?:sh|bash|zsh|ksh|dash|ash|fish|pwsh|powershell|iex|invoke-expression)\b|(?:python[0-9.]*|node|perl|ruby|php)(?=\s*$|\s*[;&|)]|\s+-(?:\s|$)))/i;
/** A file's text evaluated (`eval "$(cat x)"`, `bash -c "$(< x)"`, `source <(cat x)`): before its name. */
const EVALUATED_TEXT =
  /(?:\beval|\b(?:sh|bash|zsh|ksh|dash)\s+(?:-\S+\s+)*-c|\bsource|(?:^|[;&|(]\s*)\.)\s+["']?(?:\$\(|<\(|`)\s*(?:(?:cat|strings)\s+(?:-\S+\s+)*|<\s*)["']?[^\s;&|)"'`]*$/i;

/** Why a file is a script: its name, its shebang, its executable bit, or a line of the version running it. */
function scriptReason(
  entry: Entry,
  decoded: DecodedFile | null,
  texts: ReadonlyArray<SecretInput>,
): string | null {
  if (isScriptName(entry.path)) return 'script extension';
  if ((entry.bytes[0] === 0x23 && entry.bytes[1] === 0x21) || decoded?.text.startsWith('#!'))
    return 'shebang line';
  if (entry.executable && !entry.format) return 'executable bit';
  const base = entry.path.slice(entry.path.lastIndexOf('/') + 1);
  for (const t of texts) {
    if (t.path === entry.path) continue;
    for (let at = t.text.indexOf(base); at >= 0; at = t.text.indexOf(base, at + 1)) {
      const after = t.text[at + base.length] ?? '';
      if (/[\w.-]/.test(after)) continue;
      const line = t.lines.lineOf(at);
      const start = t.lines.starts[line - 1] ?? 0;
      const before = t.text.slice(start, at);
      const end = t.text.indexOf('\n', at);
      const rest = t.text.slice(at + base.length, end < 0 ? undefined : end);
      if (
        RUNNER.test(before) ||
        EVALUATED_TEXT.test(before) ||
        (READ_OUT.test(before) && PIPED_TO_RUNNER.test(rest))
      )
        return `run by ${t.path}:${line}`;
    }
  }
  return null;
}

function undecodableFinding(entry: Entry, why: string, encoding: TextEncoding): RawFinding {
  const what = entry.format ? article(entry.format.name) : 'binary data';
  return {
    rule: 'undecodable-script',
    severity: 'medium',
    file: entry.path,
    line: null,
    text: `${entry.path}: ${what}, read as ${encoding} (${why})`,
    message: `a script (${why}) that is not text but ${what}: what a shell or interpreter runs cannot be read from the skill`,
  };
}

/**
 * An archive or compressed file: high when entries would unpack outside the folder, medium when the
 * scan did not read every file in it, low when it read them all (their findings name `archive!/file`).
 */
const article = (name: string) => `${/^(?:[aeiou]|xz|rpm|lz)/i.test(name) ? 'an' : 'a'} ${name}`;

function archiveFinding(
  path: string,
  name: string,
  unpacked: Unpacked | null,
  unopened: string | null = null,
): RawFinding {
  const base = { rule: 'archive' as const, file: path, line: null, text: `${path}: ${name}` };
  if (!unpacked) {
    return {
      ...base,
      severity: 'medium',
      message: `${article(name)}; its files are not scanned (${unopened ?? 'the scan does not open this format'})`,
    };
  }
  if (unpacked.escapes.length > 0) {
    return {
      ...base,
      severity: 'high',
      text: `${path}: ${unpacked.escapes.slice(0, 3).join(', ')}`,
      message: `${article(name)} whose entries unpack outside the folder (absolute paths, .. or links leaving it)`,
    };
  }
  if (unpacked.incomplete) {
    return {
      ...base,
      severity: 'medium',
      message: `${article(name)}; not every file in it is scanned: ${unpacked.incomplete}`,
    };
  }
  const n = unpacked.files.length;
  return {
    ...base,
    severity: 'low',
    message: `${article(name)} of ${n} file${n === 1 ? '' : 's'}, each scanned (findings inside name them ${path}!/…)`,
  };
}
