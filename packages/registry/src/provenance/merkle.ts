import { createHash } from 'node:crypto';

// The transparency log's tree (issue 30; docs/provenance.md): RFC 6962 §2.1 as RFC 9162 §2.1 keeps it,
// the tree of Certificate Transparency, Go's checksum database (golang.org/x/mod/sumdb/tlog) and
// Sigstore's logs. Pure code: the storage hands it the hashes of complete subtrees (NodeReader), which
// is all a root or a proof is made of, so either costs O(log n) stored hashes.
//
// Sizes and indexes are plain numbers: exact up to 2^53, far beyond any log this registry keeps. Powers
// of two are computed with arithmetic, never with 32-bit shifts.

export const HASH_SIZE = 32;

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

/** The root of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Buffer = sha256();

/** A leaf's hash: SHA-256(0x00 || entry). */
export function leafHash(entry: Uint8Array | string): Buffer {
  return sha256(LEAF_PREFIX, typeof entry === 'string' ? Buffer.from(entry, 'utf8') : entry);
}

/** An interior node's hash: SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return sha256(NODE_PREFIX, left, right);
}

/** A complete subtree: the 2^level leaves from leaf index·2^level (level 0 is one leaf). */
export interface NodeId {
  level: number;
  index: number;
}

/** Reads the stored hashes of complete subtrees, in the order asked (one round trip for a whole proof). */
export type NodeReader = (nodes: readonly NodeId[]) => Promise<Buffer[]>;

