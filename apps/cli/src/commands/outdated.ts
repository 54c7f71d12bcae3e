import type { PackageDetail } from '@pkgreg/contracts';
import type { Command } from 'commander';
import { z } from 'zod';
import { type Context, createContext, parseOptions } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { installTarget } from '../installer.js';
import { LOCKFILE_NAME, type LockEntry, type Lockfile, readLockfile } from '../lockfile.js';
import { parsePackageArg } from '../names.js';
import { table, terminalWidth } from '../output.js';

export type OutdatedState = 'current' | 'outdated' | 'removed';

export interface OutdatedRow {
  entry: LockEntry;
  /** Null when the registry no longer has the package. */
  pkg: PackageDetail | null;
  state: OutdatedState;
}

export async function requireLockfile(path: string): Promise<Lockfile> {
  const lock = await readLockfile(path);
  if (!lock) throw new CliError(EXIT.error, `No ${LOCKFILE_NAME} at ${path}; nothing is installed here`);
  return lock;
}

/** Compares the lockfile's lastCommitSha with the registry's, one detail call per package. */
export async function compareWithRegistry(ctx: Context, entries: LockEntry[]): Promise<OutdatedRow[]> {
  const rows: OutdatedRow[] = [];
  for (const entry of entries) {
    const ref = parsePackageArg(entry.name);
    let pkg: PackageDetail | null;
    try {
      pkg = await ctx.client.detail(ref.scope, ref.name);
    } catch (error) {
      if (error instanceof CliError && error.exitCode === EXIT.notFound) pkg = null;
      else throw error;
    }
    if (pkg?.status === 'delisted') pkg = null;
    const state: OutdatedState =
      pkg === null ? 'removed' : pkg.lastCommitSha === entry.lastCommitSha ? 'current' : 'outdated';
    rows.push({ entry, pkg, state });
  }
  return rows;
}

const OutdatedInputSchema = z.object({
  json: z.boolean().default(false),
  global: z.boolean().default(false),
});

function short(sha: string | null | undefined): string {
  return sha ? sha.slice(0, 12) : '-';
}

export function configureOutdatedCommand(program: Command): Command {
  return program
    .command('outdated')
    .description(
      `list installed packages whose SKILL.md changed in the registry since ${LOCKFILE_NAME} was written`,
    )
    .option('-g, --global', 'check the global installs')
    .option('--json', 'print the comparison as JSON')
    .action(async (options: Record<string, unknown>, command: Command) => {
      const input = parseOptions(OutdatedInputSchema, options);
      const ctx = await createContext(command);
      const lock = await requireLockfile(installTarget(ctx, input.global).lockPath);
      const entries = Object.values(lock.packages).sort((a, b) => a.name.localeCompare(b.name));
      const rows = await compareWithRegistry(ctx, entries);
      if (input.json) {
        const json = rows.map((row) => ({
          name: row.entry.name,
          locked: row.entry.lastCommitSha,
          latest: row.pkg?.lastCommitSha ?? null,
          state: row.state,
          status: row.pkg?.status ?? null,
        }));
        ctx.out(JSON.stringify(json, null, 2));
        return;
      }
      if (rows.length === 0) {
        ctx.out(`No packages in ${LOCKFILE_NAME}.`);
        return;
      }
      const lines = table(
        [{ header: 'NAME' }, { header: 'LOCKED' }, { header: 'LATEST' }, { header: 'STATE' }],
        rows.map((row) => [
          row.entry.name,
          short(row.entry.lastCommitSha),
          short(row.pkg?.lastCommitSha),
          row.pkg?.status === 'deprecated' ? `${row.state} (deprecated)` : row.state,
        ]),
        terminalWidth(),
      );
      for (const line of lines) ctx.out(line);
      const outdated = rows.filter((row) => row.state === 'outdated').length;
      ctx.out(
        outdated === 0
          ? 'All packages are up to date.'
          : `${outdated} package${outdated === 1 ? '' : 's'} can be updated with "pkgreg update".`,
      );
    });
}
