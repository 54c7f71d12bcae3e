import type { KeyObject } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import {
  LOG_ENTRIES_MAX_LIMIT,
  LogEntriesResponseSchema,
  LogProofSchema,
  RegistryKeysResponseSchema,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  appendToRange,
  type CompactRange,
  emptyRange,
  leafHash,
  openCheckpointNote,
  publicKeyBase64,
  publicKeyFromBase64,
  publicKeyFromVerifierKey,
  rangeRoot,
  unloggedVersions,
  verifyConsistency,
} from '@pkgreg/registry';
import { z } from 'zod';

// A witness of the transparency log (docs/provenance.md, "Running a witness"): a process apart from the
// registry, ideally on another machine, that keeps the last checkpoint it verified in a state file and,
// at each run, fetches the latest one over HTTP and checks that
// - it is signed by the log's key (pinned: given, or learnt at the first run and kept);
// - it extends the one seen before (a consistency proof): a log that forks, shrinks or rewrites a leaf
//   it had signed cannot show both checkpoints as one history;
// - the entries from the last size to the new one, hashed onto the compact range kept in the state,
//   give the new root: every leaf it serves is one the checkpoint signs, none missing or altered;
// - with direct database access (`--db`), every public version created before the grace period is in
//   the checkpoint with its entry text (a version left out of the log).
// Only a run that verified the log moves the state on, so a fork keeps alarming until someone looks.

/** What the witness keeps between runs. */
const WitnessStateSchema = z.object({
  /** The log's name, the checkpoints' first line. */
  origin: z.string().min(1),
  /** The log's public key (base64 SPKI DER). */
  key: z.string().min(1),
  size: z.number().int().nonnegative(),
  /** Base64 root hash at `size`. */
  root: z.string(),
  /** Base64 hashes of the complete subtrees of the first `size` leaves, largest first. */
  range: z.array(z.string()),
  /** The checkpoint note that was verified (evidence, should the log later disown it). */
  checkpoint: z.string(),
  checkedAt: z.string(),
});
type WitnessState = z.infer<typeof WitnessStateSchema>;

export interface WitnessOptions {
  /** The registry's base URL. */
  registry: string;
  statePath: string;
  /** The log key (`--key`); else the state's; else learnt from GET /api/keys at the first run. */
  key?: KeyObject;
  /** The log's origin (`--origin`); else the state's; else the first checkpoint's. */
  origin?: string;
  /** Direct database access: also check that every public version is in the log. */
  db?: Db;
  /** How old an unlogged version must be to count as missing (the sequencer's delay). */
  graceMs: number;
  now?: () => Date;
  timeoutMs?: number;
}

/**
 * `ok`: the log verified (size and root now recorded). `alarm`: the log is wrong (a fork, a bad
 * signature, a missing or altered entry, a missing version). `unavailable`: it could not be checked.
 */
export type WitnessResult =
  | { status: 'ok'; origin: string; size: number; root: string; replayed: number }
  | { status: 'alarm' | 'unavailable'; reason: string };

class WitnessStop extends Error {
  constructor(
    readonly status: 'alarm' | 'unavailable',
    message: string,
  ) {
    super(message);
  }
}
const alarm = (message: string) => new WitnessStop('alarm', message);

/** The log key from `--key`: base64 SPKI (GET /api/keys's form) or a note verifier key. */
export function parseLogKey(value: string): { publicKey: KeyObject; origin?: string } | undefined {
  const publicKey = publicKeyFromBase64(value);
  if (publicKey) return { publicKey };
  const vkey = publicKeyFromVerifierKey(value);
  return vkey && { publicKey: vkey.publicKey, origin: vkey.name };
}

function readState(path: string): WitnessState | undefined {
  if (!existsSync(path)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new WitnessStop('unavailable', `cannot read the state file ${path}: ${(error as Error).message}`);
  }
  const parsed = WitnessStateSchema.safeParse(raw);
  if (!parsed.success) throw new WitnessStop('unavailable', `the state file ${path} is not a witness state`);
  return parsed.data;
}

/** Written whole or not at all: a crash mid-write leaves the previous state. */
function writeState(path: string, state: WitnessState): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o644 });
  renameSync(temporary, path);
}

export async function runWitness(options: WitnessOptions): Promise<WitnessResult> {
  try {
    return await witness(options);
  } catch (error) {
    if (error instanceof WitnessStop) return { status: error.status, reason: error.message };
    throw error;
  }
}

