import type { PackageDetail, VersionDetail, VersionListResponse } from '@pkgreg/contracts';
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import { atLeast, scopeRole, useAccount } from '../account.js';
import {
  ApiError,
  archiveFilename,
  archiveUrl,
  type BuiltFrom,
  fetchFileText,
  fileUrl,
  getBuiltFrom,
  getPackage,
  getVersion,
  listVersions,
  sourceUrl,
  trackDownload,
} from '../api.js';
import { CopyButton } from '../components/copy-button.js';
import { DependenciesCard } from '../components/dependencies.js';
import { FileTree } from '../components/file-tree.js';
import { FileViewer } from '../components/file-viewer.js';
import {
  AlertIcon,
  ArchiveIcon,
  DownloadIcon,
  ExternalIcon,
  StarIcon,
  VerifiedIcon,
} from '../components/icons.js';
import { Findings, QuarantineNotice, RiskBadge, UnscannedNotice } from '../components/risk.js';
import { Chips, SkillBody, type SkillDoc, SkillSkeleton } from '../components/skill-body.js';
import { DownloadsSparkline } from '../components/sparkline.js';
import { EmptyState, ErrorState } from '../components/states.js';
import { VersionPicker } from '../components/version-picker.js';
import { buildFileTree } from '../file-tree.js';
import { formatBytes, formatCount, formatDate, formatDateTime, formatFull, safeHttpUrl } from '../format.js';
import { frontmatterRows, frontmatterText } from '../frontmatter.js';
import { navigate } from '../router.js';
import { createLinkResolver, type LinkResolver, sourceBases } from '../skill-links.js';
import { createVisitTracker } from '../track.js';
import { type Resource, useResource } from '../use-resource.js';
import { installCommand, packageViewHref, parseVersionView, type VersionView } from '../version-query.js';
import { NotFoundPage } from './not-found-page.js';

const LATEST = 'latest';

