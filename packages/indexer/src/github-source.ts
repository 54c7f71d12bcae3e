import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { z } from 'zod';
import { IndexingError } from './errors.js';
import { gitBlobSha } from './git-blob-sha.js';
import type { RepoMeta, SkillSource, SnapshotRequest, SourceSnapshot, TreeFile } from './types.js';

// GitHub's REST API (and GitHub Enterprise's, under its own base URL): repository metadata, the
// recursive tree of the default branch and blobs. Conditional requests keep re-index cheap: a 304
// costs no rate-limit budget.

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
  name: z.string(),
  full_name: z.string().optional(),
  owner: z.object({ login: z.string() }),
  default_branch: z.string(),
  stargazers_count: z.number().int().nonnegative().default(0),
  license: z.object({ spdx_id: z.string().nullable().optional() }).nullable().optional(),
  homepage: z.string().nullable().optional(),
  html_url: z.string().nullable().optional(),
});

const TreeResponseSchema = z.object({
  sha: z.string().optional(),
  truncated: z.boolean().default(false),
  tree: z.array(
    z.object({
      path: z.string(),
      type: z.string(),
      sha: z.string(),
      size: z.number().optional(),
    }),
  ),
});

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
    let url = `${this.apiUrl}${path}`;
    let redirects = 0;
    const headers: Record<string, string> = {
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': this.userAgent,
    };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (etag) headers['if-none-match'] = etag;

    for (let attempt = 1; ; attempt += 1) {
      await this.waitForBudget();
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(url, {
          method: 'GET',
          headers,
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
      this.noteBudget(res.headers);
      const status = res.statusCode;
      // A renamed or transferred repository answers with a redirect to its new address.
      if ([301, 302, 307, 308].includes(status)) {
        await res.body.dump();
        const location = header(res.headers, 'location');
        const next = location ? new URL(location, url) : null;
        // The token goes to the configured API host only.
        if (!next || next.origin !== new URL(this.apiUrl).origin || redirects >= MAX_REDIRECTS) {
          throw new IndexingError('source_error', `GET ${path}: unfollowed redirect (HTTP ${status})`);
        }
        redirects += 1;
        url = next.toString();
        attempt -= 1;
        continue;
      }
      if (status === 304) {
        await res.body.dump();
        return { notModified: true };
      }
      if (status >= 200 && status < 300) {
        const body = await res.body.json();
        return { notModified: false, body, etag: header(res.headers, 'etag') ?? null };
      }
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

  constructor(
    locator: string,
    private readonly client: GitHubClient,
  ) {
    this.locator = normalizeGitHubLocator(locator);
    const [owner, repo] = this.locator.split('/') as [string, string];
    this.repoPath = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
  }

  async snapshot({ etags, cachedMeta }: SnapshotRequest): Promise<SourceSnapshot> {
    const nextEtags: Record<string, string> = {};
    let metaResult = await this.client.get(this.repoPath, cachedMeta ? etags.repo : undefined);
    let meta: RepoMeta;
    if (metaResult.notModified && cachedMeta) {
      meta = cachedMeta;
      if (etags.repo) nextEtags.repo = etags.repo;
    } else {
      if (metaResult.notModified) metaResult = await this.client.get(this.repoPath);
      if (metaResult.notModified)
        throw new IndexingError('source_error', 'unconditional request answered 304');
      meta = this.parseMeta(metaResult.body);
      if (metaResult.etag) nextEtags.repo = metaResult.etag;
    }

    // Later requests go to the repository's canonical name (it may have been renamed or transferred).
    this.repoPath = `/repos/${encodeURIComponent(meta.owner)}/${encodeURIComponent(meta.name)}`;
    const treeKey = `tree:${meta.defaultBranch}`;
    const treePath = `${this.repoPath}/git/trees/${encodeURIComponent(meta.defaultBranch)}?recursive=1`;
    // Repository facts (stars, license) live on every package row: when they moved, every row needs
    // them, so the tree is read in full even if it did not change.
    const treeEtag = sameMeta(cachedMeta, meta) ? etags[treeKey] : undefined;
    const treeResult = await this.client.get(treePath, treeEtag);
    if (treeResult.notModified) {
      if (treeEtag) nextEtags[treeKey] = treeEtag;
      return { repo: meta, files: null, truncated: false, etags: nextEtags };
    }
    const tree = TreeResponseSchema.safeParse(treeResult.body);
    if (!tree.success) throw new IndexingError('source_error', 'unexpected git tree response shape');
    if (treeResult.etag) nextEtags[treeKey] = treeResult.etag;
    const files: TreeFile[] = tree.data.tree
      .filter((entry) => entry.type === 'blob')
      .map((entry) => ({ path: entry.path, sha: entry.sha, size: entry.size ?? null }));
    return { repo: meta, files, truncated: tree.data.truncated, etags: nextEtags };
  }

  async readBlob(sha: string): Promise<string> {
    const result = await this.client.get(`${this.repoPath}/git/blobs/${encodeURIComponent(sha)}`);
    if (result.notModified) throw new IndexingError('source_error', 'unconditional request answered 304');
    const blob = BlobResponseSchema.safeParse(result.body);
    if (!blob.success) throw new IndexingError('source_error', `unexpected blob response shape for ${sha}`);
    const bytes =
      blob.data.encoding === 'base64'
        ? Buffer.from(blob.data.content, 'base64')
        : Buffer.from(blob.data.content, 'utf8');
    // The SHA is the content's identity; a mismatch means we would store the wrong text under it.
    if (gitBlobSha(bytes) !== sha)
      throw new IndexingError('source_error', `blob ${sha} content does not match its SHA`);
    return bytes.toString('utf8');
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
    };
  }
}
