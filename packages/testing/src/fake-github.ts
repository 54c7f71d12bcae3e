import { createHash, randomBytes } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { pack as tarPack } from 'tar-stream';
import { gitBlobSha } from './git-blob-sha.js';

// A local stand-in for GitHub's REST API (the documented shapes of GET /repos/{o}/{r},
// /branches/{branch} with its commit's author and committer, /git/trees/{sha}?recursive=1,
// /git/blobs/{sha} and /tarball/{ref}, which redirects to a download host that takes no token), with
// ETags, 304s and rate-limit headers.
//
// Accounts have numeric ids as on GitHub: an owner renamed keeps its id, and a new account taking the
// freed login gets another. User tokens (`addUser`) see `permissions` on GET /repos/{o}/{r} (admin,
// maintain, push, triage, pull) as GitHub answers them for the token's user; a revoked token is 401
// `Bad credentials`; a private repository is 404 to anyone who cannot pull it. Any other token is taken
// as an app token that reads public repositories (what the indexer sends).
//
// GitHub's OAuth web flow for sign-in, without a UI: GET /login/oauth/authorize redirects straight back
// to the app's callback with a code for the user the test chose (`nextOAuthLogin`, else the `login`
// parameter), or with `error=access_denied`; POST /login/oauth/access_token checks the app's
// credentials, the single-use code (10 minutes), the redirect_uri and the PKCE S256 verifier, and
// answers GitHub's error bodies with 200 as GitHub does. The token it issues is a user token like
// `addUser`'s, also good for GET /user, /user/emails, /user/orgs and /user/memberships/orgs/{org}. The
// login endpoints live at the server's root and the API under the prefix, as on GitHub Enterprise.

/** A file with a mode: `100755` executable, `120000` a symbolic link whose content is its target. */
export interface FakeFile {
  content: string | Buffer;
  mode: '100644' | '100755' | '120000';
}

export interface FakeRepo {
  owner: string;
  name: string;
  /** The owner's account id; default: the id the fake holds for the login (created on first use). */
  ownerId?: number;
  /** Only users with at least pull permission see it (others get 404, as on GitHub). */
  private?: boolean;
  defaultBranch: string;
  stars: number;
  license: string | null;
  homepage: string | null;
  files: Record<string, string | FakeFile>;
  truncated?: boolean;
  /**
   * The head commit's committer date (ISO 8601), as the branch answers it; default: when the fake first
   * answered for that commit (a commit's date never moves once seen, as on GitHub).
   */
  committedAt?: string;
}

function fileOf(value: string | FakeFile): FakeFile {
  return typeof value === 'string' ? { content: value, mode: '100644' } : value;
}

function bytesOf(value: string | FakeFile): Buffer {
  const { content } = fileOf(value);
  return typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
}

/** The recursive tree GitHub would list for the repository's files, and its (stable) SHA. */
function treeOf(repo: FakeRepo): { sha: string; tree: Array<Record<string, unknown>> } {
  const dirs = new Set<string>();
  for (const path of Object.keys(repo.files)) {
    const segs = path.split('/');
    for (let i = 1; i < segs.length; i += 1) dirs.add(segs.slice(0, i).join('/'));
  }
  const tree = [
    ...[...dirs].map((path) => ({ path, mode: '040000', type: 'tree', sha: sha1(`tree:${path}`) })),
    ...Object.entries(repo.files).map(([path, value]) => ({
      path,
      mode: fileOf(value).mode,
      type: 'blob',
      sha: gitBlobSha(bytesOf(value)),
      size: bytesOf(value).length,
    })),
  ].sort((a, b) => a.path.localeCompare(b.path));
  return { sha: sha1(JSON.stringify(tree)), tree };
}

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/** The repository as GitHub's tarball: everything under `<owner>-<repo>-<sha7>/`. */
async function tarballOf(repo: FakeRepo, commit: string): Promise<Buffer> {
  const pack = tarPack();
  const chunks: Buffer[] = [];
  pack.on('data', (chunk) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve) => pack.on('end', () => resolve()));
  const top = `${repo.owner}-${repo.name}-${commit.slice(0, 7)}`;
  for (const [path, value] of Object.entries(repo.files)) {
    const file = fileOf(value);
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (file.mode === '120000') {
        pack.entry(
          { name: `${top}/${path}`, type: 'symlink', linkname: bytesOf(value).toString('utf8') },
          done,
        );
      } else {
        const mode = file.mode === '100755' ? 0o755 : 0o644;
        pack.entry({ name: `${top}/${path}`, mode }, bytesOf(value), done);
      }
    });
  }
  pack.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

