// SKILL.md starts with a YAML frontmatter block; the page shows it as a table (from the API's parsed
// `frontmatter`), so the block is cut from the body before the Markdown is rendered.
const FRONTMATTER_BLOCK = /^\uFEFF?---[ \t]*\r?\n(?:[\s\S]*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

export function stripFrontmatter(markdown: string): string {
  return markdown.replace(FRONTMATTER_BLOCK, '');
}

export interface FrontmatterRow {
  key: string;
  value: string;
  /** Lists render as chips, everything else as text. */
  list: string[] | null;
}

/** Frontmatter as rows for a table: scalars as text, string lists as chips, anything nested as JSON. */
export function frontmatterRows(frontmatter: Record<string, unknown>): FrontmatterRow[] {
  return Object.entries(frontmatter).map(([key, value]) => {
    if (Array.isArray(value) && value.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) {
      return { key, value: value.join(', '), list: value.map(String) };
    }
    if (value === null || value === undefined) return { key, value: '', list: null };
    if (typeof value === 'object') return { key, value: JSON.stringify(value, null, 2), list: null };
    return { key, value: String(value), list: null };
  });
}
