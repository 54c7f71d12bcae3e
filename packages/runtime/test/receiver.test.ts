import type { Db } from '@pkgreg/db';
import { migrateToLatest } from '@pkgreg/db';
import { createEmbeddedDb } from '@pkgreg/db/embedded';
import { startInProcessJobs } from '@pkgreg/tasks';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bodySha256,
  createDbNonceStore,
  createLocalRuntime,
  createTunnelReceiver,
  type LocalRuntime,
  signEnvelope,
  type TunnelReceiver,
} from '../src/index.js';

// The receiving end of a tunnel on the store a local runtime uses by default: PGlite (in memory here) with
// every migration, the edge's own local Runtime on it, and the receiver's checks (decisions.md, Tunnel
// envelope): signature, session, body hash, expiry, subject, and each nonce once, also for a new receiver
// on the same store (a restarted runtime).

const SESSION = 'sess-recv';
const SECRET = 'r'.repeat(43);
const NS = `app:${'d'.repeat(64)}`;
let db: Db;
let runtime: LocalRuntime;
let receiver: TunnelReceiver;

const newReceiver = (allowedClients: readonly string[] = ['c'], servesOwners = false) =>
  createTunnelReceiver({
    sessionId: SESSION,
    secret: SECRET,
    nonces: createDbNonceStore(db),
    runtime,
    allowedClients,
    servesOwners,
    onError: (error) => {
      throw error;
    },
  });

const call = (name: string, args: Record<string, unknown>, namespace = NS, clientId = 'c') =>
  JSON.stringify({
    method: 'tools/call',
    name,
    args,
    caller: { namespace, clientId, scopes: ['pkgreg.memory.stm.read', 'pkgreg.memory.stm.write'] },
  });

const signed = async (body: string, namespace = NS) => ({
  envelope: await signEnvelope({ sessionId: SESSION, secret: SECRET, namespace, body }),
  body,
});

beforeAll(async () => {
  db = await createEmbeddedDb();
  await migrateToLatest(db);
  const jobs = await startInProcessJobs({ db, handlers: {} });
  runtime = createLocalRuntime({ db, jobs: async () => jobs, syncThresholdMs: 1000, pollWindowSeconds: 300 });
  receiver = newReceiver();
}, 120_000);
afterAll(async () => {
  await runtime?.close();
  await db?.destroy();
});

