import { FILTER_NAMES, type PackageFilters } from '@pkgreg/contracts';

// The REST API's paths (registry-api.md, docs/versions.md), each part encoded; also the links a page
// gives for a file, an archive or a package's source.

export function packagePath(scope: string, name: string): string {
  return `/api/packages/@${encodeURIComponent(scope)}/${encodeURIComponent(name)}`;
}

/** `version`: an exact version, or `latest`. */
export function versionPath(scope: string, name: string, version: string): string {
  return `${packagePath(scope, name)}/versions/${encodeURIComponent(version)}`;
}

/** A file of a version: each segment of its path encoded, the slashes kept. */
export function filePath(scope: string, name: string, version: string, path: string): string {
  const segments = path.split('/').map(encodeURIComponent).join('/');
  return `${versionPath(scope, name, version)}/files/${segments}`;
}

export function archivePath(scope: string, name: string, version: string): string {
  return `${versionPath(scope, name, version)}/archive.tgz`;
}

/** Where the package's source is (a redirect to the code host). */
export function sourcePath(scope: string, name: string): string {
  return `${packagePath(scope, name)}/source`;
}

/** The filters as query parameters, with the API's names, in FILTER_NAMES' order. */
export function filterParams(filters: PackageFilters): Array<[string, string]> {
  return FILTER_NAMES.flatMap((name) => {
    const value = filters[name];
    return value === undefined ? [] : [[name, String(value)] as [string, string]];
  });
}
