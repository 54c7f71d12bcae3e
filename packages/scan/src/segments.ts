import type { Lines } from './text.js';

// A file as the command rules read it: logical lines of code (continuations joined), each with the
// physical line it starts on. Markdown contributes its fenced code and its inline code spans; prose is
// left to the text rules (a README may say in prose that `curl | sh` is dangerous).

export interface Segment {
  text: string;
  /** 1-based physical line where the segment starts. */
  line: number;
}

/**
 * Where a line's continuation mark starts: a trailing `\\` (sh, python; not `\\\\`), backtick
 * (PowerShell) or ` ^` (cmd), trailing blanks allowed; -1 when the line does not continue. A scan from
 * the end, not a regular expression: `\s*$` tried at every position was the scan's hottest step.
 */
function continuationAt(text: string): number {
  let end = text.length;
  while (
    end > 0 &&
    (text.charCodeAt(end - 1) === 32 || text.charCodeAt(end - 1) === 9 || text.charCodeAt(end - 1) === 13)
  )
    end -= 1;
  if (end === 0) return -1;
  const last = text[end - 1];
  if (last === '`') return end - 1;
  if (last === '\\') return text[end - 2] === '\\' ? -1 : end - 1;
  if (last === '^' && end >= 2 && /\s/.test(text[end - 2] as string)) return end - 1;
  return -1;
}

function joinContinuations(lines: Array<{ text: string; line: number }>): Segment[] {
  const out: Segment[] = [];
  let current: Segment | null = null;
  for (const { text, line } of lines) {
    const at = continuationAt(text);
    const continued = at >= 0;
    const body = continued ? `${text.slice(0, at)} ` : text;
    if (current) current.text += body;
    else current = { text: body, line };
    if (!continued) {
      out.push(current);
      current = null;
    }
  }
  if (current) out.push(current);
  return out;
}

/** A comment line of sh/python/ruby/PowerShell, JS/TS, or a batch file; shebangs included. */
const COMMENT_LINE = /^\s*(?:#|\/\/|::|rem\s|\/\*|\*(?:\s|$))/i;

/** Every logical line of a script or other text file, comment lines left out. */
export function codeSegments(lines: Lines): Segment[] {
  const physical: Array<{ text: string; line: number }> = [];
  for (let n = 1; n <= lines.count; n += 1) {
    const text = lines.line(n);
    if (text.trim() === '' || COMMENT_LINE.test(text)) continue;
    physical.push({ text, line: n });
  }
  return joinContinuations(physical);
}

export interface MarkdownParts {
  /** Lines of fenced code blocks (continuations joined) and inline code spans. */
  code: Segment[];
  /** Lines outside fenced code, inline code spans blanked (what a reader reads as prose). */
  prose: Segment[];
  /** HTML comments and other hidden markup outside code, with the line each starts on. */
  hidden: Array<Segment & { kind: 'comment' | 'hidden-element' | 'link-comment' }>;
  /** 1-based lines inside fenced code blocks. */
  fenced: Set<number>;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const INLINE_CODE = /(`+)([^`\n]+?)\1/g;
/** Prose that warns about what its code span shows: the span is an example, not an instruction. */
const WARNING_PROSE =
  /\b(?:never|don'?t|do not|avoid|dangerous|unsafe|insecure|risky|instead of|rather than|beware|warning|attack(?:er|s)?|malicious|such as|e\.g\.|for example|is flagged|flags?)\b/i;

const HTML_COMMENT = /<!--([\s\S]*?)-->/g;
const HIDDEN_ELEMENT =
  /<(div|span|p|section|details)\b[^>]*?(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d])|\shidden(?:\s|>|=)|aria-hidden\s*=\s*["']?true)[^>]*>([\s\S]*?)<\/\1>/gi;
/** Markdown's comment idioms: `[//]: # (text)`, `[comment]: <> (text)`. */
const LINK_COMMENT = /^\s{0,3}\[[^\]]*\]:\s*(?:#|<>)\s*(?:\((.*)\)|"(.*)"|'(.*)')\s*$/;

export function markdownParts(lines: Lines): MarkdownParts {
  const code: Array<{ text: string; line: number }> = [];
  const prose: Segment[] = [];
  const hidden: MarkdownParts['hidden'] = [];
  const fenced = new Set<number>();
  let fence: string | null = null;
  const outside: string[] = [];
  for (let n = 1; n <= lines.count; n += 1) {
    const text = lines.line(n);
    const marker = text.includes('``') || text.includes('~~') ? FENCE.exec(text) : null;
    if (fence !== null) {
      if (marker && marker[1]?.[0] === fence[0] && (marker[1]?.length ?? 0) >= fence.length) {
        fence = null;
        code.push({ text: '', line: n });
      } else {
        fenced.add(n);
        code.push({ text, line: n });
      }
      outside.push('');
      continue;
    }
    if (marker) {
      fence = marker[1] as string;
      outside.push('');
      continue;
    }
    outside.push(text);
    let blanked = text;
    if (text.includes('`')) {
      // The warning may open the sentence on the paragraph's previous line.
      const warns = WARNING_PROSE.test(text) || WARNING_PROSE.test(outside[outside.length - 2] ?? '');
      for (const match of text.matchAll(INLINE_CODE)) {
        blanked = blanked.replace(match[0], ' '.repeat(match[0].length));
        if (!warns) code.push({ text: match[2] as string, line: n });
      }
    }
    const comment = text.includes(']:') ? LINK_COMMENT.exec(text) : null;
    if (comment) {
      hidden.push({ kind: 'link-comment', text: comment[1] ?? comment[2] ?? comment[3] ?? '', line: n });
    }
    prose.push({ text: blanked, line: n });
  }
  // Comments and hidden elements may span lines: matched over the text outside code.
  const body = outside.join('\n');
  const starts: number[] = [0];
  for (let at = body.indexOf('\n'); at >= 0; at = body.indexOf('\n', at + 1)) starts.push(at + 1);
  const lineAt = (offset: number) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  if (body.includes('<!--')) {
    for (const match of body.matchAll(HTML_COMMENT)) {
      // The line of the comment's first words (an opening `<!--` may stand alone on its line).
      const lead = (match[1] as string).length - (match[1] as string).trimStart().length;
      hidden.push({ kind: 'comment', text: match[1] as string, line: lineAt(match.index + 4 + lead) });
    }
  }
  if (body.includes('<')) {
    for (const match of body.matchAll(HIDDEN_ELEMENT)) {
      hidden.push({ kind: 'hidden-element', text: match[2] as string, line: lineAt(match.index) });
    }
  }
  return { code: joinContinuations(code).filter((s) => s.text.trim() !== ''), prose, hidden, fenced };
}
