import { useEffect, useState } from 'preact/hooks';
import type { LinkResolver } from './skill-links.js';

/**
 * Markdown rendered and sanitized (markdown.ts), loaded with the first page that needs it so the home
 * page stays light. null while loading; false when the chunk failed to load (show the text instead,
 * escaped by Preact). `linksKey` changes whenever `links` would resolve differently.
 */
export function useMarkdownHtml(
  markdown: string,
  options: { skill: boolean; links: LinkResolver | null; linksKey: string },
): string | null | false {
  const [html, setHtml] = useState<string | null | false>(null);
  const { skill, links, linksKey } = options;
  // `links` is a fresh object each render: linksKey names what it resolves to.
  useEffect(() => {
    let live = true;
    import('./markdown.js').then(
      ({ renderMarkdown, renderSkillMarkdown }) => {
        if (live) setHtml((skill ? renderSkillMarkdown : renderMarkdown)(markdown, links));
      },
      () => {
        if (live) setHtml(false);
      },
    );
    return () => {
      live = false;
    };
  }, [markdown, skill, linksKey]);
  return html;
}
