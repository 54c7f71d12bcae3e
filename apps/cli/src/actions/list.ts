import type { Command } from 'commander';
import type { ListOptions } from '../commands/list.js';
import { createContext } from '../context.js';
import { displayDir, type InstallTarget, installTarget } from '../install/targets.js';
import { absoluteDir, LOCKFILE_NAME, shortDigest } from '../lockfile/lockfile.js';
import { type InstalledPackage, installedPackages, installedSites, readLockfile } from '../lockfile/read.js';
import { table, terminalWidth } from '../output.js';
import { inspectFolder } from '../skill-files.js';

export type InstalledState = 'ok' | 'modified' | 'missing';

export interface InstalledRow {
  pkg: InstalledPackage;
  state: InstalledState;
  /** Files that differ from the lockfile or were added, as `folder/path`. */
  modified: string[];
  /** Files (or whole folders) the lockfile lists that are not there. */
  missing: string[];
}

/**
 * Compares each package's folders with the files the lockfile records; no request is made. `pathOf`
 * says where a folder is read (remove reads the folders it checked on disk).
 */
export async function inspectInstalled(
  target: InstallTarget,
  pkg: InstalledPackage,
  pathOf: (dir: string) => string = (dir) => absoluteDir(target.base, dir),
): Promise<InstalledRow> {
  const modified: string[] = [];
  const missing: string[] = [];
  for (const dir of pkg.dirs) {
    const shown = displayDir(target, dir);
    const state = await inspectFolder(pathOf(dir), pkg.files);
    if (state.kind === 'absent') missing.push(shown);
    if (state.kind === 'incomplete' || state.kind === 'modified') {
      missing.push(...state.missing.map((path) => `${shown}/${path}`));
    }
    if (state.kind === 'modified') {
      modified.push(...state.changed.map((path) => (path === '.' ? shown : `${shown}/${path}`)));
    }
  }
  const state: InstalledState = modified.length ? 'modified' : missing.length ? 'missing' : 'ok';
  return { pkg, state, modified, missing };
}

export async function list(input: ListOptions, command: Command): Promise<void> {
  const ctx = await createContext(command);
  const target = installTarget(ctx, input.global);
  const read = await readLockfile(target.lockPath, target.global);
  const rows = read
    ? await Promise.all(installedPackages(read).map((pkg) => inspectInstalled(target, pkg)))
    : [];
  const sites = read ? installedSites(read) : [];
  const siteRows = await Promise.all(sites.map((site) => inspectInstalled(target, site.pkg)));
  if (input.json) {
    const json: Record<string, unknown>[] = rows.map((row) => ({
      name: row.pkg.name,
      version: row.pkg.version,
      requested: row.pkg.requested,
      agents: row.pkg.agents,
      dirs: row.pkg.dirs.map((dir) => displayDir(target, dir)),
      state: row.state,
      modified: row.modified,
      missing: row.missing,
      direct: row.pkg.direct,
      dependencies: row.pkg.dependencies,
      dependencyOf: row.pkg.dependencyOf,
    }));
    // Site skills (docs/discovery.md): their skill name, where they came from and the artifact's digest.
    sites.forEach((site, i) => {
      const row = siteRows[i] as InstalledRow;
      json.push({
        name: site.entry.source.skill,
        version: null,
        source: site.entry.source,
        digest: site.entry.digest,
        agents: site.entry.agents,
        dirs: site.entry.dirs.map((dir) => displayDir(target, dir)),
        state: row.state,
        modified: row.modified,
        missing: row.missing,
        dependencies: site.pkg.dependencies,
      });
    });
    ctx.json(json);
    return;
  }
  if (!read) {
    ctx.out(`Nothing installed: no ${LOCKFILE_NAME} at ${target.lockPath}.`);
    return;
  }
  if (rows.length === 0 && siteRows.length === 0) {
    ctx.out(`Nothing installed: ${LOCKFILE_NAME} lists no packages.`);
    return;
  }
  const lines = table(
    [{ header: 'NAME' }, { header: 'VERSION' }, { header: 'AGENTS' }, { header: 'STATE' }],
    [
      ...rows.map((row) => [
        row.pkg.name,
        row.pkg.version ?? `? (${LOCKFILE_NAME} version 1)`,
        row.pkg.agents.join(', ') || '-',
        row.state,
      ]),
      // A site skill has no version: the start of its artifact's digest says which bytes it is.
      ...sites.map((site, i) => [
        site.pkg.name,
        shortDigest(site.entry.digest),
        site.entry.agents.join(', ') || '-',
        (siteRows[i] as InstalledRow).state,
      ]),
    ],
    terminalWidth(),
  );
  for (const line of lines) ctx.out(line);
  for (const row of [...rows, ...siteRows]) {
    if (!row.pkg.direct)
      ctx.out(`  ${row.pkg.name} is a dependency of: ${row.pkg.dependencyOf.join(', ') || '-'}`);
    for (const path of row.modified) ctx.out(`  modified: ${path}`);
    for (const path of row.missing) ctx.out(`  missing: ${path}`);
  }
}
