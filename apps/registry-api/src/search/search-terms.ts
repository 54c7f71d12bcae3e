// Turns a raw query into lexemes the way the packages.search_vector column was built: the column splits
// names and scopes on - / @ _ . and the text-search parser then splits on every other non-word
// character, so splitting on anything that is not a letter, digit or combining mark yields the same
// pieces. Because only those characters survive, no tsquery operator, quote or backslash can reach
// to_tsquery: weird input can narrow a search but never break it.
const NON_WORD = /[^\p{L}\p{N}\p{M}]+/u;

// PostgreSQL's `english` stop words (Snowball). Descriptions are indexed with `english`, which drops
// them, so a query term like the `to` of "end-to-end tests" could only match names or, as a prefix,
// unrelated words (`tool`, `token`).
const ENGLISH_STOP_WORDS = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
  herself it its itself they them their theirs themselves what which who whom this that these those am is are
  was were be been being have has had having do does did doing a an the and but if or because as until while
  of at by for with about against between into through during before after above below to from up down in out
  on off over under again further then once here there when where why how all any both each few more most
  other some such no nor not only own same so than too very s t can will just don should now`.split(/\s+/),
);

/**
 * Distinct lowercased lexemes of `q`, in order of first appearance. English stop words are left out,
 * as English tokenization does, except the last lexeme (it may be a prefix still being typed: `to` on
 * the way to `tool`) and except when nothing else would remain.
 */
export function searchLexemes(q: string): string[] {
  const seen = new Set<string>();
  for (const term of q.toLowerCase().split(/\s+/)) {
    for (const lexeme of term.split(NON_WORD)) {
      if (lexeme) seen.add(lexeme);
    }
  }
  const lexemes = [...seen];
  const kept = lexemes.filter((lexeme, i) => i === lexemes.length - 1 || !ENGLISH_STOP_WORDS.has(lexeme));
  return kept.some((lexeme) => !ENGLISH_STOP_WORDS.has(lexeme)) ? kept : lexemes;
}

/** A quoted prefix operand for to_tsquery, optionally restricted to weights (`'pdf':*A`). */
export function prefixOperand(lexeme: string, weights = ''): string {
  return `${exactOperand(lexeme)}:*${weights}`;
}

/** A quoted exact operand for to_tsquery (a lexeme as stored, e.g. from ts_stat). */
export function exactOperand(lexeme: string): string {
  return `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/**
 * The bit pkgreg_search_initials (migration 2026-11-25T0300-search-initials) gives a lexeme starting
 * with `c`: a-z 0-25, digits 26-35, any other character 36 + (code point mod 27).
 */
function initialBit(c: string): bigint {
  const code = c.codePointAt(0) ?? 0;
  if (code >= 97 && code <= 122) return 1n << BigInt(code - 97);
  if (code >= 48 && code <= 57) return 1n << BigInt(26 + code - 48);
  return 1n << BigInt(36 + (code % 27));
}

/**
 * The bits a package must have in package_search_initials to match every one-character term of the
 * query (a one-character term matches exactly the packages with a lexeme starting with it); null when
 * the query has none. Longer terms add nothing: a stem may differ from its word.
 */
export function initialsMask(lexemes: string[]): bigint | null {
  const single = lexemes.filter((lexeme) => lexeme.length === 1);
  return single.length === 0 ? null : single.reduce((mask, lexeme) => mask | initialBit(lexeme), 0n);
}
