// The package page's view lives in the URL query like the list's state (list-query.ts): a picked
// version and an opened file, so a link reproduces the view and back, forward and reload restore it.
//   /@scope/name                                    the latest version, no file open
//   /@scope/name?version=1.2.0&file=scripts/run.sh  version 1.2.0 with scripts/run.sh open

export interface VersionView {
  /** An exact version the reader picked; null follows `latest`. */
  version: string | null;
  /** A path inside the skill folder whose contents are shown; null shows none. */
  file: string | null;
}

// The shape of a semver version (docs/versions.md); the API has the last word (400 or 404).
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/** An exact version from a URL (a leading `v` tolerated), or null for anything else and `latest`. */
export function parseVersion(value: string | null): string | null {
  if (!value || value.length > 256) return null;
  const bare = value.startsWith('v') ? value.slice(1) : value;
  return SEMVER.test(bare) ? bare : null;
}

/**
 * A path inside the skill folder, or null. The rules of contracts' normalizeSkillFilePath, restated here
 * because importing contracts' runtime code would pull zod into the bundle.
 */
export function parseFilePath(value: string | null): string | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (!value || value.length > 4096 || value.includes('\\') || /[\u0000-\u001f\u007f]/.test(value))
    return null;
  return value.split('/').some((s) => s === '' || s === '.' || s === '..') ? null : value;
}

/** Reads the view from a query string; anything out of rule falls back to the default (none). */
export function parseVersionView(search: string): VersionView {
  const params = new URLSearchParams(search);
  return { version: parseVersion(params.get('version')), file: parseFilePath(params.get('file')) };
}

/** The query string of a view; a path keeps its slashes readable (`file=scripts/run.sh`). */
export function versionViewToSearch(view: VersionView): string {
  const parts: string[] = [];
  if (view.version) parts.push(`version=${encodeURIComponent(view.version)}`);
  if (view.file) parts.push(`file=${encodeURIComponent(view.file).replaceAll('%2F', '/')}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

export function packageViewHref(scope: string, name: string, view: VersionView): string {
  return `/@${scope}/${name}${versionViewToSearch(view)}`;
}

/** What `pkgreg install` takes: the name alone follows latest, a picked version pins it. */
export function installCommand(scope: string, name: string, version: string | null): string {
  return `pkgreg install @${scope}/${name}${version ? `@${version}` : ''}`;
}
