import type { DailyDownloads } from '@pkgreg/contracts';
import { formatDate, formatFull } from '../format.js';
import { dayAfter, sparklineShape } from '../sparkline.js';

// The package page's 30-day downloads sparkline: an inline SVG (no script, no chart library), named and
// described for screen readers, with the figures it draws also written out as text.

const WIDTH = 240;
const HEIGHT = 48;

export function DownloadsSparkline(props: { daily: DailyDownloads; last7: number; last30: number }) {
  const { daily, last7, last30 } = props;
  const { line, area, peak } = sparklineShape(daily.counts, WIDTH, HEIGHT);
  const peakIndex = daily.counts.indexOf(Math.max(...daily.counts, 0));
  const to = dayAfter(daily.from, daily.counts.length - 1);
  const description =
    last30 === 0
      ? `No downloads from ${formatDate(daily.from)} to ${formatDate(to)}.`
      : `${formatFull(last30)} downloads from ${formatDate(daily.from)} to ${formatDate(to)}, most on ${formatDate(
          dayAfter(daily.from, peakIndex),
        )} (${formatFull(peak)}).`;
  return (
    <figure class="sparkline" data-testid="downloads-sparkline">
      <svg
        class="sparkline-chart"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width={WIDTH}
        height={HEIGHT}
        role="img"
        aria-labelledby="sparkline-title sparkline-desc"
        preserveAspectRatio="none"
      >
        <title id="sparkline-title">
          Downloads per day, each downloader counted once a day, last 30 days
        </title>
        <desc id="sparkline-desc">{description}</desc>
        <path class="sparkline-area" d={area} />
        <path class="sparkline-line" d={line} />
      </svg>
      <figcaption class="sparkline-caption">
        <span data-testid="downloads-7d">{formatFull(last7)}</span> in 7 days ·{' '}
        <span data-testid="downloads-30d">{formatFull(last30)}</span> in 30 days
      </figcaption>
    </figure>
  );
}
