import type { Command } from 'commander';
import type { RemoveOptions } from '../commands/remove.js';
import { createContext } from '../context.js';
import { CliError, EXIT, usageError } from '../errors.js';
import { displayDir, guardDir, installTarget, recheck } from '../install/targets.js';
import { LOCKFILE_NAME, linkDependants } from '../lockfile/lockfile.js';
import {
  findSite,
  installedPackages,
  installedSites,
  namesSite,
  readLockfile,
  writeBack,
} from '../lockfile/read.js';
import { parsePackageArg } from '../names.js';
import type { GuardedFolder } from '../safe-folders.js';
import { removeFolder } from '../staging.js';
import { inspectInstalled } from './list.js';

// `pkgreg remove`: the folders deleted (checked on disk first) and the lockfile entries dropped; a
// version 1 lockfile is read and written back as it is, without the registry.

export async function remove(input: RemoveOptions, command: Command): Promise<void> {
  const refs = input.names
    .filter((name) => !namesSite(name))
    .map((name) => {
      if (name.indexOf('@', 1) > 0) throw usageError(`remove takes names only, not versions: ${name}`);
      return parsePackageArg(name);
    });
  const ctx = await createContext(command);
  const target = installTarget(ctx, input.global);
  const read = await readLockfile(target.lockPath, target.global);
  if (!read)
    throw new CliError(EXIT.error, `No ${LOCKFILE_NAME} at ${target.lockPath}; nothing is installed here`);
  // Skills from sites (docs/discovery.md): nothing depends on them; they may need packages.
  const sites = installedSites(read);
  const siteRemovals = new Map(
    input.names.filter(namesSite).map((name) => {
      const site = findSite(sites, name);
      return [site.pkg.name, site] as const;
    }),
  );
  const installed = new Map(installedPackages(read).map((pkg) => [pkg.name, pkg]));
  const chosen = [...new Set(refs.map((ref) => ref.full))];
  for (const name of chosen) {
    if (!installed.has(name))
      throw new CliError(EXIT.notFound, `${name} is not installed (not in ${LOCKFILE_NAME})`);
  }
  // A package another one (or a site skill, by its key) needs stays, unless that one goes too (README:
  // Dependencies).
  const neededBy = new Map<string, string[]>();
  const requirers = [
    ...[...installed.values()].map((pkg) => ({ key: pkg.name, dependencies: pkg.dependencies })),
    ...sites.map((site) => ({ key: site.key, dependencies: site.pkg.dependencies })),
  ];
  for (const { key, dependencies } of requirers) {
    for (const dependency of dependencies) {
      neededBy.set(dependency, [...(neededBy.get(dependency) ?? []), key]);
    }
  }
  const removing = new Set([...chosen, ...[...siteRemovals.values()].map((site) => site.key)]);
  for (const name of chosen) {
    const others = (neededBy.get(name) ?? []).filter((other) => !removing.has(other));
    if (others.length > 0) {
      throw new CliError(
        EXIT.error,
        `${name} is needed by ${others.join(', ')}; remove ${others.length === 1 ? 'that' : 'those'} too ("pkgreg remove ${[...chosen, ...others].join(' ')}")`,
      );
    }
  }
  // Dependencies nothing else needs go with what needed them (yours stay: you named them).
  const orphans = new Map<string, string[]>();
  for (let found = true; found; ) {
    found = false;
    for (const pkg of installed.values()) {
      const by = neededBy.get(pkg.name) ?? [];
      if (pkg.direct || removing.has(pkg.name) || by.length === 0 || !by.every((n) => removing.has(n)))
        continue;
      removing.add(pkg.name);
      orphans.set(pkg.name, by);
      found = true;
    }
  }
  // Every package is checked before any folder is deleted: a refusal removes nothing. First each
  // folder on disk (safe-folders.ts: no link on the way, --force or not), then its files.
  const packages = [
    ...[...removing].map((name) => installed.get(name)).filter((pkg) => pkg !== undefined),
    ...[...siteRemovals.values()].map((site) => site.pkg),
  ];
  const folders = new Map<string, GuardedFolder>();
  for (const dir of packages.flatMap((pkg) => pkg.dirs)) folders.set(dir, guardDir(target, dir));
  const pathOf = (dir: string) => (folders.get(dir) as GuardedFolder).path;
  const rows = await Promise.all(packages.map((pkg) => inspectInstalled(target, pkg, pathOf)));
  const modified = rows.filter((row) => row.modified.length);
  if (modified.length && !input.force) {
    const paths = modified.flatMap((row) => row.modified);
    const shown = paths.length > 5 ? [...paths.slice(0, 5), `${paths.length - 5} more`] : paths;
    throw new CliError(
      EXIT.integrity,
      `${modified.map((row) => row.pkg.name).join(', ')}: ${shown.join(', ')} ${paths.length === 1 ? 'was' : 'were'} modified locally (differs from ${LOCKFILE_NAME}); use --force to remove anyway`,
    );
  }
  const lines: string[] = [];
  try {
    for (const row of rows) {
      for (const dir of row.pkg.dirs) {
        const folder = folders.get(dir) as GuardedFolder;
        await removeFolder(folder.path, folder.root, recheck(target, dir, folder.path));
      }
      const site = siteRemovals.get(row.pkg.name);
      if (site && read.version === 2) delete read.lock.sites?.[site.key];
      else delete read.lock.packages[row.pkg.name];
      const of = orphans.get(row.pkg.name);
      lines.push(
        `removed ${row.pkg.name} (${row.pkg.dirs.map((dir) => displayDir(target, dir)).join(', ')})${of ? `: a dependency of ${of.join(', ')} that nothing else needs` : ''}`,
      );
    }
  } finally {
    // What was deleted leaves the lockfile even when a later folder could not be.
    if (read.version === 2) linkDependants(read.lock);
    await writeBack(target.lockPath, read);
    for (const line of lines) ctx.out(line);
  }
}
