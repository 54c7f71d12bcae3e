import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGunzip } from 'node:zlib';
import { gitBlobSha } from '@pkgreg/registry';
import { extract as tarExtract } from 'tar-stream';
import { request } from 'undici';
import { z } from 'zod';
import { IndexingError } from './errors.js';
import {
  isFileMode,
  type RepoMeta,
  type SkillSource,
  type SnapshotRequest,
  type SourceSnapshot,
  type TreeFile,
} from './types.js';

// GitHub's REST API (and GitHub Enterprise's, under its own base URL): repository metadata, the
// default branch's head commit and its committer date, the recursive tree at it, and the bytes of new
// blobs (a few through the blobs API, more through one tarball). Conditional requests keep re-index
// cheap: a 304 costs no rate-limit budget, so an unchanged repository costs two requests.

export interface GitHubSourceOptions {
  /** REST base; GitHub Enterprise: `https://HOST/api/v3`. Default `https://api.github.com`. */
  apiUrl?: string;
  /** Web base for repository links when the API omits them. Default `https://github.com`. */
  webUrl?: string;
  /** Optional token (raises the rate limit, reaches private repositories). Never logged. */
  token?: string;
  /** Longest wait for a rate-limit reset before the run fails as `rate_limited`. Default 60 s. */
  maxRateLimitWaitMs?: number;
  /** Per-request timeout. Default 30 s. */
  requestTimeoutMs?: number;
  userAgent?: string;
}

const DEFAULT_API_URL = 'https://api.github.com';
const DEFAULT_WEB_URL = 'https://github.com';
/** GitHub asks for at least a minute after a secondary rate limit that names no wait. */
const SECONDARY_LIMIT_WAIT_MS = 60_000;
/** Attempts per request for waits we chose to sit out and for 5xx answers. */
const MAX_ATTEMPTS = 3;
const MAX_REDIRECTS = 3;

const RepoResponseSchema = z.object({
  id: z.number().int().optional(),
  name: z.string(),
  full_name: z.string().optional(),
  owner: z.object({ login: z.string(), id: z.number().int().optional() }),
  default_branch: z.string(),
  stargazers_count: z.number().int().nonnegative().default(0),
  license: z.object({ spdx_id: z.string().nullable().optional() }).nullable().optional(),
  homepage: z.string().nullable().optional(),
  html_url: z.string().nullable().optional(),
});

const BranchResponseSchema = z.object({
  commit: z.object({
    sha: z.string(),
    commit: z.object({
      tree: z.object({ sha: z.string() }),
      // GitHub's schema allows a commit without a committer; its time then names no version.
      committer: z.object({ date: z.string().optional() }).nullable().optional(),
    }),
  }),
});

/** An ISO 8601 time as the state keeps it, or '' when the host gave none (or none that parses). */
function isoTimeOf(value: string | undefined): string {
  const time = value ? new Date(value) : null;
  return time && !Number.isNaN(time.getTime()) ? time.toISOString() : '';
}

const TreeResponseSchema = z.object({
  sha: z.string().optional(),
  truncated: z.boolean().default(false),
  tree: z.array(
    z.object({
      path: z.string(),
      mode: z.string(),
      type: z.string(),
      sha: z.string(),
      size: z.number().optional(),
    }),
  ),
});

/** Up to this many new blobs are read one request each; more come in one tarball. */
const MAX_BLOB_REQUESTS = 8;

const BlobResponseSchema = z.object({
  content: z.string(),
  encoding: z.string(),
});

export type GetResult = { notModified: true } | { notModified: false; body: unknown; etag: string | null };

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A small GitHub REST client that tracks the rate-limit budget it is told about. */
export class GitHubClient {
  readonly apiUrl: string;
  readonly webUrl: string;
  private readonly token: string | undefined;
  private readonly maxWaitMs: number;
  private readonly timeoutMs: number;
  private readonly userAgent: string;
  private remaining: number | null = null;
  private resetAtMs = 0;

