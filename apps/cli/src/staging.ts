import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, rm, rmdir } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { FILE_MODES } from './lockfile/lockfile.js';
import type { SkillFile } from './skill-files.js';

// A skill folder is never written in place: the new one is built beside it in a hidden staging folder,
// then renamed in (the old one moved aside first and removed after). A failure or Ctrl-C before the
// swap leaves the old folder as it was; the swap itself is two renames with no await between them.

const STAGE_MARK = '.pkgreg-stage-';
const OLD_MARK = '.pkgreg-old-';

// Staging folders of this run, removed if the process exits before their swap (Ctrl-C, an error).
// A signal ends Node without an 'exit' event, so while any is pending a signal exits through it.
const pending = new Set<string>();
process.on('exit', () => {
  for (const path of pending) rmSync(path, { recursive: true, force: true });
});

function onSignal(signal: NodeJS.Signals): void {
  process.exit(signal === 'SIGINT' ? 130 : 143);
}

function hold(path: string): void {
  pending.add(path);
  if (pending.size === 1) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
}

function release(path: string): void {
  pending.delete(path);
  if (pending.size === 0) {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Something is at the path (a dangling link counts: existsSync would say no). */
function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function sibling(target: string, mark: string): string {
  return join(dirname(target), `.${basename(target)}${mark}${process.pid}-${randomBytes(4).toString('hex')}`);
}

/** Leftovers of an earlier run that was killed: staging folders always, old copies once the target exists. */
async function removeLeftovers(target: string): Promise<void> {
  const parent = dirname(target);
  let names: string[];
  try {
    names = await readdir(parent);
  } catch {
    return;
  }
  const own = `.${basename(target)}`;
  for (const name of names) {
    const stale =
      name.startsWith(`${own}${STAGE_MARK}`) || (name.startsWith(`${own}${OLD_MARK}`) && present(target));
    if (stale) await rm(join(parent, name), { recursive: true, force: true });
  }
}

export interface StagedFolder {
  target: string;
  staging: string;
  /** Throws when the folder's place on disk is no longer safe (install/targets.ts, safe-folders.ts). */
  check?: () => void;
}

/**
 * Writes the files into a new staging folder beside `target`: regular files first, links last.
 * `check` runs once the folders above exist, before anything else is written beside the target.
 */
export async function stageFolder(
  target: string,
  files: readonly SkillFile[],
  check?: () => void,
): Promise<StagedFolder> {
  await mkdir(dirname(target), { recursive: true });
  check?.();
  await removeLeftovers(target);
  const staging = sibling(target, STAGE_MARK);
  hold(staging);
  try {
    // Written with synchronous calls: a skill is many small files, and a thread-pool round trip per call
    // costs more than the writing. A signal meanwhile waits for the loop; the exit handler then removes
    // the staging folder as before.
    mkdirSync(staging);
    const made = new Set([staging]);
    // Links last: no file is ever written through a link, even one that stays inside the folder.
    const ordered = [
      ...files.filter((file) => file.mode !== FILE_MODES.symlink),
      ...files.filter((file) => file.mode === FILE_MODES.symlink),
    ];
    for (const file of ordered) {
      const path = join(staging, ...file.path.split('/'));
      const dir = dirname(path);
      if (!made.has(dir)) {
        mkdirSync(dir, { recursive: true });
        made.add(dir);
      }
      if (file.mode === FILE_MODES.symlink) {
        symlinkSync(file.content.toString('utf8'), path);
        continue;
      }
      const mode = file.mode === FILE_MODES.executable ? 0o755 : 0o644;
      writeFileSync(path, file.content, { mode, flag: 'wx' });
      // The umask may have taken bits away; the version says which it has.
      chmodSync(path, mode);
    }
  } catch (error) {
    await discardStaged([{ target, staging }]);
    throw error;
  }
  return { target, staging, check };
}

export async function discardStaged(staged: readonly StagedFolder[]): Promise<void> {
  for (const { staging } of staged) {
    await rm(staging, { recursive: true, force: true });
    release(staging);
  }
}

/**
 * Moves every staged folder into place at once. Synchronous on purpose: no signal handler runs between
 * moving an old folder aside and moving the new one in. If any rename fails, the ones done are undone
 * (new folders back out, old folders back in) and the error is thrown. Returns the old copies to remove.
 */
export function swapIntoPlace(staged: readonly StagedFolder[]): string[] {
  // Every place checked again first, with no await until the renames are done: a link swapped in
  // after the plan was made stops the swap before any folder moves.
  for (const { check } of staged) check?.();
  const done: { target: string; staging: string; old: string | undefined }[] = [];
  try {
    for (const { target, staging } of staged) {
      const old = present(target) ? sibling(target, OLD_MARK) : undefined;
      if (old) renameSync(target, old);
      try {
        renameSync(staging, target);
      } catch (error) {
        if (old) renameSync(old, target);
        throw error;
      }
      release(staging);
      done.push({ target, staging, old });
    }
  } catch (error) {
    for (const step of done.reverse()) {
      renameSync(step.target, step.staging);
      hold(step.staging);
      if (step.old) renameSync(step.old, step.target);
    }
    throw error;
  }
  return done.flatMap((step) => (step.old ? [step.old] : []));
}

/** Removes the old copies after a swap; a failure here leaves a hidden leftover, never a broken skill. */
export async function removeOld(paths: readonly string[]): Promise<void> {
  for (const path of paths) await rm(path, { recursive: true, force: true });
}

/**
 * Deletes a skill folder: moved aside first, so a failure midway never leaves half a folder in place.
 * Then the folders holding it that are left empty go too, up to (not including) `base`. `check` runs
 * right before the move (a link put on the way since the folder was checked stops it).
 */
export async function removeFolder(target: string, base: string, check?: () => void): Promise<void> {
  check?.();
  if (present(target)) {
    const old = sibling(target, OLD_MARK);
    renameSync(target, old);
    await rm(old, { recursive: true, force: true });
  }
  for (let dir = dirname(target); ; dir = dirname(dir)) {
    const rel = relative(base, dir);
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || dir === dirname(dir)) return;
    try {
      await rmdir(dir);
    } catch {
      // Not empty (or not ours to remove): the folders above it stay too.
      return;
    }
  }
}
