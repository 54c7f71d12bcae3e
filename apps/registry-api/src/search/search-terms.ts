// Turns a raw query into lexemes the way the packages.search_vector column was built: the column splits
// names and scopes on - / @ _ . and the text-search parser then splits on every other non-word
// character, so splitting on anything that is not a letter, digit or combining mark yields the same
// pieces. Because only those characters survive, no tsquery operator, quote or backslash can reach
// to_tsquery: weird input can narrow a search but never break it (decisions.md: Registry / Search).
const NON_WORD = /[^\p{L}\p{N}\p{M}]+/u;

/** Distinct lowercased lexemes of `q`, in order of first appearance. */
export function searchLexemes(q: string): string[] {
  const seen = new Set<string>();
  for (const term of q.toLowerCase().split(/\s+/)) {
    for (const lexeme of term.split(NON_WORD)) {
      if (lexeme) seen.add(lexeme);
    }
  }
  return [...seen];
}

/** A quoted prefix operand for to_tsquery, optionally restricted to weights (`'pdf':*A`). */
export function prefixOperand(lexeme: string, weights = ''): string {
  return `${exactOperand(lexeme)}:*${weights}`;
}

/** A quoted exact operand for to_tsquery (a lexeme as stored, e.g. from ts_stat). */
export function exactOperand(lexeme: string): string {
  return `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}
