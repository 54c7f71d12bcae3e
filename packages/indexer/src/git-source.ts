import { execFile, spawn } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute } from 'node:path';
import { promisify } from 'node:util';
import { sanitizeScope } from '@pkgreg/registry';
import { IndexingError } from './errors.js';
import { isFileMode, type RepoMeta, type SkillSource, type SourceSnapshot, type TreeFile } from './types.js';

// A local git repository read through the `git` CLI: the committed tree at HEAD (not the working
// copy), so blob SHAs are git's own and match what a code host would report.

const run = promisify(execFile);
const MAX_OUTPUT = 256 * 1024 * 1024;

async function git(cwd: string, args: string[]): Promise<Buffer> {
  try {
    const { stdout } = await run('git', args, { cwd, maxBuffer: MAX_OUTPUT, encoding: 'buffer' });
    return stdout;
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '').trim();
    throw new IndexingError(
      'invalid_locator',
      `git ${args[0]} failed in ${cwd}: ${stderr.split('\n')[0] || (error as Error).message}`,
      { cause: error },
    );
  }
}

/** The scope a local repository is indexed under when none is configured: its parent directory's name. */
export function defaultLocalOwner(repoPath: string): string {
  return sanitizeScope(basename(dirname(repoPath))) ?? 'local';
}

export interface GitSourceOptions {
  /** Scope for the repository's packages; default: the code-host owner of `origin`, else the parent directory's name, else `local`. */
  owner?: string;
  /** Web base of the code host (default `https://github.com`): an `origin` there names the repository. */
  webUrl?: string;
}

/** A repository on the code host, as named by a remote URL. */
interface HostedName {
  owner: string;
  name: string;
}

/**
 * `owner/repo` of a remote URL on the code host's web host (https, ssh, scp-like `git@host:o/r.git`
 * and git:// forms), or null for any other host or shape.
 */
