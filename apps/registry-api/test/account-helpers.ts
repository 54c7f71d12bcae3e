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
