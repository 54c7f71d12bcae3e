import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeGitHub, type OidcIssuer, pushEvent, signWebhook, startOidcIssuer } from '../src/index.js';

// The test servers speak what their real counterparts speak: a token of the issuer verifies with jose
// against the JWKS its discovery document names; GitHub's permission answers follow the user's grade.

let issuer: OidcIssuer;
let gh: FakeGitHub;

beforeAll(async () => {
  issuer = await startOidcIssuer();
  gh = new FakeGitHub();
  await gh.start();
});
afterAll(async () => {
  await issuer?.close();
  await gh?.stop();
});

describe('OIDC issuer', () => {
  it('serves discovery and a JWKS its tokens verify against; foreign keys do not verify', async () => {
    const discovery = (await (await fetch(`${issuer.issuer}/.well-known/openid-configuration`)).json()) as {
      jwks_uri: string;
    };
    expect(discovery).toMatchObject({ issuer: issuer.issuer, jwks_uri: issuer.jwksUri });
    const keys = createRemoteJWKSet(new URL(discovery.jwks_uri));
    const token = await issuer.issue({ repository: 'o/r' }, { audience: 'https://aud.example' });
    const { payload } = await jwtVerify(token, keys, {
      issuer: issuer.issuer,
      audience: 'https://aud.example',
    });
    expect(payload.repository).toBe('o/r');
    const foreign = await issuer.issue({}, { audience: 'https://aud.example', signWith: 'foreign' });
    await expect(jwtVerify(foreign, keys)).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    const forged = await issuer.issue({}, { audience: 'https://aud.example', signWith: 'forged' });
    await expect(jwtVerify(forged, keys)).rejects.toMatchObject({
      code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
    });
  });

  it("answers the Actions runner's token request for the job's bearer only, with the audience asked", async () => {
    const env = issuer.actionsJob({ repository: 'octo/skills', ownerId: 7, repositoryId: 70 });
    const url = `${env.ACTIONS_ID_TOKEN_REQUEST_URL}&audience=${encodeURIComponent('https://r.example')}`;
    const refused = await fetch(url, { headers: { authorization: 'bearer nope' } });
    expect(refused.status).toBe(401);
    const res = await fetch(url, {
      headers: { authorization: `bearer ${env.ACTIONS_ID_TOKEN_REQUEST_TOKEN}` },
    });
    const { value } = (await res.json()) as { value: string };
    const { payload } = await jwtVerify(value, createRemoteJWKSet(new URL(issuer.jwksUri)), {
      audience: 'https://r.example',
    });
    expect(payload).toMatchObject({
      repository: 'octo/skills',
      repository_owner_id: '7',
      ref: 'refs/heads/main',
    });
  });
});

describe('GitHub REST stand-in', () => {
  it('answers permissions per user token, 401 for a revoked one, 404 for a private repository unseen', async () => {
    gh.addRepo({
      owner: 'octo',
      name: 'skills',
      defaultBranch: 'main',
      stars: 0,
      license: null,
      homepage: null,
      files: {},
    });
    gh.addRepo({
      owner: 'octo',
      name: 'secret',
      private: true,
      defaultBranch: 'main',
      stars: 0,
      license: null,
      homepage: null,
      files: {},
    });
    gh.addUser('ghu_push', 'dev', { 'octo/skills': 'push' });
    gh.addUser('ghu_gone', 'dev2');
    gh.revoked.add('ghu_gone');
    const get = (path: string, token?: string) =>
      fetch(`${gh.apiUrl}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    const repo = await (await get('/repos/octo/skills', 'ghu_push')).json();
    expect(repo).toMatchObject({
      full_name: 'octo/skills',
      owner: { login: 'octo', id: gh.accountId('octo') },
      permissions: { admin: false, maintain: false, push: true, triage: true, pull: true },
    });
    expect(
      ((await (await get('/repos/octo/skills')).json()) as { permissions?: unknown }).permissions,
    ).toBeUndefined();
    expect((await get('/repos/octo/skills', 'ghu_gone')).status).toBe(401);
    expect((await get('/repos/octo/secret', 'ghu_push')).status).toBe(404);
  });

  it('a renamed account keeps its id and redirects; a new account on the freed login has another id', async () => {
    const id = gh.accountId('octo');
    gh.renameOwner('octo', 'octocat');
    expect(gh.accountId('octocat')).toBe(id);
    const moved = await fetch(`${gh.apiUrl}/repos/octo/skills`, { redirect: 'manual' });
    expect(moved.status).toBe(301);
    expect(gh.takeLogin('octo')).not.toBe(id);
  });

  it('a transferred repository keeps its id under its new owner; /repositories/{id} answers it', async () => {
    gh.addRepo({
      owner: 'ann',
      name: 'kit',
      defaultBranch: 'main',
      stars: 0,
      license: null,
      homepage: null,
      files: {},
    });
    const id = gh.repoId('ann', 'kit');
    gh.transfer('ann/kit', 'bob');
    expect(gh.repoId('bob', 'kit')).toBe(id);
    const byId = (await (await fetch(`${gh.apiUrl}/repositories/${id}`)).json()) as {
      id: number;
      full_name: string;
      owner: { id: number };
    };
    expect(byId).toMatchObject({ id, full_name: 'bob/kit', owner: { id: gh.accountId('bob') } });
    const moved = await fetch(`${gh.apiUrl}/repos/ann/kit`, { redirect: 'manual' });
    expect([moved.status, moved.headers.get('location')]).toEqual([301, `${gh.apiUrl}/repositories/${id}`]);
  });

  it('an Actions job can be made to answer another audience than the one asked', async () => {
    const env = issuer.actionsJob({ repository: 'o/r', ownerId: 1, repositoryId: 2 }, undefined, {
      audience: 'https://elsewhere.example',
    });
    const url = `${env.ACTIONS_ID_TOKEN_REQUEST_URL}&audience=${encodeURIComponent('https://asked.example')}`;
    const res = await fetch(url, {
      headers: { authorization: `bearer ${env.ACTIONS_ID_TOKEN_REQUEST_TOKEN}` },
    });
    const { value } = (await res.json()) as { value: string };
    const { payload } = await jwtVerify(value, createRemoteJWKSet(new URL(issuer.jwksUri)));
    expect(payload.aud).toBe('https://elsewhere.example');
  });

  it('two pushes never have the same body; a head commit can be chosen', () => {
    const repo = { fullName: 'o/r', id: 1, ownerId: 2 };
    expect(JSON.stringify(pushEvent(repo))).not.toBe(JSON.stringify(pushEvent(repo)));
    expect(pushEvent(repo, undefined, 'c'.repeat(40)).after).toBe('c'.repeat(40));
  });

  it('webhook payloads are signed over the bytes sent', () => {
    const body = JSON.stringify(pushEvent({ fullName: 'o/r', id: 1, ownerId: 2 }));
    expect(signWebhook('s3cret', body)).toMatch(/^sha256=[0-9a-f]{64}$/);
  });
});
