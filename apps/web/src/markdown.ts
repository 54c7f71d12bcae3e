import DOMPurify, { type Config } from 'dompurify';
import { Marked } from 'marked';
import { stripFrontmatter } from './frontmatter.js';
import type { LinkResolver } from './skill-links.js';

// SKILL.md is untrusted: Marked passes raw HTML through, so every render goes through DOMPurify.
// No scripts, no event handlers, no javascript: URLs, no forms or inline styles (overlay tricks);
// external links open in a new tab without an opener or referrer.

const marked = new Marked({ gfm: true, breaks: false, async: false });

const purifyConfig: Config = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [
    'style',
    'form',
    'button',
    'textarea',
    'select',
    'option',
    'iframe',
    'frame',
    'object',
    'embed',
  ],
  FORBID_ATTR: ['style', 'srcset', 'formaction', 'action'],
  // Prefix ids and names so a SKILL.md cannot clobber globals or our own element ids.
  SANITIZE_NAMED_PROPS: true,
  ALLOW_DATA_ATTR: false,
  RETURN_TRUSTED_TYPE: false,
};

/** Where relative links and images of the current render point (set only during a render). */
let resolver: LinkResolver | null = null;

function isRelative(value: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(value) && !value.startsWith('//') && !value.startsWith('#');
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href');
    if (href === null) return;
    let target = href;
    if (resolver && isRelative(href) && !href.startsWith('/')) {
      target = resolver.link(href) ?? href;
      node.setAttribute('href', target);
    }
    let url: URL | null = null;
    try {
      url = new URL(target, window.location.href);
    } catch {
      node.removeAttribute('href');
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'mailto:') {
      node.removeAttribute('href');
      return;
    }
    if (url.origin !== window.location.origin) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    }
  } else if (node.tagName === 'IMG') {
    const src = node.getAttribute('src');
    if (src && resolver && isRelative(src) && !src.startsWith('/')) {
      const resolved = resolver.image(src);
      if (resolved) node.setAttribute('src', resolved);
    }
    node.setAttribute('loading', 'lazy');
    node.setAttribute('referrerpolicy', 'no-referrer');
  }
});

/** Markdown as sanitized HTML, safe for innerHTML; `links` resolves its relative links and images. */
export function renderMarkdown(markdown: string, links: LinkResolver | null = null): string {
  const html = marked.parse(markdown) as string;
  resolver = links;
  try {
    return DOMPurify.sanitize(html, purifyConfig) as string;
  } finally {
    resolver = null;
  }
}

/** SKILL.md body (frontmatter cut: the page shows it as a table) as sanitized HTML. */
export function renderSkillMarkdown(markdown: string, links: LinkResolver | null = null): string {
  return renderMarkdown(stripFrontmatter(markdown), links);
}
