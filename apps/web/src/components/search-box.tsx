import type { PackageFilters, SearchResponse, SearchResultItem } from '@pkgreg/contracts';
import { useEffect, useRef, useState } from 'preact/hooks';
import { searchPackages } from '../api.js';
import { formatCount } from '../format.js';
import { filterParams } from '../list-query.js';
import { navigate } from '../router.js';
import { SearchIcon, VerifiedIcon } from './icons.js';
import { EmptyState, ErrorState } from './states.js';

// ARIA 1.2 combobox with a listbox popup: focus stays in the input, aria-activedescendant names the
// active option. Arrow keys move, Enter opens, Escape clears. Results keep the API's rank order.

export const SEARCH_DEBOUNCE_MS = 150;
const LISTBOX_ID = 'search-results';

type SearchState =
  | { status: 'idle' }
  | { status: 'loading'; previous: SearchResponse | null; q: string }
  | { status: 'ok'; data: SearchResponse; q: string }
  | { status: 'error'; error: unknown; q: string };

function optionId(index: number): string {
  return `search-option-${index}`;
}

function packageHref(item: Pick<SearchResultItem, 'scope' | 'name'>): string {
  return `/@${item.scope}/${item.name}`;
}

export function SearchBox(props: {
  query: string;
  onQueryChange: (q: string) => void;
  /** The filter chips' filters: results pass them all (issue 20). */
  filters?: PackageFilters;
}) {
  const { query, onQueryChange } = props;
  const filters = props.filters ?? {};
  // The effect below re-runs when the filters change, compared by value (a new object each render).
  const filtersKey = new URLSearchParams(filterParams(filters)).toString();
  const [state, setState] = useState<SearchState>({ status: 'idle' });
  const [active, setActive] = useState(-1);
  const [attempt, setAttempt] = useState(0);
  const inputRef = useRef<HTMLInputElement>(null);
  const listRef = useRef<HTMLDivElement>(null);
  const trimmed = query.trim();

  useEffect(() => {
    if (!trimmed) {
      setState({ status: 'idle' });
      return;
    }
    const controller = new AbortController();
    setState((s) => ({
      status: 'loading',
      q: trimmed,
      previous: s.status === 'ok' ? s.data : s.status === 'loading' ? s.previous : null,
    }));
    const timer = setTimeout(() => {
      searchPackages(trimmed, filters, controller.signal).then(
        (data) => {
          if (!controller.signal.aborted) setState({ status: 'ok', data, q: trimmed });
        },
        (error: unknown) => {
          if (!controller.signal.aborted) setState({ status: 'error', error, q: trimmed });
        },
      );
    }, SEARCH_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [trimmed, attempt, filtersKey]);

  const shown: SearchResponse | null =
    state.status === 'ok' ? state.data : state.status === 'loading' ? state.previous : null;
  const results = shown?.results ?? [];

  // A new result set starts with nothing active.
  useEffect(() => setActive(-1), [shown]);

  useEffect(() => {
    if (active < 0) return;
    document.getElementById(optionId(active))?.scrollIntoView({ block: 'nearest' });
  }, [active]);

  const expanded = trimmed.length > 0 && results.length > 0;

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'ArrowDown') {
      if (!results.length) return;
      event.preventDefault();
      setActive((i) => (i + 1 >= results.length ? 0 : i + 1));
    } else if (event.key === 'ArrowUp') {
      if (!results.length) return;
      event.preventDefault();
      setActive((i) => (i <= 0 ? results.length - 1 : i - 1));
    } else if (event.key === 'Home' && active >= 0) {
      event.preventDefault();
      setActive(0);
    } else if (event.key === 'End' && active >= 0) {
      event.preventDefault();
      setActive(results.length - 1);
    } else if (event.key === 'Enter') {
      const item = results[Math.max(active, 0)];
      if (!item) return;
      event.preventDefault();
      navigate(packageHref(item));
    } else if (event.key === 'Escape') {
      if (!query) return;
      event.preventDefault();
      onQueryChange('');
      setActive(-1);
    }
  };

  const status = !trimmed
    ? ''
    : state.status === 'loading' && !shown
      ? 'Searching…'
      : state.status === 'error'
        ? 'Search failed'
        : shown
          ? shown.total === 0
            ? `No packages match “${trimmed}”`
            : shown.total > results.length
              ? `Showing the top ${results.length} of ${formatCount(shown.total)} matches`
              : `${results.length} ${results.length === 1 ? 'match' : 'matches'}`
          : '';

  return (
    <div class="search" data-testid="search">
      <label class="visually-hidden" for="search-input">
        Search packages
      </label>
      <div class="search-field">
        <SearchIcon class="search-field-icon" width={20} height={20} />
        <input
          ref={inputRef}
          id="search-input"
          class="search-input"
          type="text"
          role="combobox"
          enterkeyhint="search"
          aria-autocomplete="list"
          aria-expanded={expanded}
          aria-controls={LISTBOX_ID}
          aria-activedescendant={active >= 0 ? optionId(active) : undefined}
          aria-describedby="search-status"
          placeholder="Search packages…"
          autocomplete="off"
          autocapitalize="off"
          spellcheck={false}
          value={query}
          onInput={(e) => onQueryChange((e.currentTarget as HTMLInputElement).value)}
          onKeyDown={onKeyDown}
        />
        {state.status === 'loading' ? <span class="spinner" aria-hidden="true" /> : null}
        {query ? (
          <button
            type="button"
            class="search-clear"
            aria-label="Clear search"
            onClick={() => {
              onQueryChange('');
              inputRef.current?.focus();
            }}
          >
            ×
          </button>
        ) : (
          <span class="search-hint" aria-hidden="true">
            /
          </span>
        )}
      </div>
      <p
        id="search-status"
        class={trimmed ? 'search-status' : 'visually-hidden'}
        role="status"
        aria-live="polite"
      >
        {status}
      </p>
      <div
        ref={listRef}
        id={LISTBOX_ID}
        role="listbox"
        aria-label="Search results"
        class={expanded ? 'search-results' : 'search-results is-empty'}
        data-stale={state.status === 'loading' ? 'true' : undefined}
      >
        {expanded
          ? results.map((item, index) => (
              <a
                key={`${item.scope}/${item.name}`}
                id={optionId(index)}
                role="option"
                aria-selected={index === active}
                tabIndex={-1}
                class={index === active ? 'search-option is-active' : 'search-option'}
                href={packageHref(item)}
                onMouseMove={() => setActive(index)}
              >
                <span class="search-option-head">
                  <span class="pkg-name">
                    <span class="pkg-scope">@{item.scope}/</span>
                    {item.name}
                  </span>
                  {item.verified ? (
                    <span class="badge badge-verified" title="Verified publisher">
                      <VerifiedIcon width={12} height={12} /> Verified
                    </span>
                  ) : null}
                  {item.private ? (
                    <span class="badge badge-private" data-testid="private-badge">
                      Private
                    </span>
                  ) : null}
                  <span class={`badge badge-kind kind-${item.kind}`}>{item.kind}</span>
                  {item.category ? <span class="badge">{item.category}</span> : null}
                </span>
                <span class="search-option-desc">{item.description || 'No description.'}</span>
                <span class="search-option-meta">
                  {item.sourceRepo} · {formatCount(item.tokenCount)} tokens
                </span>
              </a>
            ))
          : null}
      </div>
      {trimmed && state.status === 'ok' && state.data.total === 0 ? (
        <EmptyState title={`No packages match “${trimmed}”`} icon="search" testId="no-results">
          <p>
            Try fewer or shorter words: every word matches as a prefix, so “code rev” finds “code-review”.
          </p>
          <button type="button" class="button" onClick={() => onQueryChange('')}>
            Clear search
          </button>
        </EmptyState>
      ) : null}
      {trimmed && state.status === 'error' ? (
        <ErrorState error={state.error} context="search results" onRetry={() => setAttempt((n) => n + 1)} />
      ) : null}
    </div>
  );
}
