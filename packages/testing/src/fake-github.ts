import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { pack as tarPack } from 'tar-stream';
import { gitBlobSha } from './git-blob-sha.js';

// A local stand-in for GitHub's REST API (the documented shapes of GET /repos/{o}/{r},
// /branches/{branch}, /git/trees/{sha}?recursive=1, /git/blobs/{sha} and /tarball/{ref}, which
// redirects to a download host that takes no token), with ETags, 304s and rate-limit headers.
//
// Accounts have numeric ids as on GitHub: an owner renamed keeps its id, and a new account taking the
// freed login gets another. User tokens (`addUser`) see `permissions` on GET /repos/{o}/{r} (admin,
// maintain, push, triage, pull) as GitHub answers them for the token's user; a revoked token is 401
// `Bad credentials`; a private repository is 404 to anyone who cannot pull it. Any other token is taken
// as an app token that reads public repositories (what the indexer sends).

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
      this.handle(path, req.headers, res);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.base = `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
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
      return this.conditional(res, headers, {
        name: repo.defaultBranch,
        commit: { sha: commitOf(treeSha), commit: { tree: { sha: treeSha } } },
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
