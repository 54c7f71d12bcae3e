import { backoffMs, TransportError, type TransportResponse } from '@pkgreg/registry-client';
import type { Context } from './context.js';
import { mayReceiveToken } from './credentials.js';
import { CliError, EXIT } from './errors.js';
import { DEFAULT_RETRY, nodeTransport } from './http-client.js';
import { isLoopbackHost } from './proof.js';
import { CLI_VERSION } from './version.js';

// Reading a site that is not (necessarily) a pkgreg registry (docs/discovery.md): its discovery index
// and the artifacts it names. The registry client's transport and retry rules, plus what a site needs
// and the registry does not: redirects followed (the RFC asks clients to), never from https to http,
// and the registry's token sent only to the registry it belongs to, never to another site nor on after
// a redirect leaves it.

/** Redirects followed before giving up. */
const MAX_REDIRECTS = 5;

/** Why a URL may not be read (null when it may): https anywhere, http only to this machine. */
export function insecureSiteUrl(url: URL): string | null {
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return null;
  return `${url.href} is not https: a site's index and skills are read over https (plain http only on this machine), since an index sent in clear text could be changed on the way, digests and all`;
}

/** Whether `url` is the configured registry's (its URL and below). */
function isRegistry(ctx: Context, url: URL): boolean {
  const registry = new URL(ctx.registry.url);
  const base = `${registry.origin}${registry.pathname.replace(/\/+$/, '')}/`;
  return url.origin === registry.origin && `${url.origin}${url.pathname}`.startsWith(base);
}

/** The registry's token, only for the registry it belongs to. */
function tokenFor(ctx: Context, url: URL): string | undefined {
  if (!ctx.credentials || !mayReceiveToken(ctx.registry.url)) return undefined;
  return isRegistry(ctx, url) ? ctx.credentials.token : undefined;
}

export interface SiteRead {
  bytes: Uint8Array;
  /** Where the bytes came from, after redirects: what relative URLs in them resolve against. */
  url: URL;
}

export interface SiteReadOptions {
  /** What is read, for messages ("the discovery index", "the artifact of pdf"). */
  what: string;
  accept: string;
  /** A bigger body is refused without being read further. */
  maxBytes: number;
  /** Past maxBytes: exit 5 for a download (as the registry's archives), else 4 (a malformed answer). */
  download: boolean;
}

function failure(ctx: Context, status: number, what: string, url: URL, tokenSent: boolean): CliError {
  if (status === 404 || status === 410) {
    // The registry answers a private skill to a stranger as a missing one (docs/cli-auth.md).
    const hint =
      status === 404 && !ctx.credentials && isRegistry(ctx, url)
        ? `. If it is private, you have no token for ${url.host}: run pkgreg login (or set PKGREG_TOKEN to a read token) and try again`
        : '';
    return new CliError(EXIT.notFound, `${what}: ${url.href} is not there (HTTP ${status})${hint}`);
  }
  if (status === 401 || status === 403) {
    const why = tokenSent
      ? 'refused your token (run pkgreg login, or fix PKGREG_TOKEN)'
      : 'asks for credentials, and pkgreg sends a token only to the registry it belongs to';
    return new CliError(EXIT.auth, `${what}: ${url.host} ${why} (HTTP ${status})`);
  }
  if (status >= 500)
    return new CliError(EXIT.unavailable, `${what}: ${url.host} is unavailable (HTTP ${status})`);
  return new CliError(EXIT.error, `${what}: ${url.href} answered HTTP ${status}`);
}

/**
 * GET `url` (redirects followed, a 429, a 5xx or no answer tried again as the registry's calls are);
 * the body of the 200, up to its bound. Every failure is a CliError with the README's exit codes.
 */
export async function readFromSite(ctx: Context, url: URL, options: SiteReadOptions): Promise<SiteRead> {
  const transport = nodeTransport(ctx.env.timeoutMs);
  let current = url;
  for (let redirects = 0; ; redirects += 1) {
    const insecure = insecureSiteUrl(current);
    if (insecure) throw new CliError(EXIT.error, `${options.what}: ${insecure}`);
    const token = tokenFor(ctx, current);
    const headers: Record<string, string> = {
      accept: options.accept,
      'user-agent': `pkgreg/${CLI_VERSION} node/${process.versions.node}`,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    };
    let response: TransportResponse | undefined;
    let lastFailure = '';
    for (let attempt = 1; attempt <= DEFAULT_RETRY.attempts; attempt += 1) {
      const started = Date.now();
      try {
        response = await transport({
          method: 'GET',
          url: current.href,
          headers,
          download: options.download,
          keepalive: false,
        });
        ctx.debug(`GET ${current.href} -> ${response.status} (${Date.now() - started} ms)`);
        if (response.status !== 429 && response.status < 500) break;
        lastFailure = `HTTP ${response.status}`;
        response.discard();
        response = undefined;
      } catch (error) {
        if (!(error instanceof TransportError)) throw error;
        ctx.debug(`GET ${current.href} failed: ${error.code} (${Date.now() - started} ms)`);
        lastFailure = error.reason;
      }
      if (attempt < DEFAULT_RETRY.attempts) await sleep(backoffMs(DEFAULT_RETRY, attempt - 1));
    }
    if (!response) {
      throw new CliError(
        EXIT.unavailable,
        `${options.what}: ${current.host} did not answer (${lastFailure}) after ${DEFAULT_RETRY.attempts} attempts`,
      );
    }
    const location = response.header('location');
    if ([301, 302, 303, 307, 308].includes(response.status) && location) {
      response.discard();
      if (redirects >= MAX_REDIRECTS)
        throw new CliError(
          EXIT.unavailable,
          `${options.what}: more than ${MAX_REDIRECTS} redirects from ${url.href}`,
        );
      const next = new URL(location, current);
      if (current.protocol === 'https:' && next.protocol !== 'https:')
        throw new CliError(
          EXIT.error,
          `${options.what}: ${current.href} redirects to ${next.href}, off https`,
        );
      current = next;
      continue;
    }
    if (response.status !== 200) {
      response.discard();
      throw failure(ctx, response.status, options.what, current, token !== undefined);
    }
    const read = await response.read(options.maxBytes).catch((error: unknown) => {
      if (error instanceof TransportError)
        throw new CliError(EXIT.unavailable, `${options.what}: ${current.host} broke off (${error.reason})`);
      throw error;
    });
    if (read.truncated) {
      throw new CliError(
        options.download ? EXIT.integrity : EXIT.unavailable,
        `${options.what}: ${current.href} is larger than ${options.maxBytes} bytes`,
      );
    }
    return { bytes: read.bytes, url: current };
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
