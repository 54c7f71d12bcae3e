import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { AGENT_NAMES, skillFilePath } from './agents.js';
import { CliError, EXIT } from './errors.js';

export const LOCKFILE_NAME = 'pkgreg-lock.json';
export const LOCKFILE_VERSION = 1;

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/);

export const LockEntrySchema = z.object({
  /** `@scope/name`. */
  name: z.string(),
  sourceRepo: z.string(),
  sourceRef: z.string(),
  sourcePath: z.string(),
  /** Git blob SHA-1 of SKILL.md as the registry reported it at install time. */
  lastCommitSha: z.string().nullable(),
  /** SHA-256 (hex) of the SKILL.md bytes written. */
  sha256: Sha256Schema,
  /** Agents the package was installed for. */
  agents: z.array(z.enum(AGENT_NAMES)),
  /** Written files, relative to the lockfile's folder, with forward slashes. */
  paths: z.array(z.string()),
});
export type LockEntry = z.infer<typeof LockEntrySchema>;

export const LockfileSchema = z
  .object({
    lockfileVersion: z.literal(LOCKFILE_VERSION),
    packages: z.record(z.string(), LockEntrySchema),
  })
  .superRefine((lock, ctx) => {
    // `install` writes to the recorded paths: a hand-edited or hostile lockfile must not be able to aim
    // them anywhere but the agents' skill folders.
    for (const [key, entry] of Object.entries(lock.packages)) {
      const name = /^@[a-z0-9-]+\/([a-z0-9-]+)$/.exec(key)?.[1];
      if (!name || entry.name !== key) {
        ctx.addIssue({
          code: 'custom',
          path: ['packages', key, 'name'],
          message: 'must be the @scope/name key',
        });
        continue;
      }
      const allowed = new Set(entry.agents.map((agent) => skillFilePath(agent, name)));
      for (const path of entry.paths) {
        if (!allowed.has(path)) {
          ctx.addIssue({
            code: 'custom',
            path: ['packages', key, 'paths'],
            message: `unexpected path ${path}`,
          });
        }
      }
    }
  });
export type Lockfile = z.infer<typeof LockfileSchema>;

export function sha256Hex(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Git's blob id of a file's content, what the registry reports as `lastCommitSha` (decisions.md). */
export function gitBlobSha1(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

export function emptyLockfile(): Lockfile {
  return { lockfileVersion: LOCKFILE_VERSION, packages: {} };
}

export async function readLockfile(path: string): Promise<Lockfile | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(EXIT.error, `Cannot read ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError(EXIT.error, `${path} is not valid JSON`);
  }
  const parsed = LockfileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CliError(
      EXIT.error,
      `${path} is not a valid lockfile: ${issue?.path.join('.') || 'root'}: ${issue?.message}`,
    );
  }
  return parsed.data;
}

/** Stable output: packages sorted by name, fields in schema order, lists sorted, trailing newline. */
export function serializeLockfile(lock: Lockfile): string {
  const packages: Record<string, LockEntry> = {};
  for (const key of Object.keys(lock.packages).sort()) {
    const entry = lock.packages[key] as LockEntry;
    packages[key] = {
      name: entry.name,
      sourceRepo: entry.sourceRepo,
      sourceRef: entry.sourceRef,
      sourcePath: entry.sourcePath,
      lastCommitSha: entry.lastCommitSha,
      sha256: entry.sha256,
      agents: [...entry.agents].sort(),
      paths: [...entry.paths].sort(),
    };
  }
  return `${JSON.stringify({ lockfileVersion: lock.lockfileVersion, packages }, null, 2)}\n`;
}

export async function writeLockfile(path: string, lock: Lockfile): Promise<void> {
  // Write then rename, so an interrupted run never leaves half a lockfile behind.
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, serializeLockfile(lock));
  await rename(temporary, path);
}
