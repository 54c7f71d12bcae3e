import { randomUUID } from 'node:crypto';
import { deriveDelegatedNamespace } from '@pkgreg/contracts';
import { insertAccounts, insertOrganisation } from '@pkgreg/db/testing';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeOwner, setOwner } from '../src/admission/access.repository.js';
import { createHarness, eventually, forgeToken, type Harness, ISSUER, resourceOf, rpc } from './helpers.js';
import { listenReceiver, type TestReceiver } from './tunnel-receiver.js';

// Issue 29: a hosted tenant or tunnel session bound to a person or an organisation serves the apps that
// person (or each member of that organisation) signed in with, and no one else's; whoever else asks is
// answered as at a host that maps to nothing. Membership and ownership changes apply within the edge's
// EDGE_ACCESS_MAX_AGE_MS (100 ms), on every edge. The
// session's local runtime serves the people the edge vouches for only when its user said so
// (--serve-owners). Tokens are the edge's own delegated ones (`sub` = the person, `client_id` = the app).

const SECRET = 'o'.repeat(40);
const TENANT = 'team.mcp.example.com';
const TUNNEL = 'ada.tunnel.example.com';
let h: Harness;
let receiver: TestReceiver;
const ada = randomUUID();
const grace = randomUUID();
const linus = randomUUID();
const org = randomUUID();

async function member(accountId: string): Promise<void> {
  await sql`insert into auth_member ("id", "organizationId", "userId", "role", "createdAt")
    values (${randomUUID()}, ${org}, ${accountId}, 'reader', now())`.execute(h.t.db);
}

beforeAll(async () => {
  receiver = await listenReceiver();
  h = await createHarness({
    PKGREG_PUBLIC_MCP_HOSTED_BINDINGS_JSON: JSON.stringify([{ host: TENANT, tenant: 'team' }]),
    PKGREG_PUBLIC_MCP_TUNNEL_SESSIONS_JSON: JSON.stringify([
      { host: TUNNEL, sessionId: 'ada-sess', target: receiver.target, secret: SECRET },
    ]),
  });
  await insertAccounts(h.t.db, [ada, grace, linus]);
  await insertOrganisation(h.t.db, { id: org, name: 'Team', slug: 'team', members: { [grace]: 'reader' } });
  await receiver.serve(h, {
    sessionId: 'ada-sess',
    secret: SECRET,
    schema: 'ada_store',
    allowedClients: [],
    servesOwners: true,
  });
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

/** A person's app at `host`: the status of tools/list (200 served, 421 as for a host serving nothing). */
async function listStatus(host: string, person: string, clientId = 'dcr_app'): Promise<number> {
  const token = await forgeToken(h, { subject: person, clientId, aud: resourceOf(host) });
  return (await rpc(h, token, 'tools/list', {}, { headers: { Host: host } })).status;
}

/** listStatus once the changes made so far have reached the edge (within EDGE_ACCESS_MAX_AGE_MS). */
const expectStatus = (host: string, person: string, status: number, clientId?: string) =>
  eventually(async () => expect(await listStatus(host, person, clientId)).toBe(status));

describe('a tenant or session with an owner serves its people', () => {
  it('without an owner, nobody signed in is served; an account owner is, with any app, and no one else', async () => {
    await expectStatus(TUNNEL, ada, 421);
    await setOwner(h.t.db, { mode: 'local_tunnel', backendId: 'ada-sess', accountId: ada });
    await expectStatus(TUNNEL, ada, 200);
    await expectStatus(TUNNEL, ada, 200, 'https://claude.ai/oauth/metadata');
    await expectStatus(TUNNEL, grace, 421);
    // A machine client is not a person: its own grants decide, as before.
    const machine = await forgeToken(h, { clientId: 'pkc_machine', aud: resourceOf(TUNNEL) });
    expect((await rpc(h, machine, 'tools/list', {}, { headers: { Host: TUNNEL } })).status).toBe(421);
  });

  it("the session's local runtime runs the owner's calls (it serves owners), in the owner's namespace", async () => {
    const token = await forgeToken(h, { subject: ada, clientId: 'dcr_app', aud: resourceOf(TUNNEL) });
    const namespace = deriveDelegatedNamespace(ISSUER, 'dcr_app', ada);
    const put = await rpc(
      h,
      token,
      'tools/call',
      { name: 'pkgreg.memory.v1.put', arguments: { namespace, tier: 'stm', content: 'on my machine' } },
      { headers: { Host: TUNNEL } },
    );
    expect(put.body.result.entry).toMatchObject({ tier: 'stm', status: 'active' });
    const stored = await receiver.db
      .selectFrom('memory_entries')
      .select('namespace')
      .where('namespace', '=', namespace)
      .execute();
    expect(stored).toHaveLength(1);
  });

  it('an organisation owner: each member is served within the bound as they join and leave, not while suspended', async () => {
    await setOwner(h.t.db, { mode: 'hosted', backendId: 'team', organizationId: org });
    await expectStatus(TENANT, grace, 200);
    await expectStatus(TENANT, linus, 421);
    await member(linus);
    await expectStatus(TENANT, linus, 200);
    await sql`delete from auth_member where "userId" = ${linus}`.execute(h.t.db);
    await expectStatus(TENANT, linus, 421);
    await sql`update auth_organization set "suspendedAt" = now() where "id" = ${org}`.execute(h.t.db);
    await expectStatus(TENANT, grace, 421);
    await sql`update auth_organization set "suspendedAt" = null where "id" = ${org}`.execute(h.t.db);
    await expectStatus(TENANT, grace, 200);
  });

  it('disowned: its people are refused within the bound; a token for another host is not one for this', async () => {
    expect(await removeOwner(h.t.db, 'hosted', 'team')).toBe(true);
    await expectStatus(TENANT, grace, 421);
    await setOwner(h.t.db, { mode: 'hosted', backendId: 'team', accountId: ada });
    const elsewhere = await forgeToken(h, { subject: ada, clientId: 'dcr_app', aud: resourceOf(TUNNEL) });
    // ada is served at TENANT (once the change has reached the edge), so only the audience is wrong.
    await eventually(async () =>
      expect((await rpc(h, elsewhere, 'tools/list', {}, { headers: { Host: TENANT } })).status).toBe(401),
    );
  });
});
