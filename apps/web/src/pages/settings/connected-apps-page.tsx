import { useState } from 'preact/hooks';
import { type ConnectedAppView, listConnectedApps, revokeConnectedApp } from '../../accounts-api.js';
import {
  ConfirmRevoke,
  errorText,
  FormStatus,
  formatWhen,
  SettingsTabs,
  SignedIn,
  usePageTitle,
} from '../../components/account-pages.js';
import { EmptyState, ErrorState, SkeletonList } from '../../components/states.js';
import { useResource } from '../../use-resource.js';

// /settings/connected-apps: the agent apps (MCP clients) allowed to use pkgreg as this account
// (GET /api/connected-apps), each revocable (DELETE /api/connected-apps/:clientId): the edge refuses the
// app's tokens at once, and the app has to ask again.

/** What the app calls itself (its own claim), or its client id when it gave no name. */
const nameOf = (app: ConnectedAppView) => app.clientName ?? app.clientId;

function AppRow(props: { app: ConnectedAppView; onRevoked: (name: string) => void }) {
  const { app } = props;
  const name = nameOf(app);
  const [error, setError] = useState<string | null>(null);
  const onRevoke = async () => {
    setError(null);
    try {
      await revokeConnectedApp(app.clientId);
      props.onRevoked(name);
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  return (
    <tr data-testid="connected-app" data-client-id={app.clientId}>
      <th scope="row">
        {name}
        <div class="muted mono">{app.clientId}</div>
      </th>
      <td>
        <ul class="scope-list">
          {app.scopes.map((scope) => (
            <li key={scope.name}>
              {scope.description ?? scope.name}
              {scope.description ? <div class="muted mono">{scope.name}</div> : null}
            </li>
          ))}
        </ul>
      </td>
      <td>{formatWhen(app.createdAt)}</td>
      <td>{app.lastUsedAt ? formatWhen(app.lastUsedAt) : 'never'}</td>
      <td class="cell-actions">
        <ConfirmRevoke
          name={name}
          onConfirm={onRevoke}
          testId="revoke-app"
          confirmTestId="confirm-revoke-app"
        />
        {error ? (
          <p class="form-error" role="alert">
            {error}
          </p>
        ) : null}
      </td>
    </tr>
  );
}

function ConnectedApps() {
  const [version, setVersion] = useState(0);
  const [success, setSuccess] = useState<string | null>(null);
  const [apps, retry] = useResource(`connected-apps-${version}`, () => listConnectedApps());
  const shown = apps.status === 'ok' ? apps.data : apps.status === 'loading' ? (apps.previous ?? []) : [];
  const onRevoked = (name: string) => {
    setSuccess(`Revoked ${name}.`);
    setVersion((v) => v + 1);
  };
  return (
    <div class="settings-page">
      <h1 class="page-title" tabIndex={-1} data-page-heading>
        Connected apps
      </h1>
      <SettingsTabs current="connected-apps" />
      <p class="page-lead">
        Agent apps (Claude, ChatGPT, VS Code, Cursor…) you allowed to use pkgreg's MCP server as you. Revoking
        one stops it at once; it has to ask you again.
      </p>
      {apps.status === 'loading' && !apps.previous ? (
        <SkeletonList rows={2} label="Loading connected apps" />
      ) : apps.status === 'error' ? (
        <ErrorState error={apps.error} onRetry={retry} context="your connected apps" />
      ) : shown.length === 0 ? (
        <EmptyState title="No connected apps" testId="no-connected-apps">
          <p>When an agent app asks to use pkgreg as you and you allow it, it is listed here.</p>
        </EmptyState>
      ) : (
        <div class="table-wrap card">
          <table class="data-table" data-testid="connected-app-table">
            <thead>
              <tr>
                <th scope="col">App</th>
                <th scope="col">Allowed to</th>
                <th scope="col">Connected</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((app) => (
                <AppRow key={app.clientId} app={app} onRevoked={onRevoked} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <FormStatus success={success} />
    </div>
  );
}

export function ConnectedAppsPage() {
  usePageTitle('Connected apps');
  return <SignedIn title="Connected apps">{() => <ConnectedApps />}</SignedIn>;
}