/** A repository permission as GitHub's `permissions` object grades it. */
export type RepoPermission = 'admin' | 'maintain' | 'push' | 'triage' | 'pull' | 'none';

const GRADES: RepoPermission[] = ['none', 'pull', 'triage', 'push', 'maintain', 'admin'];

/** GitHub's `permissions` object for a grade: each one includes those below it. */
function permissionsOf(grade: RepoPermission): Record<Exclude<RepoPermission, 'none'>, boolean> {
  const at = GRADES.indexOf(grade);
  return {
    admin: at >= GRADES.indexOf('admin'),
    maintain: at >= GRADES.indexOf('maintain'),
    push: at >= GRADES.indexOf('push'),
    triage: at >= GRADES.indexOf('triage'),
    pull: at >= GRADES.indexOf('pull'),
  };
}

/** A GitHub user behind a token, with a permission per repository (`owner/name`, any case). */
export interface FakeUser {
  login: string;
  id: number;
  permissions: Record<string, RepoPermission>;
}

/** An OAuth app registered on GitHub: where its users are sent back to and how it authenticates. */
export interface FakeOAuthApp {
  clientId: string;
  clientSecret: string;
  /** The registered callback URL; a redirect_uri must be it or a path below it on the same host. */
  callbackUrl: string;
}

/** What GET /user and /user/emails answer for a login (defaults: name = login, a verified email). */
export interface FakeProfile {
  name?: string | null;
  /** The public email GET /user shows; default the primary email. */
  email?: string | null;
  emails?: Array<{
    email: string;
    primary: boolean;
    verified: boolean;
    visibility?: 'public' | 'private' | null;
  }>;
}

/** The next authorization's outcome: a login signs in, an error is sent back to the app. */
export type OAuthLoginChoice = string | { error: 'access_denied' | 'application_suspended' };

interface IssuedCode {
  clientId: string;
  login: string;
  redirectUri: string | null;
  scope: string;
  codeChallenge: string | null;
  expiresAt: number;
}

const TROUBLESHOOT = 'https://docs.github.com/apps/managing-oauth-apps';
const OAUTH_ERRORS = {
  incorrect_client_credentials: 'The client_id and/or client_secret passed are incorrect.',
  redirect_uri_mismatch: 'The redirect_uri MUST match the registered callback URL for this application.',
  bad_verification_code: 'The code passed is incorrect or expired.',
  access_denied: 'The user has denied your application access.',
  application_suspended: 'Your application has been suspended. Contact support@github.com.',
} as const;

/** Whether `redirectUri` is allowed for the callback: same host and port, the same path or one below it. */
function redirectAllowed(redirectUri: string, callbackUrl: string): boolean {
  let asked: URL;
  try {
    asked = new URL(redirectUri);
  } catch {
    return false;
  }
  const registered = new URL(callbackUrl);
  const base = registered.pathname.replace(/\/$/, '');
  return (
    asked.protocol === registered.protocol &&
    asked.host === registered.host &&
    (asked.pathname === registered.pathname || asked.pathname.startsWith(`${base}/`))
  );
}

async function formOrJson(req: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if ((req.headers['content-type'] ?? '').includes('application/json')) {
    const parsed = JSON.parse(text || '{}') as Record<string, unknown>;
    return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
  }
  return Object.fromEntries(new URLSearchParams(text));
}

export interface RateLimitScript {
  /** How many upcoming requests get the rate-limited answer. */
  count: number;
  status: 403 | 429;
  /** Seconds until x-ratelimit-reset (403 form). */
  resetInSeconds?: number;
  /** retry-after seconds (429 form). */
  retryAfter?: number;
}

