import type { RequestListener } from 'node:http';
import { type CreatedToken, CreatedTokenSchema } from '@pkgreg/contracts';
import request from 'supertest';
import { expect } from 'vitest';

// What every accounts test does the same way: a browser signed in with the development sign-in (its
// cookies kept), and an access token that browser creates.

/** A browser of `handle`, signed in; `origin` is the registry's (better-auth checks it on writes). */
export async function signInAs(app: RequestListener, origin: string, handle: string): Promise<request.Agent> {
  const agent = request.agent(app);
  const res = await agent.post('/api/auth/dev/sign-in').set('Origin', origin).send({ handle });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return agent;
}

/** A token the signed-in `agent` creates (30 days, named "ci"); `body` overrides any field. */
export async function createTokenAs(
  agent: request.Agent,
  origin: string,
  body: Record<string, unknown>,
): Promise<CreatedToken> {
  const res = await agent
    .post('/api/tokens')
    .set('Origin', origin)
    .send({ name: 'ci', expiresInDays: 30, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return CreatedTokenSchema.parse(res.body);
}

/** The address the development sign-in gives `handle`'s account. */
export const devEmail = (handle: string) => `${handle}@dev.pkgreg.invalid`;

/** An organisation `slug` the signed-in `owner` creates through better-auth's endpoint; its id. */
export async function createOrganisation(
  owner: request.Agent,
  origin: string,
  slug: string,
): Promise<string> {
  const res = await owner
    .post('/api/auth/organization/create')
    .set('Origin', origin)
    .send({ name: slug, slug });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as { id: string }).id;
}

/** `member`, signed in as `handle`, joins the organisation with `role`: invited by `admin`, then accepting. */
export async function joinOrganisation(
  admin: request.Agent,
  member: request.Agent,
  origin: string,
  organizationId: string,
  handle: string,
  role: string,
): Promise<void> {
  const invited = await admin
    .post('/api/auth/organization/invite-member')
    .set('Origin', origin)
    .send({ email: devEmail(handle), role, organizationId });
  expect(invited.status, JSON.stringify(invited.body)).toBe(200);
  const accepted = await member
    .post('/api/auth/organization/accept-invitation')
    .set('Origin', origin)
    .send({ invitationId: invited.body.id });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
}

/** `admin` removes the member signed in as `handle` from the organisation (better-auth's remove-member). */
export async function removeMember(
  admin: request.Agent,
  origin: string,
  organizationId: string,
  handle: string,
): Promise<void> {
  const res = await admin
    .post('/api/auth/organization/remove-member')
    .set('Origin', origin)
    .send({ memberIdOrEmail: devEmail(handle), organizationId });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}
