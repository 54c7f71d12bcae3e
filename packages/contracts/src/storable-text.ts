// What JSON can carry and Postgres cannot store: U+0000 (no text or jsonb value holds it) and a lone
// UTF-16 surrogate such as `\ud800` (jsonb refuses the escape; text would get U+FFFD in its place).
// Shared by the MCP argument schemas, the indexer's SKILL.md rules and the token endpoint.

export function hasNul(text: string): boolean {
  return text.includes('\u0000');
}

/** With the u flag a surrogate pair is one code point, so the class matches unpaired halves only. */
export function hasLoneSurrogate(text: string): boolean {
  return /[\uD800-\uDFFF]/u.test(text);
}
