import type { VersionDetail, VersionFile } from '@pkgreg/contracts';
import type { ComponentChildren, Ref } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, type FileHead, fetchFileHead, fileUrl } from '../api.js';
import {
  decodeText,
  isBinaryContentType,
  isBinaryName,
  isMarkdownName,
  TEXT_PREVIEW_BYTES,
} from '../file-kind.js';
import { dirnameOf, resolveRelativePath } from '../file-tree.js';
import { formatBytes } from '../format.js';
import type { LinkResolver } from '../skill-links.js';
import { useMarkdownHtml } from '../use-markdown.js';
import { useResource } from '../use-resource.js';
import { CloseIcon, DownloadIcon, ExternalIcon, FileIcon, LinkIcon } from './icons.js';
import { ErrorState } from './states.js';

// One file of a version. Its bytes are untrusted: text goes into a <pre> as text (Preact escapes it),
// Markdown through the same sanitizer as SKILL.md; nothing is ever injected as HTML. Binaries (by name,
// by Content-Type, or failing the text check) are downloads. Only the first TEXT_PREVIEW_BYTES are
// fetched; the raw file (served with a sandbox CSP) has the rest.

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function MarkdownFile(props: { text: string; links: LinkResolver; linksKey: string }) {
  const [source, setSource] = useState(false);
  const html = useMarkdownHtml(props.text, { skill: false, links: props.links, linksKey: props.linksKey });
  return (
    <>
      <fieldset class="segmented viewer-mode">
        <legend class="visually-hidden">Show the file as</legend>
        <button
          type="button"
          class={source ? 'segment' : 'segment is-current'}
          aria-pressed={!source}
          onClick={() => setSource(false)}
        >
          Preview
        </button>
        <button
          type="button"
          class={source ? 'segment is-current' : 'segment'}
          aria-pressed={source}
          onClick={() => setSource(true)}
          data-testid="show-source"
        >
          Source
        </button>
      </fieldset>
      {source || html === false ? (
        <TextBlock text={props.text} />
      ) : html === null ? (
        <div class="skeleton skeleton-line" aria-hidden="true" />
      ) : (
        // Sanitized by DOMPurify in renderMarkdown; the CSP forbids inline script on top of that.
        <div class="markdown" data-testid="file-markdown" dangerouslySetInnerHTML={{ __html: html }} />
      )}
    </>
  );
}

function TextBlock(props: { text: string }) {
  // Focusable so a keyboard can scroll long lines sideways.
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard.
    <pre class="code" data-testid="file-text" tabIndex={0}>
      <code>{props.text}</code>
    </pre>
  );
}

function Binary(props: { file: VersionFile; url: string; why: string }) {
  return (
    <div class="viewer-message" data-testid="file-binary">
      <p>
        {props.why} ({formatBytes(props.file.size)}): not shown here.
      </p>
      <a class="button" href={props.url} download={basename(props.file.path)}>
        <DownloadIcon /> Download {basename(props.file.path)}
      </a>
    </div>
  );
}

function Contents(props: {
  file: VersionFile;
  url: string;
  head: FileHead;
  links: LinkResolver;
  linksKey: string;
}) {
  const { file, url, head } = props;
  const text = isBinaryContentType(head.contentType) ? null : decodeText(head.bytes, head.truncated);
  if (text === null) return <Binary file={file} url={url} why="A binary file" />;
  return (
    <>
      {head.truncated ? (
        <p class="viewer-note" data-testid="file-truncated">
          Showing the first {formatBytes(head.bytes.length)} of {formatBytes(file.size)}.{' '}
          <a href={url} target="_blank" rel="noopener">
            Open the raw file
          </a>{' '}
          for all of it.
        </p>
      ) : null}
      {isMarkdownName(file.path) ? (
        <MarkdownFile text={text} links={props.links} linksKey={props.linksKey} />
      ) : (
        <TextBlock text={text} />
      )}
    </>
  );
}

