import type { Segment } from '../segments.js';
import type { Lines } from '../text.js';
import type { RawFinding } from '../types.js';

// Rules on what the agent reads: phrasing aimed at the agent (prompt injection), instructions hidden
// from a human reader (HTML comments, hidden elements, zero-width or tag characters), and bidirectional
// controls that make code read differently from how it runs (Trojan Source).

/** Zero-width and invisible formatting characters (not the tag block: see TAGS). */
// biome-ignore lint/suspicious/noMisleadingCharacterClass: each joiner is to be found alone.
const INVISIBLE = /[\u200b\u200c\u200d\u2060-\u2064\u180e\ufeff\u00ad\u034f\u115f\u1160\u3164\uffa0]/gu;
const INVISIBLE_ONE = new RegExp(INVISIBLE.source, 'u');
/** Unicode tag characters: invisible copies of ASCII (the "ASCII smuggling" of prompts). */
const TAGS = /[\u{e0000}-\u{e007f}]+/gu;
/** Embeddings, overrides and isolates; LRM/RLM/ALM marks alone are ordinary in right-to-left text. */
const BIDI = /[\u202a-\u202e\u2066-\u2069]/u;

const EMOJI = /\p{Extended_Pictographic}|\u{fe0f}/u;
const JOINING_SCRIPT =
  /[\p{Script=Arabic}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Malayalam}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Tamil}\p{Script=Sinhala}\p{Script=Mongolian}]/u;

