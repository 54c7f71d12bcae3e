import { useState } from 'preact/hooks';
import { refreshAccount } from '../account.js';
import { acceptInvitation, getInvitation, rejectInvitation } from '../accounts-api.js';
import { errorText, FormStatus, formatWhen, SignedIn, usePageTitle } from '../components/account-pages.js';
import { ErrorState, SkeletonList } from '../components/states.js';
import { navigate } from '../router.js';
import { useResource } from '../use-resource.js';

// /invitations/:id: the link an owner or admin hands over. The invited person signs in (with the address
// the invitation names: better-auth checks it) and accepts or declines.

function Invitation(props: { id: string }) {
  const [invitation, retry] = useResource(`invitation-${props.id}`, () => getInvitation(props.id));
  const [error, setError] = useState<string | null>(null);
  const [success, setSuccess] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (invitation.status === 'loading') return <SkeletonList rows={1} label="Loading the invitation" />;
  if (invitation.status === 'error') {
    return <ErrorState error={invitation.error} onRetry={retry} context="the invitation" heading="h1" />;
  }
  const found = invitation.data;
  const onAccept = async () => {
    setBusy(true);
    setError(null);
    try {
      await acceptInvitation(found.id);
      await refreshAccount();
      navigate(`/orgs/${encodeURIComponent(found.organizationSlug)}`);
    } catch (failure) {
      setError(errorText(failure));
      setBusy(false);
    }
  };
  const onReject = async () => {
    setBusy(true);
    setError(null);
    try {
      await rejectInvitation(found.id);
      setSuccess(`You declined to join ${found.organizationName}.`);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="page-narrow" data-testid="invitation-page">
      <h1 class="page-title" tabIndex={-1} data-page-heading>
        Join {found.organizationName}
      </h1>
      <div class="card">
        <p>
          {found.inviterEmail} invited <strong>{found.email}</strong> to join {found.organizationName} as{' '}
          <strong>{found.role}</strong>. The invitation expires {formatWhen(found.expiresAt)}.
        </p>
        {found.status === 'pending' && !success ? (
          <div class="actions">
            <button
              type="button"
              class="button button-primary"
              onClick={onAccept}
              disabled={busy}
              data-testid="accept"
            >
              Accept and join
            </button>
            <button type="button" class="button" onClick={onReject} disabled={busy} data-testid="reject">
              Decline
            </button>
          </div>
        ) : (
          <p class="muted">This invitation is {success ? 'declined' : found.status}.</p>
        )}
        <FormStatus error={error} success={success} />
      </div>
    </div>
  );
}

export function InvitationPage(props: { id: string }) {
  usePageTitle('Invitation');
  return <SignedIn title="Invitation">{() => <Invitation id={props.id} />}</SignedIn>;
}
