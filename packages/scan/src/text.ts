// Text handling shared by the rules: what kind of text a file is, how it is split into lines, and the
// excerpt a finding shows (short, secrets masked, invisible characters made visible). How bytes become
// text is decode.ts.

export type FileKind = 'markdown' | 'script' | 'text';

const MARKDOWN_NAME = /\.(?:md|mdx|markdown|mdc)$/i;
const SCRIPT_NAME =
  /\.(?:sh|bash|zsh|fish|ksh|ps1|psm1|psd1|bat|cmd|py|pyw|js|mjs|cjs|ts|mts|cts|jsx|tsx|rb|pl|php|lua|vbs|command|applescript|nu)$/i;
const SHELL_NAME = /\.(?:sh|bash|zsh|fish|ksh|ps1|psm1|bat|cmd|command|nu)$/i;

/** A script by its name (a shell, interpreter or Windows script extension). */
export function isScriptName(path: string): boolean {
  return SCRIPT_NAME.test(path);
}

/** Markdown is read for its code, comments and prose apart; scripts and other text as code. */
export function fileKind(path: string, text: string, executable: boolean): FileKind {
  if (MARKDOWN_NAME.test(path)) return 'markdown';
  if (SCRIPT_NAME.test(path) || executable || text.startsWith('#!')) return 'script';
  return 'text';
}

/** A shell script (every line spawns a process, so process-spawn says nothing there). */
export function isShellScript(path: string, text: string): boolean {
  if (SHELL_NAME.test(path)) return true;
  const shebang = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(text);
  if (!shebang) return false;
  const program = shebang[1] === '/usr/bin/env' ? (shebang[2] ?? '') : (shebang[1] ?? '');
  return /(?:^|\/)(?:ba|z|k|da|a|fi|c|tc|mk)?sh$|pwsh$|powershell$/.test(program);
}

/** Start offset of every line; `lineOf` finds a 1-based line by binary search. */
export class Lines {
  readonly starts: number[] = [0];

  constructor(readonly text: string) {
    for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) this.starts.push(at + 1);
  }

  get count(): number {
    return this.starts.length;
  }

  lineOf(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  /** The text of a 1-based line, without its line break. */
  line(n: number): string {
    const start = this.starts[n - 1] ?? this.text.length;
    const next = this.starts[n];
    const end = next === undefined ? this.text.length : next - 1;
    return this.text.slice(start, end).replace(/\r$/, '');
  }
}

export const EXCERPT_MAX = 120;

/** Characters a reader cannot see or that reorder text: shown as `\u{…}` in excerpts. */
const UNSEEN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|[\u{e0000}-\u{e007f}]/gu;

function visible(text: string): string {
  return text.replace(UNSEEN, (c) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`);
}

/**
 * At most EXCERPT_MAX characters of `text` around `column`: whitespace collapsed, the ranges in
 * `masks` (secrets) cut to their first 4 characters and `****`, unseen characters escaped.
 */
export function excerptOf(
  text: string,
  column = 0,
  masks: ReadonlyArray<readonly [number, number]> = [],
): string {
  let masked = '';
  let at = 0;
  let shift = 0;
  let col = column;
  for (const [start, end] of [...masks].sort((a, b) => a[0] - b[0])) {
    if (start < at || start >= text.length) continue;
    masked += text.slice(at, start);
    const kept = text.slice(start, Math.min(start + 4, end));
    masked += `${kept}****`;
    if (column > start) col = Math.max(0, column - shift - (end - start) + kept.length + 4);
    shift += end - start - kept.length - 4;
    at = end;
  }
  masked += text.slice(at);
  const escaped = visible(masked.replace(/\t/g, ' '));
  const lead = escaped.length - escaped.trimStart().length;
  const trimmed = escaped.trim().replace(/\s{2,}/g, ' ');
  if (trimmed.length <= EXCERPT_MAX) return trimmed;
  const from = Math.max(0, Math.min(col - lead - 20, trimmed.length - (EXCERPT_MAX - 1)));
  const prefix = from > 0 ? '…' : '';
  const room = EXCERPT_MAX - prefix.length - 1;
  return `${prefix}${trimmed.slice(from, from + room)}…`;
}
