import type { Context } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { byCodePoint, type Lockfile, type SiteEntry } from '../lockfile/lockfile.js';
import {
  chooseEntry,
  type ListedSkill,
  parseSite,
  readIndex,
  type SiteIndex,
  type SiteJob,
  siteEntryOf,
} from './site.js';

// `pkgreg outdated` and `pkgreg update` for skills installed from sites (docs/discovery.md), as vercel's
// `skills check` and `skills update` treat well-known skills: each site's index read again (once per
// site), the digest it lists now compared with the locked one. An update is then the install of that
// entry where the skill is (install/site.ts): downloaded and checked against the new digest first.

/** `removed`: the index no longer lists it; `unreachable`: the index or its entry could not be read. */
export type SiteState = 'current' | 'outdated' | 'removed' | 'unreachable';

export interface SiteRow {
  key: string;
  entry: SiteEntry;
  state: SiteState;
  /** What the index lists now (current and outdated rows). */
  latest: ListedSkill | undefined;
  /** Why it could not be checked (unreachable rows). */
  error: CliError | undefined;
}

/** Each site skill of `keys` against its site's index now, sorted by key. */
export async function compareSites(
  ctx: Context,
  lock: Lockfile,
  keys: readonly string[],
): Promise<SiteRow[]> {
  const bySite = new Map<string, [string, SiteEntry][]>();
  for (const key of [...keys].sort(byCodePoint)) {
    const entry = lock.sites?.[key];
    if (!entry) continue;
    bySite.set(entry.source.url, [...(bySite.get(entry.source.url) ?? []), [key, entry]]);
  }
  const rows: SiteRow[] = [];
  for (const [url, entries] of bySite) {
    let index: SiteIndex;
    try {
      index = await readIndex(ctx, parseSite(url));
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      for (const [key, entry] of entries)
        rows.push({ key, entry, state: 'unreachable', latest: undefined, error });
      continue;
    }
    for (const [key, entry] of entries) {
      try {
        const chosen = chooseEntry(index, entry.source.skill);
        const latest = { entry: chosen, url: new URL(chosen.url, index.url), index: index.url };
        const state = chosen.digest === entry.digest ? 'current' : 'outdated';
        rows.push({ key, entry, state, latest, error: undefined });
      } catch (error) {
        if (!(error instanceof CliError)) throw error;
        // A skill the index does not list any more is gone from the site, as a package from the registry.
        if (error.exitCode === EXIT.notFound)
          rows.push({ key, entry, state: 'removed', latest: undefined, error: undefined });
        else rows.push({ key, entry, state: 'unreachable', latest: undefined, error });
      }
    }
  }
  return rows.sort((a, b) => byCodePoint(a.key, b.key));
}

/** The job installing what the index lists now for an outdated site skill, in its folders. */
export function siteUpdateJob(row: SiteRow): SiteJob {
  if (!row.latest) throw new Error(`${row.key} is ${row.state}, not outdated`);
  return {
    key: row.key,
    entry: siteEntryOf(row.entry.source, row.latest, row.entry),
    locked: row.entry,
    shown: row.entry.dirs,
  };
}
