import type { Command } from 'commander';
import { z } from 'zod';
import { AGENT_NAMES, type AgentName } from '../agents.js';
import { type Context, createContext, parseOptions } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import {
  checkLocalFiles,
  checkPathOwners,
  deprecationWarning,
  displayPath,
  type InstallTarget,
  installTarget,
  lockEntryFor,
  modifiedError,
  pathsFor,
  pathsNeedingWrite,
  trackInstall,
  verifiedContent,
  writeSkillFiles,
} from '../installer.js';
import {
  emptyLockfile,
  LOCKFILE_NAME,
  type Lockfile,
  readLockfile,
  serializeLockfile,
  writeLockfile,
} from '../lockfile.js';
import { type PackageRef, parsePackageArg } from '../names.js';
import { createProgress, type Progress, silentProgress } from '../progress.js';

const InstallInputSchema = z
  .object({
    names: z.array(z.string()),
    agent: z
      .array(z.string())
      .default([])
      .transform((values) =>
        values
          .flatMap((value) => value.split(','))
          .map((value) => value.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.enum(AGENT_NAMES, { error: `--agent must be one of ${AGENT_NAMES.join(', ')}` }))),
    global: z.boolean().default(false),
    force: z.boolean().default(false),
    frozen: z.boolean().default(false),
  })
  .refine((input) => !(input.force && input.frozen), { error: '--force and --frozen cannot be combined' })
  .refine((input) => input.names.length > 0 || input.agent.length === 0, {
    error: '--agent applies to named packages; without names the lockfile decides the agents',
  });
type InstallInput = z.infer<typeof InstallInputSchema>;

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function short(sha: string | null | undefined): string {
  return sha ? sha.slice(0, 12) : 'none';
}

function progressFor(count: number): Progress {
  return count > 1 ? createProgress(count) : silentProgress();
}

async function installNamed(ctx: Context, target: InstallTarget, input: InstallInput): Promise<void> {
  const refs = [...new Map(input.names.map(parsePackageArg).map((ref) => [ref.full, ref])).values()];
  const requested: AgentName[] = input.agent.length ? [...new Set(input.agent)] : ['generic'];
  const existing = await readLockfile(target.lockPath);
  if (!existing && input.frozen) {
    throw new CliError(EXIT.integrity, `--frozen: no ${LOCKFILE_NAME} at ${target.lockPath}`);
  }
  const lock: Lockfile = existing ?? emptyLockfile();
  const before = serializeLockfile(lock);
  const results: string[] = [];
  const progress = progressFor(refs.length);
  try {
    for (const ref of refs) {
      progress.step(`installing ${ref.full}`);
      results.push(...(await installOne(ctx, target, lock, ref, requested, input, progress)));
    }
  } finally {
    progress.done();
    for (const line of results) ctx.out(line);
    if (!input.frozen && serializeLockfile(lock) !== before) await writeLockfile(target.lockPath, lock);
  }
}

async function installOne(
  ctx: Context,
  target: InstallTarget,
  lock: Lockfile,
  ref: PackageRef,
  requested: AgentName[],
  input: InstallInput,
  progress: Progress,
): Promise<string[]> {
  const pkg = await ctx.client.detail(ref.scope, ref.name);
  if (pkg.status === 'delisted') throw new CliError(EXIT.notFound, `${ref.full}: Package not found`);
  deprecationWarning(progress, ref, pkg);
  if (pkg.fileCount > 1) {
    // The registry serves SKILL.md only; the skill's other files live in its source repository.
    progress.note(
      `note: ${ref.full} has ${pkg.fileCount} files; only SKILL.md is installed (others: ${pkg.repoUrl ?? pkg.sourceRepo})`,
    );
  }
  const { content, sha256 } = verifiedContent(ref, pkg);
  const locked = lock.packages[ref.full];
  if (input.frozen) {
    if (!locked) throw new CliError(EXIT.integrity, `--frozen: ${ref.full} is not in ${LOCKFILE_NAME}`);
    if (locked.sha256 !== sha256) {
      throw new CliError(
        EXIT.integrity,
        `--frozen: the registry serves a different SKILL.md for ${ref.full} (${short(pkg.lastCommitSha)}, locked ${short(locked.lastCommitSha)})`,
      );
    }
    const extra = requested.filter((agent) => !locked.agents.includes(agent));
    if (extra.length) {
      throw new CliError(EXIT.integrity, `--frozen: ${ref.full} is not locked for ${extra.join(', ')}`);
    }
  }
  // A package keeps one content for all its agents, so a new version rewrites every recorded copy.
  const agents = [...new Set([...(locked?.agents ?? []), ...requested])];
  const paths = [...new Set([...(locked?.paths ?? []), ...pathsFor(agents, ref.name)])];
  checkPathOwners(lock, ref, paths);
  const modified = await checkLocalFiles(target, paths, locked, sha256);
  if (modified.length && !input.force) throw modifiedError(ref, modified, 'use --force to overwrite');
  await trackInstall(ctx, progress, ref);
  await writeSkillFiles(target, paths, content, sha256);
  if (!input.frozen) lock.packages[ref.full] = lockEntryFor(ref, pkg, sha256, agents, paths);
  const wanted = pathsFor(requested, ref.name);
  return wanted.map((path) => `installed ${ref.full} -> ${displayPath(target, path)}`);
}