/** For matching phrases: invisible characters out, compatibility forms folded, whitespace collapsed. */
export function plainText(text: string): string {
  return text.normalize('NFKC').replace(INVISIBLE, '').replace(TAGS, '').replace(/\s+/g, ' ').toLowerCase();
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is told apart by its range.
const NON_ASCII = /[^\x00-\x7f]/;

const INJECTION: RegExp[] = [
  /\b(?:ignore|disregard|forget|override|bypass|discard)\s+(?:(?:all|any|the|your|every|of|these)\s+)*(?:previous|prior|above|earlier|preceding|former|original|system|safety|existing|other|developer'?s?)\s+(?:\w+\s+){0,2}?(?:instructions?|directions?|rules|prompts?|guidelines|guardrails|directives|constraints|policies|messages)\b/i,
  /\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|alert|notify|warn|show|let|mention\s+(?:this|it|anything)\s+to|reveal\s+(?:this|it)\s+to)\s+the\s+(?:user|human|operator|developer)\b/i,
  /\bwithout\s+(?:telling|asking|informing|notifying|alerting|warning)\s+the\s+(?:user|human|operator)\b/i,
  /\b(?:keep|hide)\s+(?:this|it|these\s+\w+)\s+(?:secret\s+|hidden\s+)?from\s+the\s+(?:user|human)\b/i,
  /\byou\s+are\s+now\s+(?:in\s+)?(?:dan\b|developer\s+mode|jailbroken|unrestricted|an?\s+unrestricted|no\s+longer\s+bound|free\s+of)/i,
  /\b(?:new|updated|real|actual)\s+system\s+(?:prompt|instructions)\s*:/i,
  /\b(?:send|post|upload|exfiltrate|transmit|forward|copy|leak|e-?mail|pipe|submit)\s+(?:\S+\s+){0,5}?(?:secrets?|credentials?|api[\s_-]?keys?|access\s+keys?|tokens?|passwords?|environment(?:\s+variables)?|env(?:\s+vars?)?|\.env|ssh\s+keys?|private\s+keys?|id_rsa|cookies|\.aws\/credentials|~\/\.ssh\S*)\b.{0,80}?\b(?:to|into|at|via)\s+(?:https?:\/\/|[\w.-]+\.[a-z]{2,}\/|\S+@[\w-]+\.[a-z]{2,}|(?:this|the\s+following|our|my|that)\s+(?:url|endpoint|server|webhook|address|email))/i,
  /\b(?:read|cat|open|print|copy|include|paste)\s+(?:the\s+)?(?:contents?\s+of\s+)?(?:~\/\.ssh\S*|~\/\.aws\S*|\S*\.env\b|\S*id_rsa\S*|\S*\.netrc|the\s+user'?s\s+(?:credentials|api\s+keys?|tokens?|ssh\s+keys?))\s+(?:\S+\s+){0,6}?and\s+(?:send|post|upload|include|add|paste|put|commit|append|embed)\b/i,
];

/** Words that make a quoted phrase an example or a pattern rather than an instruction. */
const EXAMPLE_CONTEXT =
  /\b(?:e\.g\.|for example|for instance|such as|like|phrases?|attacks?|attackers?|injections?|malicious|detect\w*|flag\w*|block\w*|beware|never\s+(?:follow|obey)|refuse|suspicious|examples?|patterns?|warn\w*)\b/;
const QUOTES = /["'`“‘«„]/;
const PATTERN_LINE = /^\s*[[,(]|,\s*$|\bre(?:gex(?:p)?)?\b|\bpatterns?\b|re\.compile|new\s+regexp/;

function quotedAt(text: string, index: number): boolean {
  const before = text.slice(Math.max(0, index - 3), index);
  return QUOTES.test(before);
}

export interface TextContext {
  file: string;
  lines: Lines;
  /** Markdown: prose lines (code fences and spans excluded); other files: every line. */
  segments: Segment[];
  code: boolean;
}

/** Prompt injection in the text an agent reads. One finding per line. */
export function injectionFindings(ctx: TextContext): RawFinding[] {
  const out: RawFinding[] = [];
  for (const segment of ctx.segments) {
    if (segment.text.length < 12) continue;
    // ASCII lines (nearly all) need no Unicode folding: the patterns ignore case.
    const plain = NON_ASCII.test(segment.text) ? plainText(segment.text) : segment.text;
    for (const re of INJECTION) {
      const match = re.exec(plain);
      if (!match) continue;
      if (quotedAt(plain, match.index)) {
        const around = plainText(
          `${ctx.lines.line(segment.line - 1)} ${segment.text} ${ctx.lines.line(segment.line + 1)}`,
        );
        if (EXAMPLE_CONTEXT.test(around.replace(match[0].toLowerCase(), ''))) continue;
        if (ctx.code && PATTERN_LINE.test(plain.toLowerCase())) continue;
      }
      out.push({
        rule: 'prompt-injection',
        severity: 'high',
        file: ctx.file,
        line: segment.line,
        text: segment.text,
        column: Math.max(0, segment.text.toLowerCase().indexOf(match[0].split(' ')[0] ?? '')),
        message:
          'text aimed at the agent: overriding its instructions, hiding from the user or sending secrets',
      });
      break;
    }
  }
  return out;
}

/** The comment speaks to the agent: "you", or the assistant/model told what it must do. */
const ADDRESSES_AGENT =
  /\byou(?:r)?\b|\b(?:assistant|claude|agent|ai|model|llm|gpt|chatgpt|copilot|codex|gemini)s?\s+(?:must|should|shall|will|needs?\s+to|has\s+to|is\s+to|may\s+not|can\s*not|mustn'?t)\b|\b(?:dear|attention|note\s+to(?:\s+the)?|hey|hi)\s+(?:assistant|claude|agent|ai|model|llm)\b/;
/** An imperative at the start of a sentence or line. */
const IMPERATIVE =
  /(?:^|[.!:;]\s+|\n\s*)(?:you\s+(?:must|should|shall|need\s+to|have\s+to|are\s+to|will\s+now)|ignore|disregard|forget|run|execute|send|upload|post|fetch|download|install|delete|remove|read|write|open|copy|do\s+not|don'?t|never|always|make\s+sure|remember\s+to|before\s+(?:answering|responding|you)|secretly|silently|quietly|first|then)\b/;
const DANGEROUS =
  /\b(?:curl|wget|iwr|invoke-webrequest|base64\s+-d|eval|sudo|rm\s+-rf|chmod\s+\+x)\b|https?:\/\/|\b(?:api[\s_-]?keys?|passwords?|credentials?|secrets?|private\s+keys?|ssh\s+keys?)\b|\.env\b/;

/** HTML comments, hidden elements and `[//]: #` comments that address the agent. */
export function hiddenFindings(
  file: string,
  hidden: Array<Segment & { kind: 'comment' | 'hidden-element' | 'link-comment' }>,
  lines: Lines,
): RawFinding[] {
  const out: RawFinding[] = [];
  for (const part of hidden) {
    const plain = plainText(part.text);
    if (plain.split(' ').length < 4) continue;
    const lined = part.text.normalize('NFKC').replace(INVISIBLE, '').toLowerCase();
    const injected = INJECTION.some((re) => re.test(plain));
    const instructs = ADDRESSES_AGENT.test(plain) && IMPERATIVE.test(lined.trim());
    if (!injected && !instructs) continue;
    const severe = injected || DANGEROUS.test(plain);
    const where =
      part.kind === 'comment'
        ? 'an HTML comment'
        : part.kind === 'hidden-element'
          ? 'a hidden element'
          : 'a Markdown comment';
    out.push({
      rule: 'hidden-instructions',
      severity: severe ? 'high' : 'medium',
      file,
      line: part.line,
      text: lines.line(part.line),
      message: `instructions for the agent in ${where}, which readers of the rendered page do not see`,
    });
  }
  return out;
}

/** Zero-width, tag and bidirectional control characters, one finding per kind and file. */
export function characterFindings(file: string, text: string, lines: Lines, code: boolean): RawFinding[] {
  const out: RawFinding[] = [];
  if (!NON_ASCII.test(text)) return out;
  const tags = TAGS.exec(text);
  TAGS.lastIndex = 0;
  if (tags) {
    const decoded = [...tags[0]].map((c) => String.fromCharCode((c.codePointAt(0) as number) - 0xe0000));
    const line = lines.lineOf(tags.index);
    out.push({
      rule: 'invisible-characters',
      severity: 'high',
      file,
      line,
      text: `${lines.line(line).replace(TAGS, '')} [hidden: ${decoded.join('').replace(/[^\x20-\x7e]/g, '')}]`,
      message: 'invisible Unicode tag characters spell out hidden text',
    });
  }
  let invisibleCount = 0;
  let firstInvisible = -1;
  let run = 0;
  let longestRun = 0;
  if (INVISIBLE_ONE.test(text)) {
    for (const match of text.matchAll(INVISIBLE)) {
      const at = match.index;
      const prev = text.slice(Math.max(0, at - 2), at);
      const next = text.slice(at + 1, at + 3);
      // Emoji sequences (ZWJ, variation selectors) and joining scripts (ZWNJ/ZWJ) use these legitimately;
      // a soft hyphen inside a word is typography.
      if (match[0] === '\u200d' && (EMOJI.test(prev) || EMOJI.test(next))) continue;
      if (
        (match[0] === '\u200c' || match[0] === '\u200d') &&
        (JOINING_SCRIPT.test(prev) || JOINING_SCRIPT.test(next))
      )
        continue;
      if (match[0] === '\u00ad' && /\p{L}/u.test(prev.slice(-1)) && /\p{L}/u.test(next.slice(0, 1))) continue;
      invisibleCount += 1;
      if (firstInvisible < 0) firstInvisible = at;
      const previous = text[at - 1] ?? '';
      run = INVISIBLE_ONE.test(previous) ? run + 1 : 1;
      longestRun = Math.max(longestRun, run);
    }
  }
  if (invisibleCount > 0) {
    const line = lines.lineOf(firstInvisible);
    out.push({
      rule: 'invisible-characters',
      severity: longestRun >= 8 || invisibleCount >= 16 ? 'high' : 'medium',
      file,
      line,
      text: lines.line(line),
      column: firstInvisible - (lines.starts[line - 1] ?? 0),
      message: `${invisibleCount} zero-width or invisible character${invisibleCount === 1 ? '' : 's'}: text a reader does not see (or a word split to dodge checks)`,
    });
  }
  const bidi = BIDI.exec(text);
  if (bidi) {
    const line = lines.lineOf(bidi.index);
    out.push({
      rule: 'bidi-control',
      severity: code ? 'high' : 'medium',
      file,
      line,
      text: lines.line(line),
      column: bidi.index - (lines.starts[line - 1] ?? 0),
      message: 'bidirectional control characters: the text displays in a different order than it is read',
    });
  }
  return out;
}