const etagOf = (value: unknown) => `W/"${createHash('sha1').update(JSON.stringify(value)).digest('hex')}"`;

/** A commit SHA for a tree (the fake has one commit per tree state). */
function commitOf(treeSha: string): string {
  return sha1(`commit:${treeSha}`);
}

export class FakeGitHub {
  readonly repos = new Map<string, FakeRepo>();
  /** Old `owner/name` (lowercased) -> current key, answered with a 301 as GitHub does after a rename. */
  readonly renamed = new Map<string, string>();
  private readonly ids = new Map<string, number>();
  /** Committer dates of commits seen without `committedAt`, by commit SHA. */
  private readonly commitDates = new Map<string, string>();
  /** Account ids by login (lowercased); a renamed account moves, a taken login gets a new id. */
  private readonly accounts = new Map<string, number>();
  private nextAccountId = 1000;
  private nextRepoId = 500_000;
  /** User tokens: who they belong to and what they may do. */
  readonly users = new Map<string, FakeUser>();
  /** Tokens GitHub no longer accepts (401 Bad credentials). */
  readonly revoked = new Set<string>();
  readonly requests: SeenRequest[] = [];
  /** Remaining budget reported in x-ratelimit-remaining (decremented per non-304 answer). */
  remaining = 5000;
  resetAt = Math.floor(Date.now() / 1000) + 3600;
  rateLimit: RateLimitScript | null = null;
  private server: Server | null = null;
  private base = '';
  /** OAuth apps by client id. */
  readonly oauthApps = new Map<string, FakeOAuthApp>();
  /** Scopes granted to each OAuth token (tokens from addUser have none and are not scope-checked). */
  private readonly tokenScopes = new Map<string, string[]>();
  private readonly codes = new Map<string, IssuedCode>();
  private readonly profiles = new Map<string, FakeProfile>();
  /** Organisations by lowercased login: the login as written and member (lowercased login) -> role. */
  private readonly orgs = new Map<string, { login: string; members: Map<string, 'admin' | 'member'> }>();
  private nextLogin: OAuthLoginChoice | null = null;

  constructor(
    /** Path prefix of the API (GitHub Enterprise serves it under /api/v3). */
    readonly prefix = '',
    /** Web base used for html_url. */
    readonly webUrl = 'https://github.example',
  ) {}

  addRepo(repo: FakeRepo): void {
    const key = `${repo.owner}/${repo.name}`.toLowerCase();
    repo.ownerId ??= this.accountId(repo.owner);
    this.accounts.set(repo.owner.toLowerCase(), repo.ownerId);
    this.repos.set(key, repo);
    this.ids.set(key, this.nextRepoId++);
  }

  /** The id of the account holding `login`, created when the login is new. */
  accountId(login: string): number {
    const key = login.toLowerCase();
    let id = this.accounts.get(key);
    if (id === undefined) {
      id = this.nextAccountId++;
      this.accounts.set(key, id);
    }
    return id;
  }

  /**
   * A new account (new id) takes `login`, e.g. after its owner renamed away from it. Its repositories are
   * added with addRepo afterwards.
   */
  takeLogin(login: string): number {
    const id = this.nextAccountId++;
    this.accounts.set(login.toLowerCase(), id);
    return id;
  }

  /** The repository's id, as GET /repos/{o}/{r} answers it. */
  repoId(owner: string, name: string): number {
    const id = this.ids.get(`${owner}/${name}`.toLowerCase());
    if (id === undefined) throw new Error(`no repo ${owner}/${name}`);
    return id;
  }

  /** A user token: GET /repos/{o}/{r} with it answers `permissions` for `login`'s grades. */
  addUser(token: string, login: string, permissions: Record<string, RepoPermission> = {}): FakeUser {
    const user: FakeUser = { login, id: this.accountId(login), permissions };
    this.users.set(token, user);
    return user;
  }

