import type { ComponentChildren } from 'preact';
import { ApiError, RegistryUnavailableError } from '../api.js';
import { AlertIcon, BoxIcon, PlugIcon, SearchIcon } from './icons.js';

// Designed empty, loading and error states: never a blank page.

export function EmptyState(props: {
  title: string;
  icon?: 'box' | 'search';
  children?: ComponentChildren;
  testId?: string;
  /** h1 when the state is the whole page (404), h2 inside a section. */
  heading?: 'h1' | 'h2';
}) {
  const Heading = props.heading ?? 'h2';
  const Icon = props.icon === 'search' ? SearchIcon : BoxIcon;
  return (
    <div class="state" data-testid={props.testId ?? 'empty-state'}>
      <div class="state-icon">
        <Icon width={28} height={28} />
      </div>
      <Heading class="state-title">{props.title}</Heading>
      {props.children ? <div class="state-body">{props.children}</div> : null}
    </div>
  );
}

export function ErrorState(props: {
  error: unknown;
  onRetry?: () => void;
  context?: string;
  heading?: 'h1' | 'h2';
}) {
  const Heading = props.heading ?? 'h2';
  const down = props.error instanceof RegistryUnavailableError;
  const message =
    props.error instanceof ApiError || props.error instanceof RegistryUnavailableError
      ? props.error.message
      : 'Something unexpected happened.';
  return (
    <div class="state state-error" role="alert" data-testid={down ? 'registry-down' : 'error-state'}>
      <div class="state-icon">
        {down ? <PlugIcon width={28} height={28} /> : <AlertIcon width={28} height={28} />}
      </div>
      <Heading class="state-title">
        {down ? 'The registry is not responding' : 'Something went wrong'}
      </Heading>
      <div class="state-body">
        <p>
          {down
            ? `We could not reach the pkgreg registry${props.context ? ` to load ${props.context}` : ''}. It may be restarting; your connection may also be down.`
            : message}
        </p>
        {props.onRetry ? (
          <button type="button" class="button button-primary" onClick={props.onRetry}>
            Try again
          </button>
        ) : null}
      </div>
    </div>
  );
}

export function SkeletonList(props: { rows?: number; label: string }) {
  const rows = Array.from({ length: props.rows ?? 5 }, (_, i) => i);
  return (
    <div class="skeleton-list" aria-busy="true" data-testid="loading">
      <span class="visually-hidden" role="status">
        {props.label}
      </span>
      {rows.map((i) => (
        <div class="card skeleton-card" key={i} aria-hidden="true">
          <div class="skeleton skeleton-title" />
          <div class="skeleton skeleton-line" />
          <div class="skeleton skeleton-line short" />
        </div>
      ))}
    </div>
  );
}
