import type { Db } from '@pkgreg/db';
import { scanVersion } from '@pkgreg/scan';
import { sql } from 'kysely';
import { type ContentStore, createPgContentStore } from '../content/content-store.js';

// The backfill of the risk scan (docs/risk-scan.md): versions created before the scan existed have no
// risk, and a migration cannot run the scanner. `pnpm registry rescan` scans them from the stored
// bytes; `--all` scans every version again (after the rules change).

export interface RescanOptions {
  /** Every version, not only those without a risk. */
  all?: boolean;
  /** Only these packages. */
  packages?: Array<{ scope: string; name: string }>;
  store?: ContentStore;
  /** Versions read and written per round (default 50). */
  batchSize?: number;
  /** Called after each version with its result. */
  onVersion?: (v: { name: string; version: string; risk: string; findings: number }) => void;
}

export interface RescanSummary {
  versions: number;
  byRisk: Record<'none' | 'low' | 'medium' | 'high', number>;
  bytes: number;
  ms: number;
}

export async function rescanVersions(db: Db, options: RescanOptions = {}): Promise<RescanSummary> {
  const started = performance.now();
  const store = options.store ?? createPgContentStore(db);
  const summary: RescanSummary = {
    versions: 0,
    byRisk: { none: 0, low: 0, medium: 0, high: 0 },
    bytes: 0,
    ms: 0,
  };
  const batchSize = options.batchSize ?? 50;
  let after = 0;
  for (;;) {
    let query = db
      .selectFrom('package_versions as v')
      .innerJoin('packages as p', 'p.id', 'v.package_id')
      .select(['v.id', 'v.seq', 'v.version', 'v.package_id', 'p.scope', 'p.name'])
      .where('v.seq', '>', after)
      .orderBy('v.seq')
      .limit(batchSize);
    if (!options.all) query = query.where('v.risk', 'is', null);
    if (options.packages && options.packages.length > 0) {
      const keys = options.packages;
      query = query.where((eb) =>
        eb.or(keys.map((k) => eb.and([eb('p.scope', '=', k.scope), eb('p.name', '=', k.name)]))),
      );
    }
    const versions = await query.execute();
    if (versions.length === 0) break;
    after = Number(versions[versions.length - 1]?.seq);
    const files = await db
      .selectFrom('package_version_files')
      .select(['version_id', 'path', 'sha256', 'executable', 'link_target'])
      .where(
        'version_id',
        'in',
        versions.map((v) => v.id),
      )
      .execute();
    const bytes = await store.get(files.filter((f) => f.link_target === null).map((f) => f.sha256));
    for (const v of versions) {
      const scan = await scanVersion(
        files
          .filter((f) => f.version_id === v.id)
          .map((f) => ({
            path: f.path,
            bytes: f.link_target === null ? (bytes.get(f.sha256) ?? new Uint8Array()) : new Uint8Array(),
            executable: f.executable,
            linkTarget: f.link_target,
          })),
      );
      // The version's scan and (when it is the newest) the package's risk change together.
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('package_versions')
          .set({ risk: scan.risk, findings: JSON.stringify(scan.findings), scanned_at: sql`now()` })
          .where('id', '=', v.id)
          .execute();
        await trx
          .updateTable('packages')
          .set({ risk: scan.risk })
          .where('id', '=', v.package_id)
          .where(
            sql<string>`(select id from package_versions where package_id = ${v.package_id} order by seq desc limit 1)`,
            '=',
            v.id,
          )
          .execute();
      });
      summary.versions += 1;
      summary.byRisk[scan.risk] += 1;
      summary.bytes += scan.stats.bytes;
      options.onVersion?.({
        name: `@${v.scope}/${v.name}`,
        version: v.version,
        risk: scan.risk,
        findings: scan.findings.length,
      });
    }
  }
  summary.ms = performance.now() - started;
  return summary;
}
