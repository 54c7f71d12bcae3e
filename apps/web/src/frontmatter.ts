// SKILL.md starts with a YAML frontmatter block; the page shows it as a table (from the API's parsed
// `frontmatter`), so the block is cut from the body before the Markdown is rendered.
const FRONTMATTER_BLOCK = /^\uFEFF?---[ \t]*\r?\n(?:[\s\S]*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

export function stripFrontmatter(markdown: string): string {
  return markdown.replace(FRONTMATTER_BLOCK, '');
}

/**
 * The YAML between the fences, as written, or null without a block. An older version's SKILL.md has no
 * parsed `frontmatter` in the API (detail describes the latest), and the bundle carries no YAML parser.
 */
export function frontmatterText(markdown: string): string | null {
  const block = FRONTMATTER_BLOCK.exec(markdown)?.[0];
  if (block === undefined) return null;
  return block
    .replace(/^\uFEFF?---[ \t]*\r?\n/, '')
    .replace(/(?:^|\r?\n)(?:---|\.\.\.)[ \t]*(?:\r?\n)?$/, '')
    .trimEnd();
}

export interface FrontmatterRow {
  key: string;
  value: string;
  /** Lists render as chips, everything else as text. */
  list: string[] | null;
}

/** Where each top-level key sits in the SKILL.md block (jsonb hands keys back in its own order). */
function keyPositions(markdown: string): Map<string, number> {
  const block = FRONTMATTER_BLOCK.exec(markdown)?.[0] ?? '';
  const positions = new Map<string, number>();
  for (const [index, line] of block.split(/\r?\n/).entries()) {
    const match = /^(?:"([^"]+)"|'([^']+)'|([^\s#:][^:]*?))\s*:/.exec(line);
    const key = match?.[1] ?? match?.[2] ?? match?.[3];
    if (key !== undefined && !positions.has(key)) positions.set(key, index);
  }
  return positions;
}

/**
 * Frontmatter as rows for a table, in the order SKILL.md lists them: scalars as text, string lists as
 * chips, anything nested as JSON.
 */
export function frontmatterRows(frontmatter: Record<string, unknown>, markdown = ''): FrontmatterRow[] {
  const positions = keyPositions(markdown);
  const entries = Object.entries(frontmatter).sort(
    ([a], [b]) =>
      (positions.get(a) ?? Number.MAX_SAFE_INTEGER) - (positions.get(b) ?? Number.MAX_SAFE_INTEGER),
  );
  return entries.map(([key, value]) => {
    if (Array.isArray(value) && value.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) {
      return { key, value: value.join(', '), list: value.map(String) };
    }
    if (value === null || value === undefined) return { key, value: '', list: null };
    if (typeof value === 'object') return { key, value: JSON.stringify(value, null, 2), list: null };
    return { key, value: String(value), list: null };
  });
}
