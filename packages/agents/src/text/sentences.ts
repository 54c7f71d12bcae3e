// Sentence and word splitting shared by the planner and compaction. English-oriented, no dependencies.

const ABBREVIATIONS: [RegExp, string][] = [
  [/\be\.g\./gi, 'eg'],
  [/\bi\.e\./gi, 'ie'],
  [/\betc\./gi, 'etc'],
  [/\bvs\./gi, 'vs'],
];

export function normalizeSpace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** Sentences: split on . ! ? ; followed by space (not inside "node.js" or "v1.2"), and on line breaks. */
export function splitSentences(text: string): string[] {
  let t = text;
  for (const [re, to] of ABBREVIATIONS) t = t.replace(re, to);
  return t
    .split(/(?<=[.!?;])\s+|\r?\n+/)
    .map((s) => normalizeSpace(s))
    .filter((s) => s.length > 0);
}

/** Lowercased word tokens; keeps tech spellings such as node.js, c++, c#, end-to-end. */
export function wordTokens(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9][a-z0-9+#.-]*/g) ?? []).map((w) => w.replace(/[.-]+$/, ''));
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes (with an ellipsis), never inside a character. */
export function truncateBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  return `${bytes
    .subarray(0, maxBytes - 4)
    .toString('utf8')
    .replace(/\uFFFD$/, '')}…`;
}
