import type { AuditEventDto, Me, RoleName, ScopeSettings, Visibility } from '@pkgreg/contracts';
import { useState } from 'preact/hooks';
import { atLeast, refreshAccount } from '../account.js';
import {
  cancelInvitation,
  type FullOrganization,
  getOrganization,
  getScopeSettings,
  inviteMember,
  type OrgMember,
  organizationAudit,
  removeMember,
  updateMemberRole,
  updateScopeSettings,
} from '../accounts-api.js';
import { errorText, FormStatus, formatWhen, SignedIn, usePageTitle } from '../components/account-pages.js';
import { CopyButton } from '../components/copy-button.js';
import { ErrorState, SkeletonList } from '../components/states.js';
import { useResource } from '../use-resource.js';

// /orgs/:slug: an organisation's members and roles, invitations (a link to hand over: /invitations/:id),
// its scopes and their visibility, the address its skills install from, and for owners and admins the
// audit log. Membership is better-auth's
// organization plugin; scopes are the registry's scope settings; the log is GET /api/orgs/:slug/audit.

const ROLES: RoleName[] = ['reader', 'publisher', 'admin', 'owner'];
const SCOPE_PATTERN = '@?[a-z0-9][a-z0-9\\-]{0,38}';

function RoleSelect(props: {
  id: string;
  value: RoleName;
  onChange: (role: RoleName) => void;
  label: string;
}) {
  return (
    <select
      id={props.id}
      class="input input-inline"
      aria-label={props.label}
      value={props.value}
      onChange={(event) => props.onChange((event.target as HTMLSelectElement).value as RoleName)}
    >
      {ROLES.map((role) => (
        <option key={role} value={role}>
          {role}
        </option>
      ))}
    </select>
  );
}

