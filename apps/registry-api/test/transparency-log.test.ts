import { LogEntriesResponseSchema, LogProofSchema } from '@pkgreg/contracts';
import {
  checkpoint,
  leafHash,
  logOrigin,
  logPendingVersions,
  openCheckpointNote,
  verifyConsistency,
  verifyInclusion,
} from '@pkgreg/registry';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestRegistry } from './fixtures.js';
import { addVersions, newSigner } from './log-helpers.js';

// The transparency log over HTTP (docs/provenance.md, "Transparency log"): the latest checkpoint as a
// signed note, inclusion and consistency proofs bounded by it, and the entries witnesses replay.

const t = useTestRegistry({ HTTP_CACHE_MAX_AGE_S: '7' });
const signer = newSigner();
const ORIGIN = logOrigin('https://registry.example');
const MOVING = 'public, max-age=7, must-revalidate';

const get = (path: string) => request(t.app).get(path);
const hashes = (body: unknown) => LogProofSchema.parse(body).hashes.map((h) => Buffer.from(h, 'base64'));

describe('before anything is logged', () => {
  it('the checkpoint is a 404 {error}, never cached; proofs past it are a 400', async () => {
    const res = await get('/api/log/checkpoint').expect(404);
    expect(res.body).toEqual({ error: 'The log is empty: nothing is signed yet' });
    expect(res.headers['cache-control']).toBe('no-store');
    expect((await get('/api/log/proof/inclusion?index=0&size=1').expect(400)).body).toEqual({
      error: "size must be at most 0, the latest checkpoint's size",
    });
    expect((await get('/api/log/entries').expect(200)).body).toEqual({ entries: [] });
  });
});

describe('a log with checkpoints', () => {
  it('serves the latest checkpoint as the signed note, revalidated as a moving answer', async () => {
    await addVersions(t.db, { scope: 'acme', name: 'pdf' }, 5);
    await addVersions(t.db, { scope: 'acme', name: 'hidden' }, 2, { visibility: 'private' });
    await logPendingVersions(t.db);
    const made = await checkpoint(t.db, signer, ORIGIN);
    const res = await get('/api/log/checkpoint').expect(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['cache-control']).toBe(MOVING);
    expect(res.text).toBe(made?.note);
    expect(openCheckpointNote(res.text, ORIGIN, signer.publicKey)).toMatchObject({
      ok: true,
      checkpoint: { size: 5 },
    });
    await get('/api/log/checkpoint')
      .set('If-None-Match', res.headers.etag as string)
      .expect(304);
  });

  it('entries: the public versions in order, bounded by the checkpoint, paged by start and limit', async () => {
    const all = LogEntriesResponseSchema.parse((await get('/api/log/entries').expect(200)).body).entries;
    expect(all.map((e) => e.entry)).toEqual(
      [0, 1, 2, 3, 4].map((i) =>
        expect.stringMatching(new RegExp(`^@acme/pdf@1\\.0\\.${i} sha512-[A-Za-z0-9+/]+=*$`)),
      ),
    );
    expect(all.map((e) => e.index)).toEqual([0, 1, 2, 3, 4]);
    // Appended but not yet signed: not served.
    await addVersions(t.db, { scope: 'acme', name: 'notes' }, 3);
    await logPendingVersions(t.db);
    expect((await get('/api/log/entries?start=3&limit=10').expect(200)).body.entries).toEqual(all.slice(3));
    expect((await get('/api/log/entries?start=9').expect(200)).body).toEqual({ entries: [] });
    const page = await get('/api/log/entries?start=1&limit=2').expect(200);
    expect(page.body.entries).toEqual(all.slice(1, 3));
    expect(page.headers['cache-control']).toBe(MOVING);
    expect(page.headers.etag).toMatch(/^"/);
  });

  it('inclusion proofs verify against the checkpoint root for every leaf', async () => {
    await checkpoint(t.db, signer, ORIGIN);
    const note = (await get('/api/log/checkpoint').expect(200)).text;
    const opened = openCheckpointNote(note, ORIGIN, signer.publicKey);
    if (!opened.ok) throw new Error(opened.reason);
    const { size, rootHash } = opened.checkpoint;
    expect(size).toBe(8);
    const entries = LogEntriesResponseSchema.parse((await get('/api/log/entries').expect(200)).body).entries;
    for (const { index, entry } of entries) {
      const res = await get(`/api/log/proof/inclusion?index=${index}&size=${size}`).expect(200);
      expect(verifyInclusion(index, size, leafHash(entry), hashes(res.body), rootHash)).toBe(true);
    }
  });

  it('consistency proofs link the checkpoints', async () => {
    const old = await t.db.selectFrom('log_checkpoints').selectAll().orderBy('size').execute();
    const [first, second] = old;
    if (!first || !second) throw new Error('two checkpoints expected');
    const res = await get(`/api/log/proof/consistency?from=${first.size}&to=${second.size}`).expect(200);
    expect(
      verifyConsistency(first.size, second.size, hashes(res.body), first.root_hash, second.root_hash),
    ).toBe(true);
    expect((await get('/api/log/proof/consistency?from=8&to=8').expect(200)).body).toEqual({ hashes: [] });
    expect((await get('/api/log/proof/consistency?from=0&to=8').expect(200)).body).toEqual({ hashes: [] });
  });

  it('refuses sizes past the latest checkpoint, from > to, index ≥ size and malformed numbers (400 {error})', async () => {
    const cases: Array<[string, string]> = [
      ['/api/log/proof/inclusion?index=0&size=9', "size must be at most 8, the latest checkpoint's size"],
      ['/api/log/proof/inclusion?index=8&size=8', 'index must be below size'],
      ['/api/log/proof/inclusion?index=-1&size=8', 'index must be a whole number'],
      ['/api/log/proof/inclusion?index=1e2&size=8', 'index must be a whole number'],
      ['/api/log/proof/inclusion?size=8', 'index must be a whole number'],
      ['/api/log/proof/inclusion?index=0&index=1&size=8', 'index must be given once'],
      ['/api/log/proof/consistency?from=5&to=9', "to must be at most 8, the latest checkpoint's size"],
      ['/api/log/proof/consistency?from=6&to=5', 'from must be at most to'],
      ['/api/log/proof/consistency?from=01&to=5', 'from must be a whole number'],
      ['/api/log/entries?limit=1001', 'limit must be a whole number from 1 to 1000'],
      ['/api/log/entries?limit=0', 'limit must be a whole number from 1 to 1000'],
      ['/api/log/entries?start=x', 'start must be a whole number'],
    ];
    for (const [path, error] of cases) {
      const res = await get(path);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 400, body: { error } });
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });
});
