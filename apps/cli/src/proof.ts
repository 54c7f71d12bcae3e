import type { Context } from './context.js';
import { CliError, EXIT } from './errors.js';

// The proof publish, deprecate and yank send (docs/publishing.md), first found wins:
// 1. --token <t>: the caller said which;
// 2. inside GitHub Actions with `permissions: id-token: write` (ACTIONS_ID_TOKEN_REQUEST_URL and
//    ACTIONS_ID_TOKEN_REQUEST_TOKEN set): an OIDC token the runner issues for the registry's URL as
//    audience (trusted publishing; no secret to store);
// 3. GITHUB_TOKEN;
// 4. `gh auth token`, when the GitHub CLI is installed and logged in.
// A proof is never printed, not even with --verbose.

export interface Proof {
  token: string;
  /** What it is, for messages. */
  source: 'oidc' | '--token' | 'GITHUB_TOKEN' | 'gh auth token';
}

const TIMEOUT_MS = 15_000;

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
  return value;
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

/** The proof to send, in the order above; a usage error (exit 2) saying how to give one when none is found. */
export async function resolveProof(ctx: Context, explicit: string | undefined): Promise<Proof> {
  if (explicit) return { token: explicit, source: '--token' };
  if (ctx.env.actionsIdToken) {
    ctx.debug('asking GitHub Actions for an OIDC token');
    return { token: await fetchActionsIdToken(ctx.env.actionsIdToken, ctx.registry.url), source: 'oidc' };
  }
  if (ctx.env.githubToken) return { token: ctx.env.githubToken, source: 'GITHUB_TOKEN' };
  const gh = await ghAuthToken();
  if (gh) return { token: gh, source: 'gh auth token' };
  const hint = ctx.env.inGitHubActions
    ? 'in GitHub Actions, give the job `permissions: id-token: write` (trusted publishing)'
    : 'pass --token, set GITHUB_TOKEN, or log in with `gh auth login`';
  throw new CliError(EXIT.usage, `No proof of ownership to send: ${hint}`);
}

export function describeProof(proof: Proof): string {
  return proof.source === 'oidc' ? 'a GitHub Actions OIDC token' : `a GitHub token (${proof.source})`;
}
