// The geometry of the package page's downloads sparkline, apart from its markup so it can be tested.

export interface SparklineShape {
  /** The SVG path of the line (`M x y L x y ...`). */
  line: string;
  /** The same line closed along the bottom, for the filled area. */
  area: string;
  /** The highest count (the top of the chart; at least 1 so a flat zero line sits at the bottom). */
  peak: number;
}

/**
 * Points of `counts` across `width`, scaled so the peak touches the top (`pad` from the edges, in the
 * viewBox's units), oldest on the left. One count draws a flat line.
 */
export function sparklineShape(counts: number[], width: number, height: number, pad = 2): SparklineShape {
  const peak = Math.max(1, ...counts);
  const n = Math.max(counts.length, 1);
  const x = (i: number) => (n === 1 ? width / 2 : pad + (i * (width - 2 * pad)) / (n - 1));
  const y = (count: number) => height - pad - (count / peak) * (height - 2 * pad);
  const points = (counts.length > 0 ? counts : [0]).map(
    (count, i) => `${x(i).toFixed(1)} ${y(count).toFixed(1)}`,
  );
  const line = `M ${points.join(' L ')}`;
  const bottom = (height - pad).toFixed(1);
  const area = `${line} L ${x(n - 1).toFixed(1)} ${bottom} L ${x(0).toFixed(1)} ${bottom} Z`;
  return { line, area, peak };
}

/** The UTC day `offset` days after `from` (YYYY-MM-DD). */
export function dayAfter(from: string, offset: number): string {
  const time = Date.parse(`${from}T00:00:00Z`) + offset * 86_400_000;
  return Number.isNaN(time) ? from : new Date(time).toISOString().slice(0, 10);
}
