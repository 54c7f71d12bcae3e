import type { IncomingMessage } from 'node:http';
import {
  type AccountAccess,
  canAct,
  claimScopeForAccount,
  isScopeUnclaimed,
  listTrustedPublishers,
  recordAuditEvent,
} from '@pkgreg/accounts';
import { PACKAGE_NOT_FOUND_MESSAGE, type UploadCiSource, type UploadResult } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { hostedSourceRepo, prepareUploadedSkill } from '@pkgreg/indexer';
import {
  type ArchiveLimits,
  canRead,
  ciUploadSourceOf,
  createPgContentStore,
  findPackage,
  holdBlobWritersInTransaction,
  readSkillArchive,
  setHosted,
  versionHistories,
  writePreparedVersions,
} from '@pkgreg/registry';
import semver from 'semver';
import { type AccountViewer, isOwnBearer, type ViewerOf } from '../accounts/viewer.js';
import {
  ApiError,
  badRequest,
  conflict,
  forbidden,
  gone,
  notFound,
  unauthorized,
} from '../http/api-error.js';
import type { PackageKey } from '../packages/package-path.js';
import { type OidcVerifier, oidcRefused, type VerifiedOidcToken } from '../publishing/oidc-verifier.js';
import { isJwt } from '../publishing/proof.js';
import { type CiIdentity, ciIdentityOf, describeIdentity, matches } from './trusted-publishing.js';
import { findUploadTarget, lockPackageUploads, packagePrivacy, tokenLimits } from './uploads.repository.js';

// Uploading a version of a hosted package (docs/publishing.md, "Uploading (hosted packages)"): who may
// (an account with the publisher role on the scope, through a publish token or a session, or a CI job
// its trusted publishers name), then the upload through the indexer's own preparation and the
// registry's own writer, in one transaction: a refusal at any step stores nothing.

export interface UploadDeps {
  db: Db;
  viewerOf: ViewerOf;
  /** The one OIDC verifier, trusting TRUSTED_PUBLISHING_ISSUERS. */
  oidc: OidcVerifier;
  limits: ArchiveLimits;
}

/** Who is uploading, once authorised (before the body is read). */
export type Uploader =
  | { kind: 'account'; viewer: AccountViewer; claimScope: boolean }
  | { kind: 'oidc'; token: VerifiedOidcToken; identity: CiIdentity; publisherId: string };

const MISSING =
  'Authorization: Bearer <token> is required: a pkgreg access token with the publish permission, or a CI OIDC token of a trusted publisher';

/** An exact semver version (no range, no `v`, no build metadata the registry would drop). */
export function uploadVersion(value: string): string {
  if (value.length > 256 || semver.valid(value) !== value) {
    throw badRequest(
      `Invalid version "${value.slice(0, 80)}": an upload names an exact semver version such as 1.2.0`,
    );
  }
  return value;
}

function bearerOf(req: IncomingMessage): string | undefined {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '');
  return match?.[1];
}

/** Whether the access token may claim `scope`: one limited to nothing, or to that scope or package. */
async function tokenMayClaim(db: Db, viewer: AccountViewer, key: PackageKey): Promise<boolean> {
  if (viewer.via !== 'token' || viewer.tokenId === undefined) return true;
  const limits = await tokenLimits(db, viewer.tokenId);
  if (!limits) return false;
  const none = limits.organizations.length + limits.scopes.length + limits.packages.length === 0;
  return none || limits.scopes.includes(key.scope) || limits.packages.includes(`${key.scope}/${key.name}`);
}

function roleIn(access: AccountAccess, scope: string): string | undefined {
  return access.roles.get(scope);
}

/**
 * Who may upload `key`, from the request's credentials, or an ApiError: 401 no or bad credentials, 404 a
 * private package (or private scope) the caller cannot see, 403 a read token, too low a role, a scope
 * that is someone else's, or a CI identity the package does not trust.
 */
