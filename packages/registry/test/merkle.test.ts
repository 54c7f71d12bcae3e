import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  appendToRange,
  type CompactRange,
  EMPTY_ROOT,
  emptyRange,
  leafHash,
  type NodeReader,
  proveConsistency,
  proveInclusion,
  rangeRoot,
  treeHash,
  verifyConsistency,
  verifyInclusion,
} from '../src/index.js';

// The log's tree (src/provenance/merkle.ts) against RFC 6962 / RFC 9162: the reference test vectors of
// Certificate Transparency (as transparency-dev/merkle keeps them), and every proof of every tree up to
// 70 leaves checked with the RFC's own verification algorithms, written out below from the RFC's text
// and sharing no code with ours.

// ---- An independent implementation, from RFC 9162's text only ----------------------------------------

const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const HASH_LEAF = (data: Uint8Array) => sha256(Buffer.from([0]), data);
const HASH_NODE = (left: Uint8Array, right: Uint8Array) => sha256(Buffer.from([1]), left, right);

/** §2.1.1 MTH(D[n]), by the definition (recursive over the leaves themselves). */
function mth(leaves: readonly Uint8Array[]): Buffer {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return HASH_LEAF(leaves[0] as Uint8Array);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return HASH_NODE(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

/** §2.1.3.2: verifying an inclusion proof. */
function rfcVerifyInclusion(
  leafIndex: number,
  treeSize: number,
  hash: Uint8Array,
  inclusionPath: readonly Uint8Array[],
  rootHash: Uint8Array,
): boolean {
  if (leafIndex >= treeSize) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = Buffer.from(hash);
  for (const p of inclusionPath) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = HASH_NODE(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      r = HASH_NODE(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && r.equals(rootHash);
}

/** §2.1.4.2: verifying a consistency proof, for 0 < first < second. */
function rfcVerifyConsistency(
  first: number,
  second: number,
  firstHash: Uint8Array,
  secondHash: Uint8Array,
  consistencyPath: readonly Uint8Array[],
): boolean {
  if (consistencyPath.length === 0) return false;
  const path = [...consistencyPath];
  if ((first & (first - 1)) === 0) path.unshift(firstHash);
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn >>= 1;
    sn >>= 1;
  }
  let fr = Buffer.from(path[0] as Uint8Array);
  let sr = Buffer.from(path[0] as Uint8Array);
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = HASH_NODE(c, fr);
      sr = HASH_NODE(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      sr = HASH_NODE(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return fr.equals(firstHash) && sr.equals(secondHash) && sn === 0;
}

// ---- Our tree over in-memory stored nodes ---------------------------------------------------------

/** The nodes appendToRange writes, kept in a map: what log_nodes holds. */
function storedTree(entries: readonly Uint8Array[]): { read: NodeReader; range: CompactRange } {
  const nodes = new Map<string, Buffer>();
  const range = emptyRange();
  for (const entry of entries)
    for (const n of appendToRange(range, leafHash(entry))) nodes.set(`${n.level}/${n.index}`, n.hash);
  const read: NodeReader = async (ids) =>
    ids.map((id) => {
      const hash = nodes.get(`${id.level}/${id.index}`);
      if (!hash) throw new Error(`no node ${id.level}/${id.index}`);
      return hash;
    });
  return { read, range };
}

const hex = (h: string) => Buffer.from(h, 'hex');

// RFC 6962 reference vectors (Certificate Transparency; transparency-dev/merkle proof/verify_test.go).
const VECTOR_LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map(hex);
const VECTOR_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
].map(hex);
const VECTOR_INCLUSION = [
  {
    index: 0,
    size: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    index: 5,
    size: 8,
    proof: [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  { index: 2, size: 3, proof: ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125'] },
  {
    index: 1,
    size: 5,
    proof: [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
];
const VECTOR_CONSISTENCY = [
  {
    from: 1,
    to: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    from: 6,
    to: 8,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  {
    from: 2,
    to: 5,
    proof: [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
  {
    from: 6,
    to: 7,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
];

describe('RFC 6962 reference vectors', () => {
  const { read } = storedTree(VECTOR_LEAVES);

  it('the empty tree is SHA-256 of nothing; leaf and node hashes carry their prefixes', () => {
    expect(EMPTY_ROOT.toString('hex')).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(leafHash(Buffer.alloc(0))).toEqual(VECTOR_ROOTS[0]);
  });

  it('tree heads of 1 to 8 leaves', async () => {
    for (let size = 1; size <= 8; size++)
      expect({ size, root: (await treeHash(size, read)).toString('hex') }).toEqual({
        size,
        root: VECTOR_ROOTS[size - 1]?.toString('hex'),
      });
    expect(await treeHash(0, read)).toEqual(EMPTY_ROOT);
  });

  it('inclusion proofs', async () => {
    for (const v of VECTOR_INCLUSION) {
      const proof = await proveInclusion(v.index, v.size, read);
      expect(proof.map((h) => h.toString('hex'))).toEqual(v.proof);
      const leaf = leafHash(VECTOR_LEAVES[v.index] as Buffer);
      expect(verifyInclusion(v.index, v.size, leaf, proof, VECTOR_ROOTS[v.size - 1] as Buffer)).toBe(true);
    }
  });

  it('consistency proofs', async () => {
    for (const v of VECTOR_CONSISTENCY) {
      const proof = await proveConsistency(v.from, v.to, read);
      expect(proof.map((h) => h.toString('hex'))).toEqual(v.proof);
      const [oldRoot, newRoot] = [VECTOR_ROOTS[v.from - 1] as Buffer, VECTOR_ROOTS[v.to - 1] as Buffer];
      expect(verifyConsistency(v.from, v.to, proof, oldRoot, newRoot)).toBe(true);
    }
  });
});

describe('every proof of every tree up to 70 leaves, checked with the RFC 9162 algorithms', () => {
  const MAX = 70;
  const entries = Array.from({ length: MAX }, (_, i) => Buffer.from(`@acme/skill-${i}@1.0.${i} sha512-${i}`));
  const { read, range } = storedTree(entries);
  const roots = Array.from({ length: MAX + 1 }, (_, n) => mth(entries.slice(0, n)));
  const flip = (proof: readonly Buffer[], i: number) =>
    proof.map((h, j) => (j === i ? Buffer.from(h.map((b, k) => (k === 0 ? b ^ 1 : b))) : h));

  it('tree heads equal MTH by its definition; the compact range gives the same', async () => {
    for (let size = 0; size <= MAX; size++)
      expect((await treeHash(size, read)).equals(roots[size] as Buffer)).toBe(true);
    expect(rangeRoot(range).equals(roots[MAX] as Buffer)).toBe(true);
  });

  it('inclusion: every (index, size) verifies with §2.1.3.2 and with ours; a changed proof, leaf or index fails both', async () => {
    let checked = 0;
    for (let size = 1; size <= MAX; size++) {
      const root = roots[size] as Buffer;
      for (let index = 0; index < size; index++) {
        const proof = await proveInclusion(index, size, read);
        const leaf = HASH_LEAF(entries[index] as Buffer);
        expect({ index, size, rfc: rfcVerifyInclusion(index, size, leaf, proof, root) }).toEqual({
          index,
          size,
          rfc: true,
        });
        expect(verifyInclusion(index, size, leaf, proof, root)).toBe(true);
        const wrong: Array<[number, number, Buffer, readonly Buffer[]]> = [
          [index, size, HASH_LEAF(Buffer.from('another entry')), proof],
          [index, size, leaf, [...proof, root]],
          ...proof.map((_, i): [number, number, Buffer, readonly Buffer[]] => [
            index,
            size,
            leaf,
            flip(proof, i),
          ]),
        ];
        if (size > 1)
          wrong.push([(index + 1) % size, size, leaf, proof], [index, size, leaf, proof.slice(0, -1)]);
        for (const [i, n, l, p] of wrong) {
          expect(rfcVerifyInclusion(i, n, l, p, root)).toBe(false);
          expect(verifyInclusion(i, n, l, p, root)).toBe(false);
        }
        checked += 1;
      }
    }
    expect(checked).toBe((MAX * (MAX + 1)) / 2);
  });

  it('consistency: every (from, to) verifies with §2.1.4.2 and with ours; a changed proof or root fails both', async () => {
    let checked = 0;
    for (let to = 1; to <= MAX; to++) {
      for (let from = 1; from <= to; from++) {
        const proof = await proveConsistency(from, to, read);
        const [oldRoot, newRoot] = [roots[from] as Buffer, roots[to] as Buffer];
        expect(verifyConsistency(from, to, proof, oldRoot, newRoot)).toBe(true);
        checked += 1;
        if (from === to) {
          expect(proof).toEqual([]);
          continue;
        }
        expect({ from, to, rfc: rfcVerifyConsistency(from, to, oldRoot, newRoot, proof) }).toEqual({
          from,
          to,
          rfc: true,
        });
        // A tree that is not the old one's extension: another leaf at from - 1.
        const forked = mth([
          ...entries.slice(0, from - 1),
          Buffer.from('forked'),
          ...entries.slice(from, to),
        ]);
        const wrong: Array<[Buffer, Buffer, readonly Buffer[]]> = [
          [oldRoot, forked, proof],
          [forked, newRoot, proof],
          [oldRoot, newRoot, proof.slice(0, -1)],
          [oldRoot, newRoot, [...proof, newRoot]],
          ...proof.map((_, i): [Buffer, Buffer, readonly Buffer[]] => [oldRoot, newRoot, flip(proof, i)]),
        ];
        for (const [o, n, p] of wrong) {
          expect(rfcVerifyConsistency(from, to, o, n, p)).toBe(false);
          expect(verifyConsistency(from, to, p, o, n)).toBe(false);
        }
      }
    }
    expect(checked).toBe((MAX * (MAX + 1)) / 2);
  });

  it('degenerate sizes: from 0 and from = to need an empty proof; the past never extends the future', async () => {
    expect(await proveConsistency(0, 5, read)).toEqual([]);
    expect(verifyConsistency(0, 5, [], EMPTY_ROOT, roots[5] as Buffer)).toBe(true);
    expect(verifyConsistency(0, 5, [roots[5] as Buffer], EMPTY_ROOT, roots[5] as Buffer)).toBe(false);
    expect(verifyConsistency(5, 5, [], roots[5] as Buffer, roots[4] as Buffer)).toBe(false);
    expect(verifyConsistency(6, 5, [], roots[6] as Buffer, roots[5] as Buffer)).toBe(false);
    await expect(proveConsistency(6, 5, read)).rejects.toThrow(RangeError);
    await expect(proveInclusion(5, 5, read)).rejects.toThrow(RangeError);
    expect(verifyInclusion(0, 0, leafHash('x'), [], EMPTY_ROOT)).toBe(false);
  });
});
