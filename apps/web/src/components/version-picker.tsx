import type { VersionSummary } from '@pkgreg/contracts';
import { formatDate } from '../format.js';

// A native <select>: keyboard, screen readers and phones (a wheel picker) handle it best. Picking goes
// through the URL (the page's caller navigates), so the view can be linked, reloaded and gone back from.

export function VersionPicker(props: {
  /** Newest first, as the API lists them. */
  versions: VersionSummary[];
  total: number;
  /** The version shown (exact). */
  selected: string;
  onPick: (version: string) => void;
}) {
  const { versions, selected } = props;
  // Yanked versions stay listed (and fetchable by exact version) but are never `latest`.
  const latest = versions.find((v) => !v.yanked)?.version;
  // A version older than the listed page (or one the API will not know) is still the one shown.
  const listed = versions.some((v) => v.version === selected);
  return (
    <div class="version-picker">
      <label for="version-select">Version</label>
      <select
        id="version-select"
        class="select"
        value={selected}
        onChange={(event) => props.onPick((event.currentTarget as HTMLSelectElement).value)}
        data-testid="version-select"
      >
        {listed ? null : <option value={selected}>{selected}</option>}
        {versions.map((v) => (
          <option key={v.version} value={v.version}>
            {v.version}
            {v.version === latest ? ' (latest)' : ''}
            {v.yanked ? ' (yanked)' : ''} · {formatDate(v.createdAt)}
          </option>
        ))}
      </select>
      <span class="muted version-count">
        {props.total} {props.total === 1 ? 'version' : 'versions'}
        {props.total > versions.length ? `, newest ${versions.length} listed` : ''}
      </span>
    </div>
  );
}