/** The largest power of two below n (n ≥ 2): RFC 6962's split point k. */
function splitOf(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The complete subtrees of [lo, hi), left to right, each the largest that starts at its place. For the
 * ranges a tree head or a proof names (lo a multiple of a power of two ≥ hi - lo) they shrink left to
 * right, and the range's hash folds them from the right.
 */
export function subtreesOf(lo: number, hi: number): NodeId[] {
  const nodes: NodeId[] = [];
  while (lo < hi) {
    let level = 0;
    let width = 1;
    while (lo % (width * 2) === 0 && lo + width * 2 <= hi) {
      level += 1;
      width *= 2;
    }
    nodes.push({ level, index: lo / width });
    lo += width;
  }
  return nodes;
}

/** The hash of a range from its complete subtrees' hashes (largest first): folded from the right. */
export function foldSubtrees(hashes: readonly Buffer[]): Buffer {
  if (hashes.length === 0) return EMPTY_ROOT;
  let hash = hashes[hashes.length - 1] as Buffer;
  for (let i = hashes.length - 2; i >= 0; i--) hash = nodeHash(hashes[i] as Buffer, hash);
  return hash;
}

type Range = readonly [lo: number, hi: number];

/** RFC 9162 §2.1.3.1 PATH(m, D[lo:hi]): the ranges whose hashes make the proof, leaf side first. */
function inclusionRanges(m: number, lo: number, hi: number, out: Range[]): void {
  if (hi - lo <= 1) return;
  const k = splitOf(hi - lo);
  if (m < lo + k) {
    inclusionRanges(m, lo, lo + k, out);
    out.push([lo + k, hi]);
  } else {
    inclusionRanges(m, lo + k, hi, out);
    out.push([lo, lo + k]);
  }
}

/** RFC 9162 §2.1.4.1 SUBPROOF(m, D[lo:hi], complete): the ranges of a consistency proof. */
function consistencyRanges(m: number, lo: number, hi: number, complete: boolean, out: Range[]): void {
  if (m === hi) {
    if (!complete) out.push([lo, hi]);
    return;
  }
  const k = splitOf(hi - lo);
  if (m <= lo + k) {
    consistencyRanges(m, lo, lo + k, complete, out);
    out.push([lo + k, hi]);
  } else {
    consistencyRanges(m, lo + k, hi, false, out);
    out.push([lo, lo + k]);
  }
}

/** The hashes of `ranges`, reading each stored subtree once, in one call of `read`. */
async function hashRanges(ranges: readonly Range[], read: NodeReader): Promise<Buffer[]> {
  const perRange = ranges.map(([lo, hi]) => subtreesOf(lo, hi));
  const wanted = new Map<string, NodeId>();
  for (const node of perRange.flat()) wanted.set(`${node.level}/${node.index}`, node);
  const ids = [...wanted.values()];
  const hashes = ids.length === 0 ? [] : await read(ids);
  if (hashes.length !== ids.length) throw new Error('the log is missing stored hashes');
  const byKey = new Map(ids.map((node, i) => [`${node.level}/${node.index}`, hashes[i] as Buffer]));
  return perRange.map((nodes) =>
    foldSubtrees(nodes.map((n) => byKey.get(`${n.level}/${n.index}`) as Buffer)),
  );
}

/** The tree head (root hash) of the first `size` leaves. */
export async function treeHash(size: number, read: NodeReader): Promise<Buffer> {
  assertSize(size, 'size');
  if (size === 0) return EMPTY_ROOT;
  const [root] = await hashRanges([[0, size]], read);
  return root as Buffer;
}

/** The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 §2.1.3.1). */
export async function proveInclusion(index: number, size: number, read: NodeReader): Promise<Buffer[]> {
  assertSize(index, 'index');
  assertSize(size, 'size');
  if (index >= size) throw new RangeError(`leaf ${index} is not in a tree of ${size}`);
  const ranges: Range[] = [];
  inclusionRanges(index, 0, size, ranges);
  return hashRanges(ranges, read);
}

/**
 * The consistency proof from the tree of `from` leaves to the tree of `to` (RFC 9162 §2.1.4.1): empty
 * when from is 0 or equals to (every tree extends the empty one and itself).
 */
export async function proveConsistency(from: number, to: number, read: NodeReader): Promise<Buffer[]> {
  assertSize(from, 'from');
  assertSize(to, 'to');
  if (from > to) throw new RangeError(`a tree of ${to} cannot extend one of ${from}`);
  if (from === 0 || from === to) return [];
  const ranges: Range[] = [];
  consistencyRanges(from, 0, to, true, ranges);
  return hashRanges(ranges, read);
}

function assertSize(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a whole number ≥ 0`);
}

// Verification: the structure the proofs were made from, walked from the root down (as Go's sumdb/tlog
// checks them), each proof hash consumed exactly once. The test suite checks these against RFC 9162's
// own iterative algorithm (§2.1.3.2, §2.1.4.2), written out there independently.

const equal = (a: Uint8Array, b: Uint8Array) => a.length === b.length && Buffer.compare(a, b) === 0;

/** Whether `proof` proves the leaf of hash `leaf` at `index` in the tree of `size` leaves and `root`. */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  if (proof.some((hash) => hash.length !== HASH_SIZE)) return false;
  let next = proof.length;
  const walk = (lo: number, hi: number): Uint8Array | undefined => {
    if (hi - lo === 1) return leaf;
    if (next === 0) return undefined;
    const sibling = proof[--next] as Uint8Array;
    const k = splitOf(hi - lo);
    if (index < lo + k) {
      const left = walk(lo, lo + k);
      return left && nodeHash(left, sibling);
    }
    const right = walk(lo + k, hi);
    return right && nodeHash(sibling, right);
  };
  const computed = walk(0, size);
  return computed !== undefined && next === 0 && equal(computed, root);
}

/**
 * Whether `proof` proves that the tree of `to` leaves and `newRoot` extends the tree of `from` leaves
 * and `oldRoot` (the older tree is a prefix of the newer: nothing in it was changed or taken out).
 */
export function verifyConsistency(
  from: number,
  to: number,
  proof: readonly Uint8Array[],
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
): boolean {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || from > to) return false;
  if (from === to) return proof.length === 0 && equal(oldRoot, newRoot);
  if (from === 0) return proof.length === 0;
  if (proof.some((hash) => hash.length !== HASH_SIZE)) return false;
  let next = proof.length;
  // Each step gives the hash of [lo, hi) in the old tree (its part below `from`) and in the new one.
  const walk = (
    lo: number,
    hi: number,
    complete: boolean,
  ): { old: Uint8Array; new: Uint8Array } | undefined => {
    if (from === hi) {
      // The whole old tree: its root is the one claimed. A subtree shared by both: the proof gives it.
      if (complete) return { old: oldRoot, new: oldRoot };
      if (next === 0) return undefined;
      const shared = proof[--next] as Uint8Array;
      return { old: shared, new: shared };
    }
    if (next === 0) return undefined;
    const sibling = proof[--next] as Uint8Array;
    const k = splitOf(hi - lo);
    if (from <= lo + k) {
      const left = walk(lo, lo + k, complete);
      return left && { old: left.old, new: nodeHash(left.new, sibling) };
    }
    const right = walk(lo + k, hi, false);
    return right && { old: nodeHash(sibling, right.old), new: nodeHash(sibling, right.new) };
  };
  const computed = walk(0, to, true);
  return computed !== undefined && next === 0 && equal(computed.old, oldRoot) && equal(computed.new, newRoot);
}

/**
 * The right edge of a tree: its size and the hashes of the complete subtrees of its leaves, largest
 * first (at most one per bit of the size). Enough to append leaves and compute the root without the
 * rest: what a witness keeps between runs.
 */
export interface CompactRange {
  size: number;
  hashes: Buffer[];
}

export const emptyRange = (): CompactRange => ({ size: 0, hashes: [] });

/**
 * Appends a leaf's hash to `range` (in place) and returns the complete subtrees it completed, the leaf
 * itself first: what the storage writes.
 */
export function appendToRange(range: CompactRange, leaf: Buffer): Array<NodeId & { hash: Buffer }> {
  const index = range.size;
  const written: Array<NodeId & { hash: Buffer }> = [{ level: 0, index, hash: leaf }];
  let hash = leaf;
  let level = 0;
  let width = 1;
  // Each 1-bit of the size below the new leaf's position closes a subtree of that height.
  while (Math.floor(index / width) % 2 === 1) {
    hash = nodeHash(range.hashes.pop() as Buffer, hash);
    level += 1;
    width *= 2;
    written.push({ level, index: Math.floor(index / width), hash });
  }
  range.hashes.push(hash);
  range.size += 1;
  return written;
}

/** The root of the tree a compact range is the edge of. */
export function rangeRoot(range: CompactRange): Buffer {
  return foldSubtrees(range.hashes);
}
