import { useEffect, useState } from 'preact/hooks';
import { FilterChips } from '../components/filter-chips.js';
import { PackageList } from '../components/package-list.js';
import { SearchBox } from '../components/search-box.js';
import { parseListState } from '../list-query.js';
import { navigate } from '../router.js';

export function HomePage(props: { search: string; visit: number }) {
  const [query, setQuery] = useState(() => new URLSearchParams(props.search).get('q') ?? '');

  // Back/forward (a new visit) to a URL with another q brings that search back. Keyed on the visit, not on
  // the query string: typing rewrites the URL itself, and syncing on that would race fast keystrokes.
  useEffect(() => {
    setQuery(new URLSearchParams(window.location.search).get('q') ?? '');
  }, [props.visit]);

  useEffect(() => {
    document.title = 'pkgreg: agent skills registry';
  }, []);

  // "/" focuses the search box from anywhere on the page, as on most registries.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement | null;
      if (event.key !== '/' || event.metaKey || event.ctrlKey || event.altKey) return;
      if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
      event.preventDefault();
      document.getElementById('search-input')?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  const onQueryChange = (q: string) => {
    setQuery(q);
    // The query goes into the URL without a history entry per keystroke, so reload and back keep it.
    const params = new URLSearchParams(window.location.search);
    if (q.trim()) params.set('q', q);
    else params.delete('q');
    const text = params.toString();
    navigate(`/${text ? `?${text}` : ''}`, { replace: true });
  };

  const listState = parseListState(props.search);
  const searching = query.trim().length > 0;

  return (
    <>
      <section class="hero">
        <h1 class="hero-title" tabIndex={-1} data-page-heading>
          Skills for your agents
        </h1>
        <p class="hero-lead">
          Search and install agent skills, workflows and apps indexed from their source repositories.
        </p>
        <SearchBox query={query} onQueryChange={onQueryChange} filters={listState.filters} />
        <FilterChips state={listState} q={query} />
      </section>
      {searching ? null : <PackageList state={listState} />}
    </>
  );
}