async function witness(options: WitnessOptions): Promise<WitnessResult> {
  const base = options.registry.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 30_000;
  const get = async (path: string): Promise<Response> => {
    try {
      return await fetch(`${base}${path}`, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
    } catch (error) {
      throw new WitnessStop('unavailable', `cannot reach ${base}${path}: ${(error as Error).message}`);
    }
  };
  const getJson = async <S extends z.ZodType>(path: string, schema: S): Promise<z.infer<S>> => {
    const response = await get(path);
    if (response.status === 400) throw alarm(`the registry refused ${path}: ${await errorOf(response)}`);
    if (!response.ok) throw new WitnessStop('unavailable', `${path} answered ${response.status}`);
    const parsed = schema.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success) throw alarm(`${path} answered something that is not its schema`);
    return parsed.data;
  };

  const state = readState(options.statePath);
  const response = await get('/api/log/checkpoint');
  if (response.status === 404) {
    if (state && state.size > 0)
      throw alarm(`the log has no checkpoint, but one of size ${state.size} was seen`);
    return { status: 'ok', origin: options.origin ?? state?.origin ?? '', size: 0, root: '', replayed: 0 };
  }
  if (!response.ok) throw new WitnessStop('unavailable', `/api/log/checkpoint answered ${response.status}`);
  const note = await response.text();
  const origin = options.origin ?? state?.origin ?? note.slice(0, note.indexOf('\n'));
  const key =
    options.key ??
    (state ? publicKeyFromBase64(state.key) : undefined) ??
    (await keyFromRegistry(note, origin, (path) => getJson(path, RegistryKeysResponseSchema)));

  const opened = openCheckpointNote(note, origin, key);
  if (!opened.ok) throw alarm(opened.reason);
  const { size, rootHash } = opened.checkpoint;
  const root = rootHash.toString('base64');

  const range: CompactRange = state
    ? { size: state.size, hashes: state.range.map((h) => Buffer.from(h, 'base64')) }
    : emptyRange();
  if (state) {
    const seenRoot = Buffer.from(state.root, 'base64');
    if (!rangeRoot(range).equals(seenRoot))
      throw new WitnessStop(
        'unavailable',
        `the state file ${options.statePath} does not add up: its tree edge is not its root`,
      );
    if (size < state.size)
      throw alarm(
        `fork: the log's checkpoint has size ${size}, smaller than the size ${state.size} seen before`,
      );
    if (size === state.size && !rootHash.equals(seenRoot))
      throw alarm(
        `fork: two checkpoints of size ${size} with different roots (${state.root} seen before, now ${root})`,
      );
    if (size > state.size) {
      const proof = await getJson(`/api/log/proof/consistency?from=${state.size}&to=${size}`, LogProofSchema);
      const hashes = proof.hashes.map((h) => Buffer.from(h, 'base64'));
      if (!verifyConsistency(state.size, size, hashes, seenRoot, rootHash))
        throw alarm(
          `fork: the checkpoint of size ${size} (root ${root}) does not extend the one of size ${state.size} (root ${state.root}) seen before`,
        );
    }
  }

  // Replay what is new onto the compact range: the result must be the signed root.
  const from = range.size;
  while (range.size < size) {
    const limit = Math.min(LOG_ENTRIES_MAX_LIMIT, size - range.size);
    const page = await getJson(
      `/api/log/entries?start=${range.size}&limit=${limit}`,
      LogEntriesResponseSchema,
    );
    if (page.entries.length === 0)
      throw alarm(`the log serves no entry ${range.size} although its checkpoint has ${size}`);
    for (const entry of page.entries) {
      if (entry.index !== range.size)
        throw alarm(`the log served entry ${entry.index} where entry ${range.size} was expected`);
      appendToRange(range, leafHash(entry.entry));
      if (range.size === size) break;
    }
  }
  if (!rangeRoot(range).equals(rootHash))
    throw alarm(
      `the entries ${from}..${size - 1} do not hash to the checkpoint's root ${root}: an entry was altered or left out`,
    );

  writeState(options.statePath, {
    origin,
    key: publicKeyBase64(key),
    size,
    root,
    range: range.hashes.map((h) => h.toString('base64')),
    checkpoint: note,
    checkedAt: (options.now?.() ?? new Date()).toISOString(),
  });

  if (options.db) {
    const createdBefore = new Date((options.now?.() ?? new Date()).getTime() - options.graceMs);
    const { count, sample } = await unloggedVersions(options.db, { size, createdBefore });
    const [first] = sample;
    if (first) {
      const what = `@${first.scope}/${first.name}@${first.version}`;
      const others = count > 1 ? ` (and ${count - 1} more)` : '';
      const problem = {
        missing: 'is missing from the log',
        'after-checkpoint': `is not in the checkpoint of size ${size}`,
        altered: 'is in the log with another name, version or integrity',
      }[first.problem];
      throw alarm(`version ${what}, created ${first.createdAt.toISOString()}, ${problem}${others}`);
    }
  }
  return { status: 'ok', origin, size, root, replayed: size - from };
}

/** At the first run without --key: the published key that signed the checkpoint (then kept in the state). */
async function keyFromRegistry(
  note: string,
  origin: string,
  getKeys: (path: string) => Promise<z.infer<typeof RegistryKeysResponseSchema>>,
): Promise<KeyObject> {
  const { keys } = await getKeys('/api/keys');
  for (const published of keys) {
    const key = publicKeyFromBase64(published.key);
    if (key && openCheckpointNote(note, origin, key).ok) return key;
  }
  throw alarm('the checkpoint is signed by none of the keys GET /api/keys publishes');
}

async function errorOf(response: Response): Promise<string> {
  const body = (await response.json().catch(() => undefined)) as { error?: unknown } | undefined;
  return typeof body?.error === 'string' ? body.error : `status ${response.status}`;
}
