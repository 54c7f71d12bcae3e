import { canAct } from '@pkgreg/accounts';
import {
  DeprecateRequestSchema,
  PACKAGE_NOT_FOUND_MESSAGE,
  type PackageState,
  VERSION_NOT_FOUND_MESSAGE,
  YankRequestSchema,
  type YankState,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  bindScope,
  checkPackageOwner,
  deprecatePackage,
  findManagedPackage,
  findVersionOf,
  type ManagedPackage,
  sanitizeScope,
  setVersionYank,
  undeprecatePackage,
} from '@pkgreg/registry';
import semver from 'semver';
import { z } from 'zod';
import type { AccountViewer } from '../accounts/viewer.js';
import { badRequest, forbidden, gone, notFound } from '../http/api-error.js';
import type { PackageKey } from '../packages/package-path.js';
import type { ProofVerifier } from './proof.js';

// Owners manage their packages with the proofs they publish with (docs/publishing.md): the proof must
// cover the package's source repository, and its owner account must be the one the scope is bound to
// (@pkgreg/registry's scopes/scope-binding.service.ts decides that). Or with their account: a publish
// token or a session whose account has the publisher role on the scope (hosted packages have no
// repository to prove, so this is their only way).

/** What an owner action was sent with: a code-host proof, or pkgreg credentials. */
export type OwnerCredentials = { kind: 'proof'; token: string } | { kind: 'account'; viewer: AccountViewer };

export interface OwnerDeps {
  db: Db;
  proofs: ProofVerifier;
}

function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  throw badRequest(`${field}${issue?.message ?? 'invalid body'}`);
}

/**
 * The package, once the proof shows control of its source repository by the account its scope belongs
 * to (binding the scope when it is not yet bound). A new account on a freed login gets a 403.
 */
async function authorize(deps: OwnerDeps, who: OwnerCredentials, key: PackageKey): Promise<ManagedPackage> {
  const pkg = await findManagedPackage(deps.db, key.scope, key.name);
  if (!pkg || pkg.status === 'delisted') throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
  if (who.kind === 'account') {
    const { viewer } = who;
    const sees = !pkg.private || viewer.access.roles.has(key.scope) || viewer.siteAdmin;
    if (!sees) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
  }
  if (pkg.removed_at) {
    throw gone(
      `@${key.scope}/${key.name} was removed from the registry${pkg.removal_reason ? `: ${pkg.removal_reason}` : ''}`,
    );
  }
  if (who.kind === 'account') {
    if (who.viewer.permission !== 'publish') {
      throw forbidden('This access token may only read: deprecating and yanking need the publish permission');
    }
    if (!canAct(who.viewer.access, key.scope, key.name, 'publisher')) {
      throw forbidden(`Managing @${key.scope}/${key.name} needs the publisher role on @${key.scope}`);
    }
    return pkg;
  }
  const identity = await deps.proofs.verify(who.token, { repository: pkg.source_repo });
  const named = sanitizeScope(identity.ownerLogin) ?? '';
  const claim = { scope: named, ownerId: identity.ownerId, login: identity.ownerLogin };
  const ownership = await checkPackageOwner(deps.db, claim, pkg);
  if (!ownership.ok) throw forbidden(ownership.message);
  if (!ownership.bound) await bindScope(deps.db, claim, 'publish');
  return pkg;
}

function stateOf(
  pkg: ManagedPackage,
  row: { status: PackageState['status']; deprecation_message: string | null },
): PackageState {
  return {
    scope: pkg.scope,
    name: pkg.name,
    status: row.status,
    deprecationMessage: row.deprecation_message,
  };
}

export async function deprecate(
  deps: OwnerDeps,
  who: OwnerCredentials,
  key: PackageKey,
  body: unknown,
): Promise<PackageState> {
  const request = parseBody(DeprecateRequestSchema, body);
  const pkg = await authorize(deps, who, key);
  const row = await deprecatePackage(deps.db, pkg.id, request.message ? request.message : null);
  return stateOf(pkg, row);
}

export async function undeprecate(
  deps: OwnerDeps,
  who: OwnerCredentials,
  key: PackageKey,
): Promise<PackageState> {
  const pkg = await authorize(deps, who, key);
  const row = await undeprecatePackage(deps.db, pkg.id, pkg.declared_status?.toLowerCase() === 'deprecated');
  return stateOf(pkg, row);
}

const ExactVersionSchema = z.string().refine((v) => semver.valid(v) === v && v.length <= 256);

function exactVersion(value: string): string {
  if (!ExactVersionSchema.safeParse(value).success) {
    throw badRequest('Invalid version: yank names an exact semver version (not "latest" or a range)');
  }
  return value;
}

async function setYank(
  deps: OwnerDeps,
  who: OwnerCredentials,
  key: PackageKey,
  versionParam: string,
  yank: { reason: string | null } | null,
): Promise<YankState> {
  const version = exactVersion(versionParam);
  const pkg = await authorize(deps, who, key);
  const row = await findVersionOf(deps.db, pkg.id, version);
  if (!row) throw notFound(VERSION_NOT_FOUND_MESSAGE);
  const latest = await setVersionYank(deps.db, pkg.id, row.id, yank);
  return {
    scope: pkg.scope,
    name: pkg.name,
    version,
    yanked: yank !== null,
    yankReason: yank?.reason ?? null,
    latest,
  };
}

export async function yank(
  deps: OwnerDeps,
  who: OwnerCredentials,
  key: PackageKey,
  version: string,
  body: unknown,
): Promise<YankState> {
  const request = parseBody(YankRequestSchema, body);
  return setYank(deps, who, key, version, { reason: request.reason ? request.reason : null });
}

export async function unyank(
  deps: OwnerDeps,
  who: OwnerCredentials,
  key: PackageKey,
  version: string,
): Promise<YankState> {
  return setYank(deps, who, key, version, null);
}
