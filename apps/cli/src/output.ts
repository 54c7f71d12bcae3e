import { oneLine } from './terminal-text.js';

// Plain-text layout helpers for results on stdout.

/** Cuts text to `width` code points, marking the cut with an ellipsis. */
export function truncate(text: string, width: number): string {
  const chars = Array.from(text.replace(/\s+/g, ' ').trim());
  if (chars.length <= width) return chars.join('');
  if (width <= 1) return chars.slice(0, Math.max(0, width)).join('');
  return `${chars.slice(0, width - 1).join('')}…`;
}

function pad(text: string, width: number): string {
  const length = Array.from(text).length;
  return length >= width ? text : text + ' '.repeat(width - length);
}

export interface Column {
  header: string;
  /** The one column that shrinks to fit the terminal. */
  flexible?: boolean;
  align?: 'left' | 'right';
}

/** Lays out rows in columns two spaces apart, shrinking the flexible column so rows fit `totalWidth`. */
export function table(columns: Column[], cells: string[][], totalWidth: number): string[] {
  // Cells hold registry text: made safe before they are measured, so the columns line up.
  const rows = cells.map((row) => row.map(oneLine));
  const widths = columns.map((column, i) =>
    Math.max(Array.from(column.header).length, ...rows.map((row) => Array.from(row[i] ?? '').length)),
  );
  const flexIndex = columns.findIndex((column) => column.flexible);
  if (flexIndex >= 0) {
    const fixed =
      widths.reduce((sum, width, i) => (i === flexIndex ? sum : sum + width), 0) + 2 * (columns.length - 1);
    widths[flexIndex] = Math.max(
      Array.from(columns[flexIndex]?.header ?? '').length,
      Math.min(widths[flexIndex] ?? 0, totalWidth - fixed),
    );
  }
  const render = (cells: string[]): string =>
    cells
      .map((cell, i) => {
        const width = widths[i] ?? 0;
        const text = i === flexIndex ? truncate(cell, width) : cell;
        if (columns[i]?.align === 'right')
          return ' '.repeat(Math.max(0, width - Array.from(text).length)) + text;
        return i === cells.length - 1 ? text : pad(text, width);
      })
      .join('  ')
      .trimEnd();
  return [render(columns.map((column) => column.header)), ...rows.map(render)];
}

export function terminalWidth(stream: NodeJS.WriteStream = process.stdout): number {
  return stream.isTTY && stream.columns ? stream.columns : 80;
}

/** A count as en-US writes it (1,234,567). */
export function formatCount(value: number): string {
  // Whole counts are grouped here: Intl's first NumberFormat loads locale data, slow for a one-shot run.
  if (!Number.isSafeInteger(value) || value < 0 || Object.is(value, -0)) {
    return new Intl.NumberFormat('en-US').format(value);
  }
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