export function hostedNameOf(remoteUrl: string, webUrl: string): HostedName | null {
  const host = new URL(webUrl).host.toLowerCase();
  const text = remoteUrl.trim();
  const scpLike = /^[^@/\s]+@([^:/\s]+):(.+)$/.exec(text);
  let remoteHost: string;
  let path: string;
  if (scpLike && !text.includes('://')) {
    remoteHost = scpLike[1] ?? '';
    path = scpLike[2] ?? '';
  } else {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return null;
    }
    if (!['https:', 'http:', 'ssh:', 'git:'].includes(url.protocol)) return null;
    remoteHost = url.host;
    path = url.pathname;
  }
  if (remoteHost.toLowerCase() !== host) return null;
  const match = /^\/?([A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(
    path,
  );
  if (!match?.[1] || !match[2] || match[2] === '.' || match[2] === '..') return null;
  return { owner: match[1], name: match[2] };
}

export class GitSource implements SkillSource {
  readonly kind = 'git' as const;
  readonly locator: string;
  /** The scope of the repository's packages. */
  readonly owner: string;
  /** The owner as the code host spells it when origin names it (and no owner was configured). */
  private readonly repoOwner: string;
  private readonly hosted: HostedName | null;
  private readonly webUrl: string;

  private constructor(
    locator: string,
    owner: string,
    repoOwner: string,
    hosted: HostedName | null,
    webUrl: string,
  ) {
    this.locator = locator;
    this.owner = owner;
    this.repoOwner = repoOwner;
    this.hosted = hosted;
    this.webUrl = webUrl;
  }

  /** Resolves `path` to its repository's top level (the source's identity) and checks it is a work tree. */
  static async open(path: string, options: GitSourceOptions = {}): Promise<GitSource> {
    if (!isAbsolute(path)) throw new IndexingError('invalid_locator', `not an absolute path: "${path}"`);
    let real: string;
    try {
      real = await realpath(path);
    } catch {
      throw new IndexingError('invalid_locator', `no such directory: ${path}`);
    }
    const top = (await git(real, ['rev-parse', '--show-toplevel'])).toString('utf8').trim();
    const webUrl = (options.webUrl ?? 'https://github.com').replace(/\/+$/, '');
    // A clone of a hosted repository is that repository: named after it, so its links lead there.
    const origin = await git(top, ['config', '--get', 'remote.origin.url']).catch(() => null);
    const hosted = origin ? hostedNameOf(origin.toString('utf8'), webUrl) : null;
    const fromOrigin = options.owner === undefined && hosted ? sanitizeScope(hosted.owner) : null;
    const owner =
      fromOrigin ?? (options.owner === undefined ? defaultLocalOwner(top) : sanitizeScope(options.owner));
    if (!owner)
      throw new IndexingError('invalid_locator', `owner "${options.owner}" cannot be made a valid scope`);
    return new GitSource(top, owner, fromOrigin && hosted ? hosted.owner : owner, hosted, webUrl);
  }

  async snapshot(): Promise<SourceSnapshot> {
    const head = await git(this.locator, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']).catch(
      () => null,
    );
    if (!head) throw new IndexingError('invalid_locator', `${this.locator} has no commits`);
    const commit = head.toString('utf8').trim();
    // Unix seconds of the committer date, as Go reads it; a signature is never printed with it.
    const committed = (await git(this.locator, ['log', '-1', '--no-show-signature', '--format=%ct', commit]))
      .toString('utf8')
      .trim();
    const branch = (await git(this.locator, ['rev-parse', '--abbrev-ref', 'HEAD'])).toString('utf8').trim();
    const listing = await git(this.locator, ['ls-tree', '-r', '-z', '-l', '--full-tree', 'HEAD']);
    const files: TreeFile[] = [];
    for (const record of listing.toString('utf8').split('\0')) {
      if (!record) continue;
      // "<mode> SP <type> SP <sha> SP+ <size> TAB <path>"
      const tab = record.indexOf('\t');
      const [mode, type, sha, size] = record.slice(0, tab).split(/\s+/);
      if (type !== 'blob' || !sha || !isFileMode(mode)) continue;
      files.push({
        path: record.slice(tab + 1),
        sha,
        size: size && /^\d+$/.test(size) ? Number(size) : null,
        mode,
      });
    }
    const name = this.hosted?.name ?? basename(this.locator);
    const repo: RepoMeta = {
      owner: this.repoOwner,
      name,
      // A detached HEAD has no branch name; 'HEAD' is still a ref the tree can be read at.
      defaultBranch: branch,
      stars: 0,
      license: null,
      homepageUrl: null,
      repoUrl: this.hosted ? `${this.webUrl}/${this.hosted.owner}/${this.hosted.name}` : null,
    };
    const commitTime = /^-?\d+$/.test(committed) ? new Date(Number(committed) * 1000) : null;
    return { repo, files, truncated: false, etags: {}, commit, commitTime };
  }

  /** All blobs through one `git cat-file --batch`: a process per blob dominates large first runs. */
  async readBlobs(shas: string[]): Promise<Map<string, Buffer>> {
    const wanted = [...new Set(shas)];
    for (const sha of wanted) {
      if (!/^[0-9a-f]{40,64}$/.test(sha)) throw new IndexingError('source_error', `not a blob id: ${sha}`);
    }
    if (wanted.length === 0) return new Map();
    const output = await new Promise<Buffer>((resolve, reject) => {
      const child = spawn('git', ['cat-file', '--batch'], {
        cwd: this.locator,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const chunks: Buffer[] = [];
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      child.on('error', reject);
      child.on('close', (code) => {
        if (code === 0) resolve(Buffer.concat(chunks));
        else
          reject(new IndexingError('source_error', `git cat-file --batch failed: ${stderr.split('\n')[0]}`));
      });
      child.stdin.end(`${wanted.join('\n')}\n`);
    });
    // "<sha> <type> <size>\n<content>\n" per object, or "<sha> missing\n".
    const blobs = new Map<string, Buffer>();
    let at = 0;
    while (at < output.length) {
      const eol = output.indexOf(0x0a, at);
      if (eol < 0) break;
      const [sha, type, size] = output.subarray(at, eol).toString('utf8').split(' ');
      at = eol + 1;
      if (type === 'missing' || !sha || !size)
        throw new IndexingError('source_error', `blob ${sha} is missing`);
      const length = Number(size);
      if (type === 'blob') blobs.set(sha, output.subarray(at, at + length));
      at += length + 1;
    }
    return blobs;
  }
}