  /**
   * Renames an account, as GitHub does: same id, new login; its repositories answer under the new name
   * and their old names redirect (301 to /repositories/{id}) until someone takes the old login and
   * creates a repository of that name.
   */
  renameOwner(oldLogin: string, newLogin: string): void {
    const id = this.accounts.get(oldLogin.toLowerCase());
    if (id === undefined) throw new Error(`no account ${oldLogin}`);
    this.accounts.delete(oldLogin.toLowerCase());
    this.accounts.set(newLogin.toLowerCase(), id);
    for (const [key, repo] of [...this.repos]) {
      if (repo.ownerId !== id) continue;
      const repoId = this.ids.get(key) as number;
      this.repos.delete(key);
      repo.owner = newLogin;
      const next = `${repo.owner}/${repo.name}`.toLowerCase();
      this.repos.set(next, repo);
      this.ids.set(next, repoId);
      this.renamed.set(key, next);
    }
    for (const user of this.users.values()) {
      if (user.id === id) user.login = newLogin;
      for (const [repoKey, grade] of Object.entries(user.permissions)) {
        const [owner, name] = repoKey.split('/');
        if (owner?.toLowerCase() === oldLogin.toLowerCase()) user.permissions[`${newLogin}/${name}`] = grade;
      }
    }
  }

  /**
   * Transfers a repository to another account, as GitHub does: same repository id, the new owner's
   * login and account id; the old name redirects (301) to `/repositories/{id}`.
   */
  transfer(oldKey: string, newOwner: string): void {
    this.move(oldKey, (repo) => {
      repo.owner = newOwner;
      repo.ownerId = this.accountId(newOwner);
    });
  }

  /** Renames a repository: the old name then redirects (301) to `/repositories/{id}`. */
  rename(oldKey: string, newName: string): void {
    this.move(oldKey, (repo) => {
      repo.name = newName;
    });
  }

  /** The repository under a new `owner/name`, with its id; the old one redirects. */
  private move(oldKey: string, change: (repo: FakeRepo) => void): void {
    const repo = this.repos.get(oldKey);
    if (!repo) throw new Error(`no repo ${oldKey}`);
    const id = this.ids.get(oldKey) as number;
    this.repos.delete(oldKey);
    this.ids.delete(oldKey);
    change(repo);
    const key = `${repo.owner}/${repo.name}`.toLowerCase();
    this.repos.set(key, repo);
    this.ids.set(key, id);
    this.renamed.set(oldKey, key);
  }

  addOAuthApp(app: FakeOAuthApp): void {
    this.oauthApps.set(app.clientId, app);
  }

  /** Who signs in at the next authorization (used once, ahead of the `login` parameter), or an error. */
  nextOAuthLogin(choice: OAuthLoginChoice): void {
    this.nextLogin = choice;
  }

  /** Sets what GET /user and /user/emails answer for `login`. */
  setProfile(login: string, profile: FakeProfile): void {
    this.profiles.set(login.toLowerCase(), profile);
  }

  /** Makes `login` an active member of the organisation `org` (its account id comes from accountId). */
  addOrgMember(org: string, login: string, role: 'admin' | 'member' = 'member'): void {
    const entry = this.orgs.get(org.toLowerCase()) ?? { login: org, members: new Map() };
    entry.members.set(login.toLowerCase(), role);
    this.orgs.set(org.toLowerCase(), entry);
    this.accountId(org);
  }

  /** Ends a membership (GET /user/memberships/orgs/{org} is then 404). */
  removeOrgMember(org: string, login: string): void {
    this.orgs.get(org.toLowerCase())?.members.delete(login.toLowerCase());
  }

  /** The server's root, where /login/oauth/authorize and /login/oauth/access_token are. */
  get webBase(): string {
    return this.base;
  }

  get apiUrl(): string {
    return `${this.base}${this.prefix}`;
  }

