import type { Me } from '@pkgreg/contracts';
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { type AccountState, useAccount } from '../account.js';
import { useLocation } from '../router.js';
import { ErrorState, SkeletonList } from './states.js';

// What every signed-in page shares: its title, the "sign in to continue" state, the settings tabs and
// the status line that announces the outcome of a form.

export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · pkgreg`;
  }, [title]);
}

/** Renders `children(me)` once signed in; otherwise a sign-in prompt that comes back here. */
export function SignedIn(props: { title: string; children: (me: Me) => ComponentChildren }) {
  const account: AccountState = useAccount();
  const location = useLocation();
  if (account.status === 'loading') return <SkeletonList rows={2} label="Loading your account" />;
  if (account.status === 'error')
    return <ErrorState error={account.error} context="your account" heading="h1" />;
  if (account.status === 'signed-out') {
    const next = encodeURIComponent(location.pathname + location.search);
    return (
      <div class="page-narrow" data-testid="sign-in-required">
        <h1 class="page-title" tabIndex={-1} data-page-heading>
          {props.title}
        </h1>
        <p>You need to be signed in to see this page.</p>
        <a class="button button-primary" href={`/sign-in?next=${next}`}>
          Sign in
        </a>
      </div>
    );
  }
  return <>{props.children(account.me)}</>;
}

export function SettingsTabs(props: { current: 'tokens' | 'sessions' | 'connected-apps' | 'orgs' }) {
  const tabs = [
    ['tokens', '/settings/tokens', 'Access tokens'],
    ['sessions', '/settings/sessions', 'Sessions'],
    ['connected-apps', '/settings/connected-apps', 'Connected apps'],
    ['orgs', '/settings/orgs', 'Organisations'],
  ] as const;
  return (
    <nav class="settings-tabs" aria-label="Settings">
      {tabs.map(([id, href, label]) => (
        <a key={id} href={href} class="segment" aria-current={props.current === id ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

/** A Revoke button that asks once more ("Revoke <name>", or Keep) before `onConfirm`. */
export function ConfirmRevoke(props: {
  name: string;
  onConfirm: () => void;
  testId: string;
  confirmTestId: string;
}) {
  const [confirming, setConfirming] = useState(false);
  return confirming ? (
    <fieldset class="confirm">
      <legend class="visually-hidden">Revoke {props.name}?</legend>
      <button
        type="button"
        class="button button-danger"
        onClick={props.onConfirm}
        data-testid={props.confirmTestId}
      >
        Revoke {props.name}
      </button>
      <button type="button" class="button" onClick={() => setConfirming(false)}>
        Keep
      </button>
    </fieldset>
  ) : (
    <button type="button" class="button" onClick={() => setConfirming(true)} data-testid={props.testId}>
      Revoke<span class="visually-hidden"> {props.name}</span>
    </button>
  );
}

/** A form's outcome: errors are alerts (announced at once), successes polite. */
export function FormStatus(props: { error?: string | null; success?: string | null; id?: string }) {
  return (
    <>
      <p class="form-error" role="alert" id={props.id} data-testid="form-error">
        {props.error ?? ''}
      </p>
      <p class="form-success" role="status" data-testid="form-success">
        {props.success ?? ''}
      </p>
    </>
  );
}

/** The message of a failed call, for a form's error line. */
export function errorText(error: unknown): string {
  return error instanceof Error && error.message ? error.message : 'Something went wrong. Try again.';
}

export function formatWhen(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date.toLocaleString('en', { dateStyle: 'medium', timeStyle: 'short' });
}
