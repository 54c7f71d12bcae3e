import type { Command } from 'commander';
import { z } from 'zod';
import { createContext, parseOptions } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import {
  checkLocalFiles,
  deprecationWarning,
  installTarget,
  lockEntryFor,
  modifiedError,
  trackInstall,
  verifiedContent,
  writeSkillFiles,
} from '../installer.js';
import { LOCKFILE_NAME, serializeLockfile, writeLockfile } from '../lockfile.js';
import { parsePackageArg } from '../names.js';
import { createProgress, silentProgress } from '../progress.js';
import { compareWithRegistry, requireLockfile } from './outdated.js';

const UpdateInputSchema = z.object({
  names: z.array(z.string()),
  global: z.boolean().default(false),
  force: z.boolean().default(false),
});

function short(sha: string | null | undefined): string {
  return sha ? sha.slice(0, 12) : 'none';
}

export function configureUpdateCommand(program: Command): Command {
  return program
    .command('update')
    .description(
      `update installed packages to the registry's latest SKILL.md and record it in ${LOCKFILE_NAME}`,
    )
    .argument('[packages...]', 'package names as @scope/name (default: every locked package)')
    .option('-g, --global', 'update the global installs')
    .option('-f, --force', 'overwrite skills that were modified locally')
    .action(async (names: string[], options: Record<string, unknown>, command: Command) => {
      const input = parseOptions(UpdateInputSchema, { ...options, names });
      const refs = input.names.map(parsePackageArg);
      const ctx = await createContext(command);
      const target = installTarget(ctx, input.global);
      const lock = await requireLockfile(target.lockPath);
      const before = serializeLockfile(lock);
      for (const ref of refs) {
        if (!lock.packages[ref.full])
          throw new CliError(EXIT.notFound, `${ref.full} is not installed (not in ${LOCKFILE_NAME})`);
      }
      const entries = refs.length
        ? refs.map((ref) => lock.packages[ref.full]).filter((entry) => entry !== undefined)
        : Object.values(lock.packages).sort((a, b) => a.name.localeCompare(b.name));
      const rows = await compareWithRegistry(ctx, entries);
      const removed = rows.filter((row) => row.state === 'removed');
      const stale = rows.filter((row) => row.state === 'outdated');
      const progress = stale.length > 1 ? createProgress(stale.length) : silentProgress();
      const results: string[] = [];
      try {
        for (const row of stale) {
          const ref = parsePackageArg(row.entry.name);
          const pkg = row.pkg;
          if (!pkg) continue;
          progress.step(`updating ${ref.full}`);
          deprecationWarning(progress, ref, pkg);
          const { content, sha256 } = verifiedContent(ref, pkg);
          const modified = await checkLocalFiles(target, row.entry.paths, row.entry, sha256);
          if (modified.length && !input.force) throw modifiedError(ref, modified, 'use --force to overwrite');
          await trackInstall(ctx, progress, ref);
          await writeSkillFiles(target, row.entry.paths, content, sha256);
          lock.packages[ref.full] = lockEntryFor(ref, pkg, sha256, row.entry.agents, row.entry.paths);
          results.push(
            `updated ${ref.full} ${short(row.entry.lastCommitSha)} -> ${short(pkg.lastCommitSha)}`,
          );
        }
      } finally {
        progress.done();
        for (const line of results) ctx.out(line);
        if (serializeLockfile(lock) !== before) await writeLockfile(target.lockPath, lock);
      }
      for (const row of removed)
        ctx.warn(`${row.entry.name} is no longer in the registry; kept as installed`);
      if (stale.length === 0) ctx.out('All packages are up to date.');
    });
}
