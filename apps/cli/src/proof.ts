import { BlockList, isIP } from 'node:net';
import { DEFAULT_REGISTRY } from './constants.js';
import type { Context } from './context.js';
import { CliError, EXIT } from './errors.js';

// The proof publish, deprecate and yank send (docs/publishing.md), first found wins:
// 1. --token <t>: the caller said which;
// 2. inside GitHub Actions with `permissions: id-token: write` (ACTIONS_ID_TOKEN_REQUEST_URL and
//    ACTIONS_ID_TOKEN_REQUEST_TOKEN set): an OIDC token the runner issues for the registry's URL as
//    audience (trusted publishing; no secret to store);
// 3. GITHUB_TOKEN;
// 4. `gh auth token`, when the GitHub CLI is installed and logged in.
// Where it may go: a GitHub token usually can push to every repository of its user, so no proof is
// sent over plain http (except to this machine), and a token the user did not hand over themselves
// (GITHUB_TOKEN, gh) goes to a registry other than the default only with their consent (a prompt, or
// --yes). An OIDC token goes only to the registry it was issued for (its audience).
// A proof is never printed, not even with --verbose.

export interface Proof {
  token: string;
  /** What it is, for messages. */
  source: 'oidc' | '--token' | 'GITHUB_TOKEN' | 'gh auth token';
}

export interface ProofOptions {
  /** --token. */
  token?: string | undefined;
  /** --yes: consent to send GITHUB_TOKEN or gh's token to a registry other than the default. */
  yes: boolean;
}

const TIMEOUT_MS = 15_000;

/** 127.0.0.0/8 and ::1 (IPv4-mapped ones included: BlockList checks them as IPv4). */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether a URL's host is this machine: localhost, 127.0.0.0/8 or ::1 (as the URL parser wrote it). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (host === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/** Refuses (exit 1) a registry a proof would reach in clear text: anything but https, or http to loopback. */
export function requireSecureRegistry(registryUrl: string): void {
  const url = new URL(registryUrl);
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) return;
  throw new CliError(
    EXIT.error,
    `Refusing to send a proof of ownership to ${url.origin}: it is not https, so anyone on the way could read the token and use it (only https registries, or http on this machine, get one)`,
  );
}

export function isDefaultRegistry(registryUrl: string): boolean {
  return new URL(registryUrl).origin === new URL(DEFAULT_REGISTRY).origin;
}

/** GitHub Actions' ID token for `audience`: GET $ACTIONS_ID_TOKEN_REQUEST_URL&audience=… with the request token. */
export async function fetchActionsIdToken(
  request: { url: string; token: string },
  audience: string,
): Promise<string> {
  const url = new URL(request.url);
  url.searchParams.set('audience', audience);
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { authorization: `bearer ${request.token}`, accept: 'application/json; api-version=2.0' },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new CliError(
      EXIT.unavailable,
      `Could not request an OIDC token from GitHub Actions: ${(error as Error).message}`,
    );
  }
  const text = await response.text();
  if (!response.ok) {
    throw new CliError(
      EXIT.error,
      `GitHub Actions refused the OIDC token request (HTTP ${response.status}); the job needs \`permissions: id-token: write\``,
    );
  }
  let value: unknown;
  try {
    value = (JSON.parse(text) as { value?: unknown }).value;
  } catch {
    value = undefined;
  }
  if (typeof value !== 'string' || value === '') {
    throw new CliError(EXIT.error, 'GitHub Actions answered the OIDC token request without a token');
  }
  requireAudience(value, audience);
  return value;
}

/**
 * An OIDC token goes only to the registry it was issued for: its `aud` must be the registry's URL
 * (read, not verified: the registry verifies the signature; this keeps a token for elsewhere here).
 */
export function requireAudience(token: string, audience: string, from = 'GitHub Actions'): void {
  let aud: unknown;
  try {
    const payload = token.split('.')[1] ?? '';
    aud = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { aud?: unknown }).aud;
  } catch {
    aud = undefined;
  }
  const audiences = Array.isArray(aud) ? aud : [aud];
  if (audiences.length === 1 && audiences[0] === audience) return;
  const named = audiences.every((a) => typeof a === 'string') ? audiences.join(', ') : 'none';
  throw new CliError(
    EXIT.error,
    `${from} issued an OIDC token for ${named}, not for ${audience} it was asked for: not sending it`,
  );
}

