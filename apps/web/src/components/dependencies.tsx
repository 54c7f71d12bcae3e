import type { PackageListItem } from '@pkgreg/contracts';
import { useEffect, useState } from 'preact/hooks';
import { listDependants } from '../api.js';
import './dependencies.css';

// Skill dependencies on the package page (docs/versions.md, Dependencies): what the version on screen
// needs, each a link to its package (the latest's with whether it resolves now), and the packages whose
// latest version needs this one, a page at a time from GET …/dependants.

const PAGE_SIZE = 10;

export interface ShownDependency {
  /** `@scope/name`. */
  name: string;
  range: string | null;
  /** Known for the latest version only (the registry says it live); undefined for older versions. */
  resolves?: boolean;
}

/** The package page of `@scope/name`. */
const pageOf = (name: string) => `/${name}`;

function Dependants(props: { scope: string; name: string; count: number }) {
  const { scope, name, count } = props;
  const [items, setItems] = useState<PackageListItem[]>([]);
  const [total, setTotal] = useState(count);
  const [state, setState] = useState<'idle' | 'loading' | 'error'>('idle');
  const [page, setPage] = useState(count > 0 ? 1 : 0);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    setItems([]);
    setTotal(count);
    setPage(count > 0 ? 1 : 0);
  }, [scope, name, count]);

  useEffect(() => {
    if (page === 0) return;
    const controller = new AbortController();
    setState('loading');
    listDependants(scope, name, page, PAGE_SIZE, controller.signal).then(
      (response) => {
        if (controller.signal.aborted) return;
        setItems((shown) => (page === 1 ? response.data : [...shown, ...response.data]));
        setTotal(response.total);
        setState('idle');
      },
      () => {
        if (!controller.signal.aborted) setState('error');
      },
    );
    return () => controller.abort();
  }, [scope, name, page, attempt]);

  if (total === 0) return <p class="muted">No package depends on it.</p>;
  return (
    <>
      <ul class="dep-list" data-testid="dependants">
        {items.map((item) => (
          <li key={`${item.scope}/${item.name}`} data-testid="dependant">
            <a href={pageOf(`@${item.scope}/${item.name}`)}>
              @{item.scope}/{item.name}
            </a>
            {item.description ? <span class="dep-note muted">{item.description}</span> : null}
          </li>
        ))}
      </ul>
      {state === 'error' ? (
        <p class="muted" role="alert">
          The dependants could not be loaded.{' '}
          <button type="button" class="button" onClick={() => setAttempt((n) => n + 1)}>
            Try again
          </button>
        </p>
      ) : items.length < total ? (
        <button
          type="button"
          class="button dep-more"
          disabled={state === 'loading'}
          onClick={() => setPage(Math.floor(items.length / PAGE_SIZE) + 1)}
          data-testid="dependants-more"
        >
          {state === 'loading' ? 'Loading…' : `Show more (${total - items.length} more)`}
        </button>
      ) : null}
    </>
  );
}

export function DependenciesCard(props: {
  scope: string;
  name: string;
  /** The version on screen's dependencies (null while that version loads). */
  dependencies: ShownDependency[] | null;
  /** The version they belong to, when it is not the latest. */
  olderVersion: string | null;
  dependantCount: number;
}) {
  const { dependencies } = props;
  return (
    <section class="card" aria-labelledby="dependencies-heading" data-testid="dependencies">
      <h2 id="dependencies-heading" class="card-title">
        Dependencies{' '}
        {props.olderVersion ? <span class="card-title-note">of {props.olderVersion}</span> : null}
      </h2>
      {dependencies === null ? (
        <p class="muted">Loading…</p>
      ) : dependencies.length === 0 ? (
        <p class="muted">None: it needs no other skill.</p>
      ) : (
        <ul class="dep-list">
          {dependencies.map((d) => (
            <li key={d.name} data-testid="dependency">
              <a href={pageOf(d.name)}>{d.name}</a> <code class="dep-range">{d.range ?? 'latest'}</code>
              {d.resolves === false ? ' ' : null}
              {d.resolves === false ? (
                <span class="badge dep-unresolved" data-testid="dependency-unresolved">
                  not available
                </span>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      <h2 id="dependants-heading" class="card-title card-title-spaced">
        Used by <span class="card-title-note">{props.dependantCount}</span>
      </h2>
      <Dependants scope={props.scope} name={props.name} count={props.dependantCount} />
    </section>
  );
}
