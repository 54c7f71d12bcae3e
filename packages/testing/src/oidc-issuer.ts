import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

// A local OpenID Connect issuer speaking what GitHub Actions' token service speaks: discovery at
// /.well-known/openid-configuration, its JWKS, RS256 ID tokens with the Actions claims (repository,
// repository_owner, repository_owner_id, ref, …), and the runner's token request endpoint
// (ACTIONS_ID_TOKEN_REQUEST_URL: GET with `Authorization: bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN` and
// `&audience=`, answered `{count, value}`). Keys are the test's own; tokens can be signed with a key
// outside the JWKS, expired, or for another audience, so verifiers can be tried against each.

/** The claims GitHub Actions puts in an ID token (docs.github.com, "About security hardening with OIDC"). */
export interface ActionsClaims {
  repository: string;
  repository_owner: string;
  repository_owner_id: string;
  repository_id: string;
  ref: string;
  sha: string;
  actor: string;
  actor_id: string;
  workflow: string;
  event_name: string;
  ref_type: string;
  repository_visibility: string;
  run_id: string;
  run_number: string;
  run_attempt: string;
  runner_environment: string;
  [claim: string]: unknown;
}

export interface ActionsRun {
  /** `owner/repo`. */
  repository: string;
  ownerId: number;
  repositoryId: number;
  /** Default `refs/heads/main`. */
  ref?: string;
  actor?: string;
  /** The workflow file under .github/workflows/ (default `publish.yml`). */
  workflowFile?: string;
  /** The deployment environment the job runs in (the `environment` claim), if any. */
  environment?: string;
}

/** The claim set of a workflow run of `repository` (sub as GitHub builds it). */
export function actionsClaims(run: ActionsRun): ActionsClaims & { sub: string } {
  const [owner = ''] = run.repository.split('/');
  const ref = run.ref ?? 'refs/heads/main';
  return {
    sub: `repo:${run.repository}:ref:${ref}`,
    repository: run.repository,
    repository_owner: owner,
    repository_owner_id: String(run.ownerId),
    repository_id: String(run.repositoryId),
    ref,
    sha: 'a'.repeat(40),
    actor: run.actor ?? owner,
    actor_id: String(run.ownerId),
    workflow: 'Publish skills',
    event_name: 'push',
    ref_type: ref.startsWith('refs/tags/') ? 'tag' : 'branch',
    repository_visibility: 'public',
    run_id: '4242',
    run_number: '7',
    run_attempt: '1',
    runner_environment: 'github-hosted',
    workflow_ref: `${run.repository}/.github/workflows/${run.workflowFile ?? 'publish.yml'}@${ref}`,
    job_workflow_ref: `${run.repository}/.github/workflows/${run.workflowFile ?? 'publish.yml'}@${ref}`,
    ...(run.environment ? { environment: run.environment } : {}),
  };
}

export interface GitLabJob {
  /** `group/project` (subgroups allowed). */
  project: string;
  projectId: number;
  /** Default `main`. */
  ref?: string;
  /** The CI configuration's path (default `.gitlab-ci.yml`). */
  config?: string;
  environment?: string;
  /** The instance's host (default `gitlab.com`). */
  host?: string;
}

/** The claim set of a GitLab CI job's `id_tokens:` token (docs.gitlab.com, "OpenID Connect (OIDC) ID tokens"). */
export function gitlabClaims(job: GitLabJob): Record<string, unknown> {
  const ref = job.ref ?? 'main';
  const [namespace = ''] = job.project.split('/');
  return {
    sub: `project_path:${job.project}:ref_type:branch:ref:${ref}`,
    namespace_id: '1',
    namespace_path: namespace,
    project_id: String(job.projectId),
    project_path: job.project,
    user_id: '1',
    user_login: 'gitlab-user',
    pipeline_id: '100',
    pipeline_source: 'push',
    job_id: '200',
    ref,
    ref_type: 'branch',
    ref_protected: 'true',
    ci_config_ref_uri: `${job.host ?? 'gitlab.com'}/${job.project}//${job.config ?? '.gitlab-ci.yml'}@refs/heads/${ref}`,
    ci_config_sha: 'b'.repeat(40),
    sha: 'c'.repeat(40),
    runner_environment: 'gitlab-hosted',
    ...(job.environment ? { environment: job.environment, environment_protected: 'true' } : {}),
  };
}

export interface IssueOptions {
  audience: string | string[];
  /** Seconds from now (negative: already expired). Default 300, GitHub's token lifetime is minutes. */
  expiresIn?: number;
  /**
   * `issuer`: a key of the JWKS; `foreign`: a key the JWKS never listed (its own kid); `forged`: another
   * key under the JWKS key's kid (the signature cannot verify).
   */
  signWith?: 'issuer' | 'foreign' | 'forged';
  /** `iss` to write instead of this issuer's. */
  issuer?: string;
  /** `jti` to write (default a new UUID, as GitHub does); false for none. */
  jti?: string | false;
}