/** `gh auth token`, or undefined when gh is missing, logged out or slow. */
async function ghAuthToken(): Promise<string | undefined> {
  const { execFile } = process.getBuiltinModule('node:child_process');
  return new Promise((resolve) => {
    execFile('gh', ['auth', 'token'], { timeout: 5_000, windowsHide: true }, (error, stdout) => {
      const token = String(stdout ?? '').trim();
      resolve(error || token === '' ? undefined : token);
    });
  });
}

/** y/N on the terminal; false for anything but yes, end of input included. Ctrl-C exits (130). */
async function confirm(question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  // Nothing was sent yet: Ctrl-C leaves as a shell expects, without an answer to wait for.
  rl.on('SIGINT', () => {
    process.stderr.write('\n');
    process.exit(130);
  });
  // End of input (Ctrl-D) is a no, on a line of its own.
  let answered = false;
  const closed = new Promise<string>((resolve) =>
    rl.once('close', () => {
      if (!answered) process.stderr.write('\n');
      resolve('');
    }),
  );
  try {
    const answer = await Promise.race([rl.question(question), closed]);
    answered = true;
    return /^y(es)?$/i.test(answer.trim());
  } catch {
    return false;
  } finally {
    rl.close();
  }
}

/**
 * A token found in the environment or gh goes to a registry other than the default only with the
 * user's consent: --yes, or a yes at the terminal's prompt naming the registry.
 */
async function requireConsent(ctx: Context, proof: Proof, yes: boolean): Promise<void> {
  if (yes || isDefaultRegistry(ctx.registry.url)) return;
  const host = new URL(ctx.registry.url).host;
  const what = `your GitHub token (from ${proof.source})`;
  if (process.stdin.isTTY && process.stderr.isTTY) {
    const question = `Send ${what} to ${host}? It is not the default registry, and the token can act as you on GitHub (e.g. push to your repositories). [y/N] `;
    if (await confirm(question)) return;
    throw new CliError(EXIT.error, `Not sent: ${what} stays here`);
  }
  throw new CliError(
    EXIT.error,
    `Not sending ${what} to ${host}, which is not the default registry: the token can act as you on GitHub. Pass --yes to send it, or --token with a fine-grained token limited to the repository (docs: publishing)`,
  );
}

/**
 * The proof to send, in the order above, once the registry may receive it; a usage error (exit 2)
 * saying how to give one when none is found, exit 1 when it may not be sent there.
 */
export async function resolveProof(ctx: Context, options: ProofOptions): Promise<Proof> {
  requireSecureRegistry(ctx.registry.url);
  if (options.token) return { token: options.token, source: '--token' };
  if (ctx.env.actionsIdToken) {
    ctx.debug('asking GitHub Actions for an OIDC token');
    return { token: await fetchActionsIdToken(ctx.env.actionsIdToken, ctx.registry.url), source: 'oidc' };
  }
  let found: Proof | undefined;
  if (ctx.env.githubToken) found = { token: ctx.env.githubToken, source: 'GITHUB_TOKEN' };
  else {
    const gh = await ghAuthToken();
    if (gh) found = { token: gh, source: 'gh auth token' };
  }
  if (found) {
    await requireConsent(ctx, found, options.yes);
    return found;
  }
  const hint = ctx.env.inGitHubActions
    ? 'in GitHub Actions, give the job `permissions: id-token: write` (trusted publishing)'
    : 'pass --token, set GITHUB_TOKEN, or log in with `gh auth login`';
  throw new CliError(EXIT.usage, `No proof of ownership to send: ${hint}`);
}

export function describeProof(proof: Proof): string {
  return proof.source === 'oidc' ? 'a GitHub Actions OIDC token' : `a GitHub token (${proof.source})`;
}
