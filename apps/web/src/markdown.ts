import DOMPurify, { type Config } from 'dompurify';
import { Marked } from 'marked';
import { stripFrontmatter } from './frontmatter.js';

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

/** Where relative links and images of the current render point (the package's source folder). */
let linkBase: { page: string; raw: string } | null = null;

function resolveRelative(value: string, base: string): string | null {
  try {
    return new URL(value, base).toString();
  } catch {
    return null;
  }
}

function isRelative(value: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(value) && !value.startsWith('//') && !value.startsWith('#');
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href');
    if (href === null) return;
    let target = href;
    if (linkBase && isRelative(href) && !href.startsWith('/')) {
      target = resolveRelative(href, linkBase.page) ?? href;
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
    if (src && linkBase && isRelative(src) && !src.startsWith('/')) {
      const resolved = resolveRelative(src, linkBase.raw);
      if (resolved) node.setAttribute('src', resolved);
    }
    node.setAttribute('loading', 'lazy');
    node.setAttribute('referrerpolicy', 'no-referrer');
  }
});

export interface RenderOptions {
  /** Folder URL on the code host that relative links resolve against (ends with `/`). */
  pageBase?: string | null;
  /** Folder URL for raw files, which relative images resolve against (ends with `/`). */
  rawBase?: string | null;
}

/** SKILL.md body (frontmatter cut) as sanitized HTML, safe for innerHTML. */
export function renderSkillMarkdown(markdown: string, options: RenderOptions = {}): string {
  const html = marked.parse(stripFrontmatter(markdown)) as string;
  linkBase = options.pageBase && options.rawBase ? { page: options.pageBase, raw: options.rawBase } : null;
  try {
    return DOMPurify.sanitize(html, purifyConfig) as string;
  } finally {
    linkBase = null;
  }
}

/** GitHub-style folder URLs of a package's source, or null when the repository URL is unknown. */
export function sourceBases(
  repoUrl: string | null,
  sourceRef: string,
  sourcePath: string,
): { pageBase: string; rawBase: string } | null {
  if (!repoUrl || !/^https?:\/\//.test(repoUrl)) return null;
  const root = repoUrl.replace(/\/+$/, '');
  const folder = sourcePath.replace(/^\/+|\/+$/g, '');
  const suffix = folder ? `${folder}/` : '';
  const ref = encodeURIComponent(sourceRef || 'main');
  return { pageBase: `${root}/blob/${ref}/${suffix}`, rawBase: `${root}/raw/${ref}/${suffix}` };
}
