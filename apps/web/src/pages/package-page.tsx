import type { PackageDetail } from '@pkgreg/contracts';
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, getPackage, sourceUrl, trackDownload } from '../api.js';
import { CopyButton } from '../components/copy-button.js';
import { AlertIcon, DownloadIcon, ExternalIcon, StarIcon, VerifiedIcon } from '../components/icons.js';
import { ErrorState } from '../components/states.js';
import { formatCount, formatDate, formatDateTime, formatFull, safeHttpUrl } from '../format.js';
import { frontmatterRows } from '../frontmatter.js';
import { createVisitTracker } from '../track.js';
import { useResource } from '../use-resource.js';
import { NotFoundPage } from './not-found-page.js';

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

function Chips(props: { items: string[]; code?: boolean; empty?: string }) {
  if (!props.items.length) return <span class="muted">{props.empty ?? 'None'}</span>;
  return (
    <ul class="chips">
      {props.items.map((item) => (
        <li key={item} class={props.code ? 'chip chip-code' : 'chip'}>
          {item}
        </li>
      ))}
    </ul>
  );
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

/** Markdown, DOMPurify and their hooks load with the first package page, keeping the home page light. */
function useSkillHtml(pkg: PackageDetail): string | null | false {
  const [html, setHtml] = useState<string | null | false>(null);
  useEffect(() => {
    let live = true;
    import('../markdown.js').then(
      ({ renderSkillMarkdown, sourceBases }) => {
        const bases = sourceBases(pkg.repoUrl, pkg.sourceRef, pkg.sourcePath) ?? {};
        if (live) setHtml(renderSkillMarkdown(pkg.skillMdRaw, bases));
      },
      () => {
        // The chunk failed to load (deploy in progress, network): show the raw text, escaped by Preact.
        if (live) setHtml(false);
      },
    );
    return () => {
      live = false;
    };
  }, [pkg.skillMdRaw, pkg.repoUrl, pkg.sourceRef, pkg.sourcePath]);
  return html;
}

function SkillBody(props: { pkg: PackageDetail }) {
  const { pkg } = props;
  const html = useSkillHtml(pkg);
  const rows = frontmatterRows(pkg.frontmatter, pkg.skillMdRaw);
  return (
    <>
      {rows.length ? (
        <section class="card" aria-labelledby="frontmatter-heading">
          <h2 id="frontmatter-heading" class="card-title">
            Frontmatter
          </h2>
          <div class="table-wrap">
            <table class="frontmatter" data-testid="frontmatter">
              <tbody>
                {rows.map((row) => (
                  <tr key={row.key}>
                    <th scope="row">{row.key}</th>
                    <td>
                      {row.list ? <Chips items={row.list} /> : <span class="pre-wrap">{row.value}</span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ) : null}
      <section class="card" aria-labelledby="skill-heading">
        <h2 id="skill-heading" class="card-title">
          SKILL.md
        </h2>
        {/* Sanitized by DOMPurify in renderSkillMarkdown; the CSP forbids inline script on top of that. */}
        {html === false ? (
          <pre class="markdown pre-wrap" data-testid="skill-body">
            {pkg.skillMdRaw}
          </pre>
        ) : html === null ? (
          <div aria-busy="true">
            <div class="skeleton skeleton-line" />
            <div class="skeleton skeleton-line short" />
          </div>
        ) : (
          <div class="markdown" data-testid="skill-body" dangerouslySetInnerHTML={{ __html: html }} />
        )}
      </section>
    </>
  );
}

function PackageView(props: { pkg: PackageDetail }) {
  const { pkg } = props;
  const fullName = `@${pkg.scope}/${pkg.name}`;
  const installCommand = `pkgreg install ${fullName}`;
  // One tracker per mount: the page is keyed by the router's visit, so a new visit starts unspent.
  const track = useMemo(
    () => createVisitTracker(() => trackDownload(pkg.scope, pkg.name)),
    [pkg.scope, pkg.name],
  );
  const homepage = safeHttpUrl(pkg.homepageUrl);

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
        </div>
        <p class="package-desc">{pkg.description || 'No description.'}</p>
      </header>

      {pkg.status === 'deprecated' ? (
        <div class="notice notice-warning" role="note" data-testid="deprecation-notice">
          <AlertIcon width={20} height={20} />
          <div>
            <strong>This package is deprecated.</strong> It still installs, but its publisher no longer
            recommends it; the command-line client warns before installing it. Look for a maintained
            alternative.
          </div>
        </div>
      ) : null}

      <div class="package-layout">
        <div class="package-main">
          <section class="card install-card" aria-labelledby="install-heading">
            <h2 id="install-heading" class="card-title">
              Install
            </h2>
            <div class="install-row">
              <code class="install-command" data-testid="install-command">
                <span class="prompt" aria-hidden="true">
                  ${' '}
                </span>
                {installCommand}
              </code>
              <CopyButton
                text={installCommand}
                label="Copy"
                ariaLabel="Copy install command"
                class="button install-copy"
                testId="copy-install"
              />
            </div>
            <div class="actions">
              <CopyButton
                text={pkg.skillMdRaw}
                label="Copy SKILL.md"
                class="button button-primary"
                onCopy={track}
                testId="copy-skill"
              />
              <button
                type="button"
                class="button"
                data-testid="download-skill"
                onClick={() => {
                  track();
                  downloadText('SKILL.md', pkg.skillMdRaw);
                }}
              >
                <DownloadIcon /> Download SKILL.md
              </button>
              <a
                class="button button-ghost"
                href={sourceUrl(pkg.scope, pkg.name)}
                target="_blank"
                rel="noopener noreferrer"
                data-testid="source-link"
              >
                <ExternalIcon /> View source
              </a>
            </div>
          </section>
          <SkillBody pkg={pkg} />
        </div>

        <aside class="package-side" aria-label="Package details">
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
              <Fact label="Source">
                <a href={sourceUrl(pkg.scope, pkg.name)} target="_blank" rel="noopener noreferrer">
                  {pkg.sourceRepo}
                  {pkg.sourcePath ? `/${pkg.sourcePath}` : ''}
                </a>
                <span class="muted"> @ {pkg.sourceRef}</span>
              </Fact>
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
          <section class="card">
            <h2 class="card-title">Compatibility</h2>
            <Chips items={pkg.compatibility} empty="Not stated" />
            <h2 class="card-title card-title-spaced">Tags</h2>
            <Chips items={pkg.tags} empty="No tags" />
            <h2 class="card-title card-title-spaced">Allowed tools</h2>
            <Chips items={pkg.allowedTools} code empty="No tool restrictions declared" />
          </section>
        </aside>
      </div>
    </article>
  );
}

export function PackagePage(props: { scope: string; name: string }) {
  const { scope, name } = props;
  const [resource, retry] = useResource<PackageDetail>(`${scope}/${name}`, (signal) =>
    getPackage(scope, name, signal),
  );
  const titled = useRef(false);
  useEffect(() => {
    if (resource.status === 'ok') {
      document.title = `@${scope}/${name} · pkgreg`;
      titled.current = true;
    } else if (!titled.current) {
      document.title = `@${scope}/${name} · pkgreg`;
    }
  }, [resource.status, scope, name]);

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
  return <PackageView pkg={resource.data} />;
}
