import type { CreatedToken, Me, TokenSummary } from '@pkgreg/contracts';
import { useState } from 'preact/hooks';
import { createToken, listTokens, revokeToken } from '../../accounts-api.js';
import {
  ConfirmRevoke,
  errorText,
  FormStatus,
  formatWhen,
  SettingsTabs,
  SignedIn,
  usePageTitle,
} from '../../components/account-pages.js';
import { CopyButton } from '../../components/copy-button.js';
import { AlertIcon } from '../../components/icons.js';
import { EmptyState, ErrorState, SkeletonList } from '../../components/states.js';
import { useResource } from '../../use-resource.js';

// /settings/tokens: the account's access tokens (POST/GET/DELETE /api/tokens). A new token's secret is
// in the create answer only: shown here once, with a copy button, and gone when the page is left.

/** Comma- or whitespace-separated values, blanks dropped. */
function listOf(value: string): string[] {
  return value
    .split(/[\s,]+/)
    .map((part) => part.trim())
    .filter(Boolean);
}

function CreatedSecret(props: { created: CreatedToken; onDone: () => void }) {
  return (
    <section class="card secret-card" aria-labelledby="secret-title" data-testid="new-token">
      <h2 id="secret-title" class="card-heading">
        Your new token “{props.created.name}”
      </h2>
      <p class="notice notice-warning" role="note">
        <AlertIcon width={18} height={18} />
        <span>
          Copy it now: this is the only time it is shown. pkgreg keeps only a hash of it and cannot show it
          again.
        </span>
      </p>
      <div class="install-row">
        <code class="install-command secret" data-testid="new-token-secret">
          {props.created.token}
        </code>
        <CopyButton text={props.created.token} label="Copy token" testId="copy-token" />
      </div>
      <button type="button" class="button" onClick={props.onDone}>
        Done, I saved it
      </button>
    </section>
  );
}

function CreateTokenForm(props: { me: Me; maxDays: number; onCreated: (token: CreatedToken) => void }) {
  const [name, setName] = useState('');
  const [permission, setPermission] = useState<'read' | 'publish'>('read');
  const [organizations, setOrganizations] = useState<string[]>([]);
  const [scopes, setScopes] = useState('');
  const [packages, setPackages] = useState('');
  const [days, setDays] = useState('30');
  const [cidrs, setCidrs] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const onSubmit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = await createToken({
        name: name.trim(),
        permission,
        organizations,
        scopes: listOf(scopes).map((s) => s.replace(/^@/, '')),
        packages: listOf(packages).map((p) => p.replace(/^@/, '')),
        allowedCidrs: listOf(cidrs),
        expiresInDays: Number(days),
      });
      setName('');
      setScopes('');
      setPackages('');
      setCidrs('');
      setOrganizations([]);
      props.onCreated(created);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  const text = (set: (v: string) => void) => (event: Event) => set((event.target as HTMLInputElement).value);

  return (
    <form
      class="card form"
      onSubmit={onSubmit}
      aria-labelledby="create-token-title"
      data-testid="create-token"
    >
      <h2 id="create-token-title" class="card-heading">
        Create a token
      </h2>
      <label for="token-name">Name</label>
      <input
        id="token-name"
        class="input"
        required
        maxLength={100}
        placeholder="CI deploy"
        value={name}
        onInput={text(setName)}
        aria-describedby="token-error"
      />
      <fieldset class="fieldset">
        <legend>Permission</legend>
        <label class="choice">
          <input
            type="radio"
            name="permission"
            value="read"
            checked={permission === 'read'}
            onChange={() => setPermission('read')}
          />
          Read: install and read private packages
        </label>
        <label class="choice">
          <input
            type="radio"
            name="permission"
            value="publish"
            checked={permission === 'publish'}
            onChange={() => setPermission('publish')}
          />
          Publish: also upload versions
        </label>
      </fieldset>
      <fieldset class="fieldset">
        <legend>Limit to (nothing chosen: everything your account reaches)</legend>
        {props.me.organizations.length > 0 ? (
          <div class="choices">
            {props.me.organizations.map((org) => (
              <label class="choice" key={org.id}>
                <input
                  type="checkbox"
                  checked={organizations.includes(org.id)}
                  onChange={(event) =>
                    setOrganizations((current) =>
                      (event.target as HTMLInputElement).checked
                        ? [...current, org.id]
                        : current.filter((id) => id !== org.id),
                    )
                  }
                />
                Organisation {org.name}
              </label>
            ))}
          </div>
        ) : null}
        <label for="token-scopes">Scopes</label>
        <input
          id="token-scopes"
          class="input"
          placeholder="@acme, @tools"
          value={scopes}
          onInput={text(setScopes)}
          aria-describedby="token-scopes-hint"
        />
        <p class="field-hint" id="token-scopes-hint">
          Separated by commas or spaces.
        </p>
        <label for="token-packages">Packages</label>
        <input
          id="token-packages"
          class="input"
          placeholder="@acme/deploy"
          value={packages}
          onInput={text(setPackages)}
        />
      </fieldset>
      <div class="form-row">
        <div>
          <label for="token-days">Expires after (days)</label>
          <input
            id="token-days"
            class="input"
            type="number"
            required
            min={1}
            max={props.maxDays}
            value={days}
            onInput={text(setDays)}
          />
        </div>
        <div>
          <label for="token-cidrs">Allowed addresses (optional)</label>
          <input
            id="token-cidrs"
            class="input"
            placeholder="203.0.113.0/24"
            value={cidrs}
            onInput={text(setCidrs)}
            aria-describedby="token-cidrs-hint"
          />
          <p class="field-hint" id="token-cidrs-hint">
            IP addresses or CIDR ranges; empty: anywhere.
          </p>
        </div>
      </div>
      <button type="submit" class="button button-primary" disabled={busy}>
        Create token
      </button>
      <FormStatus error={error} id="token-error" />
    </form>
  );
}

