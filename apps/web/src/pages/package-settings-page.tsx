import type { PackageSettings, Visibility } from '@pkgreg/contracts';
import { useState } from 'preact/hooks';
import {
  addTrustedPublisher,
  getPackageSettings,
  removeTrustedPublisher,
  updatePackageVisibility,
} from '../accounts-api.js';
import { errorText, FormStatus, SignedIn, usePageTitle } from '../components/account-pages.js';
import { CopyButton } from '../components/copy-button.js';
import { ErrorState, SkeletonList } from '../components/states.js';
import { useResource } from '../use-resource.js';

// /packages/@scope/name/settings (admins of the scope): visibility, the CI identities trusted to publish
// (docs/publish-from-github-actions.md), and how to deprecate or yank. Deprecating and yanking need a
// proof of the source repository (a GitHub token with push access), so they are CLI commands, not buttons.

const GITHUB_ISSUER = 'https://token.actions.githubusercontent.com';

function VisibilityForm(props: {
  settings: PackageSettings;
  scope: string;
  name: string;
  onSaved: (s: PackageSettings) => void;
}) {
  const [choice, setChoice] = useState<Visibility>(props.settings.visibility);
  const [error, setError] = useState<string | null>(null);
  const [success, setSuccess] = useState<string | null>(null);
  const onSubmit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setSuccess(null);
    try {
      const saved = await updatePackageVisibility(props.scope, props.name, choice);
      props.onSaved(saved);
      setSuccess(`Saved: the package is ${saved.private ? 'private' : 'public'}.`);
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  const scopePrivate = props.settings.private && props.settings.visibility === 'public';
  return (
    <form class="card form" onSubmit={onSubmit} data-testid="visibility">
      <fieldset class="fieldset">
        <legend class="card-heading">Visibility</legend>
        <label class="choice">
          <input
            type="radio"
            name="visibility"
            value="public"
            checked={choice === 'public'}
            onChange={() => setChoice('public')}
          />
          Public: anyone can find and install it
        </label>
        <label class="choice">
          <input
            type="radio"
            name="visibility"
            value="private"
            checked={choice === 'private'}
            onChange={() => setChoice('private')}
          />
          Private: members of @{props.scope} and tokens that reach it only
        </label>
      </fieldset>
      {scopePrivate ? (
        <p class="field-hint">The whole scope @{props.scope} is private, so this package is too.</p>
      ) : null}
      <button type="submit" class="button button-primary">
        Save visibility
      </button>
      <FormStatus error={error} success={success} />
    </form>
  );
}

function TrustedPublishers(props: {
  settings: PackageSettings;
  scope: string;
  name: string;
  onSaved: (s: PackageSettings) => void;
}) {
  const [issuer, setIssuer] = useState(GITHUB_ISSUER);
  const [repository, setRepository] = useState('');
  const [workflow, setWorkflow] = useState('');
  const [environment, setEnvironment] = useState('');
  const [wholeScope, setWholeScope] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [success, setSuccess] = useState<string | null>(null);
  const text = (set: (v: string) => void) => (event: Event) => set((event.target as HTMLInputElement).value);

  const onAdd = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setSuccess(null);
    try {
      const saved = await addTrustedPublisher(props.scope, props.name, {
        issuer: issuer.trim(),
        repository: repository.trim(),
        ...(workflow.trim() ? { workflow: workflow.trim() } : {}),
        ...(environment.trim() ? { environment: environment.trim() } : {}),
        wholeScope,
      });
      props.onSaved(saved);
      setSuccess(`${repository.trim()} may now publish.`);
      setRepository('');
      setWorkflow('');
      setEnvironment('');
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  const onRemove = async (id: string, repo: string) => {
    setError(null);
    setSuccess(null);
    try {
      props.onSaved(await removeTrustedPublisher(props.scope, props.name, id));
      setSuccess(`${repo} may no longer publish.`);
    } catch (failure) {
      setError(errorText(failure));
    }
  };

  return (
    <section class="card" aria-labelledby="publishers-title">
      <h2 id="publishers-title" class="card-heading">
        Trusted publishers
      </h2>
      <p>CI jobs that may upload versions with their OIDC identity, without a token.</p>
      {props.settings.trustedPublishers.length === 0 ? (
        <p class="muted">None yet.</p>
      ) : (
        <ul class="publisher-list" data-testid="trusted-publishers">
          {props.settings.trustedPublishers.map((p) => (
            <li key={p.id} class="publisher" data-testid="trusted-publisher">
              <span>
                <strong>{p.repository}</strong>
                {p.workflow ? ` · ${p.workflow}` : ''}
                {p.environment ? ` · environment ${p.environment}` : ''}
                <span class="muted"> · {p.package ?? `every package of @${props.scope}`}</span>
                <div class="muted mono">{p.issuer}</div>
              </span>
              <button type="button" class="button" onClick={() => onRemove(p.id, p.repository)}>
                Remove<span class="visually-hidden"> {p.repository}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <form class="form" onSubmit={onAdd} data-testid="add-publisher">
        <label for="tp-issuer">OIDC issuer</label>
        <input
          id="tp-issuer"
          class="input"
          type="url"
          required
          value={issuer}
          onInput={text(setIssuer)}
          aria-describedby="tp-issuer-hint"
        />
        <p class="field-hint" id="tp-issuer-hint">
          GitHub Actions: {GITHUB_ISSUER}; GitLab: https://gitlab.com
        </p>
        <label for="tp-repository">Repository</label>
        <input
          id="tp-repository"
          class="input"
          required
          pattern="[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)+"
          placeholder="owner/repo"
          value={repository}
          onInput={text(setRepository)}
          aria-describedby="tp-error"
        />
        <div class="form-row">
          <div>
            <label for="tp-workflow">Workflow (optional)</label>
            <input
              id="tp-workflow"
              class="input"
              placeholder="publish.yml"
              value={workflow}
              onInput={text(setWorkflow)}
            />
          </div>
          <div>
            <label for="tp-environment">Environment (optional)</label>
            <input
              id="tp-environment"
              class="input"
              placeholder="release"
              value={environment}
              onInput={text(setEnvironment)}
            />
          </div>
        </div>
        <label class="choice">
          <input
            type="checkbox"
            checked={wholeScope}
            onChange={(event) => setWholeScope((event.target as HTMLInputElement).checked)}
          />
          Trust it for every package of @{props.scope}
        </label>
        <button type="submit" class="button button-primary">
          Add trusted publisher
        </button>
        <FormStatus error={error} success={success} id="tp-error" />
      </form>
    </section>
  );
}

function OwnerCommands(props: { scope: string; name: string }) {
  const pkg = `@${props.scope}/${props.name}`;
  const commands = [
    ['Deprecate', `pkgreg deprecate ${pkg} --message "use @scope/other instead"`],
    ['Undo the deprecation', `pkgreg undeprecate ${pkg}`],
    ['Yank a version', `pkgreg yank ${pkg}@1.2.0 --reason "broken install"`],
    ['Undo a yank', `pkgreg unyank ${pkg}@1.2.0`],
  ] as const;
  return (
    <section class="card" aria-labelledby="owner-title" data-testid="owner-commands">
      <h2 id="owner-title" class="card-heading">
        Deprecate and yank
      </h2>
      <p>
        These prove you may push to the package's source repository (a GitHub token with push access), so they
        run from the command line (docs/publishing.md):
      </p>
      <dl class="commands">
        {commands.map(([label, command]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd class="install-row">
              <code class="install-command">{command}</code>
              <CopyButton text={command} label="Copy" ariaLabel={`Copy: ${label}`} />
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

function Settings(props: { scope: string; name: string }) {
  const [saved, setSaved] = useState<PackageSettings | null>(null);
  const [settings, retry] = useResource(`package-settings-${props.scope}/${props.name}`, () =>
    getPackageSettings(props.scope, props.name),
  );
  if (settings.status === 'loading') return <SkeletonList rows={2} label="Loading the package settings" />;
  if (settings.status === 'error') {
    return <ErrorState error={settings.error} onRetry={retry} context="the package settings" heading="h1" />;
  }
  const current = saved ?? settings.data;
  return (
    <div class="settings-page" data-testid="package-settings">
      <nav class="breadcrumbs" aria-label="Breadcrumb">
        <a href={`/@${props.scope}/${props.name}`}>
          @{props.scope}/{props.name}
        </a>{' '}
        <span aria-hidden="true">/</span> <span>Settings</span>
      </nav>
      <h1 class="page-title" tabIndex={-1} data-page-heading>
        Settings of @{props.scope}/{props.name}{' '}
        {current.private ? (
          <span class="badge badge-private" data-testid="private-badge">
            Private
          </span>
        ) : null}
      </h1>
      <VisibilityForm settings={current} scope={props.scope} name={props.name} onSaved={setSaved} />
      <TrustedPublishers settings={current} scope={props.scope} name={props.name} onSaved={setSaved} />
      <OwnerCommands scope={props.scope} name={props.name} />
    </div>
  );
}

export function PackageSettingsPage(props: { scope: string; name: string }) {
  usePageTitle(`Settings of @${props.scope}/${props.name}`);
  return (
    <SignedIn title="Package settings">{() => <Settings scope={props.scope} name={props.name} />}</SignedIn>
  );
}
