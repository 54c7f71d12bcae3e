import {
  normalizeSkillFilePath,
  PACKAGE_SEGMENT_PATTERN,
  RejectError,
  SKILL_MANIFEST_PATH,
  SKILL_MD_PATH,
  SKILL_URI_SCHEME,
} from '@pkgreg/contracts';

// skill:// URIs (docs/decisions.md, "Skills over MCP"): `skill://@scope/name/<path>` for the latest version,
// `skill://@scope/name@<version>/<path>` for an exact one. Path segments are percent-encoded where RFC 3986
// needs it (what RFC 6570's `{+path}` expansion produces), and decoded before the path is checked.

export interface SkillRef {
  scope: string;
  name: string;
  /** An exact version, or null for the latest. */
  version: string | null;
  /** Relative path inside the folder, decoded; `_manifest` for the manifest. */
  path: string;
}

const URI_PATTERN = /^skill:\/\/@([^/@]+)\/([^/@]+)(?:@([^/]+))?\/(.+)$/;
// semver.org's recommended pattern: the registry answers 400 for anything else.
const SEMVER_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

const invalid = (uri: string) =>
  new RejectError(
    'request_schema_invalid',
    'uri must be skill://@scope/name/<path> or skill://@scope/name@<version>/<path>',
    { uri: uri.slice(0, 512) },
  );

function decodePath(raw: string): string | null {
  try {
    return normalizeSkillFilePath(raw.split('/').map(decodeURIComponent).join('/'));
  } catch {
    return null; // a malformed percent escape
  }
}

/** The parts of a skill:// URI; request_schema_invalid (-32602) when it is not one. */
export function parseSkillUri(uri: string): SkillRef {
  const match = URI_PATTERN.exec(uri);
  if (!match) throw invalid(uri);
  const [, scope = '', name = '', version, rawPath = ''] = match;
  const path = decodePath(rawPath);
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

/** Percent-encodes what RFC 3986 does not allow in a path segment (`/` stays the separator). */
function encodePath(path: string): string {
  return path
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/%40/g, '@').replace(/%2B/g, '+'))
    .join('/');
}

export function skillUri(ref: {
  scope: string;
  name: string;
  version?: string | null;
  path: string;
}): string {
  const version = ref.version ? `@${ref.version}` : '';
  return `${SKILL_URI_SCHEME}@${ref.scope}/${ref.name}${version}/${encodePath(ref.path)}`;
}

/** `skill://@scope/name/SKILL.md` and `…/_manifest`: what lists and tool results point to. */
export function skillUris(scope: string, name: string): { uri: string; manifestUri: string } {
  return {
    uri: skillUri({ scope, name, path: SKILL_MD_PATH }),
    manifestUri: skillUri({ scope, name, path: SKILL_MANIFEST_PATH }),
  };
}