function SymbolicLink(props: {
  file: VersionFile & { linkTarget: string };
  files: Set<string>;
  hrefFor: (path: string) => string;
}) {
  const { file } = props;
  const target = resolveRelativePath(dirnameOf(file.path), file.linkTarget);
  return (
    <div class="viewer-message" data-testid="file-link">
      <p>
        A symbolic link to <code>{file.linkTarget}</code>.
      </p>
      {target !== null && props.files.has(target) ? (
        <a class="button" href={props.hrefFor(target)} data-keep-scroll>
          <LinkIcon /> Open {target}
        </a>
      ) : (
        <p>Its target is not a file of this version.</p>
      )}
    </div>
  );
}

export function FileViewer(props: {
  scope: string;
  name: string;
  version: VersionDetail;
  files: Set<string>;
  path: string;
  closeHref: string;
  hrefFor: (path: string) => string;
  links: (dir: string) => LinkResolver;
  linksKey: string;
  headingRef: Ref<HTMLHeadingElement>;
}) {
  const { version, path } = props;
  const file = version.files.find((f) => f.path === path);
  const url = fileUrl(props.scope, props.name, version.version, path);
  const fetchable = file !== undefined && file.linkTarget === null && file.size > 0 && !isBinaryName(path);
  const [head, retry] = useResource<FileHead | null>(fetchable ? url : '', (signal) =>
    fetchable
      ? fetchFileHead(props.scope, props.name, version.version, path, TEXT_PREVIEW_BYTES, signal)
      : Promise.resolve(null),
  );

  let body: ComponentChildren;
  if (!file) {
    body = (
      <p class="viewer-message" data-testid="file-missing">
        Version {version.version} has no file <code>{path}</code>.
      </p>
    );
  } else if (file.linkTarget !== null) {
    body = (
      <SymbolicLink
        file={{ ...file, linkTarget: file.linkTarget }}
        files={props.files}
        hrefFor={props.hrefFor}
      />
    );
  } else if (isBinaryName(path)) {
    body = <Binary file={file} url={url} why="A binary file" />;
  } else if (file.size === 0) {
    body = (
      <p class="viewer-message" data-testid="file-empty">
        This file is empty.
      </p>
    );
  } else if (head.status === 'error') {
    body =
      head.error instanceof ApiError && head.error.status === 404 ? (
        <p class="viewer-message" data-testid="file-missing">
          Version {version.version} has no file <code>{path}</code>.
        </p>
      ) : (
        <ErrorState error={head.error} context={path} onRetry={retry} />
      );
  } else if (head.status === 'loading' || head.data === null) {
    body = (
      <div aria-busy="true" data-testid="file-loading">
        <span class="visually-hidden" role="status">
          Loading {path}
        </span>
        <div class="skeleton skeleton-line" aria-hidden="true" />
        <div class="skeleton skeleton-line short" aria-hidden="true" />
      </div>
    );
  } else {
    body = (
      <Contents
        file={file}
        url={url}
        head={head.data}
        links={props.links(dirnameOf(path))}
        linksKey={`${props.linksKey}|${path}`}
      />
    );
  }

  return (
    <section class="card viewer" aria-labelledby="viewer-heading" data-testid="file-viewer">
      <div class="viewer-head">
        <h2 id="viewer-heading" class="viewer-title" tabIndex={-1} ref={props.headingRef}>
          <FileIcon class="tree-icon" />
          <span>{path}</span>
        </h2>
        <a
          class="button button-ghost viewer-close"
          href={props.closeHref}
          aria-label="Close the file"
          data-keep-scroll
          data-testid="close-file"
        >
          <CloseIcon /> <span class="button-label">Close</span>
        </a>
      </div>
      {file ? (
        <div class="viewer-meta">
          <span>{file.linkTarget !== null ? 'symbolic link' : formatBytes(file.size)}</span>
          {file.executable ? <span class="tree-tag">executable</span> : null}
          <span title={`SHA-256 ${file.sha256}`}>
            sha256 <code>{file.sha256.slice(0, 12)}</code>
          </span>
          {file.linkTarget === null ? (
            <>
              <a href={url} target="_blank" rel="noopener" data-testid="file-raw">
                <ExternalIcon /> Raw
              </a>
              <a href={url} download={basename(path)}>
                <DownloadIcon /> Download
              </a>
            </>
          ) : null}
        </div>
      ) : null}
      {body}
    </section>
  );
}