function limitsOf(token: TokenSummary, me: Me): string {
  const orgs = token.organizations.map((id) => me.organizations.find((o) => o.id === id)?.name ?? id);
  const parts = [...orgs, ...token.scopes.map((s) => `@${s}`), ...token.packages.map((p) => `@${p}`)];
  return parts.length ? parts.join(', ') : 'everything';
}

function TokenRow(props: { token: TokenSummary; me: Me; onRevoked: () => void }) {
  const { token } = props;
  const [error, setError] = useState<string | null>(null);
  const revoked = token.revokedAt !== null;
  const expired = new Date(token.expiresAt).getTime() < Date.now();
  const onRevoke = async () => {
    setError(null);
    try {
      await revokeToken(token.id);
      props.onRevoked();
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  return (
    <tr data-testid="token-row" data-token-id={token.id}>
      <th scope="row">
        {token.name}
        <div class="muted mono">{token.prefix}…</div>
      </th>
      <td>{token.permission}</td>
      <td>{limitsOf(token, props.me)}</td>
      <td>{formatWhen(token.lastUsedAt)}</td>
      <td>
        {revoked
          ? `revoked ${formatWhen(token.revokedAt)}`
          : expired
            ? 'expired'
            : formatWhen(token.expiresAt)}
      </td>
      <td class="cell-actions">
        {revoked ? null : (
          <ConfirmRevoke
            name={token.name}
            onConfirm={onRevoke}
            testId="revoke-token"
            confirmTestId="confirm-revoke"
          />
        )}
        {error ? (
          <p class="form-error" role="alert">
            {error}
          </p>
        ) : null}
      </td>
    </tr>
  );
}

function Tokens(props: { me: Me }) {
  const [version, setVersion] = useState(0);
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [tokens, retry] = useResource(`tokens-${version}`, () => listTokens());
  const reload = () => setVersion((v) => v + 1);
  return (
    <div class="settings-page">
      <h1 class="page-title" tabIndex={-1} data-page-heading>
        Access tokens
      </h1>
      <SettingsTabs current="tokens" />
      <p class="page-lead">
        Tokens let the command line and CI install private packages and publish:{' '}
        <code>Authorization: Bearer pkgreg_…</code>. Give each one only what it needs.
      </p>
      {created ? <CreatedSecret created={created} onDone={() => setCreated(null)} /> : null}
      <CreateTokenForm
        me={props.me}
        maxDays={3650}
        onCreated={(token) => {
          setCreated(token);
          reload();
        }}
      />
      <section aria-labelledby="tokens-title">
        <h2 id="tokens-title" class="section-title">
          Your tokens
        </h2>
        {tokens.status === 'loading' && !tokens.previous ? (
          <SkeletonList rows={2} label="Loading tokens" />
        ) : tokens.status === 'error' ? (
          <ErrorState error={tokens.error} onRetry={retry} context="your tokens" />
        ) : (tokens.status === 'ok' ? tokens.data : (tokens.previous ?? [])).length === 0 ? (
          <EmptyState title="No tokens yet" testId="no-tokens" />
        ) : (
          <div class="table-wrap card">
            <table class="data-table" data-testid="token-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Permission</th>
                  <th scope="col">Limited to</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {(tokens.status === 'ok' ? tokens.data : (tokens.previous ?? [])).map((token) => (
                  <TokenRow key={token.id} token={token} me={props.me} onRevoked={reload} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  );
}

export function TokensPage() {
  usePageTitle('Access tokens');
  return <SignedIn title="Access tokens">{(me) => <Tokens me={me} />}</SignedIn>;
}
