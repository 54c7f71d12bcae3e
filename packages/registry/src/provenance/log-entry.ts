// What a leaf of the transparency log says and what the log is called (docs/provenance.md,
// "Transparency log"): plain text, no storage, so clients (the CLI's bundle) import them through
// `@pkgreg/registry/provenance` without the database code.

/** A leaf's entry: `@scope/name@version sha512-…` (one line, no newline). */
export function logEntryText(scope: string, name: string, version: string, integrity: string): string {
  return `${'@'}${scope}/${name}@${version} ${integrity}`;
}

/**
 * The log's name, the first line of its checkpoints: the registry's public host (and path, when it is
 * served under one) + `/log`, as Go's checksum database is `sum.golang.org`.
 */
export function logOrigin(publicUrl: string): string {
  const url = new URL(publicUrl);
  return `${url.host}${url.pathname.replace(/\/+$/, '')}/log`;
}