/** How a job's token endpoint misbehaves, to try a client's checks of what it is given. */
export interface ActionsJobOptions {
  /** Issue tokens for this audience (or these) whatever the request asks for. */
  audience?: string | string[];
}

export interface SeenTokenRequest {
  audience: string | null;
  authorization: string | undefined;
}

export interface OidcIssuer {
  /** The issuer URL (`iss`), e.g. http://127.0.0.1:PORT. */
  readonly issuer: string;
  readonly jwksUri: string;
  /** Signs an ID token with `claims`. */
  issue(claims: Record<string, unknown>, options: IssueOptions): Promise<string>;
  /**
   * Opens the runner's token request endpoint for one job: requests bearing `requestToken` get an ID
   * token of `run` for the audience they ask. Returns the env a step would see.
   */
  actionsJob(
    run: ActionsRun,
    requestToken?: string,
    options?: ActionsJobOptions,
  ): { ACTIONS_ID_TOKEN_REQUEST_URL: string; ACTIONS_ID_TOKEN_REQUEST_TOKEN: string };
  /** Requests the token endpoint received. */
  readonly tokenRequests: SeenTokenRequest[];
  close(): Promise<void>;
}

interface KeyPair {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function keyPair(kid: string): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

function bearer(headers: IncomingHttpHeaders): string | undefined {
  const value = headers.authorization;
  const match = typeof value === 'string' ? /^bearer (.+)$/i.exec(value) : null;
  return match?.[1];
}

/** Starts the issuer on 127.0.0.1 (an ephemeral port). */
export async function startOidcIssuer(): Promise<OidcIssuer> {
  const signing = await keyPair(`test-${randomUUID().slice(0, 8)}`);
  const foreign = await keyPair(`foreign-${randomUUID().slice(0, 8)}`);
  const forged = { ...(await keyPair(signing.kid)), kid: signing.kid };
  const jobs = new Map<string, { run: ActionsRun; options: ActionsJobOptions }>();
  const tokenRequests: SeenTokenRequest[] = [];
  let issuer = '';

  async function issue(claims: Record<string, unknown>, options: IssueOptions): Promise<string> {
    const key = options.signWith === 'foreign' ? foreign : options.signWith === 'forged' ? forged : signing;
    const now = Math.floor(Date.now() / 1000);
    const expiresIn = options.expiresIn ?? 300;
    const jwt = new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
      .setIssuer(options.issuer ?? issuer)
      .setAudience(options.audience);
    if (options.jti !== false) jwt.setJti(options.jti ?? randomUUID());
    return jwt
      .setIssuedAt(Math.min(now, now + expiresIn - 60))
      .setNotBefore(Math.min(now, now + expiresIn - 60))
      .setExpirationTime(now + expiresIn)
      .sign(key.privateKey);
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://issuer');
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET') return json(405, { message: 'Method Not Allowed' });
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(200, {
        issuer,
        jwks_uri: `${issuer}/.well-known/jwks`,
        subject_types_supported: ['public', 'pairwise'],
        response_types_supported: ['id_token'],
        claims_supported: [
          'sub',
          'aud',
          'exp',
          'iat',
          'iss',
          'jti',
          'nbf',
          'ref',
          'repository',
          'repository_id',
        ],
        id_token_signing_alg_values_supported: ['RS256'],
        scopes_supported: ['openid'],
      });
    }
    if (url.pathname === '/.well-known/jwks') return json(200, { keys: [signing.publicJwk] });
    if (url.pathname === '/_actions/idtoken') {
      const audience = url.searchParams.get('audience');
      tokenRequests.push({ audience, authorization: req.headers.authorization });
      const job = jobs.get(bearer(req.headers) ?? '');
      if (!job) return json(401, { message: 'Unauthorized' });
      if (!audience) return json(400, { message: 'audience is required' });
      void issue(actionsClaims(job.run), { audience: job.options.audience ?? audience }).then(
        (value) => json(200, { count: value.length, value }),
        (error: unknown) => json(500, { message: String(error) }),
      );
      return;
    }
    json(404, { message: 'Not Found' });
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    jwksUri: `${issuer}/.well-known/jwks`,
    issue,
    tokenRequests,
    actionsJob(run, requestToken = `actions-request-${randomUUID()}`, options = {}) {
      jobs.set(requestToken, { run, options });
      return {
        // The runner's URL carries a query of its own; clients append `&audience=…`.
        ACTIONS_ID_TOKEN_REQUEST_URL: `${issuer}/_actions/idtoken?api-version=2.0`,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: requestToken,
      };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
