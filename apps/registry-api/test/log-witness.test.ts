import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Db } from '@pkgreg/db';
import { createTestDatabase, TEST_REDIS_URL, type TestDatabase, testKeyPrefix } from '@pkgreg/db/testing';
import {
  checkpoint,
  logOrigin,
  logPendingVersions,
  noteVerifierKey,
  publicKeyBase64,
  registerSigningKey,
  signerFromPem,
} from '@pkgreg/registry';
import { closeServer, listen } from '@pkgreg/server-kit';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadEnv } from '../src/env.js';
import { runWitness, type WitnessOptions } from '../src/provenance/log-witness.js';
import { silentLogger, useTestRegistry } from './fixtures.js';
import { addVersions, newSigner } from './log-helpers.js';

// The witness (docs/provenance.md, "Running a witness"): `pnpm registry log:verify` replays the log
// over HTTP from a real registry and alarms on what the log must never do: a checkpoint that does not
// extend the one seen before (a fork: another history signed by the same key), a leaf altered after it
// was signed, a bad signature, and, with --db, a version missing from the log.

const PUBLIC_URL = 'https://registry.example';
const ORIGIN = logOrigin(PUBLIC_URL);
const signer = newSigner();
const t = useTestRegistry({ REGISTRY_PUBLIC_URL: PUBLIC_URL });
let dir: string;
let server: Server;
let base: string;

/** A second registry of its own database: another history, signed by the same key (a fork). */
let forkDb: TestDatabase;
let forkServer: Server;
let forkBase: string;
let forkRedis: Redis;