export async function authorizeUpload(
  deps: UploadDeps,
  req: IncomingMessage,
  key: PackageKey,
): Promise<Uploader> {
  const target = await findUploadTarget(deps.db, key.scope, key.name);
  const hiddenFrom = (visible: boolean) =>
    !visible && (target.pkg ? target.pkg.private : target.scope?.visibility === 'private');
  const bearer = bearerOf(req);
  // A JWT is a CI OIDC token unless it is one of ours (an MCP edge delegation: read only, refused below).
  if (bearer !== undefined && !isOwnBearer(req.headers.authorization ?? '') && isJwt(bearer)) {
    const token = await deps.oidc.verify(bearer);
    const named = ciIdentityOf(token.issuer, token.claims);
    if (!named.ok) throw oidcRefused(named.reason);
    const publishers = await listTrustedPublishers(deps.db, key.scope, key.name);
    const publisher = publishers.find((row) => matches(row, named.identity));
    if (!publisher) {
      if (hiddenFrom(false)) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
      throw forbidden(
        `${describeIdentity(named.identity)} is not a trusted publisher of @${key.scope}/${key.name}${publishers.length === 0 ? ' (it has none: an admin adds one in its settings)' : ''}`,
      );
    }
    return { kind: 'oidc', token, identity: named.identity, publisherId: publisher.id };
  }
  const viewer = await deps.viewerOf(req);
  if (viewer.kind === 'anonymous') throw unauthorized(MISSING);
  const visible =
    viewer.siteAdmin ||
    roleIn(viewer.access, key.scope) !== undefined ||
    (target.pkg !== null &&
      canRead(viewer.read, { scope: key.scope, name: key.name, private: target.pkg.private }));
  if (hiddenFrom(visible)) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
  if (viewer.permission !== 'publish') {
    throw forbidden('This access token may only read: uploading needs a token with the publish permission');
  }
  if (canAct(viewer.access, key.scope, key.name, 'publisher')) {
    return { kind: 'account', viewer, claimScope: false };
  }
  const role = roleIn(viewer.access, key.scope);
  if (role !== undefined && viewer.access.wholeScopes.has(key.scope)) {
    throw forbidden(`Uploading to @${key.scope} needs the publisher role; yours is ${role}`);
  }
  if (role === undefined && (await isScopeUnclaimed(deps.db, key.scope))) {
    if (await tokenMayClaim(deps.db, viewer, key)) return { kind: 'account', viewer, claimScope: true };
    throw forbidden(`This token is limited to other scopes; it cannot claim @${key.scope}`);
  }
  throw forbidden(
    `These credentials cannot publish to @${key.scope}/${key.name}: the scope belongs to another account or organisation, or the token is limited to other scopes or packages`,
  );
}

function archiveRefusal(problem: 'malformed' | 'too_large', reason: string): ApiError {
  return problem === 'too_large'
    ? new ApiError('payload_too_large', `Upload refused: ${reason}`)
    : badRequest(`Upload refused: ${reason}`);
}

