import { LATEST_VERSION, PACKAGE_SEGMENT_PATTERN } from '@pkgreg/contracts';
import semver from 'semver';

// `metadata.dependencies` of a SKILL.md -> the dependencies a version records (docs/versions.md,
// Dependencies). A comma-separated list of `@scope/name` with an optional semver range after a second
// `@`: `@anthropics/pdf@^1.2, @acme/csv`. A YAML list of the same entries is read too. Entries that
// cannot be read are left out with a warning, as agents tolerate them: the skill is still indexed.

/** A dependency as a version declares it. */
export interface DeclaredDependency {
  scope: string;
  name: string;
  /** The declared range as written (trimmed); null asks for the latest version. */
  range: string | null;
}

/** More than this many are left out (with a warning): a skill is not a lockfile. */
export const MAX_DEPENDENCIES = 64;
/** Longer entries are not read (a range is a few dozen characters). */
const MAX_ENTRY_CHARS = 300;

const ENTRY = /^@([^/@\s]+)\/([^/@\s]+)(?:@(.*))?$/;

export interface ParsedDependencies {
  dependencies: DeclaredDependency[];
  warnings: string[];
}

const quoted = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);

function entriesOf(value: unknown): string[] | null {
  if (typeof value === 'string') return value.split(',');
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  return null;
}

/**
 * Reads `metadata.dependencies`. `self` is the package's own `scope/name`: a skill naming itself is left
 * out (a cycle of one). Whether each package exists is the indexer's to say, with the database.
 */
export function parseDependencies(value: unknown, self: { scope: string; name: string }): ParsedDependencies {
  const dependencies: DeclaredDependency[] = [];
  const warnings: string[] = [];
  if (value === undefined || value === null) return { dependencies, warnings };
  const entries = entriesOf(value);
  if (entries === null) {
    warnings.push(
      'metadata.dependencies must be a comma-separated list of @scope/name[@range]; it was ignored',
    );
    return { dependencies, warnings };
  }
  const seen = new Set<string>();
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    if (dependencies.length === MAX_DEPENDENCIES) {
      warnings.push(`more than ${MAX_DEPENDENCIES} dependencies; the rest were ignored`);
      break;
    }
    const match = entry.length <= MAX_ENTRY_CHARS ? ENTRY.exec(entry) : null;
    const scope = match?.[1] ?? '';
    const name = match?.[2] ?? '';
    if (!match || !PACKAGE_SEGMENT_PATTERN.test(scope) || !PACKAGE_SEGMENT_PATTERN.test(name)) {
      warnings.push(
        `dependency ${quoted(entry)} is not @scope/name[@range] (lowercase a-z 0-9 -); it was ignored`,
      );
      continue;
    }
    const full = `@${scope}/${name}`;
    const written = match[3]?.trim();
    let range: string | null = null;
    if (written !== undefined && written !== LATEST_VERSION) {
      if (written === '' || semver.validRange(written, { includePrerelease: true }) === null) {
        warnings.push(`dependency ${full} has an invalid semver range ${quoted(written)}; it was ignored`);
        continue;
      }
      range = written;
    }
    if (scope === self.scope && name === self.name) {
      warnings.push(`dependency ${full} is the package itself; it was ignored`);
      continue;
    }
    if (seen.has(full)) {
      warnings.push(`dependency ${full} is listed more than once; the first is kept`);
      continue;
    }
    seen.add(full);
    dependencies.push({ scope, name, range });
  }
  return { dependencies, warnings };
}

/** The warning of a dependency no visible package answers to at indexing time. */
export function unknownDependencyWarning(dependency: DeclaredDependency): string {
  return `dependency @${dependency.scope}/${dependency.name} is not in the registry; it resolves once that package is indexed`;
}
