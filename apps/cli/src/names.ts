import { LATEST_VERSION, parsePackageName } from '@pkgreg/contracts';
import validVersion from 'semver/functions/valid.js';
import validRange from 'semver/ranges/valid.js';
import { usageError } from './errors.js';

export interface PackageRef {
  scope: string;
  name: string;
  /** `@scope/name`, the lockfile key. */
  full: string;
}

/** What a name on the command line asks for after its `@`. */
export type VersionSpec =
  | { kind: 'latest' }
  | { kind: 'exact'; version: string }
  | { kind: 'range'; range: string };

export interface PackageSpec {
  ref: PackageRef;
  spec: VersionSpec;
  /** The version or range as typed (recorded in the lockfile); null for the latest. */
  requested: string | null;
  /** Whether a version was typed at all (`@scope/name@latest` is typed, `@scope/name` is not). */
  typed: boolean;
}

/** Validates a name typed on the command line (decisions.md: Registry / Scope and name). */
export function parsePackageArg(value: string): PackageRef {
  const parsed = parsePackageName(value.trim());
  if (!parsed) {
    throw usageError(
      `Invalid package name "${value}": expected @scope/name (lowercase letters, digits and single hyphens)`,
    );
  }
  return { ...parsed, full: `@${parsed.scope}/${parsed.name}` };
}

/** `latest`, an exact semver version, or a node-semver range; anything else is a usage error. */
export function parseVersionSpec(text: string, label: string): VersionSpec {
  const value = text.trim();
  if (value === LATEST_VERSION) return { kind: 'latest' };
  const exact = value === '' ? null : validVersion(value);
  if (exact !== null) return { kind: 'exact', version: exact };
  const range = value === '' ? null : validRange(value);
  if (range !== null) return { kind: 'range', range: value };
  throw usageError(
    `Invalid version "${text}" for ${label}: expected latest, a version (1.2.0) or a range (^1.2, ~1.2.3, 1.x)`,
  );
}

/** `@scope/name`, `@scope/name@1.2.0`, `@scope/name@^1.2` or `@scope/name@latest`. */
export function parsePackageSpec(value: string): PackageSpec {
  const text = value.trim();
  const at = text.indexOf('@', 1);
  const ref = parsePackageArg(at < 0 ? text : text.slice(0, at));
  if (at < 0) return { ref, spec: { kind: 'latest' }, requested: null, typed: false };
  const spec = parseVersionSpec(text.slice(at + 1), ref.full);
  const requested = spec.kind === 'latest' ? null : spec.kind === 'exact' ? spec.version : spec.range;
  return { ref, spec, requested, typed: true };
}