async function installFromLock(ctx: Context, target: InstallTarget, input: InstallInput): Promise<void> {
  const lock = await readLockfile(target.lockPath);
  if (!lock) {
    throw new CliError(
      EXIT.error,
      `No ${LOCKFILE_NAME} at ${target.lockPath}; run "pkgreg install <@scope/name>" first`,
    );
  }
  const entries = Object.values(lock.packages).sort((a, b) => a.name.localeCompare(b.name));
  if (entries.length === 0) {
    ctx.out(`Nothing to install: ${LOCKFILE_NAME} lists no packages.`);
    return;
  }
  const results: string[] = [];
  const progress = progressFor(entries.length);
  try {
    for (const entry of entries) {
      const ref = parsePackageArg(entry.name);
      progress.step(`installing ${ref.full}`);
      const modified = await checkLocalFiles(target, entry.paths, entry, undefined);
      if (modified.length && !input.force) {
        throw modifiedError(
          ref,
          modified,
          input.frozen
            ? 'restore the file or update the lockfile'
            : 'use --force to restore the locked content',
        );
      }
      // Files already holding the locked content need nothing from the registry (CI caches stay offline).
      if ((await pathsNeedingWrite(target, entry.paths, entry.sha256)).length === 0) {
        results.push(`up to date ${ref.full}`);
        continue;
      }
      const pkg = await ctx.client.detail(ref.scope, ref.name);
      if (pkg.status === 'delisted') throw new CliError(EXIT.notFound, `${ref.full}: Package not found`);
      deprecationWarning(progress, ref, pkg);
      const { content, sha256 } = verifiedContent(ref, pkg);
      // The registry serves only the latest SKILL.md: the locked content is installable only while it is that.
      if (sha256 !== entry.sha256) {
        throw new CliError(
          EXIT.integrity,
          `Integrity mismatch: the registry now serves a different SKILL.md for ${ref.full} (${short(pkg.lastCommitSha)}, locked ${short(entry.lastCommitSha)}); run "pkgreg update ${ref.full}" to accept it`,
        );
      }
      await trackInstall(ctx, progress, ref);
      const written = await writeSkillFiles(target, entry.paths, content, sha256);
      for (const path of written) results.push(`installed ${ref.full} -> ${displayPath(target, path)}`);
    }
  } finally {
    progress.done();
    for (const line of results) ctx.out(line);
  }
}

export function configureInstallCommand(program: Command): Command {
  return program
    .command('install')
    .description(
      `install skills and record them in ${LOCKFILE_NAME}; with no names, install what the lockfile lists`,
    )
    .argument('[packages...]', 'package names as @scope/name')
    .option(
      '-a, --agent <agent>',
      `agent to install for: ${AGENT_NAMES.join(', ')} (repeatable or comma-separated; default generic)`,
      collect,
    )
    .option('-g, --global', "install into the user's home folder instead of the project")
    .option('-f, --force', 'overwrite skills that were modified locally')
    .option('--frozen', 'never modify the lockfile; fail on any difference from it (for CI)')
    .action(async (names: string[], options: Record<string, unknown>, command: Command) => {
      const input = parseOptions(InstallInputSchema, { ...options, names });
      const ctx = await createContext(command);
      const target = installTarget(ctx, input.global);
      if (input.names.length) await installNamed(ctx, target, input);
      else await installFromLock(ctx, target, input);
    });
}
