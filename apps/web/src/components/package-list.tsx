import type { ListResponse, PackageListItem } from '@pkgreg/contracts';
import { listPackages } from '../api.js';
import { formatCount, formatDate, formatRelative } from '../format.js';
import {
  hasFilters,
  LIST_SORT_OPTIONS,
  type ListState,
  listStateToSearch,
  NATURAL_ORDER,
  PAGE_SIZE,
  totalPages,
} from '../list-query.js';
import { useResource } from '../use-resource.js';
import { ArrowLeftIcon, ArrowRightIcon, SortIcon, StarIcon } from './icons.js';
import { EmptyState, ErrorState, SkeletonList } from './states.js';

function href(state: ListState): string {
  return `/${listStateToSearch(state)}`;
}

function PackageCard(props: { item: PackageListItem }) {
  const { item } = props;
  return (
    <li class="card package-card" data-testid="package-card">
      <div class="package-card-head">
        <a class="pkg-name card-link" href={`/@${item.scope}/${item.name}`}>
          <span class="pkg-scope">@{item.scope}/</span>
          {item.name}
        </a>
        {item.private ? (
          <span class="badge badge-private" data-testid="private-badge">
            Private
          </span>
        ) : null}
        <span class={`badge badge-kind kind-${item.kind}`}>{item.kind}</span>
      </div>
      <p class="package-card-desc">{item.description || 'No description.'}</p>
      <div class="package-card-meta">
        <span title={`${item.repoStars} stars`}>
          <StarIcon width={14} height={14} /> {formatCount(item.repoStars)}
        </span>
        <span>{item.sourceRepo}</span>
        {item.license ? <span>{item.license}</span> : null}
        <span title={formatDate(item.lastIndexedAt)}>indexed {formatRelative(item.lastIndexedAt)}</span>
      </div>
    </li>
  );
}

function Pagination(props: { state: ListState; total: number }) {
  const { state, total } = props;
  const pages = totalPages(total);
  if (pages <= 1 && state.page === 1) return null;
  const prev = state.page > 1 ? href({ ...state, page: Math.min(state.page - 1, pages) }) : null;
  const next = state.page < pages ? href({ ...state, page: state.page + 1 }) : null;
  return (
    <nav class="pagination" aria-label="Pages">
      {prev ? (
        <a class="button" href={prev} rel="prev" data-testid="page-prev">
          <ArrowLeftIcon /> Previous
        </a>
      ) : (
        <span class="button is-disabled" aria-disabled="true">
          <ArrowLeftIcon /> Previous
        </span>
      )}
      <span class="pagination-status" data-testid="page-status">
        Page {state.page} of {pages}
      </span>
      {next ? (
        <a class="button" href={next} rel="next" data-testid="page-next">
          Next <ArrowRightIcon />
        </a>
      ) : (
        <span class="button is-disabled" aria-disabled="true">
          Next <ArrowRightIcon />
        </span>
      )}
    </nav>
  );
}

function SortControls(props: { state: ListState }) {
  const { state } = props;
  const flipped = { ...state, order: state.order === 'asc' ? 'desc' : 'asc', page: 1 } as const;
  return (
    <div class="sort-controls">
      <nav class="segmented" aria-label="Sort packages by">
        {LIST_SORT_OPTIONS.map((option) => (
          <a
            key={option.sort}
            class={option.sort === state.sort ? 'segment is-current' : 'segment'}
            aria-current={option.sort === state.sort ? 'true' : undefined}
            href={href({ ...state, sort: option.sort, order: NATURAL_ORDER[option.sort], page: 1 })}
            data-testid={`sort-${option.sort}`}
          >
            {option.label}
          </a>
        ))}
      </nav>
      <a
        class="button button-ghost"
        href={href(flipped)}
        data-testid="order-toggle"
        aria-label={`Order: ${state.order === 'asc' ? 'ascending' : 'descending'}. Switch to ${flipped.order === 'asc' ? 'ascending' : 'descending'}`}
      >
        <SortIcon /> <span class="order-label">{state.order === 'asc' ? 'Ascending' : 'Descending'}</span>
      </a>
    </div>
  );
}

export function PackageList(props: { state: ListState }) {
  const { state } = props;
  const key = `${state.page}|${state.sort}|${state.order}|${listStateToSearch(state)}`;
  const [resource, retry] = useResource<ListResponse>(key, (signal) =>
    listPackages(
      { page: state.page, pageSize: PAGE_SIZE, sort: state.sort, order: state.order, ...state.filters },
      signal,
    ),
  );
  const filtered = hasFilters(state.filters);
  const data =
    resource.status === 'ok' ? resource.data : resource.status === 'loading' ? resource.previous : null;

  return (
    <section class="package-list" aria-labelledby="list-heading" data-testid="package-list">
      <div class="section-head">
        <h2 id="list-heading">
          {filtered ? 'Matching packages' : 'All packages'}
          {data ? <span class="count">{formatCount(data.total)}</span> : null}
        </h2>
        <SortControls state={state} />
      </div>
      {resource.status === 'error' ? (
        <ErrorState error={resource.error} context="the package list" onRetry={retry} />
      ) : !data ? (
        <SkeletonList label="Loading packages" />
      ) : data.total === 0 && filtered ? (
        <EmptyState title="No packages match these filters" testId="no-filter-results">
          <p>
            Remove a filter, or <a href={href({ ...state, filters: {}, page: 1 })}>clear them all</a>.
          </p>
        </EmptyState>
      ) : data.total === 0 ? (
        <EmptyState title="No packages yet">
          <p>The registry has not indexed any package. Index a repository and its skills show up here.</p>
        </EmptyState>
      ) : data.data.length === 0 ? (
        <EmptyState title={`Page ${state.page} is past the end`}>
          <p>
            There are {data.total} packages on {totalPages(data.total)} pages.{' '}
            <a href={href({ ...state, page: totalPages(data.total) })}>Go to the last page</a>
          </p>
        </EmptyState>
      ) : (
        <>
          <ol
            class="package-cards"
            start={(state.page - 1) * PAGE_SIZE + 1}
            aria-busy={resource.status === 'loading'}
            data-stale={resource.status === 'loading' ? 'true' : undefined}
          >
            {data.data.map((item) => (
              <PackageCard key={`${item.scope}/${item.name}`} item={item} />
            ))}
          </ol>
          <Pagination state={state} total={data.total} />
        </>
      )}
    </section>
  );
}
