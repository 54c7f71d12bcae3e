import { parsePackageName } from '@pkgreg/contracts';
import { usageError } from './errors.js';

export interface PackageRef {
  scope: string;
  name: string;
  /** `@scope/name`, the lockfile key. */
  full: string;
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