  constructor(options: GitHubSourceOptions = {}) {
    this.apiUrl = (options.apiUrl ?? DEFAULT_API_URL).replace(/\/+$/, '');
    this.webUrl = (options.webUrl ?? DEFAULT_WEB_URL).replace(/\/+$/, '');
    this.token = options.token || undefined;
    this.maxWaitMs = options.maxRateLimitWaitMs ?? 60_000;
    this.timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.userAgent = options.userAgent ?? 'pkgreg-indexer';
  }

  /** GET `path` (below the API base) as JSON; `etag` makes it conditional. */
  async get(path: string, etag?: string): Promise<GetResult> {
    const result = await this.send(path, { etag });
    if (result === 'not-modified') return { notModified: true };
    const body = await result.body.json();
    return { notModified: false, body, etag: header(result.headers, 'etag') ?? null };
  }

  /**
   * GET `path` as a byte stream (a repository archive). The API answers with a redirect to its download
   * host, which is followed without the token: that URL carries its own short-lived credential.
   */
  async download(path: string): Promise<Readable> {
    const result = await this.send(path, { foreignRedirects: true });
    if (result === 'not-modified')
      throw new IndexingError('source_error', 'unconditional request answered 304');
    return result.body;
  }

  private async send(
    path: string,
    options: { etag?: string; foreignRedirects?: boolean },
  ): Promise<'not-modified' | Awaited<ReturnType<typeof request>>> {
    let url = `${this.apiUrl}${path}`;
    let redirects = 0;
    const headers: Record<string, string> = {
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': this.userAgent,
    };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (options.etag) headers['if-none-match'] = options.etag;
    const apiOrigin = new URL(this.apiUrl).origin;

    for (let attempt = 1; ; attempt += 1) {
      await this.waitForBudget();
      let res: Awaited<ReturnType<typeof request>>;
      const toApi = new URL(url).origin === apiOrigin;
      try {
        res = await request(url, {
          method: 'GET',
          // The token goes to the configured API host only.
          headers: toApi ? headers : { 'user-agent': this.userAgent },
          headersTimeout: this.timeoutMs,
          bodyTimeout: this.timeoutMs,
        });
      } catch (error) {
        if (attempt < MAX_ATTEMPTS) {
          await sleep(500 * attempt);
          continue;
        }
        throw new IndexingError('source_error', `GET ${path} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      if (toApi) this.noteBudget(res.headers);
      const status = res.statusCode;
      // A renamed or transferred repository answers with a redirect to its new address.
      if ([301, 302, 307, 308].includes(status)) {
        await res.body.dump();
        const location = header(res.headers, 'location');
        const next = location ? new URL(location, url) : null;
        const allowed = next && (next.origin === apiOrigin || options.foreignRedirects);
        if (!next || !allowed || redirects >= MAX_REDIRECTS) {
          throw new IndexingError('source_error', `GET ${path}: unfollowed redirect (HTTP ${status})`);
        }
        redirects += 1;
        url = next.toString();
        attempt -= 1;
        continue;
      }
      if (status === 304) {
        await res.body.dump();
        return 'not-modified';
      }
      if (status >= 200 && status < 300) return res;
      const text = await res.body.text().catch(() => '');
      const message = messageOf(text);

      if (status === 403 || status === 429) {
        const waitMs = this.rateLimitWait(res.headers, message);
        if (waitMs !== null) {
          const retryAt = new Date(Date.now() + waitMs);
          if (waitMs <= this.maxWaitMs && attempt < MAX_ATTEMPTS) {
            await sleep(waitMs);
            continue;
          }
          throw new IndexingError(
            'rate_limited',
            `rate limited by ${this.apiUrl} until ${retryAt.toISOString()}`,
            { retryAt },
          );
        }
      }
      if (status === 404) throw new IndexingError('not_found', `GET ${path}: not found`);
      if (status === 401) throw new IndexingError('unauthorized', `GET ${path}: bad credentials`);
      if (status === 403)
        throw new IndexingError('forbidden', `GET ${path}: forbidden${message ? ` (${message})` : ''}`);
      if (status >= 500 && attempt < MAX_ATTEMPTS) {
        await sleep(500 * attempt);
        continue;
      }
      throw new IndexingError('source_error', `GET ${path}: HTTP ${status}${message ? ` (${message})` : ''}`);
    }
  }

  /** Sits out an exhausted budget when the reset is near; refuses to send a request bound to fail. */
  private async waitForBudget(): Promise<void> {
    if (this.remaining !== 0) return;
    const waitMs = this.resetAtMs - Date.now();
    if (waitMs <= 0) {
      this.remaining = null;
      return;
    }
    if (waitMs > this.maxWaitMs) {
      const retryAt = new Date(this.resetAtMs);
      throw new IndexingError(
        'rate_limited',
        `rate limited by ${this.apiUrl} until ${retryAt.toISOString()}`,
        {
          retryAt,
        },
      );
    }
    await sleep(waitMs);
    this.remaining = null;
  }

  private noteBudget(headers: IncomingHttpHeaders): void {
    const remaining = header(headers, 'x-ratelimit-remaining');
    const reset = header(headers, 'x-ratelimit-reset');
    if (remaining !== undefined && /^\d+$/.test(remaining)) this.remaining = Number(remaining);
    if (reset !== undefined && /^\d+$/.test(reset)) this.resetAtMs = Number(reset) * 1000;
  }

  /** How long a 403/429 asks us to wait; null when it is not a rate-limit answer. */
  private rateLimitWait(headers: IncomingHttpHeaders, message: string): number | null {
    const retryAfter = header(headers, 'retry-after');
    if (retryAfter !== undefined && /^\d+$/.test(retryAfter)) return Number(retryAfter) * 1000;
    if (header(headers, 'x-ratelimit-remaining') === '0') {
      // A small margin: the reset is in whole seconds and clocks drift.
      return Math.max(0, this.resetAtMs - Date.now()) + 250;
    }
    if (/rate limit/i.test(message)) return SECONDARY_LIMIT_WAIT_MS;
    return null;
  }
}

function messageOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string') return parsed.message.slice(0, 200);
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return text.slice(0, 200);
}

const LOCATOR = /^([A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)\/([A-Za-z0-9_.-]+)$/;

/** `owner/repo` (or a repository URL) -> normalised `owner/repo`, lowercased: GitHub names ignore case. */
export function normalizeGitHubLocator(input: string): string {
  let value = input.trim();
  const url = /^https?:\/\/[^/]+\/([^/]+\/[^/]+?)(?:\.git)?\/?$/.exec(value);
  if (url?.[1]) value = url[1];
  const match = LOCATOR.exec(value);
  if (!match || value.endsWith('.git') || match[2] === '.' || match[2] === '..') {
    throw new IndexingError('invalid_locator', `not a GitHub repository locator: "${input.slice(0, 200)}"`);
  }
  return value.toLowerCase();
}

function sameMeta(a: RepoMeta | null, b: RepoMeta): boolean {
  return a !== null && JSON.stringify(a) === JSON.stringify(b);
}

/** A repository on GitHub or GitHub Enterprise. */
export class GitHubSource implements SkillSource {
  readonly kind = 'github' as const;
  readonly locator: string;
  private repoPath: string;
  /** Where the repository's metadata is read: by id when the caller knows it, else by name. */
  private readonly metaPath: string;
  /** The branch to read; the repository's default branch when undefined. */
  private readonly branch: string | undefined;
  /** The last snapshot's commit and files, for reading blobs at that commit. */
  private commit: string | null = null;
  private pathsBySha = new Map<string, string>();

  constructor(
    locator: string,
    private readonly client: GitHubClient,
    options: { branch?: string; repositoryId?: number } = {},
  ) {
    this.locator = normalizeGitHubLocator(locator);
    this.branch = options.branch;
    const [owner, repo] = this.locator.split('/') as [string, string];
    this.repoPath = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
    // The id is the repository's identity: read by it, a renamed or transferred repository is found
    // under its new name, and a name that now belongs to another repository is never read instead.
    this.metaPath =
      options.repositoryId === undefined ? this.repoPath : `/repositories/${options.repositoryId}`;
  }

  async snapshot({ etags, cachedMeta }: SnapshotRequest): Promise<SourceSnapshot> {
    const nextEtags: Record<string, string> = {};
    // Metadata kept before owner ids were recorded is read again once, unconditionally.
    const cachedIsComplete = cachedMeta !== null && 'ownerId' in cachedMeta;
    let metaResult = await this.client.get(this.metaPath, cachedIsComplete ? etags.repo : undefined);
    let meta: RepoMeta;
    if (metaResult.notModified && cachedMeta) {
      meta = cachedMeta;
      if (etags.repo) nextEtags.repo = etags.repo;
    } else {
      if (metaResult.notModified) metaResult = await this.client.get(this.metaPath);
      if (metaResult.notModified)
        throw new IndexingError('source_error', 'unconditional request answered 304');
      meta = this.parseMeta(metaResult.body);
      if (metaResult.etag) nextEtags.repo = metaResult.etag;
    }

    // Later requests go to the repository's canonical name (it may have been renamed or transferred).
    this.repoPath = `/repos/${encodeURIComponent(meta.owner)}/${encodeURIComponent(meta.name)}`;
    // Besides ETags, the state keeps the head commit, its time and its tree: a 304 on the branch names
    // none of them. State kept before commit times were recorded reads the branch again once.
    const branchName = this.branch ?? meta.defaultBranch;
    const branchKey = `branch:${branchName}`;
    const commitKey = `commit:${branchName}`;
    const timeKey = `committed:${branchName}`;
    const treeKey = `tree:${branchName}`;
    const known =
      etags[commitKey] && etags[treeKey] && etags[timeKey] !== undefined ? etags[branchKey] : undefined;
    const branchResult = await this.client
      .get(`${this.repoPath}/branches/${encodeURIComponent(branchName)}`, known)
      .catch((error: unknown) => {
        if (error instanceof IndexingError && error.code === 'not_found')
          throw new IndexingError(
            'not_found',
            `branch "${branchName}" not found in ${meta.owner}/${meta.name}`,
          );
        throw error;
      });
    const branch = branchName === meta.defaultBranch ? {} : { branch: branchName };
    let commit: string;
    let committed: string;
    let treeSha: string;
    if (branchResult.notModified) {
      commit = etags[commitKey] as string;
      committed = etags[timeKey] as string;
      treeSha = etags[treeKey] as string;
      if (known) nextEtags[branchKey] = known;
    } else {
      const branch = BranchResponseSchema.safeParse(branchResult.body);
      if (!branch.success) throw new IndexingError('source_error', 'unexpected branch response shape');
      commit = branch.data.commit.sha;
      committed = isoTimeOf(branch.data.commit.commit.committer?.date);
      treeSha = branch.data.commit.commit.tree.sha;
      if (branchResult.etag) nextEtags[branchKey] = branchResult.etag;
    }
    nextEtags[commitKey] = commit;
    nextEtags[timeKey] = committed;
    nextEtags[treeKey] = treeSha;
    this.commit = commit;
    const commitTime = committed ? new Date(committed) : null;
    // Repository facts (stars, license) live on every package row: when they moved, every row needs
    // them, so the tree is read even if the commit did not change.
    if (branchResult.notModified && sameMeta(cachedMeta, meta)) {
      return { repo: meta, files: null, truncated: false, etags: nextEtags, commit, commitTime, ...branch };
    }
    const treeResult = await this.client.get(
      `${this.repoPath}/git/trees/${encodeURIComponent(treeSha)}?recursive=1`,
    );
    if (treeResult.notModified) throw new IndexingError('source_error', 'unconditional request answered 304');
    const tree = TreeResponseSchema.safeParse(treeResult.body);
    if (!tree.success) throw new IndexingError('source_error', 'unexpected git tree response shape');
    const files: TreeFile[] = [];
    for (const entry of tree.data.tree) {
      if (entry.type !== 'blob' || !isFileMode(entry.mode)) continue;
      files.push({ path: entry.path, sha: entry.sha, size: entry.size ?? null, mode: entry.mode });
    }
    this.pathsBySha = new Map(files.map((f) => [f.sha, f.path]));
    return {
      repo: meta,
      files,
      truncated: tree.data.truncated,
      etags: nextEtags,
      commit,
      commitTime,
      ...branch,
    };
  }

  async readBlobs(shas: string[]): Promise<Map<string, Buffer>> {
    const wanted = [...new Set(shas)];
    if (wanted.length <= MAX_BLOB_REQUESTS) {
      const blobs = new Map<string, Buffer>();
      for (const sha of wanted) blobs.set(sha, await this.readBlob(sha));
      return blobs;
    }
    return this.readFromTarball(new Set(wanted));
  }

  private async readBlob(sha: string): Promise<Buffer> {
    const result = await this.client.get(`${this.repoPath}/git/blobs/${encodeURIComponent(sha)}`);
    if (result.notModified) throw new IndexingError('source_error', 'unconditional request answered 304');
    const blob = BlobResponseSchema.safeParse(result.body);
    if (!blob.success) throw new IndexingError('source_error', `unexpected blob response shape for ${sha}`);
    const bytes =
      blob.data.encoding === 'base64'
        ? Buffer.from(blob.data.content, 'base64')
        : Buffer.from(blob.data.content, 'utf8');
    // The SHA is the content's identity; a mismatch means we would store the wrong bytes under it.
    if (gitBlobSha(bytes) !== sha)
      throw new IndexingError('source_error', `blob ${sha} content does not match its SHA`);
    return bytes;
  }

  /** One archive of the snapshot's commit instead of a request per blob; only wanted entries are kept. */
  private async readFromTarball(wanted: Set<string>): Promise<Map<string, Buffer>> {
    if (!this.commit) throw new IndexingError('source_error', 'no snapshot to read blobs from');
    const wantedPaths = new Map<string, string>();
    for (const sha of wanted) {
      const path = this.pathsBySha.get(sha);
      if (path === undefined) throw new IndexingError('source_error', `blob ${sha} is not in the tree`);
      wantedPaths.set(path, sha);
    }
    const body = await this.client.download(`${this.repoPath}/tarball/${encodeURIComponent(this.commit)}`);
    const blobs = new Map<string, Buffer>();
    const extract = tarExtract();
    extract.on('entry', (headers, stream, next) => {
      // GitHub's archive puts everything under one `<owner>-<repo>-<sha>/` folder.
      const path = headers.name.slice(headers.name.indexOf('/') + 1);
      const sha = wantedPaths.get(path);
      if (sha === undefined || blobs.has(sha)) {
        stream.resume();
        stream.on('end', () => next());
        return;
      }
      if (headers.type === 'symlink') {
        blobs.set(sha, Buffer.from(headers.linkname ?? '', 'utf8'));
        stream.resume();
        stream.on('end', () => next());
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk) => chunks.push(chunk as Buffer));
      stream.on('end', () => {
        blobs.set(sha, Buffer.concat(chunks));
        next();
      });
    });
    try {
      await pipeline(body, createGunzip(), extract);
    } catch (error) {
      throw new IndexingError(
        'source_error',
        `reading the repository archive failed: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    for (const [sha, bytes] of blobs) {
      if (gitBlobSha(bytes) !== sha)
        throw new IndexingError('source_error', `blob ${sha} in the archive does not match its SHA`);
    }
    for (const sha of wanted) {
      if (!blobs.has(sha)) throw new IndexingError('source_error', `blob ${sha} is missing from the archive`);
    }
    return blobs;
  }

  private parseMeta(body: unknown): RepoMeta {
    const parsed = RepoResponseSchema.safeParse(body);
    if (!parsed.success) throw new IndexingError('source_error', 'unexpected repository response shape');
    const repo = parsed.data;
    const spdx = repo.license?.spdx_id ?? null;
    const fullName = repo.full_name ?? `${repo.owner.login}/${repo.name}`;
    return {
      owner: repo.owner.login,
      name: repo.name,
      defaultBranch: repo.default_branch,
      stars: repo.stargazers_count,
      license: spdx && spdx !== 'NOASSERTION' ? spdx : null,
      homepageUrl: repo.homepage?.trim() ? repo.homepage.trim() : null,
      repoUrl: repo.html_url ?? `${this.client.webUrl}/${fullName}`,
      ownerId: repo.owner.id ?? null,
      repositoryId: repo.id ?? null,
    };
  }
}
