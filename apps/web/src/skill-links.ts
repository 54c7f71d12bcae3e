import { resolveRelativePath } from './file-tree.js';

// Where the relative links and images of a rendered Markdown file point. A file of the shown version
// opens in the page's own viewer (links) or comes from the registry (images); anything else resolves
// against the package's source folder on its code host, as before versions existed.

export interface LinkResolver {
  /** The target of a relative link (`references/guide.md`), or null to leave it as written. */
  link(href: string): string | null;
  /** The source of a relative image, or null to leave it as written. */
  image(src: string): string | null;
}

export interface LinkResolverOptions {
  /** Folder of the Markdown file inside the skill folder ('' for SKILL.md). */
  dir: string;
  /** Paths of the shown version's files; null while unknown. */
  files: ReadonlySet<string> | null;
  /** The page URL that shows a file of the version. */
  viewerHref(path: string): string;
  /** The registry URL of a file's bytes. */
  rawUrl(path: string): string;
  /** The skill folder on the code host (sourceBases), or null when the repository URL is unknown. */
  source: { pageBase: string; rawBase: string } | null;
}

function onCodeHost(base: string, dir: string, reference: string): string | null {
  try {
    return new URL(reference, `${base}${dir ? `${dir}/` : ''}`).toString();
  } catch {
    return null;
  }
}

export function createLinkResolver(options: LinkResolverOptions): LinkResolver {
  const { dir, files, source } = options;
  const inVersion = (reference: string): string | null => {
    const path = resolveRelativePath(dir, reference);
    return path !== null && files?.has(path) ? path : null;
  };
  return {
    link(href) {
      const path = inVersion(href);
      if (path !== null) return options.viewerHref(path);
      return source ? onCodeHost(source.pageBase, dir, href) : null;
    },
    image(src) {
      const path = inVersion(src);
      if (path !== null) return options.rawUrl(path);
      return source ? onCodeHost(source.rawBase, dir, src) : null;
    },
  };
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
