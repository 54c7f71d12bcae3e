import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Checkpoint,
  leafHash,
  logEntryText,
  openCheckpointNote,
  verifyConsistency,
  verifyInclusion,
} from '@pkgreg/registry/provenance';
import { z } from 'zod';
import type { Context } from './context.js';
import { CliError, EXIT } from './errors.js';
import { LOCKFILE_NAME } from './lockfile/lockfile.js';
import { parsePackageArg } from './names.js';
import type { SignatureChecker } from './signatures.js';

// The registry's transparency log as the CLI checks it (docs/provenance.md, "Verifying signatures"),
// as Go's command checks sum.golang.org: each run reads the log's signed checkpoint once, checks it is
// signed by a key the registry publishes and extends the newest one seen before from this registry
// (kept in $XDG_CONFIG_HOME/pkgreg/checkpoints/), so a registry showing one history to this machine and
// another to the rest is caught the next time it is asked. `verify` proves each locked version is in it.

/** The newest checkpoint seen from a registry, as kept between runs. */
const SeenCheckpointSchema = z.object({
  origin: z.string(),
  size: z.number().int().nonnegative(),
  rootHash: z.string(),
  /** The signed note itself: with the one served after a fork, the evidence of it. */
  note: z.string(),
});
type SeenCheckpoint = z.infer<typeof SeenCheckpointSchema>;

/** One file per registry: its host and path, made a file name. */
export function checkpointPath(configDir: string, registryUrl: string): string {
  const url = new URL(registryUrl);
  const name = `${url.host}${url.pathname}`.replace(/[^A-Za-z0-9.-]+/g, '_').replace(/_+$/, '');
  return join(configDir, 'checkpoints', `${name}.json`);
}

async function readSeen(path: string): Promise<SeenCheckpoint | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(EXIT.error, `Cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return SeenCheckpointSchema.parse(JSON.parse(text));
  } catch {
    // Forgetting it would let a fork pass unseen: a damaged file is for a person to look at.
    throw new CliError(EXIT.error, `${path} is not a checkpoint pkgreg wrote; move it away to start over`);
  }
}

async function writeSeen(path: string, seen: SeenCheckpoint): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, `${JSON.stringify(seen, null, 2)}\n`);
  await rename(temporary, path);
}

function forkError(from: number, to: number): CliError {
  return new CliError(
    EXIT.signature,
    `the registry's transparency log does not extend the checkpoint seen before (size ${from} → ${to}): the registry may be showing different histories`,
  );
}

/** The note opened with the first published, unexpired key that signed it (the key hash picks it). */
async function openNote(checker: SignatureChecker, note: string): Promise<Checkpoint | undefined> {
  const keys = await checker.keys();
  if (keys.size === 0) return undefined;
  const origin = note.slice(0, note.indexOf('\n'));
  const now = Date.now();
  for (const key of keys.values()) {
    if (!key.publicKey || (key.expires !== null && key.expires.getTime() <= now)) continue;
    const opened = openCheckpointNote(note, origin, key.publicKey);
    if (opened.ok) return opened.checkpoint;
  }
  throw new CliError(
    EXIT.signature,
    "the registry's transparency log checkpoint is not signed by a key the registry publishes",
  );
}

/** The log's checkpoint; undefined when the registry has no log or publishes no keys to check it with. */
async function fetchCheckpoint(ctx: Context, checker: SignatureChecker): Promise<Checkpoint | undefined> {
  if (!(await checker.keysPublished())) return undefined;
  let note: string;
  try {
    note = await ctx.client.checkpoint();
  } catch (error) {
    if (error instanceof CliError && error.exitCode === EXIT.notFound) {
      ctx.debug('the registry has no transparency log: nothing to check');
      return undefined;
    }
    throw error;
  }
  const checkpoint = await openNote(checker, note);
  if (!checkpoint) return undefined;
  const path = checkpointPath(ctx.env.configDir, ctx.registry.url);
  const seen = await readSeen(path);
  if (seen) {
    const oldRoot = Buffer.from(seen.rootHash, 'base64');
    if (seen.origin !== checkpoint.origin || checkpoint.size < seen.size)
      throw forkError(seen.size, checkpoint.size);
    const proof =
      seen.size > 0 && checkpoint.size > seen.size
        ? (await ctx.client.consistencyProof(seen.size, checkpoint.size)).hashes
        : [];
    const hashes = proof.map((hash) => Buffer.from(hash, 'base64'));
    if (!verifyConsistency(seen.size, checkpoint.size, hashes, oldRoot, checkpoint.rootHash))
      throw forkError(seen.size, checkpoint.size);
  }
  if (!seen || checkpoint.size > seen.size) {
    const { origin, size, rootHash } = checkpoint;
    await writeSeen(path, { origin, size, rootHash: rootHash.toString('base64'), note });
  }
  ctx.debug(`transparency log ${checkpoint.origin} at size ${checkpoint.size}`);
  return checkpoint;
}

const read = new WeakMap<SignatureChecker, Promise<Checkpoint | undefined>>();

/** Reads and checks the log's checkpoint at the first call, once per run (per run's checker). */
export function checkpointReader(
  ctx: Context,
  checker: SignatureChecker,
): () => Promise<Checkpoint | undefined> {
  return () => {
    let checkpoint = read.get(checker);
    if (!checkpoint) {
      checkpoint = fetchCheckpoint(ctx, checker);
      read.set(checker, checkpoint);
    }
    return checkpoint;
  };
}

/**
 * Why the log does not prove `@scope/name@version` with `integrity` at `index`; undefined when it does,
 * or when the version was logged after the checkpoint (the next run proves it).
 */
export async function inclusionProblem(
  ctx: Context,
  checkpoint: Checkpoint,
  entry: { name: string; version: string; integrity: string },
  index: number,
): Promise<string | undefined> {
  if (index >= checkpoint.size) return undefined;
  const ref = parsePackageArg(entry.name);
  const leaf = leafHash(logEntryText(ref.scope, ref.name, entry.version, entry.integrity));
  const { hashes } = await ctx.client.inclusionProof(index, checkpoint.size);
  const proof = hashes.map((hash) => Buffer.from(hash, 'base64'));
  if (verifyInclusion(index, checkpoint.size, leaf, proof, checkpoint.rootHash)) return undefined;
  return `the transparency log does not prove entry ${index} is this version with ${LOCKFILE_NAME}'s integrity (checkpoint size ${checkpoint.size})`;
}
