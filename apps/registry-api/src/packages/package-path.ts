import { INVALID_PACKAGE_PATH_MESSAGE, parsePackagePath } from '@pkgreg/contracts';
import { badRequest } from '../http/api-error.js';

export interface PackageKey {
  scope: string;
  name: string;
}

/**
 * `@scope` and `name` path segments (decisions.md: Registry / Scope and name). Express has already
 * percent-decoded them, so `%40scope` arrives as `@scope`; a raw `%40` is still accepted. A scope
 * without its `@` is not a scoped path.
 */
export function packageKeyFromParams(params: Record<string, string | undefined>): PackageKey {
  const scope = params.scope ?? '';
  const name = params.name ?? '';
  if (!scope.startsWith('@') && !scope.startsWith('%40')) throw badRequest(INVALID_PACKAGE_PATH_MESSAGE);
  const key = parsePackagePath(scope, name);
  if (!key) throw badRequest(INVALID_PACKAGE_PATH_MESSAGE);
  return key;
}
