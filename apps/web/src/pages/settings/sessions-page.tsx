import { useState } from 'preact/hooks';
import { refreshAccount } from '../../account.js';
import { listSessions, revokeAllSessions, revokeSession, type SessionInfo } from '../../accounts-api.js';
import {
  errorText,
  FormStatus,
  formatWhen,
  SettingsTabs,
  SignedIn,
  usePageTitle,
} from '../../components/account-pages.js';
import { ErrorState, SkeletonList } from '../../components/states.js';
import { navigate } from '../../router.js';
import { useResource } from '../../use-resource.js';

// /settings/sessions: where the account is signed in (better-auth's list-sessions), each revocable, and
// "sign out everywhere" (revoke-sessions), which ends this browser's session too.

/** A short name of the browser from its user agent ("Chrome on Linux"); the whole string is its title. */
function browserOf(userAgent: string | null | undefined): string {
  if (!userAgent) return 'Unknown device';
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : /pkgreg|node|undici/i.test(userAgent)
            ? 'pkgreg CLI'
            : 'Browser';
  const os = /Windows/.test(userAgent)
    ? 'Windows'
    : /Android/.test(userAgent)
      ? 'Android'
      : /iPhone|iPad/.test(userAgent)
        ? 'iOS'
        : /Mac OS X/.test(userAgent)
          ? 'macOS'
          : /Linux/.test(userAgent)
            ? 'Linux'
            : null;
  return os ? `${browser} on ${os}` : browser;
}

interface SessionsData {
  sessions: SessionInfo[];
}

function Sessions() {
  const [version, setVersion] = useState(0);
  const [data, retry] = useResource<SessionsData>(`sessions-${version}`, async () => {
    return { sessions: await listSessions() };
  });
  const [error, setError] = useState<string | null>(null);
  const [success, setSuccess] = useState<string | null>(null);
  const [confirmAll, setConfirmAll] = useState(false);

  const onRevoke = async (session: SessionInfo) => {
    setError(null);
    try {
      await revokeSession(session.id);
      setSuccess(`Signed out ${browserOf(session.userAgent)}.`);
      setVersion((v) => v + 1);
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  const onRevokeAll = async () => {
    setError(null);
    try {
      await revokeAllSessions();
      await refreshAccount();
      navigate('/sign-in');
    } catch (failure) {
      setError(errorText(failure));
    }
  };

  return (
    <div class="settings-page">
      <h1 class="page-title" tabIndex={-1} data-page-heading>
        Sessions
      </h1>
      <SettingsTabs current="sessions" />
      <p class="page-lead">
        Where your account is signed in: browsers, and the command line after <code>pkgreg login</code>.
      </p>
      {data.status === 'loading' && !data.previous ? (
        <SkeletonList rows={2} label="Loading sessions" />
      ) : data.status === 'error' ? (
        <ErrorState error={data.error} onRetry={retry} context="your sessions" />
      ) : (
        <ul class="session-list" data-testid="session-list">
          {(data.status === 'ok' ? data.data : (data.previous as SessionsData)).sessions.map((session) => {
            const current = session.current;
            const label = browserOf(session.userAgent);
            return (
              <li class="card session" key={session.id} data-testid="session" data-current={current}>
                <div>
                  <strong title={session.userAgent ?? undefined}>{label}</strong>
                  {current ? <span class="badge badge-verified">This browser</span> : null}
                  <div class="muted">
                    {session.ipAddress ? `${session.ipAddress} · ` : ''}signed in{' '}
                    {formatWhen(session.createdAt)} · expires {formatWhen(session.expiresAt)}
                  </div>
                </div>
                {current ? null : (
                  <button type="button" class="button" onClick={() => onRevoke(session)}>
                    Sign out
                    <span class="visually-hidden">
                      {' '}
                      {label}, signed in {formatWhen(session.createdAt)}
                    </span>
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <section class="card danger-zone" aria-labelledby="everywhere-title">
        <h2 id="everywhere-title" class="card-heading">
          Sign out everywhere
        </h2>
        <p>
          Ends every session, this one included. Access tokens keep working: revoke them on the tokens page.
        </p>
        {confirmAll ? (
          <fieldset class="confirm">
            <legend class="visually-hidden">Sign out everywhere?</legend>
            <button
              type="button"
              class="button button-danger"
              onClick={onRevokeAll}
              data-testid="confirm-everywhere"
            >
              Yes, sign out everywhere
            </button>
            <button type="button" class="button" onClick={() => setConfirmAll(false)}>
              Cancel
            </button>
          </fieldset>
        ) : (
          <button
            type="button"
            class="button"
            onClick={() => setConfirmAll(true)}
            data-testid="sign-out-everywhere"
          >
            Sign out everywhere
          </button>
        )}
      </section>
      <FormStatus error={error} success={success} />
    </div>
  );
}

export function SessionsPage() {
  usePageTitle('Sessions');
  return <SignedIn title="Sessions">{() => <Sessions />}</SignedIn>;
}