function downloadText(filename: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/markdown;charset=utf-8' }));
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = filename;
  anchor.rel = 'noopener';
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  // Give the browser a moment to start the download before the URL dies.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** The package list filtered by one value (a tag, an agent), from a chip of the package page. */
function filterHref(name: 'tag' | 'agent', value: string): string {
  return `/?${new URLSearchParams({ [name]: value.trim().toLowerCase() })}`;
}

function Fact(props: { label: string; children: ComponentChildren; testId?: string }) {
  return (
    <div class="fact" data-testid={props.testId}>
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </div>
  );
}

function PackageSkeleton() {
  return (
    <div class="package-page" aria-busy="true" data-testid="loading">
      <span class="visually-hidden" role="status">
        Loading package
      </span>
      <div class="package-header" aria-hidden="true">
        <div class="skeleton skeleton-heading" />
        <div class="skeleton skeleton-line" />
      </div>
      <div class="package-layout" aria-hidden="true">
        <div class="card">
          <div class="skeleton skeleton-line" />
          <div class="skeleton skeleton-line" />
          <div class="skeleton skeleton-line short" />
        </div>
        <div class="card">
          <div class="skeleton skeleton-line" />
          <div class="skeleton skeleton-line short" />
        </div>
      </div>
    </div>
  );
}

function isMissing(resource: Resource<unknown>): boolean {
  return (
    resource.status === 'error' &&
    resource.error instanceof ApiError &&
    (resource.error.status === 404 || resource.error.status === 400)
  );
}

function Warnings(props: { warnings: string[] }) {
  const { warnings } = props;
  if (!warnings.length) return null;
  return (
    <div class="notice notice-warning" role="note" data-testid="warnings">
      <AlertIcon width={20} height={20} />
      <div>
        <strong>Indexed with {warnings.length === 1 ? 'a warning' : `${warnings.length} warnings`}.</strong>{' '}
        The skill breaks {warnings.length === 1 ? 'a rule' : 'rules'} of the skill format that agents
        tolerate:
        <ul class="notice-list">
          {warnings.map((warning) => (
            <li key={warning}>{warning}</li>
          ))}
        </ul>
      </div>
    </div>
  );
}

/** "Built from <repo> at <commit> (by <run>)" from the version's attestation, when it has one. */
function BuiltFromFact(props: { version: VersionDetail }) {
  const { scope, name, version } = props.version;
  const [built] = useResource<BuiltFrom | null>(`${scope}/${name}@${version} built-from`, (signal) =>
    getBuiltFrom(scope, name, version, signal),
  );
  if (built.status !== 'ok' || built.data === null) return null;
  const { repository, commit, run } = built.data;
  const repoUrl = URL.parse(repository)?.protocol === 'https:' ? repository : null;
  return (
    <Fact label="Built from">
      <span data-testid="built-from">
        {repoUrl ? <a href={repoUrl}>{repository.replace(/^https:\/\//, '')}</a> : repository} at{' '}
        {repoUrl ? (
          <a href={`${repoUrl}/commit/${encodeURIComponent(commit)}`}>
            <code>{commit.slice(0, 12)}</code>
          </a>
        ) : (
          <code>{commit.slice(0, 12)}</code>
        )}
        {run && URL.parse(run)?.protocol === 'https:' ? (
          <>
            {' '}
            by <a href={run}>a CI run</a>
          </>
        ) : null}
      </span>
    </Fact>
  );
}

function VersionFacts(props: { version: VersionDetail }) {
  const { version } = props;
  return (
    <section class="card" aria-labelledby="version-facts-heading" data-testid="version-facts">
      <h2 id="version-facts-heading" class="card-title">
        Version <span class="card-title-note">{version.version}</span>
      </h2>
      <dl class="facts">
        <Fact label="Published">{formatDateTime(version.createdAt)}</Fact>
        {version.yanked ? (
          <Fact label="Yanked">
            <span data-testid="yanked">
              yes{version.yankReason ? `: ${version.yankReason}` : ''}; installed only by its exact version
            </span>
          </Fact>
        ) : null}
        <Fact label="Files">
          {formatFull(version.fileCount)} · {formatBytes(version.totalBytes)}
        </Fact>
        <Fact label="Digest">
          <code title={version.digest}>{version.digest.slice(0, 19)}…</code>
        </Fact>
        <Fact label="Integrity">
          <code title={version.integrity}>{version.integrity.slice(0, 19)}…</code>
        </Fact>
        {version.sourceCommit ? (
          <Fact label="Commit">
            <code title={version.sourceCommit}>{version.sourceCommit.slice(0, 12)}</code>
          </Fact>
        ) : null}
        <BuiltFromFact version={version} />
        <Fact label="Signed">
          {version.signatures.length > 0 ? (
            <span data-testid="signed">
              by the registry{' '}
              {version.signatures.map((s) => (
                <code key={s.keyid} title={s.sig}>
                  {s.keyid.slice(0, 19)}…{' '}
                </code>
              ))}
              (<a href="/api/keys">keys</a>)
            </span>
          ) : (
            <span data-testid="unsigned">not yet</span>
          )}
        </Fact>
      </dl>
    </section>
  );
}

function PackageView(props: {
  pkg: PackageDetail;
  view: VersionView;
  versions: Resource<VersionListResponse>;
  shown: Resource<VersionDetail>;
  retryShown: () => void;
}) {
  const { pkg, view } = props;
  const { scope, name } = pkg;
  // One tracker per mount: the page is keyed by the package, so arriving on it starts unspent, while
  // versions and files picked on it share the visit.
  const track = useMemo(() => createVisitTracker(() => trackDownload(scope, name)), [scope, name]);
  const homepage = safeHttpUrl(pkg.homepageUrl);

  const shown = props.shown.status === 'ok' ? props.shown.data : null;
  const missing = isMissing(props.shown);
  /** Indexed before versions existed: no version, so no files, archive or picker. */
  const unversioned = view.version === null && missing;
  const versionNotFound = view.version !== null && missing;
  const versions =
    props.versions.status === 'ok'
      ? props.versions.data
      : props.versions.status === 'loading'
        ? props.versions.previous
        : null;
  // `latest` skips the versions their owner yanked (they stay viewable by exact version).
  const latest = versions?.data.find((v) => !v.yanked)?.version ?? null;
  /** The exact version on screen, once known. */
  const exact = shown?.version ?? view.version;

  // The latest version's SKILL.md comes with detail; an older one is fetched from its files.
  const fromDetail = view.version === null || view.version === pkg.version;
  // A quarantined package's bytes reach no client (410): its SKILL.md is withheld, not fetched.
  const withheld = pkg.status === 'quarantined';
  const olderVersion = fromDetail || withheld ? null : view.version;
  const [older, retryOlder] = useResource<string | null>(
    olderVersion ? `SKILL.md@${olderVersion}` : '',
    (signal) =>
      olderVersion ? fetchFileText(scope, name, olderVersion, 'SKILL.md', signal) : Promise.resolve(null),
  );
  const doc: SkillDoc | null = withheld
    ? null
    : fromDetail
      ? {
          raw: pkg.skillMdRaw,
          rows: frontmatterRows(pkg.frontmatter, pkg.skillMdRaw),
          yaml: null,
          olderVersion: null,
        }
      : older.status === 'ok' && older.data !== null
        ? { raw: older.data, rows: null, yaml: frontmatterText(older.data), olderVersion }
        : null;
  const warnings = fromDetail ? (pkg.warnings ?? []) : (shown?.warnings ?? []);
  // The risk scan of the version on screen: detail carries the latest's, a version record its own.
  const risk = fromDetail ? pkg.risk : (shown?.risk ?? null);
  const findings = fromDetail ? (pkg.findings ?? []) : (shown?.findings ?? []);
  // Dependencies of the version on screen: detail's say whether each resolves now, a version's do not.
  const dependencies = fromDetail ? (pkg.dependencies ?? []) : (shown?.dependencies ?? null);

  const files = useMemo(() => new Set(shown?.files.map((f) => f.path) ?? []), [shown]);
  const tree = useMemo(() => (shown ? buildFileTree(shown.files) : null), [shown]);
  const hrefFor = (path: string) => packageViewHref(scope, name, { version: view.version, file: path });
  const source = sourceBases(pkg.repoUrl, shown?.sourceCommit ?? pkg.sourceRef, pkg.sourcePath);
  const links = (dir: string): LinkResolver =>
    createLinkResolver({
      dir,
      files: shown ? files : null,
      viewerHref: hrefFor,
      rawUrl: (path) => fileUrl(scope, name, shown?.version ?? LATEST, path),
      source,
    });
  const linksKey = `${shown?.digest ?? ''}|${view.version ?? ''}|${source?.pageBase ?? ''}`;

  // Opening a file moves focus to it (and scrolls it into view); closing one returns focus to its entry
  // in the tree, so keyboard and screen reader users are never left on a vanished element.
  const viewerHeading = useRef<HTMLHeadingElement>(null);
  const lastFile = useRef(view.file);
  useEffect(() => {
    const previous = lastFile.current;
    if (previous === view.file) return;
    lastFile.current = view.file;
    if (view.file) viewerHeading.current?.focus();
    else if (previous) {
      document.querySelector<HTMLElement>(`.tree-link[data-path="${CSS.escape(previous)}"]`)?.focus();
    }
  }, [view.file]);

  const pick = (version: string) => {
    const picked = { version: version === latest ? null : version, file: view.file };
    navigate(packageViewHref(scope, name, picked), { keepScroll: true });
  };
  const command = installCommand(scope, name, view.version);

  let filesBody: ComponentChildren;
  if (unversioned) {
    filesBody = (
      <p class="muted" data-testid="no-versions">
        No files yet: this package was indexed before the registry kept versions. Its whole folder appears
        here after its next indexing run.
      </p>
    );
  } else if (props.shown.status === 'error') {
    filesBody = <ErrorState error={props.shown.error} context="the files" onRetry={props.retryShown} />;
  } else if (tree) {
    filesBody = <FileTree root={tree} current={view.file} hrefFor={hrefFor} />;
  } else {
    filesBody = (
      <div aria-busy="true" data-testid="files-loading">
        <span class="visually-hidden" role="status">
          Loading the files
        </span>
        <SkillSkeleton />
      </div>
    );
  }

  return (
    <article class="package-page" data-testid="package-page">
      <nav class="breadcrumbs" aria-label="Breadcrumb">
        <a href="/">Packages</a> <span aria-hidden="true">/</span> <span>@{pkg.scope}</span>
      </nav>
      <header class="package-header">
        <h1 class="package-title" tabIndex={-1} data-page-heading>
          <span class="pkg-scope">@{pkg.scope}/</span>
          {pkg.name}
        </h1>
        <div class="badges">
          <span class={`badge badge-kind kind-${pkg.kind}`}>{pkg.kind}</span>
          {pkg.private ? (
            <span class="badge badge-private" data-testid="private-badge">
              Private
            </span>
          ) : null}
          {pkg.version ? <span class="badge">v{pkg.version}</span> : null}
          {pkg.verified ? (
            <span class="badge badge-verified" data-testid="verified">
              <VerifiedIcon width={12} height={12} /> Verified publisher
            </span>
          ) : null}
          {pkg.featured ? (
            <span class="badge badge-featured" data-testid="featured">
              <StarIcon width={12} height={12} /> Featured
            </span>
          ) : null}
          {pkg.status !== 'active' ? (
            <span class="badge badge-warning" data-testid="status">
              {pkg.status}
            </span>
          ) : null}
          {fromDetail || shown ? <RiskBadge risk={risk} /> : null}
        </div>
        <p class="package-desc">{pkg.description || 'No description.'}</p>
        <SettingsLink scope={pkg.scope} name={pkg.name} />
      </header>

      {pkg.status === 'deprecated' ? (
        <div class="notice notice-warning" role="note" data-testid="deprecation-notice">
          <AlertIcon width={20} height={20} />
          <div>
            <strong>This package is deprecated.</strong> It still installs, but its publisher no longer
            recommends it; the command-line client warns before installing it. Look for a maintained
            alternative.
            {pkg.deprecationMessage ? (
              <p class="deprecation-message" data-testid="deprecation-message">
                {pkg.deprecationMessage}
              </p>
            ) : null}
          </div>
        </div>
      ) : null}

      {pkg.status === 'quarantined' ? <QuarantineNotice reason={pkg.quarantineReason ?? null} /> : null}

      <Warnings warnings={warnings} />

      {!risk && (fromDetail || shown) ? <UnscannedNotice /> : null}

      <Findings findings={findings} hrefFor={hrefFor} />

      <div class="package-layout">
        <div class="package-main">
          <section class="card install-card" aria-labelledby="install-heading">
            <div class="card-head">
              <h2 id="install-heading" class="card-title">
                Install
              </h2>
              {versions && versions.total > 0 && exact ? (
                <VersionPicker
                  versions={versions.data}
                  total={versions.total}
                  selected={exact}
                  onPick={pick}
                />
              ) : null}
            </div>
            {versionNotFound ? (
              <EmptyState title={`Version ${view.version} not found`} testId="version-not-found">
                <p>
                  @{scope}/{name} has no version {view.version}. It may be misspelt; versions are never
                  deleted, so it never existed here.
                </p>
                <a
                  class="button button-primary"
                  href={packageViewHref(scope, name, { version: null, file: null })}
                >
                  Show the latest version
                </a>
              </EmptyState>
            ) : (
              <>
                <div class="install-row">
                  <code class="install-command" data-testid="install-command">
                    <span class="prompt" aria-hidden="true">
                      ${' '}
                    </span>
                    {command}
                  </code>
                  <CopyButton
                    text={command}
                    label="Copy"
                    ariaLabel="Copy install command"
                    class="button install-copy"
                    testId="copy-install"
                  />
                </div>
                <div class="actions">
                  <CopyButton
                    text={doc?.raw ?? ''}
                    disabled={!doc}
                    label="Copy SKILL.md"
                    class="button button-primary"
                    onCopy={track}
                    testId="copy-skill"
                  />
                  <button
                    type="button"
                    class="button"
                    data-testid="download-skill"
                    disabled={!doc}
                    onClick={() => {
                      if (!doc) return;
                      track();
                      downloadText('SKILL.md', doc.raw);
                    }}
                  >
                    <DownloadIcon /> Download SKILL.md
                  </button>
                  {unversioned ? null : exact && (shown || view.version) ? (
                    <a
                      class="button"
                      href={archiveUrl(scope, name, exact)}
                      download={archiveFilename(scope, name, exact)}
                      onClick={track}
                      data-testid="download-tgz"
                    >
                      <ArchiveIcon /> Download .tgz
                    </a>
                  ) : (
                    <button type="button" class="button" disabled>
                      <ArchiveIcon /> Download .tgz
                    </button>
                  )}
                  <a
                    class="button button-ghost"
                    href={sourceUrl(scope, name)}
                    target="_blank"
                    rel="noopener noreferrer"
                    data-testid="source-link"
                  >
                    <ExternalIcon /> View source
                  </a>
                </div>
              </>
            )}
          </section>
          {versionNotFound ? null : (
            <>
              <section class="card files-card" aria-labelledby="files-heading" data-testid="files">
                <div class="card-head">
                  <h2 id="files-heading" class="card-title">
                    Files
                  </h2>
                  {shown ? (
                    <span class="muted card-aside" data-testid="files-summary">
                      {formatFull(shown.fileCount)} {shown.fileCount === 1 ? 'file' : 'files'} ·{' '}
                      {formatBytes(shown.totalBytes)}
                    </span>
                  ) : null}
                </div>
                {filesBody}
              </section>
              {view.file && shown ? (
                <FileViewer
                  scope={scope}
                  name={name}
                  version={shown}
                  files={files}
                  path={view.file}
                  closeHref={packageViewHref(scope, name, { version: view.version, file: null })}
                  hrefFor={hrefFor}
                  links={links}
                  linksKey={linksKey}
                  headingRef={viewerHeading}
                />
              ) : null}
              {withheld ? (
                <section class="card" aria-labelledby="skill-heading">
                  <h2 id="skill-heading" class="card-title">
                    SKILL.md
                  </h2>
                  <p data-testid="skill-withheld">
                    Withheld while the package is quarantined: the registry serves none of its files.
                  </p>
                </section>
              ) : doc ? (
                <SkillBody doc={doc} links={links('')} linksKey={linksKey} />
              ) : older.status === 'error' ? (
                <section class="card" aria-labelledby="skill-heading">
                  <h2 id="skill-heading" class="card-title">
                    SKILL.md
                  </h2>
                  <ErrorState error={older.error} context="SKILL.md" onRetry={retryOlder} />
                </section>
              ) : (
                <section class="card" aria-label="SKILL.md">
                  <SkillSkeleton />
                </section>
              )}
            </>
          )}
        </div>

        <aside class="package-side" aria-label="Package details">
          {pkg.dailyDownloads ? (
            <section class="card">
              <h2 class="card-title">Downloads</h2>
              <DownloadsSparkline
                daily={pkg.dailyDownloads}
                last7={pkg.downloadsLast7Days}
                last30={pkg.downloadsLast30Days}
              />
            </section>
          ) : null}
          <section class="card">
            <h2 class="card-title">Details</h2>
            <dl class="facts">
              <Fact label="Downloads" testId="fact-downloads">
                <span data-testid="download-count">{formatFull(pkg.downloadCount)}</span>
              </Fact>
              <Fact label="Stars">
                <span title={formatFull(pkg.repoStars)}>
                  <StarIcon width={14} height={14} /> {formatCount(pkg.repoStars)}
                </span>
              </Fact>
              <Fact label="Version">{pkg.version ?? <span class="muted">unversioned</span>}</Fact>
              <Fact label="License">{pkg.license || <span class="muted">not stated</span>}</Fact>
              <Fact label="Kind">{pkg.kind}</Fact>
              <Fact label="Category">{pkg.category ?? <span class="muted">none</span>}</Fact>
              <Fact label="Status">
                <span class={`status status-${pkg.status}`}>{pkg.status}</span>
              </Fact>
              <Fact label="Tokens">{formatFull(pkg.tokenCount)}</Fact>
              <Fact label="Files">
                {formatFull(pkg.fileCount)}
                {pkg.progressiveDisclosure ? <span class="muted"> · progressive disclosure</span> : null}
              </Fact>
              <Fact label="Dependencies">
                {pkg.depCount} · {pkg.dependantCount} dependant{pkg.dependantCount === 1 ? '' : 's'}
              </Fact>
              {pkg.language ? <Fact label="Language">{pkg.language}</Fact> : null}
              {pkg.author ? <Fact label="Author">{pkg.author}</Fact> : null}
              <Fact label="Publisher">{pkg.repoOwner}</Fact>
              {/* An uploaded package has no repository: "Hosting" below says where it lives. */}
              {pkg.hosted ? null : (
                <Fact label="Source">
                  <a href={sourceUrl(pkg.scope, pkg.name)} target="_blank" rel="noopener noreferrer">
                    {pkg.sourceRepo}
                    {pkg.sourcePath ? `/${pkg.sourcePath}` : ''}
                  </a>
                  {pkg.sourceRef ? <span class="muted"> @ {pkg.sourceRef}</span> : null}
                </Fact>
              )}
              {homepage ? (
                <Fact label="Homepage">
                  <a href={homepage} target="_blank" rel="noopener noreferrer">
                    {new URL(homepage).host}
                  </a>
                </Fact>
              ) : null}
              <Fact label="Hosting">{pkg.hosted ? 'Hosted by pkgreg' : 'Proxied from source'}</Fact>
              <Fact label="First indexed">{formatDate(pkg.firstIndexedAt)}</Fact>
              <Fact label="Last indexed">{formatDateTime(pkg.lastIndexedAt)}</Fact>
              {pkg.lastCommitSha ? (
                <Fact label="SKILL.md blob">
                  <code title={pkg.lastCommitSha}>{pkg.lastCommitSha.slice(0, 12)}</code>
                </Fact>
              ) : null}
            </dl>
          </section>
          {shown ? <VersionFacts version={shown} /> : null}
          <section class="card">
            <h2 class="card-title">Compatibility</h2>
            <Chips
              items={pkg.compatibility}
              empty="Not stated"
              hrefOf={(agent) => filterHref('agent', agent)}
            />
            <h2 class="card-title card-title-spaced">Tags</h2>
            <Chips items={pkg.tags} empty="No tags" hrefOf={(tag) => filterHref('tag', tag)} />
            <h2 class="card-title card-title-spaced">Allowed tools</h2>
            <Chips items={pkg.allowedTools} code empty="No tool restrictions declared" />
          </section>
          <DependenciesCard
            scope={scope}
            name={name}
            dependencies={dependencies}
            olderVersion={fromDetail ? null : (shown?.version ?? null)}
            dependantCount={pkg.dependantCount}
          />
        </aside>
      </div>
    </article>
  );
}

/** The settings page link, for the scope's admins (the page itself is what checks). */
function SettingsLink(props: { scope: string; name: string }) {
  const account = useAccount();
  const admin =
    atLeast(scopeRole(account, props.scope), 'admin') ||
    (account.status === 'signed-in' && account.me.account.siteAdmin);
  if (!admin) return null;
  return (
    <p class="package-settings-link">
      <a href={`/packages/@${props.scope}/${props.name}/settings`} data-testid="package-settings-link">
        Package settings
      </a>
    </p>
  );
}

export function PackagePage(props: { scope: string; name: string; search: string }) {
  const { scope, name } = props;
  const view = parseVersionView(props.search);
  const key = `${scope}/${name}`;
  // Detail, the version list and the shown version load side by side; none waits for another.
  const [resource, retry] = useResource<PackageDetail>(key, (signal) => getPackage(scope, name, signal));
  const [versions] = useResource<VersionListResponse>(key, (signal) => listVersions(scope, name, signal));
  const shownVersion = view.version ?? LATEST;
  const [shown, retryShown] = useResource<VersionDetail>(`${key}@${shownVersion}`, (signal) =>
    getVersion(scope, name, shownVersion, signal),
  );
  const title = `${view.file ? `${view.file} · ` : ''}@${scope}/${name}${view.version ? `@${view.version}` : ''} · pkgreg`;
  const titled = useRef(false);
  useEffect(() => {
    // A not-found page sets its own title; a retry's loading keeps the one shown.
    if (resource.status === 'ok') {
      document.title = title;
      titled.current = true;
    } else if (resource.status === 'loading' && !titled.current) {
      document.title = title;
    }
  }, [resource.status, title]);

  if (resource.status === 'error') {
    const error = resource.error;
    if (error instanceof ApiError && error.status === 404) {
      return (
        <NotFoundPage
          title="Package not found"
          message={`No package is published as @${scope}/${name}. It may have been delisted, or the name may be misspelt.`}
        />
      );
    }
    if (error instanceof ApiError && error.status === 400) {
      return (
        <NotFoundPage
          title="Not a package name"
          message="Package names look like @scope/name: lowercase letters, digits and single hyphens."
        />
      );
    }
    return (
      <div class="page-narrow">
        <ErrorState error={error} context={`@${scope}/${name}`} onRetry={retry} heading="h1" />
      </div>
    );
  }
  if (resource.status === 'loading') return <PackageSkeleton />;
  return (
    <PackageView pkg={resource.data} view={view} versions={versions} shown={shown} retryShown={retryShown} />
  );
}
