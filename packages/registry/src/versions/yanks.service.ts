import type { Db } from '@pkgreg/db';
import { lockDependencyGraph, refreshDependencyState } from '../dependencies/dependencies.repository.js';
import { refreshLatestVersion } from './versions.repository.js';
import { unyankVersion, yankVersion } from './yanks.repository.js';

// An owner's yank (docs/versions.md): the version stays as it is, a yank row says it is withdrawn, and
// the package's latest version (the newest not yanked) moves with it.

/**
 * Yanks (with a reason) or unyanks (null) a version of a package, in one transaction that keeps the
 * package's latest version and the dependency counts true. Returns the latest version after it.
 */
export async function setVersionYank(
  db: Db,
  packageId: string,
  versionId: string,
  yank: { reason: string | null } | null,
): Promise<string | null> {
  return db.transaction().execute(async (trx) => {
    // The latest version may move, and with it what the package depends on (docs/versions.md).
    await lockDependencyGraph(trx);
    if (yank) await yankVersion(trx, versionId, yank.reason);
    else await unyankVersion(trx, versionId);
    const version = await refreshLatestVersion(trx, packageId);
    await refreshDependencyState(trx, { packageIds: [packageId], changedIds: [packageId] });
    return version;
  });
}
