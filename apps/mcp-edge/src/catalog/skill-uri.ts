import {
  normalizeSkillFilePath,
  PACKAGE_SEGMENT_PATTERN,
  RejectError,
  SKILL_MANIFEST_PATH,
  SKILL_MD_PATH,
  SKILL_URI_SCHEME,
} from '@pkgreg/contracts';

// skill:// URIs (docs/decisions.md, "Skills over MCP"): `skill://<scope>/<name>/<path>` for the latest
// version, `skill://<scope>/<version>/<name>/<path>` for an exact one. The authority is the scope and the
// skill's folder ends with its name, as the skills extension (SEP-2640) asks; a version always holds a dot
// and a package name never does, so the two forms never read alike. The first forms,
// `skill://@scope/name/<path>` and `skill://@scope/name@<version>/<path>`, are still read until
// SKILL_URI_LEGACY_UNTIL and never emitted. Path segments are percent-encoded where RFC 3986 needs it (what
// RFC 6570's `{+path}` expansion produces), and decoded before the path is checked.

export interface SkillRef {
  scope: string;
  name: string;
  /** An exact version, or null for the latest. */
  version: string | null;
  /** Relative path inside the folder, decoded; `_manifest` for the manifest; '' for the folder itself. */
  path: string;
}

const LEGACY_PATTERN = /^skill:\/\/@([^/@]+)\/([^/@]+)(?:@([^/]+))?(?:\/(.*))?$/;
// semver.org's recommended pattern: the registry answers 400 for anything else.
const SEMVER_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

const invalid = (uri: string) =>
  new RejectError(
    'request_schema_invalid',
    'uri must be skill://<scope>/<name>/<path> or skill://<scope>/<version>/<name>/<path>',
    { uri: uri.slice(0, 512) },
  );

function decodePath(raw: string): string | null {
  try {
    return normalizeSkillFilePath(raw.split('/').map(decodeURIComponent).join('/'));
  } catch {
    return null; // a malformed percent escape
  }
}

/** The URI's parts, its path still encoded (undefined: none, the folder itself); null when no form fits. */
function split(
  uri: string,
): { scope: string; name: string; version: string | undefined; rawPath: string | undefined } | null {
  const legacy = LEGACY_PATTERN.exec(uri);
  if (legacy) {
    const [, scope = '', name = '', version, rawPath] = legacy;
    return { scope, name, version, rawPath };
  }
  if (!uri.startsWith(SKILL_URI_SCHEME) || uri.startsWith(`${SKILL_URI_SCHEME}@`)) return null;
  const [scope = '', second, ...rest] = uri.slice(SKILL_URI_SCHEME.length).split('/');
  if (second === undefined) return null;
  const version = second.includes('.') ? second : undefined;
  const name = version === undefined ? second : rest.shift();
  if (name === undefined) return null;
  return { scope, name, version, rawPath: rest.length > 0 ? rest.join('/') : undefined };
}

function parse(uri: string, folder: boolean): SkillRef {
  const parts = split(uri);
  if (!parts || (parts.rawPath === undefined && !folder)) throw invalid(uri);
  const { scope, name, version, rawPath } = parts;
  const path = rawPath === undefined ? '' : decodePath(rawPath);
  if (
    !PACKAGE_SEGMENT_PATTERN.test(scope) ||
    !PACKAGE_SEGMENT_PATTERN.test(name) ||
    (version !== undefined && (version.length > 256 || !SEMVER_PATTERN.test(version))) ||
    path === null
  ) {
    throw invalid(uri);
  }
  return { scope, name, version: version ?? null, path };
}

// Reads ask for the same few URIs again and again: each one's parts are kept (frozen, so no caller can
// change what the next read gets), up to PARSED_MAX URIs, then the memo starts over. Only URIs up to
// PARSED_MAX_LENGTH characters are kept, so callers cannot make it hold more than a few megabytes.
const PARSED_MAX = 1000;
const PARSED_MAX_LENGTH = 1024;
const parsedFiles = new Map<string, Readonly<SkillRef>>();

/** The parts of a skill:// URI of a file; request_schema_invalid (-32602) when it is not one. */
export function parseSkillUri(uri: string): Readonly<SkillRef> {
  let ref = parsedFiles.get(uri);
  if (!ref) {
    ref = Object.freeze(parse(uri, false));
    if (uri.length <= PARSED_MAX_LENGTH) {
      if (parsedFiles.size >= PARSED_MAX) parsedFiles.clear();
      parsedFiles.set(uri, ref);
    }
  }
  return ref;
}

/** The parts of a skill:// URI of a skill's folder (path '') or a folder in it; else as parseSkillUri. */
export function parseSkillFolderUri(uri: string): SkillRef {
  return parse(uri, true);
}

/** Percent-encodes what RFC 3986 does not allow in a path segment (`/` stays the separator). */
function encodePath(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/%40/g, '@').replace(/%2B/g, '+'))
    .join('/');
}

/** The URI of a file (`path`) or of a folder (`path` '': the skill's own, no trailing `/`). */
export function skillUri(ref: {
  scope: string;
  name: string;
  version?: string | null;
  path: string;
}): string {
  const version = ref.version ? `${ref.version}/` : '';
  const path = ref.path === '' ? '' : `/${encodePath(ref.path)}`;
  return `${SKILL_URI_SCHEME}${ref.scope}/${version}${ref.name}${path}`;
}

/** `skill://<scope>/<name>/SKILL.md` and `…/_manifest`: what lists and tool results point to. */
export function skillUris(scope: string, name: string): { uri: string; manifestUri: string } {
  return {
    uri: skillUri({ scope, name, path: SKILL_MD_PATH }),
    manifestUri: skillUri({ scope, name, path: SKILL_MANIFEST_PATH }),
  };
}