function Members(props: { org: FullOrganization; me: Me; manage: boolean; onChange: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [success, setSuccess] = useState<string | null>(null);
  const act = async (done: string, action: () => Promise<void>) => {
    setError(null);
    setSuccess(null);
    try {
      await action();
      setSuccess(done);
      props.onChange();
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  const label = (m: OrgMember) => m.user.name || m.user.email;
  return (
    <section aria-labelledby="members-title" class="org-section">
      <h2 id="members-title" class="section-title">
        Members
      </h2>
      <div class="table-wrap card">
        <table class="data-table" data-testid="members">
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              {props.manage ? (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {props.org.members.map((member) => (
              <tr key={member.id} data-testid="member" data-email={member.user.email}>
                <th scope="row">
                  {label(member)}
                  {member.userId === props.me.account.id ? <span class="muted"> (you)</span> : null}
                  <div class="muted">{member.user.email}</div>
                </th>
                <td>
                  {props.manage ? (
                    <RoleSelect
                      id={`role-${member.id}`}
                      label={`Role of ${label(member)}`}
                      value={member.role}
                      onChange={(role) =>
                        act(`${label(member)} is now ${role}.`, () =>
                          updateMemberRole(props.org.id, member.id, role),
                        )
                      }
                    />
                  ) : (
                    member.role
                  )}
                </td>
                <td>{formatWhen(member.createdAt)}</td>
                {props.manage ? (
                  <td class="cell-actions">
                    {member.userId === props.me.account.id ? null : (
                      <button
                        type="button"
                        class="button"
                        onClick={() =>
                          act(`${label(member)} was removed.`, () => removeMember(props.org.id, member.id))
                        }
                      >
                        Remove<span class="visually-hidden"> {label(member)}</span>
                      </button>
                    )}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <FormStatus error={error} success={success} />
    </section>
  );
}

function Invitations(props: { org: FullOrganization; onChange: () => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<RoleName>('reader');
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const pending = props.org.invitations.filter((i) => i.status === 'pending');
  const linkOf = (id: string) => `${window.location.origin}/invitations/${encodeURIComponent(id)}`;

  const onInvite = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setLink(null);
    try {
      const id = await inviteMember(props.org.id, email.trim(), role);
      setLink(linkOf(id));
      setEmail('');
      props.onChange();
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };
  const onCancel = async (id: string) => {
    setError(null);
    try {
      await cancelInvitation(id);
      props.onChange();
    } catch (failure) {
      setError(errorText(failure));
    }
  };

  return (
    <section aria-labelledby="invite-title" class="org-section">
      <h2 id="invite-title" class="section-title">
        Invitations
      </h2>
      <form class="card form" onSubmit={onInvite} data-testid="invite">
        <div class="form-row">
          <div>
            <label for="invite-email">Email</label>
            <input
              id="invite-email"
              class="input"
              type="email"
              required
              value={email}
              onInput={(event) => setEmail((event.target as HTMLInputElement).value)}
              aria-describedby="invite-hint invite-error"
            />
          </div>
          <div>
            <label for="invite-role">Role</label>
            <RoleSelect id="invite-role" label="Role" value={role} onChange={setRole} />
          </div>
        </div>
        <p class="field-hint" id="invite-hint">
          The person signs in with this email address and opens the invitation link.
        </p>
        <button type="submit" class="button button-primary" disabled={busy}>
          Invite
        </button>
        <FormStatus
          error={error}
          id="invite-error"
          success={link ? 'Invitation created. Send this link:' : null}
        />
        {link ? (
          <div class="install-row" data-testid="invitation-link">
            <code class="install-command">{link}</code>
            <CopyButton text={link} label="Copy link" />
          </div>
        ) : null}
      </form>
      {pending.length > 0 ? (
        <ul class="invitation-list" data-testid="pending-invitations">
          {pending.map((invitation) => (
            <li class="card invitation" key={invitation.id} data-testid="pending-invitation">
              <span>
                <strong>{invitation.email}</strong> as {invitation.role} · expires{' '}
                {formatWhen(invitation.expiresAt)}
              </span>
              <span class="invitation-actions">
                <CopyButton
                  text={linkOf(invitation.id)}
                  label="Copy link"
                  ariaLabel={`Copy link for ${invitation.email}`}
                />
                <button type="button" class="button" onClick={() => onCancel(invitation.id)}>
                  Cancel<span class="visually-hidden"> the invitation of {invitation.email}</span>
                </button>
              </span>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function ScopeRow(props: { settings: ScopeSettings; manage: boolean; onChange: () => void }) {
  const { settings } = props;
  const [error, setError] = useState<string | null>(null);
  const toggle = async (visibility: Visibility) => {
    setError(null);
    try {
      await updateScopeSettings(settings.scope, { visibility });
      props.onChange();
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  return (
    <li class="card scope" data-testid="org-scope" data-scope={settings.scope}>
      <span>
        <strong>@{settings.scope}</strong>{' '}
        {settings.visibility === 'private' ? (
          <span class="badge badge-private">Private</span>
        ) : (
          <span class="badge">Public</span>
        )}
      </span>
      {props.manage ? (
        <button
          type="button"
          class="button"
          onClick={() => toggle(settings.visibility === 'private' ? 'public' : 'private')}
          data-testid="toggle-visibility"
        >
          Make @{settings.scope} {settings.visibility === 'private' ? 'public' : 'private'}
        </button>
      ) : null}
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </li>
  );
}

function Scopes(props: {
  org: FullOrganization;
  me: Me;
  manage: boolean;
  version: number;
  onChange: () => void;
}) {
  const candidates = props.me.scopes.map((s) => s.scope);
  const [scopes, retry] = useResource(
    `scopes-${props.org.id}-${props.version}-${candidates.join(',')}`,
    async () => {
      // /api/me names the scopes the account reaches; their settings say which organisation holds each.
      const settings = await Promise.all(
        candidates.map((scope) => getScopeSettings(scope).catch(() => null)),
      );
      return settings.filter((s): s is ScopeSettings => s?.organization?.id === props.org.id);
    },
  );
  const [claim, setClaim] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [success, setSuccess] = useState<string | null>(null);
  const onClaim = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setSuccess(null);
    const scope = claim.trim().replace(/^@/, '');
    try {
      await updateScopeSettings(scope, { organizationId: props.org.id });
      setClaim('');
      setSuccess(`@${scope} now belongs to ${props.org.name}.`);
      await refreshAccount();
      props.onChange();
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  return (
    <section aria-labelledby="scopes-title" class="org-section">
      <h2 id="scopes-title" class="section-title">
        Scopes
      </h2>
      {scopes.status === 'loading' && !scopes.previous ? (
        <SkeletonList rows={1} label="Loading scopes" />
      ) : scopes.status === 'error' ? (
        <ErrorState error={scopes.error} onRetry={retry} context="the scopes" />
      ) : (scopes.status === 'ok' ? scopes.data : (scopes.previous ?? [])).length === 0 ? (
        <p class="muted">No scope belongs to this organisation yet.</p>
      ) : (
        <ul class="scope-list" data-testid="org-scopes">
          {(scopes.status === 'ok' ? scopes.data : (scopes.previous ?? [])).map((settings) => (
            <ScopeRow
              key={settings.scope}
              settings={settings}
              manage={props.manage}
              onChange={props.onChange}
            />
          ))}
        </ul>
      )}
      {props.manage ? (
        <form class="card form" onSubmit={onClaim} data-testid="claim-scope">
          <label for="claim-scope">Claim a scope</label>
          <p class="field-hint" id="claim-hint">
            A scope nobody holds yet, or one you administer, moves into {props.org.name}.
          </p>
          <div class="form-inline">
            <input
              id="claim-scope"
              class="input"
              required
              pattern={SCOPE_PATTERN}
              placeholder="@scope"
              value={claim}
              onInput={(event) => setClaim((event.target as HTMLInputElement).value)}
              aria-describedby="claim-hint claim-error"
            />
            <button type="submit" class="button button-primary">
              Claim
            </button>
          </div>
          <FormStatus error={error} success={success} id="claim-error" />
        </form>
      ) : null}
    </section>
  );
}

function AuditLog(props: { org: FullOrganization; version: number }) {
  const [events, retry] = useResource<AuditEventDto[]>(`audit-${props.org.slug}-${props.version}`, () =>
    organizationAudit(props.org.slug),
  );
  const who = (id: string | null) => {
    const member = props.org.members.find((m) => m.userId === id);
    return member ? member.user.name || member.user.email : (id ?? 'the registry');
  };
  return (
    <section aria-labelledby="audit-title" class="org-section">
      <h2 id="audit-title" class="section-title">
        Audit log
      </h2>
      {events.status === 'loading' && !events.previous ? (
        <SkeletonList rows={2} label="Loading the audit log" />
      ) : events.status === 'error' ? (
        <ErrorState error={events.error} onRetry={retry} context="the audit log" />
      ) : (
        <div class="table-wrap card">
          <table class="data-table" data-testid="audit-log">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
                <th scope="col">Target</th>
              </tr>
            </thead>
            <tbody>
              {(events.status === 'ok' ? events.data : (events.previous ?? [])).map((event) => (
                <tr key={event.id} data-testid="audit-event" data-action={event.action}>
                  <td>{formatWhen(event.at)}</td>
                  <td>{who(event.actorId)}</td>
                  <td>
                    <code>{event.action}</code>
                  </td>
                  <td>{event.target ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Organization(props: { slug: string; me: Me }) {
  const [version, setVersion] = useState(0);
  const [org, retry] = useResource(`org-${props.slug}-${version}`, () => getOrganization(props.slug));
  const role = props.me.organizations.find((o) => o.slug === props.slug)?.role;
  const manage = atLeast(role, 'admin');
  const onChange = () => setVersion((v) => v + 1);
  const current = org.status === 'ok' ? org.data : org.status === 'loading' ? org.previous : null;
  if (org.status === 'error')
    return <ErrorState error={org.error} onRetry={retry} context="the organisation" heading="h1" />;
  if (!current) return <SkeletonList rows={3} label="Loading the organisation" />;
  return (
    <div class="settings-page" data-testid="org-page">
      <nav class="breadcrumbs" aria-label="Breadcrumb">
        <a href="/settings/orgs">Organisations</a> <span aria-hidden="true">/</span>{' '}
        <span>{current.slug}</span>
      </nav>
      <h1 class="page-title" tabIndex={-1} data-page-heading>
        {current.name}
      </h1>
      <p class="page-lead">
        {role ? (
          <>
            You are <strong>{role}</strong> of this organisation.
          </>
        ) : (
          'You administer this registry.'
        )}
      </p>
      <Members org={current} me={props.me} manage={manage} onChange={onChange} />
      {manage ? <Invitations org={current} onChange={onChange} /> : null}
      <Scopes org={current} me={props.me} manage={manage} version={version} onChange={onChange} />
      <InstallAddress slug={current.slug} />
      {manage || props.me.account.siteAdmin ? <AuditLog org={current} version={version} /> : null}
    </div>
  );
}

/**
 * Where the organisation's skills install from: its Agent Skills discovery index below this page's
 * address (docs/discovery.md, "An organisation's index"). Other installers send no credentials, so they
 * see its public skills; `pkgreg install` sends the registry's token and installs private ones too.
 */
function InstallAddress(props: { slug: string }) {
  const address = `${window.location.origin}/orgs/${props.slug}`;
  const commands = [`npx skills add ${address}`, `pkgreg install ${address} --skill <name>`];
  return (
    <section aria-labelledby="install-title" class="org-section">
      <h2 id="install-title" class="section-title">
        Install its skills
      </h2>
      <p class="muted">
        Every skill of its scopes, from one address. Any Agent Skills installer gets the public ones;{' '}
        <code>pkgreg install</code> with your token gets the private ones too.
      </p>
      {commands.map((command) => (
        <div class="install-row" key={command}>
          <code class="install-command" data-testid="org-install-command">
            <span class="prompt" aria-hidden="true">
              ${' '}
            </span>
            {command}
          </code>
          <CopyButton text={command} label="Copy" ariaLabel={`Copy ${command}`} class="button install-copy" />
        </div>
      ))}
    </section>
  );
}

export function OrgPage(props: { slug: string }) {
  usePageTitle(props.slug);
  return <SignedIn title="Organisation">{(me) => <Organization slug={props.slug} me={me} />}</SignedIn>;
}
