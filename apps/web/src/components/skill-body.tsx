import type { ComponentChildren } from 'preact';
import type { FrontmatterRow } from '../frontmatter.js';
import type { LinkResolver } from '../skill-links.js';
import { useMarkdownHtml } from '../use-markdown.js';

// SKILL.md of the shown version: its frontmatter (a table from the API's parsed object for the latest
// version; the YAML as written for an older one) and its body rendered and sanitized.

export function Chips(props: {
  items: string[];
  code?: boolean;
  empty?: string;
  /** Each item as a link (the list filtered by it), when given. */
  hrefOf?: (item: string) => string;
}) {
  if (!props.items.length) return <span class="muted">{props.empty ?? 'None'}</span>;
  const { hrefOf } = props;
  return (
    <ul class="chips">
      {props.items.map((item) => (
        <li key={item} class={props.code ? 'chip chip-code' : 'chip'}>
          {hrefOf ? <a href={hrefOf(item)}>{item}</a> : item}
        </li>
      ))}
    </ul>
  );
}

export interface SkillDoc {
  raw: string;
  /** Rows of the API's parsed frontmatter; null for a version the API parsed none for. */
  rows: FrontmatterRow[] | null;
  /** The frontmatter as written (shown when `rows` is null). */
  yaml: string | null;
  /** The version, when it is not the latest (shown beside the headings). */
  olderVersion: string | null;
}

function Frontmatter(props: { doc: SkillDoc }) {
  const { rows, yaml, olderVersion } = props.doc;
  let body: ComponentChildren = null;
  if (rows?.length) {
    body = (
      <div class="table-wrap">
        <table class="frontmatter" data-testid="frontmatter">
          <tbody>
            {rows.map((row) => (
              <tr key={row.key}>
                <th scope="row">{row.key}</th>
                <td>{row.list ? <Chips items={row.list} /> : <span class="pre-wrap">{row.value}</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  } else if (rows === null && yaml) {
    body = (
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard.
      <pre class="code" data-testid="frontmatter-yaml" tabIndex={0}>
        <code>{yaml}</code>
      </pre>
    );
  }
  if (body === null) return null;
  return (
    <section class="card" aria-labelledby="frontmatter-heading">
      <h2 id="frontmatter-heading" class="card-title">
        Frontmatter{olderVersion ? <span class="card-title-note"> · v{olderVersion}</span> : null}
      </h2>
      {body}
    </section>
  );
}

export function SkillBody(props: { doc: SkillDoc; links: LinkResolver; linksKey: string }) {
  const { doc } = props;
  const html = useMarkdownHtml(doc.raw, { skill: true, links: props.links, linksKey: props.linksKey });
  return (
    <>
      <Frontmatter doc={doc} />
      <section class="card" aria-labelledby="skill-heading">
        <h2 id="skill-heading" class="card-title">
          SKILL.md{doc.olderVersion ? <span class="card-title-note"> · v{doc.olderVersion}</span> : null}
        </h2>
        {/* Sanitized by DOMPurify in renderSkillMarkdown; the CSP forbids inline script on top of that. */}
        {html === false ? (
          <pre class="markdown pre-wrap" data-testid="skill-body">
            {doc.raw}
          </pre>
        ) : html === null ? (
          <SkillSkeleton />
        ) : (
          <div class="markdown" data-testid="skill-body" dangerouslySetInnerHTML={{ __html: html }} />
        )}
      </section>
    </>
  );
}

export function SkillSkeleton() {
  return (
    <div aria-busy="true">
      <div class="skeleton skeleton-line" />
      <div class="skeleton skeleton-line short" />
    </div>
  );
}
