import { useState } from 'preact/hooks';
import { approveDevice, denyDevice, verifyDeviceCode } from '../accounts-api.js';
import { errorText, FormStatus, SignedIn, usePageTitle } from '../components/account-pages.js';

// /device: where `pkgreg login --device` sends people (RFC 8628). The code the terminal shows is typed or
// arrives as ?user_code=; approving signs that terminal in as this account, denying refuses it.

/** As typed: spaces and dashes dropped, upper case (codes are shown as ABCD-EFGH). */
function normalise(code: string): string {
  return code.replace(/[\s-]+/g, '').toUpperCase();
}

function Device(props: { initial: string }) {
  const [code, setCode] = useState(props.initial);
  const [error, setError] = useState<string | null>(null);
  const [success, setSuccess] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);

  const decide = async (approve: boolean) => {
    setBusy(true);
    setError(null);
    setSuccess(null);
    const userCode = normalise(code);
    try {
      const state = await verifyDeviceCode(userCode);
      if (state.status !== 'pending') throw new Error(`This code is already ${state.status}.`);
      await (approve ? approveDevice(userCode) : denyDevice(userCode));
      setSuccess(
        approve
          ? 'Approved: the command line is signed in. You can close this page.'
          : 'Denied: the command line was not signed in.',
      );
      setDone(true);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="page-narrow" data-testid="device-page">
      <h1 class="page-title" tabIndex={-1} data-page-heading>
        Sign in a device
      </h1>
      <form
        class="card form"
        onSubmit={(event) => {
          event.preventDefault();
          void decide(true);
        }}
      >
        <p>
          Enter the code your terminal shows after <code>pkgreg login --device</code>. Approve only a code you
          requested yourself: the device gets access to your account.
        </p>
        <label for="user-code">Code</label>
        <input
          id="user-code"
          class="input input-code"
          name="user_code"
          required
          autocomplete="one-time-code"
          autocapitalize="characters"
          spellcheck={false}
          value={code}
          disabled={done}
          onInput={(event) => setCode((event.target as HTMLInputElement).value)}
          aria-describedby="device-error"
        />
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={busy || done} data-testid="approve">
            Approve
          </button>
          <button
            type="button"
            class="button"
            disabled={busy || done}
            onClick={() => decide(false)}
            data-testid="deny"
          >
            Deny
          </button>
        </div>
        <FormStatus error={error} success={success} id="device-error" />
      </form>
    </div>
  );
}

export function DevicePage(props: { search: string }) {
  usePageTitle('Sign in a device');
  const initial = new URLSearchParams(props.search).get('user_code') ?? '';
  return <SignedIn title="Sign in a device">{() => <Device initial={initial} />}</SignedIn>;
}
