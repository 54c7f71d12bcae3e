import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AccessState, createAccess } from '../src/admission/access.js';
import { insertClient } from '../src/oauth/clients.repository.js';
import { disableClient } from '../src/oauth/clients.service.js';

// The bound itself of who may call (access.ts, EDGE_ACCESS_MAX_AGE_MS): a request is judged by a version
// read that started at most `maxAgeMs` before it. Other tests poll for seconds; these check the bound with
// the real database and one sleep just past it. A change is an OAuth client disabled as the edge's admin
// API disables one (its trigger bumps the version), committed before the calls that must see it.

const ISSUER = 'http://localhost:4100/mcp';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t?.destroy();
});

const access = (maxAgeMs: number) =>
  createAccess({ db: t.db, issuer: ISSUER, hosted: [], tunnels: [], tokenTtlSeconds: 600, maxAgeMs });

/** A new enabled client (the secret is never checked here). */
async function newClient(): Promise<string> {
  const clientId = `pkc_${randomBytes(12).toString('hex')}`;
  await insertClient(t.db, { clientId, secretHash: 'unused', name: 'bound', allowedScopes: [] });
  return clientId;
}

async function disable(clientId: string): Promise<void> {
  expect(await disableClient(t.db, clientId)).toBe(true);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the bound on how old a verdict may be', () => {
  it('maxAgeMs 100: a call right after a change may see the old state; one just over 100 ms later sees the new', async () => {
    const edge = access(100);
    const clientId = await newClient();
    const readFrom = performance.now();
    expect((await edge.current()).disabled(ISSUER, clientId)).toBe(false);
    await disable(clientId);
    // The read behind the state started after `readFrom`: while that is within the bound, the call is
    // answered from it, at once and without a read, so it still has the client enabled.
    const soon = edge.current();
    if (performance.now() - readFrom < 100) {
      expect(soon).not.toBeInstanceOf(Promise);
      expect((soon as AccessState).disabled(ISSUER, clientId)).toBe(false);
    }
    await soon;
    // Every read started since the change committed, and one at most 100 ms old must have.
    await sleep(120);
    expect((await edge.current()).disabled(ISSUER, clientId)).toBe(true);
  });

  it('current(0) sees a change committed before it, even while an older read is running', async () => {
    const edge = access(100);
    for (let round = 0; round < 3; round++) {
      const clientId = await newClient();
      // Warm, then a read started before the change and still running (or just done) when it commits.
      expect((await edge.current(0)).disabled(ISSUER, clientId)).toBe(false);
      const older = edge.current(0);
      await disable(clientId);
      const [fresh, again] = await Promise.all([edge.current(0), edge.current(0)]);
      expect(fresh.disabled(ISSUER, clientId)).toBe(true);
      expect(again.disabled(ISSUER, clientId)).toBe(true);
      await older;
      // With the default bound the state read just now holds the change too.
      expect((await edge.current()).disabled(ISSUER, clientId)).toBe(true);
    }
  });

  it('maxAgeMs 0: every call sees a change committed before it, at once', async () => {
    const edge = access(0);
    for (let round = 0; round < 3; round++) {
      const clientId = await newClient();
      expect((await edge.current()).disabled(ISSUER, clientId)).toBe(false);
      const older = edge.current();
      await disable(clientId);
      expect((await edge.current()).disabled(ISSUER, clientId)).toBe(true);
      await older;
      expect((await edge.current()).disabled(ISSUER, clientId)).toBe(true);
    }
  });
});
