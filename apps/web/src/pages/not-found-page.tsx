import { useEffect } from 'preact/hooks';
import { EmptyState } from '../components/states.js';

export function NotFoundPage(props: { title?: string; message?: string }) {
  const title = props.title ?? 'Page not found';
  useEffect(() => {
    document.title = `${title} · pkgreg`;
  }, [title]);
  return (
    <div class="page-narrow" data-testid="not-found">
      <EmptyState title={title} icon="search" testId="not-found-state" heading="h1">
        <p>{props.message ?? 'There is nothing at this address.'}</p>
        <a class="button button-primary" href="/">
          Browse all packages
        </a>
      </EmptyState>
    </div>
  );
}