  /** The download host's stand-in: another origin (localhost, not 127.0.0.1), as codeload is. */
  get downloadBase(): string {
    return `${this.base.replace('127.0.0.1', 'localhost')}/_codeload`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const path = req.url ?? '/';
      this.requests.push({ method: req.method ?? 'GET', path, headers: req.headers });
      if (path.startsWith('/_codeload/')) {
        void this.download(path, res);
        return;
      }
      if (path.startsWith('/login/oauth/authorize')) {
        this.authorize(path, res);
        return;
      }
      if (path.startsWith('/login/oauth/access_token') && req.method === 'POST') {
        this.accessToken(req, res).catch((error: unknown) => {
          this.send(res, 400, { message: (error as Error).message });
        });
        return;
      }
      this.handle(path, req.headers, res);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.base = `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** GitHub's authorize page, already answered: back to the app with a code or an error. */
  private authorize(rawPath: string, res: ServerResponse): void {
    const params = new URL(rawPath, 'http://fake').searchParams;
    const app = this.oauthApps.get(params.get('client_id') ?? '');
    if (!app) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    const state = params.get('state');
    const redirectUri = params.get('redirect_uri');
    const back = (query: Record<string, string>, to = redirectUri ?? app.callbackUrl): void => {
      const location = new URL(to);
      for (const [key, value] of Object.entries(query)) location.searchParams.set(key, value);
      if (state !== null) location.searchParams.set('state', state);
      res.writeHead(302, { location: location.href }).end();
    };
    const fail = (error: keyof typeof OAUTH_ERRORS, to?: string): void =>
      back(
        {
          error,
          error_description: OAUTH_ERRORS[error],
          error_uri: `${TROUBLESHOOT}/troubleshooting-authorization-request-errors/#${error.replaceAll('_', '-')}`,
        },
        to,
      );
    // A redirect_uri GitHub will not send to gets the error at the registered callback instead.
    if (redirectUri !== null && !redirectAllowed(redirectUri, app.callbackUrl)) {
      fail('redirect_uri_mismatch', app.callbackUrl);
      return;
    }
    const challenge = params.get('code_challenge');
    const method = params.get('code_challenge_method');
    if (challenge !== null && method !== 'S256') {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('code_challenge_method must be S256');
      return;
    }
    const choice = this.nextLogin ?? params.get('login');
    this.nextLogin = null;
    if (choice === null) {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('fake GitHub: no user chosen (nextOAuthLogin or login)');
      return;
    }
    if (typeof choice !== 'string') {
      fail(choice.error);
      return;
    }
    const code = randomBytes(10).toString('hex');
    this.codes.set(code, {
      clientId: app.clientId,
      login: choice,
      redirectUri,
      scope: params.get('scope') ?? '',
      codeChallenge: challenge,
      expiresAt: Date.now() + 10 * 60_000,
    });
    back({ code });
  }

  /** Exchanges a code for a user token, answering errors as GitHub does (200 with an `error` body). */
  private async accessToken(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await formOrJson(req);
    // Credentials may come as Basic authentication instead of in the body.
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const [basicId, basicSecret] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':') : [];
    const clientId = body.client_id ?? basicId ?? '';
    const clientSecret = body.client_secret ?? basicSecret ?? '';
    const json = (req.headers.accept ?? '').includes('application/json');
    const answer = (fields: Record<string, string>): void => {
      if (json) {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(fields));
      } else {
        res
          .writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' })
          .end(new URLSearchParams(fields).toString());
      }
    };
    const fail = (error: keyof typeof OAUTH_ERRORS, description: string = OAUTH_ERRORS[error]): void =>
      answer({
        error,
        error_description: description,
        error_uri: `${TROUBLESHOOT}/troubleshooting-oauth-app-access-token-request-errors/#${error.replaceAll('_', '-')}`,
      });
    const app = this.oauthApps.get(clientId);
    if (!app || app.clientSecret !== clientSecret) return fail('incorrect_client_credentials');
    const issued = this.codes.get(body.code ?? '');
    // A code is good once: whatever follows, it is spent.
    this.codes.delete(body.code ?? '');
    if (!issued || issued.clientId !== clientId || issued.expiresAt <= Date.now()) {
      return fail('bad_verification_code');
    }
    if (body.redirect_uri !== undefined && body.redirect_uri !== (issued.redirectUri ?? app.callbackUrl)) {
      return fail('redirect_uri_mismatch');
    }
    if (issued.codeChallenge !== null) {
      // GitHub does not document its PKCE failure; a spent code that cannot be redeemed is the closest.
      const verifier = body.code_verifier ?? '';
      const computed = createHash('sha256').update(verifier).digest('base64url');
      if (computed !== issued.codeChallenge) {
        return fail('bad_verification_code', 'The code_verifier does not match the code_challenge.');
      }
    }
    const token = `gho_${randomBytes(27).toString('base64url').replace(/[-_]/g, '0').slice(0, 36)}`;
    const existing = [...this.users.values()].find(
      (u) => u.login.toLowerCase() === issued.login.toLowerCase(),
    );
    this.users.set(token, {
      login: existing?.login ?? issued.login,
      id: this.accountId(issued.login),
      permissions: existing?.permissions ?? {},
    });
    // GitHub lists granted scopes comma-separated, though they are asked for space-separated.
    const scopes = issued.scope.split(/[\s,]+/).filter(Boolean);
    this.tokenScopes.set(token, scopes);
    answer({ access_token: token, token_type: 'bearer', scope: scopes.join(',') });
  }

  private profileOf(user: FakeUser) {
    const profile = this.profiles.get(user.login.toLowerCase()) ?? {};
    const emails = (
      profile.emails ?? [
        { email: `${user.login.toLowerCase()}@users.example`, primary: true, verified: true },
      ]
    ).map((e) => ({ visibility: e.primary ? 'public' : null, ...e }));
    const primary = emails.find((e) => e.primary)?.email ?? null;
    return {
      user: {
        login: user.login,
        id: user.id,
        node_id: Buffer.from(`04:User${user.id}`).toString('base64'),
        avatar_url: `https://avatars.github.example/u/${user.id}?v=4`,
        html_url: `${this.webUrl}/${user.login}`,
        type: 'User',
        site_admin: false,
        name: profile.name === undefined ? user.login : profile.name,
        email: profile.email === undefined ? primary : profile.email,
      },
      emails,
    };
  }

  private orgOf(login: string) {
    const id = this.accountId(login);
    return {
      login,
      id,
      url: `${this.apiUrl}/orgs/${login}`,
      avatar_url: `https://avatars.github.example/u/${id}?v=4`,
      description: null,
    };
  }

  /** GET /user and below, for a user token; undefined when the path is not one of them. */
  private userApi(parts: string[], headers: IncomingHttpHeaders, res: ServerResponse): boolean | undefined {
    if (parts[1] !== 'user') return undefined;
    const user = this.userOf(headers);
    if (!user || user === 'revoked') {
      return this.send(res, 401, {
        message: 'Requires authentication',
        documentation_url: 'https://docs.github.com/rest',
      });
    }
    const token = /^(?:Bearer|token) (.+)$/i.exec(String(headers.authorization))?.[1] ?? '';
    const scopes = this.tokenScopes.get(token);
    const extra: Record<string, string> = scopes ? { 'x-oauth-scopes': scopes.join(', ') } : {};
    const has = (...wanted: string[]) => !scopes || wanted.some((w) => scopes.includes(w));
    const { user: profile, emails } = this.profileOf(user);
    if (parts.length === 2) return this.send(res, 200, profile, extra);
    if (parts[2] === 'emails' && parts.length === 3) {
      // Without the scope GitHub answers as if the resource did not exist.
      if (!has('user', 'user:email')) return this.send(res, 404, { message: 'Not Found' }, extra);
      return this.send(res, 200, emails, extra);
    }
    const memberOf = [...this.orgs.values()]
      .filter(({ members }) => members.has(user.login.toLowerCase()))
      .map(({ login, members }) => ({
        org: this.orgOf(login),
        role: members.get(user.login.toLowerCase()) as 'admin' | 'member',
      }));
    if (parts[2] === 'orgs' && parts.length === 3) {
      return this.send(
        res,
        200,
        memberOf.map(({ org }) => org),
        extra,
      );
    }
    if (parts[2] === 'memberships' && parts[3] === 'orgs' && parts[4] && parts.length === 5) {
      const found = memberOf.find(({ org }) => org.login.toLowerCase() === parts[4]?.toLowerCase());
      if (!found) return this.send(res, 404, { message: 'Not Found' }, extra);
      const { org, role } = found;
      return this.send(
        res,
        200,
        {
          url: `${this.apiUrl}/orgs/${org.login}/memberships/${user.login}`,
          state: 'active',
          role,
          organization_url: org.url,
          organization: org,
          user: { login: user.login, id: user.id },
        },
        extra,
      );
    }
    return this.send(res, 404, { message: 'Not Found' }, extra);
  }

  private async download(rawPath: string, res: ServerResponse): Promise<void> {
    const url = new URL(rawPath, 'http://fake');
    const [, , key = '', commit = ''] = url.pathname.split('/');
    const repo = this.repos.get(decodeURIComponent(key).toLowerCase());
    if (!repo || url.searchParams.get('token') !== 'short-lived') {
      res.writeHead(404).end();
      return;
    }
    const body = await tarballOf(repo, commit);
    res.writeHead(200, { 'content-type': 'application/x-gzip', 'content-length': String(body.length) });
    res.end(body);
  }

  /** The date a commit was first seen, as GitHub writes dates (whole seconds, UTC). */
  private commitDateOf(sha: string): string {
    let date = this.commitDates.get(sha);
    if (date === undefined) {
      date = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      this.commitDates.set(sha, date);
    }
    return date;
  }

  /** Requests whose path (after the prefix) starts with `fragment`. */
  seen(fragment: string): SeenRequest[] {
    return this.requests.filter((r) => r.path.startsWith(`${this.prefix}${fragment}`));
  }

  private send(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): boolean {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': String(this.remaining),
      'x-ratelimit-reset': String(this.resetAt),
      ...headers,
    });
    res.end(status === 304 ? undefined : JSON.stringify(body));
    return true;
  }

  private conditional(res: ServerResponse, headers: IncomingHttpHeaders, body: unknown): boolean {
    const etag = etagOf(body);
    if (headers['if-none-match'] === etag) {
      // GitHub does not charge conditional 304s against the budget.
      return this.send(res, 304, null, { etag });
    }
    this.remaining = Math.max(0, this.remaining - 1);
    return this.send(res, 200, body, { etag });
  }

  /** The user behind the request's token; null for no token or an app token; 'revoked' for a revoked one. */
  private userOf(headers: IncomingHttpHeaders): FakeUser | null | 'revoked' {
    const auth = headers.authorization;
    const match = typeof auth === 'string' ? /^(?:Bearer|token) (.+)$/i.exec(auth) : null;
    if (!match?.[1]) return null;
    if (this.revoked.has(match[1])) return 'revoked';
    return this.users.get(match[1]) ?? null;
  }

  private gradeOf(user: FakeUser | null, repo: FakeRepo): RepoPermission {
    if (!user) return repo.private ? 'none' : 'pull';
    if (user.id === repo.ownerId) return 'admin';
    const key = `${repo.owner}/${repo.name}`.toLowerCase();
    const granted = Object.entries(user.permissions).find(([k]) => k.toLowerCase() === key)?.[1];
    return granted ?? (repo.private ? 'none' : 'pull');
  }

  /** Answers one request; returns true once it has been answered. */
  private handle(rawPath: string, headers: IncomingHttpHeaders, res: ServerResponse): boolean {
    const user = this.userOf(headers);
    if (user === 'revoked') {
      return this.send(res, 401, {
        message: 'Bad credentials',
        documentation_url: 'https://docs.github.com/rest',
        status: '401',
      });
    }
    if (this.rateLimit && this.rateLimit.count > 0) {
      this.rateLimit.count -= 1;
      const script = this.rateLimit;
      const reset = Math.floor(Date.now() / 1000) + (script.resetInSeconds ?? 3600);
      const extra: Record<string, string> = {
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(reset),
      };
      if (script.retryAfter !== undefined) extra['retry-after'] = String(script.retryAfter);
      return this.send(res, script.status, { message: 'API rate limit exceeded for installation.' }, extra);
    }
    if (!rawPath.startsWith(`${this.prefix}/`)) return this.send(res, 404, { message: 'Not Found' });
    const url = new URL(rawPath.slice(this.prefix.length), 'http://fake');
    const parts = url.pathname.split('/').map(decodeURIComponent);
    const answered = this.userApi(parts, headers, res);
    if (answered !== undefined) return answered;
    // ['', 'repositories', id, ...rest] is the form GitHub redirects renamed repositories to.
    if (parts[1] === 'repositories' && parts[2]) {
      const key = [...this.ids].find(([k, id]) => String(id) === parts[2] && this.repos.has(k))?.[0];
      if (!key) return this.send(res, 404, { message: 'Not Found' });
      const [owner, name] = key.split('/') as [string, string];
      parts.splice(1, 2, 'repos', owner, name);
    }
    // ['', 'repos', owner, repo, ...rest]
    if (parts[1] !== 'repos' || !parts[2] || !parts[3]) return this.send(res, 404, { message: 'Not Found' });
    const lookup = `${parts[2]}/${parts[3]}`.toLowerCase();
    const movedTo = this.renamed.get(lookup);
    if (movedTo && !this.repos.has(lookup)) {
      const rest = parts.slice(4).map(encodeURIComponent).join('/');
      const location = `${this.apiUrl}/repositories/${this.ids.get(movedTo)}${rest ? `/${rest}` : ''}${url.search}`;
      return this.send(res, 301, { message: 'Moved Permanently', url: location }, { location });
    }
    const repo = this.repos.get(lookup);
    if (!repo) return this.send(res, 404, { message: 'Not Found' });
    const grade = this.gradeOf(user, repo);
    if (grade === 'none') return this.send(res, 404, { message: 'Not Found' });
    const fullName = `${repo.owner}/${repo.name}`;

    if (parts.length === 4) {
      return this.conditional(res, headers, {
        id: this.ids.get(lookup),
        name: repo.name,
        full_name: fullName,
        owner: { login: repo.owner, id: repo.ownerId, type: 'Organization' },
        private: repo.private ?? false,
        // GitHub adds the caller's permissions when the request is authenticated as a user.
        ...(user ? { permissions: permissionsOf(grade) } : {}),
        html_url: `${this.webUrl}/${fullName}`,
        homepage: repo.homepage,
        stargazers_count: repo.stars,
        default_branch: repo.defaultBranch,
        license: repo.license
          ? { key: repo.license.toLowerCase(), spdx_id: repo.license, name: repo.license }
          : null,
      });
    }
    if (parts[4] === 'branches' && parts.length === 6) {
      if (parts[5] !== repo.defaultBranch) return this.send(res, 404, { message: 'Branch not found' });
      const { sha: treeSha } = treeOf(repo);
      const sha = commitOf(treeSha);
      const date = repo.committedAt ?? this.commitDateOf(sha);
      const signature = { name: repo.owner, email: `${repo.owner}@users.noreply.github.example`, date };
      return this.conditional(res, headers, {
        name: repo.defaultBranch,
        commit: { sha, commit: { author: signature, committer: signature, tree: { sha: treeSha } } },
      });
    }
    if (parts[4] === 'git' && parts[5] === 'trees') {
      const { sha, tree } = treeOf(repo);
      const ref = parts.slice(6).join('/');
      if ((ref !== sha && ref !== repo.defaultBranch) || url.searchParams.get('recursive') !== '1') {
        return this.send(res, 404, { message: 'Not Found' });
      }
      return this.conditional(res, headers, { sha, tree, truncated: repo.truncated ?? false });
    }
    if (parts[4] === 'tarball' && parts[5]) {
      // GitHub answers with a redirect to its download host; the URL there carries its own credential.
      const location = `${this.downloadBase}/${encodeURIComponent(`${repo.owner}/${repo.name}`)}/${parts[5]}?token=short-lived`;
      return this.send(res, 302, null, { location });
    }
    if (parts[4] === 'git' && parts[5] === 'blobs' && parts[6]) {
      const value = Object.values(repo.files).find((c) => gitBlobSha(bytesOf(c)) === parts[6]);
      if (value === undefined) return this.send(res, 404, { message: 'Not Found' });
      const content = bytesOf(value);
      // GitHub wraps base64 at 60 columns.
      const encoded = content.toString('base64').replace(/(.{60})/g, '$1\n');
      return this.conditional(res, headers, {
        sha: parts[6],
        size: content.length,
        content: encoded,
        encoding: 'base64',
      });
    }
    return this.send(res, 404, { message: 'Not Found' });
  }
}
