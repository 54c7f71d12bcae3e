import type { Me } from '@pkgreg/contracts';
import { useState } from 'preact/hooks';
import { refreshAccount } from '../../account.js';
import { createOrganization } from '../../accounts-api.js';
import {
  errorText,
  FormStatus,
  SettingsTabs,
  SignedIn,
  usePageTitle,
} from '../../components/account-pages.js';
import { EmptyState } from '../../components/states.js';
import { navigate } from '../../router.js';

// /settings/orgs: the organisations the account belongs to, and a form to create one (better-auth's
// organization/create; the creator is its owner).

const SLUG_PATTERN = '[a-z0-9][a-z0-9\\-]{0,38}';

/** A slug suggested from a name: "Acme Tools" → "acme-tools". */
function slugOf(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 39);
}

function Orgs(props: { me: Me }) {
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [slugEdited, setSlugEdited] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const onSubmit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const org = await createOrganization(name.trim(), slug);
      await refreshAccount();
      navigate(`/orgs/${encodeURIComponent(org.slug)}`);
    } catch (failure) {
      setError(errorText(failure));
      setBusy(false);
    }
  };

  return (
    <div class="settings-page">
      <h1 class="page-title" tabIndex={-1} data-page-heading>
        Organisations
      </h1>
      <SettingsTabs current="orgs" />
      <p class="page-lead">
        An organisation holds scopes: its members publish and read their packages by role (owner, admin,
        publisher, reader).
      </p>
      {props.me.organizations.length === 0 ? (
        <EmptyState title="You are in no organisation yet" testId="no-orgs" />
      ) : (
        <ul class="org-list" data-testid="org-list">
          {props.me.organizations.map((org) => (
            <li class="card org-item" key={org.id}>
              <a href={`/orgs/${encodeURIComponent(org.slug)}`} class="card-link">
                {org.name}
              </a>
              <span class="muted">{org.slug}</span>
              <span class="badge">{org.role}</span>
            </li>
          ))}
        </ul>
      )}
      <form class="card form" onSubmit={onSubmit} aria-labelledby="create-org-title" data-testid="create-org">
        <h2 id="create-org-title" class="card-heading">
          Create an organisation
        </h2>
        <label for="org-name">Name</label>
        <input
          id="org-name"
          class="input"
          required
          maxLength={100}
          value={name}
          onInput={(event) => {
            const value = (event.target as HTMLInputElement).value;
            setName(value);
            if (!slugEdited) setSlug(slugOf(value));
          }}
          aria-describedby="org-error"
        />
        <label for="org-slug">Slug</label>
        <input
          id="org-slug"
          class="input"
          required
          pattern={SLUG_PATTERN}
          maxLength={39}
          value={slug}
          onInput={(event) => {
            setSlugEdited(true);
            setSlug((event.target as HTMLInputElement).value);
          }}
          aria-describedby="org-slug-hint org-error"
        />
        <p class="field-hint" id="org-slug-hint">
          Its address: /orgs/{slug || 'slug'}. Lowercase letters, digits and dashes.
        </p>
        <button type="submit" class="button button-primary" disabled={busy}>
          Create organisation
        </button>
        <FormStatus error={error} id="org-error" />
      </form>
    </div>
  );
}

export function OrgsPage() {
  usePageTitle('Organisations');
  return <SignedIn title="Organisations">{(me) => <Orgs me={me} />}</SignedIn>;
}
