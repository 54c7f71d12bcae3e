import type { AuthOptions } from '@pkgreg/contracts';
import { useState } from 'preact/hooks';
import { refreshAccount, useAccount } from '../account.js';
import { devSignIn, getAuthOptions, providerSignInUrl } from '../accounts-api.js';
import { errorText, FormStatus, usePageTitle } from '../components/account-pages.js';
import { ErrorState, SkeletonList } from '../components/states.js';
import { safeNext } from '../next-path.js';
import { navigate } from '../router.js';
import { useResource } from '../use-resource.js';

// /sign-in: the methods the registry offers (GET /api/auth-options). A provider's button hands the
// browser to the provider, which comes back through the registry's callback to `next`; the development
// sign-in signs in at once. `next` is only ever a path of this site (safeNext).

const HANDLE_PATTERN = '[a-z0-9][a-z0-9\\-]{0,38}';

export function SignInPage(props: { search: string }) {
  usePageTitle('Sign in');
  const params = new URLSearchParams(props.search);
  const next = safeNext(params.get('next'));
  const providerFailed = params.get('error') !== null;
  const account = useAccount();
  const [options, retry] = useResource<AuthOptions>('auth-options', () => getAuthOptions());
  const [handle, setHandle] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(
    providerFailed ? 'The sign-in provider did not sign you in. Try again.' : null,
  );

  const onDevSignIn = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await devSignIn(handle.trim());
      await refreshAccount();
      navigate(next, { replace: true });
    } catch (failure) {
      setError(errorText(failure));
      setBusy(false);
    }
  };

  const onProvider = async (id: string) => {
    setBusy(true);
    setError(null);
    try {
      window.location.assign(await providerSignInUrl(id, next));
    } catch (failure) {
      setError(errorText(failure));
      setBusy(false);
    }
  };

  return (
    <div class="page-narrow sign-in" data-testid="sign-in-page">
      <h1 class="page-title" tabIndex={-1} data-page-heading>
        Sign in to pkgreg
      </h1>
      {account.status === 'signed-in' ? (
        <p class="notice notice-info" role="note">
          You are signed in as {account.me.account.name}. <a href={next}>Continue</a>
        </p>
      ) : null}
      {options.status === 'loading' ? (
        <SkeletonList rows={1} label="Loading sign-in options" />
      ) : options.status === 'error' ? (
        <ErrorState error={options.error} onRetry={retry} context="the sign-in options" />
      ) : (
        <div class="card sign-in-card">
          {options.data.providers.map((provider) => (
            <button
              key={provider.id}
              type="button"
              class="button button-primary sign-in-provider"
              disabled={busy}
              onClick={() => onProvider(provider.id)}
              data-testid={`sign-in-${provider.id}`}
            >
              Continue with {provider.name}
            </button>
          ))}
          {options.data.devSignIn ? (
            <form class="form" onSubmit={onDevSignIn} data-testid="dev-sign-in">
              {options.data.providers.length > 0 ? <p class="divider">or, in development</p> : null}
              <label for="dev-handle">Handle</label>
              <p class="field-hint" id="dev-handle-hint">
                Development sign-in: any handle signs in as that account (created on first use). Lowercase
                letters, digits and dashes.
              </p>
              <input
                id="dev-handle"
                class="input"
                name="handle"
                required
                pattern={HANDLE_PATTERN}
                maxLength={39}
                autocomplete="username"
                aria-describedby="dev-handle-hint sign-in-error"
                value={handle}
                onInput={(event) => setHandle((event.target as HTMLInputElement).value)}
              />
              <button type="submit" class="button button-primary" disabled={busy}>
                Sign in
              </button>
            </form>
          ) : null}
          {options.data.providers.length === 0 && !options.data.devSignIn ? (
            <p>
              This registry has no sign-in method configured. Its operator sets one up (docs/accounts.md).
            </p>
          ) : null}
          <FormStatus error={error} id="sign-in-error" />
        </div>
      )}
    </div>
  );
}