describe('a receiver on the embedded store', () => {
  it('runs a signed call on the local runtime, once', async () => {
    const put = await signed(
      call('pkgreg.memory.v1.put', { namespace: NS, tier: 'stm', content: 'on pglite' }),
    );
    const first = await receiver.receive(put.envelope, put.body);
    expect(first.status).toBe(200);
    expect(first.reply).toMatchObject({ result: { entry: { content: 'on pglite', tier: 'stm' } } });
    const search = await signed(call('pkgreg.memory.v1.search', { namespace: NS, query: 'pglite' }));
    const found = await receiver.receive(search.envelope, search.body);
    expect(found.reply).toMatchObject({ result: { total: 1 } });
    expect(await receiver.receive(put.envelope, put.body)).toMatchObject({
      status: 409,
      reply: { error: { reason: 'tunnel_replay_detected' } },
    });
  });

  it('a restarted receiver on the same store still refuses a consumed nonce', async () => {
    const req = await signed(call('pkgreg.memory.v1.search', { namespace: NS, query: 'x' }));
    expect((await receiver.receive(req.envelope, req.body)).status).toBe(200);
    expect(await newReceiver().receive(req.envelope, req.body)).toMatchObject({
      status: 409,
      reply: { error: { reason: 'tunnel_replay_detected' } },
    });
  });

  it('refuses an expired envelope, another session, a changed body and a subject other than the caller', async () => {
    const body = call('pkgreg.memory.v1.search', { namespace: NS, query: 'x' });
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ sid: SESSION, bodySha256: bodySha256(body) })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(NS)
      .setJti(crypto.randomUUID())
      .setIssuedAt(now - 90)
      .setExpirationTime(now - 30)
      .sign(new TextEncoder().encode(SECRET));
    const other = await signEnvelope({ sessionId: 'sess-other', secret: SECRET, namespace: NS, body });
    const changed = await signed(body);
    const subject = await signed(body, `app:${'e'.repeat(64)}`);
    for (const [envelope, b] of [
      [expired, body],
      [other, body],
      [changed.envelope, `${body} `],
      [subject.envelope, body],
      [undefined, body],
    ] as const) {
      expect(await receiver.receive(envelope, b)).toMatchObject({
        status: 401,
        reply: { error: { reason: 'tunnel_envelope_invalid' } },
      });
    }
  });

  it('serves only the clients it was told to, by client id or namespace, whatever the edge signed (issue 26)', async () => {
    const OTHER_NS = `app:${'f'.repeat(64)}`;
    const entries = async () =>
      (await db.selectFrom('memory_entries').select('content').execute()).map((r) => r.content);
    const put = (namespace: string, clientId: string) =>
      signed(
        call(
          'pkgreg.memory.v1.put',
          { namespace, tier: 'stm', content: `from ${clientId}` },
          namespace,
          clientId,
        ),
        namespace,
      );
    const refused = { status: 403, reply: { error: { reason: 'tunnel_envelope_invalid' } } };
    // Another client id, another client's namespace, a client id that is a prefix or differs in case.
    for (const [receiverOf, namespace, clientId] of [
      [receiver, OTHER_NS, 'intruder'],
      [receiver, NS, 'intruder'],
      [receiver, NS, 'C'],
      [receiver, NS, 'c '],
      [newReceiver([OTHER_NS]), NS, 'c'],
      [newReceiver([]), NS, 'c'],
    ] as const) {
      const req = await put(namespace, clientId);
      expect(await receiverOf.receive(req.envelope, req.body)).toMatchObject(refused);
    }
    // Task polls are refused too, before the runtime looks anything up.
    const poll = JSON.stringify({
      method: 'tasks/get',
      args: { taskId: '00000000-0000-4000-8000-000000000000' },
      caller: { namespace: NS, clientId: 'intruder', scopes: [] },
    });
    const polled = await signed(poll);
    expect(await receiver.receive(polled.envelope, polled.body)).toMatchObject(refused);
    expect((await entries()).filter((c) => !c.startsWith('on pglite'))).toEqual([]);
    // A namespace entry serves that namespace whatever the client id says.
    const byNamespace = await put(OTHER_NS, 'whoever');
    expect((await newReceiver([OTHER_NS]).receive(byNamespace.envelope, byNamespace.body)).status).toBe(200);
    expect(await entries()).toContain('from whoever');
  });

  it("serves a person's app the edge vouches for (caller.person) only when told to serve owners (issue 29)", async () => {
    const PERSON_NS = `app:${'e'.repeat(64)}`;
    const body = () =>
      JSON.stringify({
        method: 'tools/call',
        name: 'pkgreg.memory.v1.put',
        args: { namespace: PERSON_NS, tier: 'stm', content: 'from a person' },
        caller: {
          namespace: PERSON_NS,
          clientId: 'https://claude.ai/metadata',
          scopes: ['pkgreg.memory.stm.write'],
          person: 'acct-1',
        },
      });
    const first = await signed(body(), PERSON_NS);
    expect(await newReceiver([]).receive(first.envelope, first.body)).toMatchObject({ status: 403 });
    const second = await signed(body(), PERSON_NS);
    expect((await newReceiver([], true).receive(second.envelope, second.body)).status).toBe(200);
    // A person signing in through a client the list names is not that machine client: refused unless
    // owners are served, or the person's own namespace is named.
    const throughListed = await signed(body().replace('"https://claude.ai/metadata"', '"c"'), PERSON_NS);
    expect(await newReceiver(['c']).receive(throughListed.envelope, throughListed.body)).toMatchObject({
      status: 403,
    });
    const named = await signed(body(), PERSON_NS);
    expect((await newReceiver([PERSON_NS]).receive(named.envelope, named.body)).status).toBe(200);
    // Serving owners is not serving machines: a caller without a person still needs its client named.
    const machine = await signed(
      call('pkgreg.memory.v1.put', { namespace: NS, tier: 'stm', content: 'x' }, NS, 'm'),
    );
    expect(await newReceiver([], true).receive(machine.envelope, machine.body)).toMatchObject({
      status: 403,
    });
  });

  it('expired nonces are swept', async () => {
    await db
      .insertInto('tunnel_nonces')
      .values({ session_id: SESSION, jti: 'old', expires_at: new Date(Date.now() - 60_000) })
      .execute();
    expect(await createDbNonceStore(db).sweep()).toBeGreaterThanOrEqual(1);
  });
});
