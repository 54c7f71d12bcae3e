import {
  normalizeSkillFilePath,
  PACKAGE_SEGMENT_PATTERN,
  RejectError,
  SKILL_MANIFEST_PATH,
  SKILL_MD_PATH,
  SKILL_URI_LEGACY_UNTIL,
  SKILL_URI_SCHEME,
} from '@pkgreg/contracts';

// skill:// URIs (docs/decisions.md, "Skills over MCP"): `skill://<scope>/<name>/<path>` for the latest
// version, `skill://<scope>/<version>/<name>/<path>` for an exact one. The authority is the scope and the
// skill's folder ends with its name, as the skills extension (SEP-2640) asks; a version always holds a dot
// and a package name never does, so the two forms never read alike. The first forms,
// `skill://@scope/name/<path>` and `skill://@scope/name@<version>/<path>`, are still read until
// SKILL_URI_LEGACY_UNTIL (by the edge's clock, Date.now) and never emitted. Path segments are
// percent-encoded where RFC 3986 needs it (what RFC 6570's `{+path}` expansion produces), and decoded
// before the path is checked; a segment that decodes to hold `/` is refused, as SEP-2640 clients count it
// outside the skill. A skill:// URI has no query or fragment.

export interface SkillRef {
  scope: string;
  name: string;
  /** An exact version, or null for the latest. */
  version: string | null;
  /** Relative path inside the folder, decoded; `_manifest` for the manifest; '' for the folder itself. */
  path: string;
}

const LEGACY_PATTERN = /^skill:\/\/@([^/@]+)\/([^/@]+)(?:@([^/]+))?(?:\/(.*))?$/;
/** The first moment the deprecated forms are refused: the day after SKILL_URI_LEGACY_UNTIL, 00:00 UTC. */
const LEGACY_REFUSED_FROM = Date.parse(`${SKILL_URI_LEGACY_UNTIL}T00:00:00Z`) + 24 * 60 * 60 * 1000;
// semver.org's recommended pattern: the registry answers 400 for anything else.
const SEMVER_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

const FORMS = 'skill://<scope>/<name>/<path> or skill://<scope>/<version>/<name>/<path>';
const invalid = (uri: string, why = `uri must be ${FORMS}`) =>
  new RejectError('request_schema_invalid', why, { uri: uri.slice(0, 512) });

function decodePath(raw: string): string | null {
  let segments: string[];
  try {
    segments = raw.split('/').map(decodeURIComponent);
  } catch {
    return null; // a malformed percent escape
  }
  // `%2F` would join two segments into one path the client holds for a single name.
  if (segments.some((segment) => segment.includes('/'))) return null;
  return normalizeSkillFilePath(segments.join('/'));
}

interface UriParts {
  scope: string;
  name: string;
  version: string | undefined;
  /** The path still encoded; undefined: none, the folder itself. */
  rawPath: string | undefined;
  /** One of the deprecated `skill://@scope/…` forms. */
  legacy: boolean;
}

/** The URI's parts; null when no form fits. */
function split(uri: string): UriParts | null {
  const legacy = LEGACY_PATTERN.exec(uri);
  if (legacy) {
    if (Date.now() >= LEGACY_REFUSED_FROM) {
      throw invalid(
        uri,
        `skill://@scope/… URIs were read until ${SKILL_URI_LEGACY_UNTIL}: uri must be ${FORMS}`,
      );
    }
    const [, scope = '', name = '', version, rawPath] = legacy;
    return { scope, name, version, rawPath, legacy: true };
  }
  if (!uri.startsWith(SKILL_URI_SCHEME) || uri.startsWith(`${SKILL_URI_SCHEME}@`)) return null;
  const [scope = '', second, ...rest] = uri.slice(SKILL_URI_SCHEME.length).split('/');
  if (second === undefined) return null;
  const version = second.includes('.') ? second : undefined;
  const name = version === undefined ? second : rest.shift();
  if (name === undefined) return null;
  return { scope, name, version, rawPath: rest.length > 0 ? rest.join('/') : undefined, legacy: false };
}

function parse(uri: string, folder: boolean): SkillRef & { legacy: boolean } {
  // `?` and `#` never belong to a path the edge writes (a file name holding one is `%3F`, `%23`).
  if (/[?#]/.test(uri)) throw invalid(uri, 'uri must not have a query or fragment');
  const parts = split(uri);
  if (!parts || (parts.rawPath === undefined && !folder)) throw invalid(uri);
  const { scope, name, version, rawPath, legacy } = parts;
  const path = rawPath === undefined ? '' : decodePath(rawPath);
  if (
    !PACKAGE_SEGMENT_PATTERN.test(scope) ||
    !PACKAGE_SEGMENT_PATTERN.test(name) ||
    (version !== undefined && (version.length > 256 || !SEMVER_PATTERN.test(version))) ||
    path === null
  ) {
    throw invalid(uri);
  }
  return { scope, name, version: version ?? null, path, legacy };
}

// Reads ask for the same few URIs again and again: each one's parts are kept (frozen, so no caller can
// change what the next read gets), up to PARSED_MAX URIs, then the memo starts over. Only URIs up to
// PARSED_MAX_LENGTH characters are kept, so callers cannot make it hold more than a few megabytes. A
// deprecated form is parsed each time, so its end date holds for a URI read before it.
const PARSED_MAX = 1000;
const PARSED_MAX_LENGTH = 1024;
const parsedFiles = new Map<string, Readonly<SkillRef>>();

const refOf = ({ scope, name, version, path }: SkillRef): SkillRef => ({ scope, name, version, path });

/** The parts of a skill:// URI of a file; request_schema_invalid (-32602) when it is not one. */
export function parseSkillUri(uri: string): Readonly<SkillRef> {
  let ref = parsedFiles.get(uri);
  if (!ref) {
    const parsed = parse(uri, false);
    ref = Object.freeze(refOf(parsed));
    if (uri.length <= PARSED_MAX_LENGTH && !parsed.legacy) {
      if (parsedFiles.size >= PARSED_MAX) parsedFiles.clear();
      parsedFiles.set(uri, ref);
    }
  }
  return ref;
}

/** The parts of a skill:// URI of a skill's folder (path '') or a folder in it; else as parseSkillUri. */
export function parseSkillFolderUri(uri: string): SkillRef {
  return refOf(parse(uri, true));
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

/**
 * Whether SEP-2640 clients take `a` and `b` for one URI: they compare WHATWG URL serializations (the v2
 * SkillsClient's `canonicalUri`), which read `skill://@acme/…` as `skill://acme/…` and keep `%2E` as it is.
 */
export function sameSkillUri(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

/** `skill://<scope>/<name>/SKILL.md` and `…/_manifest`: what lists and tool results point to. */
export function skillUris(scope: string, name: string): { uri: string; manifestUri: string } {
  return {
    uri: skillUri({ scope, name, path: SKILL_MD_PATH }),
    manifestUri: skillUri({ scope, name, path: SKILL_MANIFEST_PATH }),
  };
}