/** Stores the upload as the package's new immutable version, or refuses it leaving nothing behind. */
export async function storeUpload(
  deps: UploadDeps,
  uploader: Uploader,
  key: PackageKey,
  version: string,
  body: Buffer,
  requestId: string | undefined,
  /** The skill's folder in the CI job's repository, as the uploader says (UploadQuerySchema). */
  sourcePath = '',
): Promise<UploadResult> {
  const label = `@${key.scope}/${key.name}`;
  const read = await readSkillArchive(body, key.name, deps.limits);
  if (!read.ok) throw archiveRefusal(read.problem, read.reason);
  const sourceRepo = hostedSourceRepo(key.scope, key.name);
  return deps.db.transaction().execute(async (trx) => {
    await lockPackageUploads(trx, key.scope, key.name);
    // Until this commits, the blob collector waits (content-store.ts says why that is safe).
    await holdBlobWritersInTransaction(trx);
    const existing = await findPackage(trx, key.scope, key.name);
    if (existing?.removed_at) {
      throw gone(
        `${label} was removed from the registry${existing.removal_reason ? `: ${existing.removal_reason}` : ''}`,
      );
    }
    if (existing && !existing.hosted) {
      throw conflict(
        `${label} is indexed from its repository ${existing.source_repo}: publish it from there (pkgreg publish ${existing.source_repo})`,
      );
    }
    const history = existing ? (await versionHistories(trx, [existing.id])).get(existing.id) : undefined;
    if (history?.used.has(version)) {
      throw conflict(`${label}@${version} already exists: versions are immutable, upload a new version`);
    }
    let claimed = false;
    if (uploader.kind === 'account' && uploader.claimScope) {
      claimed = await claimScopeForAccount(trx, key.scope, uploader.viewer.accountId);
      if (!claimed) throw conflict(`@${key.scope} was claimed by someone else meanwhile`);
    }
    const outcome = await prepareUploadedSkill({
      store: createPgContentStore(trx),
      scope: key.scope,
      name: key.name,
      files: read.files,
      latestDigest: history?.latestDigest,
    });
    if (!outcome.ok) throw badRequest(`Upload refused: ${outcome.reason}`);
    const { skill } = outcome;
    if (skill.pkg.name !== key.name) {
      throw badRequest(
        `Upload refused: SKILL.md names the skill "${skill.pkg.name}", but the upload is for ${label}`,
      );
    }
    const declared = skill.pkg.declaredVersion;
    if (declared !== null && declared !== version) {
      throw badRequest(
        `Upload refused: SKILL.md declares version ${declared}, but the upload is for ${version}: make them agree`,
      );
    }
    if (!skill.archive || !skill.scan) {
      throw conflict(
        `${label}@${version} has the same files as the latest version ${history?.latestVersion ?? ''}: nothing to publish`,
      );
    }
    // The uploaded version is the version: declared by the uploader, never a pseudo-version.
    skill.pkg.declaredVersion = version;
    const written = await writePreparedVersions(trx, {
      names: [sourceRepo],
      prepared: [skill],
      rejections: [],
      snapshotCommit: null,
      // An upload names one package: nothing else of its "source" is delisted.
      truncated: true,
      proven: true,
    });
    const result = written.skills[0];
    if (result?.outcome !== 'new-version' || result.version !== version) {
      throw conflict(`Upload refused: ${result?.reason ?? 'the version was not created'}`);
    }
    const row = await findPackage(trx, key.scope, key.name);
    if (!row) throw new Error(`${label} vanished during its upload`);
    await setHosted(trx, row.id);
    const proof = uploader.kind === 'oidc' ? 'oidc' : uploader.viewer.via;
    // authorizeUpload refuses a delegation (it may only read): never an uploader.
    if (proof === 'delegation') throw new Error('a delegation cannot upload');
    const ciSource =
      uploader.kind === 'oidc' ? await keepCiSource(trx, uploader, row.id, version, sourcePath) : null;
    const settings = await trx
      .selectFrom('scope_settings')
      .select('organization_id')
      .where('scope', '=', key.scope)
      .executeTakeFirst();
    await recordAuditEvent(trx, {
      actorId: uploader.kind === 'account' ? uploader.viewer.accountId : null,
      organizationId: settings?.organization_id ?? null,
      action: 'version.upload',
      target: `${label}@${version}`,
      details: {
        proof,
        digest: skill.digest,
        ...(claimed ? { claimedScope: key.scope } : {}),
        ...(uploader.kind === 'account' && uploader.viewer.tokenId
          ? { tokenId: uploader.viewer.tokenId }
          : {}),
        ...(uploader.kind === 'oidc'
          ? {
              trustedPublisher: uploader.publisherId,
              issuer: uploader.identity.issuer,
              repository: uploader.identity.repository,
              workflow: uploader.identity.workflows[0] ?? null,
              environment: uploader.identity.environment,
              ref: uploader.identity.ref,
            }
          : {}),
      },
      requestId,
    });
    // Last, inside the transaction: a token refused for anything else is not spent, and a replayed one
    // rolls everything back.
    if (uploader.kind === 'oidc') await deps.oidc.spend(uploader.token);
    return {
      name: label,
      version,
      integrity: skill.archive.integrity,
      digest: skill.digest,
      fileCount: skill.manifest.length,
      totalBytes: skill.totalBytes,
      risk: skill.scan.risk,
      warnings: skill.warnings,
      hosted: true,
      private: await packagePrivacy(trx, row.id),
      proof,
      claimedScope: claimed,
      ciSource,
    };
  });
}

/**
 * Keeps what a CI upload's token says of its source, for the signer's attestation of the version
 * (docs/provenance.md); null when its claims name no commit (nothing to attest).
 */
async function keepCiSource(
  trx: Db,
  uploader: Extract<Uploader, { kind: 'oidc' }>,
  packageId: string,
  version: string,
  path: string,
): Promise<UploadCiSource | null> {
  const source = ciUploadSourceOf(uploader.token.issuer, uploader.token.claims);
  if (!source) return null;
  const { id } = await trx
    .selectFrom('package_versions')
    .select('id')
    .where('package_id', '=', packageId)
    .where('version', '=', version)
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('version_ci_uploads')
    .values({
      version_id: id,
      issuer: uploader.token.issuer,
      repository_url: source.repositoryUrl,
      commit: source.commit,
      path,
      run: JSON.stringify(source.run),
    })
    .execute();
  return { repository: source.repositoryUrl, commit: source.commit, path, run: source.run.runUrl };
}