const urlOf = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pkgreg-witness-'));
  server = await listen(t.app, 0, '127.0.0.1');
  base = urlOf(server);
  forkDb = await createTestDatabase();
  forkRedis = new Redis(TEST_REDIS_URL, { lazyConnect: true, keyPrefix: `${testKeyPrefix('fork')}:` });
  const env = loadEnv({ REGISTRY_PUBLIC_URL: PUBLIC_URL });
  forkServer = await listen(
    createApp({ db: forkDb.db, redis: forkRedis, logger: silentLogger, env }),
    0,
    '127.0.0.1',
  );
  forkBase = urlOf(forkServer);
});
afterAll(async () => {
  if (server) await closeServer(server);
  if (forkServer) await closeServer(forkServer);
  forkRedis?.disconnect();
  await forkDb?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function grow(db: Db, name: string, count: number): Promise<void> {
  await addVersions(db, { scope: 'acme', name }, count);
  while ((await logPendingVersions(db)) > 0);
  await checkpoint(db, signer, ORIGIN);
}

/** Rewrites a leaf's entry behind the log's back (its guard off for the statement). */
async function rewriteEntry(index: number, from: string, to: string): Promise<void> {
  await sql`alter table log_leaves disable trigger log_leaves_append_only`.execute(t.db);
  try {
    await sql`update log_leaves set entry = replace(entry, ${from}, ${to}) where idx = ${index}`.execute(
      t.db,
    );
  } finally {
    await sql`alter table log_leaves enable trigger log_leaves_append_only`.execute(t.db);
  }
}

const witness = (state: string, options: Partial<WitnessOptions> = {}) =>
  runWitness({
    registry: base,
    statePath: join(dir, state),
    key: signer.publicKey,
    graceMs: 60_000,
    ...options,
  });

describe('a good log', () => {
  it('passes: the first run replays it all, later runs only what is new', async () => {
    expect(await witness('good.json')).toEqual({ status: 'ok', origin: '', size: 0, root: '', replayed: 0 });
    await grow(t.db, 'pdf', 7);
    const first = await witness('good.json');
    expect(first).toMatchObject({ status: 'ok', origin: ORIGIN, size: 7, replayed: 7 });
    const state = JSON.parse(readFileSync(join(dir, 'good.json'), 'utf8'));
    expect(state).toMatchObject({ origin: ORIGIN, key: publicKeyBase64(signer.publicKey), size: 7 });
    await grow(t.db, 'notes', 1100);
    expect(await witness('good.json')).toMatchObject({ status: 'ok', size: 1107, replayed: 1100 });
    expect(await witness('good.json')).toMatchObject({ status: 'ok', size: 1107, replayed: 0 });
  });

  it('learns the key from GET /api/keys at its first run, then keeps it', async () => {
    await registerSigningKey(t.db, signer);
    expect(await witness('learnt.json', { key: undefined })).toMatchObject({ status: 'ok', size: 1107 });
    expect(JSON.parse(readFileSync(join(dir, 'learnt.json'), 'utf8')).key).toBe(
      publicKeyBase64(signer.publicKey),
    );
    expect(await witness('learnt.json', { key: undefined })).toMatchObject({ status: 'ok', replayed: 0 });
  });

  it('with --db, passes when every public version older than the grace is in the checkpoint', async () => {
    expect(await witness('good.json', { db: t.db })).toMatchObject({ status: 'ok' });
  });
});

describe('alarms', () => {
  it('a checkpoint signed by another key', async () => {
    expect(await witness('other-key.json', { key: newSigner().publicKey })).toEqual({
      status: 'alarm',
      reason: expect.stringMatching(/^the checkpoint is not signed by the log key \(key hash [0-9a-f]{8}\)$/),
    });
  });

  it('a fork: a log whose new checkpoint does not extend the old one (another history, the same key)', async () => {
    // The fork's history differs from the first entry on, and is longer than what the witness saw.
    await grow(forkDb.db, 'evil', 1200);
    const forked = await witness('good.json', { registry: forkBase });
    expect(forked).toEqual({
      status: 'alarm',
      reason: expect.stringMatching(
        /^fork: the checkpoint of size 1200 \(root \S+\) does not extend the one of size 1107 \(root \S+\) seen before$/,
      ),
    });
    // Shorter than what was seen, or as long with another root: a fork too.
    const longer = await witness('long.json', { registry: forkBase });
    expect(longer).toMatchObject({ status: 'ok', size: 1200 });
    expect(await witness('long.json')).toMatchObject({
      status: 'alarm',
      reason: "fork: the log's checkpoint has size 1107, smaller than the size 1200 seen before",
    });
    // The state is left as it was: the alarm repeats until someone looks.
    expect(await witness('good.json', { registry: forkBase })).toMatchObject({ status: 'alarm' });
    expect(await witness('good.json')).toMatchObject({ status: 'ok', size: 1107 });
  });

  it('a leaf altered in the database after it was signed', async () => {
    await grow(t.db, 'later', 3);
    // The stored tree (and so every checkpoint and proof) is untouched; only the served entry changes.
    await rewriteEntry(1108, '@1.0.1 ', '@1.0.9 ');
    expect(await witness('good.json')).toEqual({
      status: 'alarm',
      reason: expect.stringMatching(
        /^the entries 1107\.\.1109 do not hash to the checkpoint's root \S+: an entry was altered or left out$/,
      ),
    });
    // A witness starting afresh replays it all, and finds it too.
    expect(await witness('fresh.json')).toMatchObject({
      status: 'alarm',
      reason: expect.stringContaining('0..1109'),
    });
    await rewriteEntry(1108, '@1.0.9 ', '@1.0.1 ');
    expect(await witness('good.json')).toMatchObject({ status: 'ok', size: 1110, replayed: 3 });
  });

  it('with --db: a version missing from the log', async () => {
    await addVersions(t.db, { scope: 'acme', name: 'unlogged' }, 1, {
      createdAt: new Date(Date.now() - 3_600_000),
    });
    expect(await witness('learnt.json', { db: t.db, key: undefined })).toEqual({
      status: 'alarm',
      reason: expect.stringMatching(
        /^version @acme\/unlogged@1\.0\.0, created \S+, is missing from the log$/,
      ),
    });
    // Within the grace period, an unlogged version is the sequencer's delay, not an alarm.
    await addVersions(t.db, { scope: 'acme', name: 'just-made' }, 1);
    const report = await witness('learnt.json', { db: t.db, key: undefined });
    expect(report).toMatchObject({ status: 'alarm', reason: expect.not.stringContaining('just-made') });
  });
});

describe('pnpm registry log:verify', { timeout: 60_000 }, () => {
  const CLI = resolve(import.meta.dirname, '../dist/cli.js');
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        {
          env: { ...process.env, DATABASE_URL: t.url, INIT_CWD: dir, LOG_LEVEL: 'silent', ...extra },
          timeout: 60_000,
        },
        (error, stdout, stderr) =>
          done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  it('exits 0 with one line (size and root), 1 with one line on an alarm, 2 on a bad key', async () => {
    const vkey = noteVerifierKey(ORIGIN, signer.publicKey);
    const ok = await cli(['log:verify', '--registry', base, '--state', 'cli.json', '--key', vkey]);
    expect(ok).toMatchObject({ code: 0, stderr: '' });
    expect(ok.stdout).toMatch(
      /^ok registry\.example\/log size 1110 root \S+ \(1110 new entries replayed\)\n$/,
    );
    const fork = await cli(['log:verify', '--registry', forkBase, '--state', 'cli.json']);
    expect(fork).toMatchObject({ code: 1, stdout: '' });
    expect(fork.stderr).toMatch(
      /^ALARM: fork: the checkpoint of size 1200 \(root \S+\) does not extend the one of size 1110 \(root \S+\) seen before\n$/,
    );
    const bad = await cli(['log:verify', '--state', 'cli.json', '--key', 'not-a-key']);
    expect(bad).toMatchObject({ code: 2 });
  });

  it('log:append logs what is pending and signs with REGISTRY_SIGNING_KEY; log:key prints what witnesses pin', async () => {
    const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const rotated = signerFromPem(pem);
    const env = { REGISTRY_SIGNING_KEY: pem, REGISTRY_PUBLIC_URL: PUBLIC_URL };
    const appended = await cli(['log:append'], env);
    // The two versions the --db test left unlogged.
    expect(appended).toMatchObject({ code: 0, stderr: '' });
    expect(appended.stdout).toMatch(/^2 versions appended; checkpoint size 1112 root \S+\n$/);
    const key = await cli(['log:key'], env);
    expect(key.stdout).toBe(
      `origin ${ORIGIN}\nkey    ${publicKeyBase64(rotated.publicKey)}\nvkey   ${noteVerifierKey(ORIGIN, rotated.publicKey)}\n`,
    );
    // A witness pinned to the old key alarms; given the new one, it goes on from where it was.
    expect(await cli(['log:verify', '--registry', base, '--state', 'cli.json'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('ALARM: the checkpoint is not signed by the log key'),
    });
    const repinned = await cli([
      'log:verify',
      '--registry',
      base,
      '--state',
      'cli.json',
      '--key',
      publicKeyBase64(rotated.publicKey),
    ]);
    expect(repinned.stdout).toMatch(
      /^ok registry\.example\/log size 1112 root \S+ \(2 new entries replayed\)\n$/,
    );
  });
});
