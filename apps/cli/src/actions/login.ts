import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  type DeviceCodeResponse,
  DeviceCodeResponseSchema,
  DeviceTokenErrorSchema,
  DeviceTokenResponseSchema,
} from '@pkgreg/contracts';
import type { Command } from 'commander';
import type { LoginOptions } from '../commands/login.js';
import { type Context, createContext } from '../context.js';
import { credentialsPath, mayReceiveToken, saveCredentials } from '../credentials.js';
import { CliError, EXIT } from '../errors.js';
import { createRegistryClient, DEFAULT_RETRY } from '../http-client.js';

// `pkgreg login` (docs/cli-auth.md). Two ways to sign in, both ending with a publish token of the
// account stored for this registry:
// - browser: a loopback server on 127.0.0.1, the registry's approval page opened with a PKCE challenge
//   (RFC 8252, RFC 7636); the code the browser brings back is traded for the token;
// - device (--device, or no browser here): better-auth's device flow (RFC 8628) gives a session, which
//   creates the token and is then signed out, so no session lingers.

const LOGIN_TIMEOUT_MS = 5 * 60_000;
/** The CLI token's lifetime: the registry cuts it to its TOKEN_MAX_DAYS when shorter (the browser flow). */
const TOKEN_DAYS = 90;

function tokenName(): string {
  const { hostname } = process.getBuiltinModule('node:os');
  return `pkgreg CLI on ${hostname()}`.slice(0, 100);
}

function randomText(bytes: number): string {
  const { randomBytes } = process.getBuiltinModule('node:crypto');
  return randomBytes(bytes).toString('base64url');
}

export async function login(input: LoginOptions, command: Command): Promise<void> {
  const ctx = await createContext(command);
  if (!mayReceiveToken(ctx.registry.url)) {
    throw new CliError(
      EXIT.error,
      `Refusing to sign in to ${new URL(ctx.registry.url).origin}: it is not https, so anyone on the way could read the token (only https registries, or http on this machine)`,
    );
  }
  let browser = !input.device;
  if (browser && !input.browser && !ctx.env.canOpenBrowser) {
    process.stderr.write('No browser here (no DISPLAY): signing in with a device code instead.\n');
    browser = false;
  }
  const { token, email } = browser ? await browserLogin(ctx, input.browser) : await deviceLogin(ctx);
  await saveCredentials(
    ctx.env,
    ctx.registry.url,
    { token, accountEmail: email, createdAt: new Date().toISOString() },
    ctx.warn,
  );
  ctx.out(`Logged in to ${ctx.registry.url} as ${email} (token stored in ${credentialsPath(ctx.env)})`);
  if (ctx.env.token)
    ctx.warn('PKGREG_TOKEN is set and wins over the stored token: unset it to use this login');
}

/** Opens the URL in the desktop's browser; nothing happens where none opens (the URL is printed too). */
function openBrowser(url: string): void {
  const { spawn } = process.getBuiltinModule('node:child_process');
  const [file, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url.replace(/&/g, '^&')]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(file, args, { stdio: 'ignore', detached: true, windowsHide: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // The printed URL is the way then.
  }
}

const PAGE = (text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>pkgreg CLI</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto"><h1>${text}</h1><p>You can close this window and go back to the terminal.</p></body></html>`;

interface Callback {
  code?: string;
  error?: string;
}

/** A loopback server on 127.0.0.1 (any free port) waiting for the redirect that carries our state. */
async function listenForCallback(
  state: string,
): Promise<{ port: number; result: Promise<Callback>; close(): void }> {
  const { createServer } = process.getBuiltinModule('node:http');
  let settle: (value: Callback) => void = () => {};
  const result = new Promise<Callback>((resolve) => {
    settle = resolve;
  });
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const send = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(PAGE(text));
    };
    // Only the answer to our own request counts: another page cannot inject a code of its choosing.
    if (req.method !== 'GET' || url.pathname !== '/callback' || url.searchParams.get('state') !== state) {
      send(400, 'This is not the pkgreg sign-in you started');
      return;
    }
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    if (error) {
      send(200, 'Sign-in denied');
      settle({ error });
    } else if (code) {
      send(200, 'pkgreg CLI signed in');
      settle({ code });
    } else send(400, 'The sign-in answer has no code');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { port, result, close: () => server.close() };
}

async function browserLogin(ctx: Context, forced: boolean): Promise<{ token: string; email: string }> {
  const { createHash } = process.getBuiltinModule('node:crypto');
  const verifier = randomText(32);
  const state = randomText(16);
  const callback = await listenForCallback(state);
  const redirectUri = `http://127.0.0.1:${callback.port}/callback`;
  const url = new URL(`${ctx.registry.url}/api/cli/authorize`);
  url.search = new URLSearchParams({
    redirect_uri: redirectUri,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  let timer: NodeJS.Timeout | undefined;
  try {
    process.stderr.write(`Open this URL in your browser to sign in (waiting up to 5 minutes):\n${url}\n`);
    if (!forced || ctx.env.canOpenBrowser) openBrowser(url.toString());
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new CliError(EXIT.error, 'Sign-in timed out after 5 minutes; run pkgreg login again')),
        LOGIN_TIMEOUT_MS,
      );
    });
    const answer = await Promise.race([callback.result, timeout]);
    if (answer.error || !answer.code) {
      throw new CliError(
        EXIT.auth,
        answer.error === 'access_denied'
          ? 'Sign-in denied in the browser'
          : `Sign-in failed: ${answer.error}`,
      );
    }
    const exchanged = await ctx.client.cliToken({
      code: answer.code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      name: tokenName(),
    });
    return { token: exchanged.token, email: exchanged.account.email };
  } finally {
    clearTimeout(timer);
    callback.close();
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** POST a JSON body to better-auth's endpoint; redirects are never followed (a token may ride along). */
async function postAuth(
  ctx: Context,
  path: string,
  body: unknown,
  bearer?: string,
): Promise<{ status: number; json: unknown }> {
  let response: Response;
  try {
    response = await fetch(`${ctx.registry.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(ctx.env.timeoutMs),
    });
  } catch (error) {
    throw new CliError(
      EXIT.unavailable,
      `Registry unavailable at ${ctx.registry.url}: ${(error as Error).message}`,
    );
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json };
}

async function deviceCode(ctx: Context): Promise<DeviceCodeResponse> {
  const answer = await postAuth(ctx, '/api/auth/device/code', { client_id: 'pkgreg-cli' });
  const parsed = DeviceCodeResponseSchema.safeParse(answer.json);
  if (answer.status !== 200 || !parsed.success) {
    throw new CliError(
      answer.status >= 500 || answer.status === 200 ? EXIT.unavailable : EXIT.error,
      `The registry did not start a device sign-in (HTTP ${answer.status})`,
    );
  }
  return parsed.data;
}

/** Polls until the code is approved (RFC 8628 3.4-3.5): the session token. */
async function pollDeviceToken(ctx: Context, code: DeviceCodeResponse): Promise<string> {
  const deadline = Date.now() + code.expires_in * 1000;
  let interval = code.interval * 1000;
  while (Date.now() < deadline) {
    await sleep(interval);
    const answer = await postAuth(ctx, '/api/auth/device/token', {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: code.device_code,
      client_id: 'pkgreg-cli',
    });
    const granted = DeviceTokenResponseSchema.safeParse(answer.json);
    if (answer.status === 200 && granted.success) return granted.data.access_token;
    const refusal = DeviceTokenErrorSchema.safeParse(answer.json);
    const error = refusal.success ? refusal.data.error : `HTTP ${answer.status}`;
    if (error === 'authorization_pending') continue;
    if (error === 'slow_down') {
      interval += 5_000;
      continue;
    }
    if (error === 'access_denied') throw new CliError(EXIT.auth, 'Sign-in denied on the device page');
    if (error === 'expired_token') break;
    if (answer.status >= 500)
      throw new CliError(EXIT.unavailable, `Registry unavailable at ${ctx.registry.url}: ${error}`);
    throw new CliError(EXIT.error, `Device sign-in failed: ${error}`);
  }
  throw new CliError(EXIT.error, 'The device code expired before it was approved; run pkgreg login again');
}

async function deviceLogin(ctx: Context): Promise<{ token: string; email: string }> {
  const code = await deviceCode(ctx);
  const where = code.verification_uri_complete ?? code.verification_uri;
  process.stderr.write(
    `To sign in, open ${where}\nand check that it shows the code ${code.user_code} (waiting up to ${Math.round(code.expires_in / 60)} minutes)\n`,
  );
  const session = await pollDeviceToken(ctx, code);
  try {
    const created = await ctx.client
      .createToken(
        {
          name: tokenName(),
          permission: 'publish',
          expiresInDays: TOKEN_DAYS,
          organizations: [],
          scopes: [],
          packages: [],
          allowedCidrs: [],
        },
        session,
      )
      .catch(async (error) => {
        // A registry keeping tokens shorter than 90 days says so: ask for its maximum instead.
        const max = /at most (\d+)/.exec((error as Error).message)?.[1];
        if (!max) throw error;
        return ctx.client.createToken(
          {
            name: tokenName(),
            permission: 'publish',
            expiresInDays: Number(max),
            organizations: [],
            scopes: [],
            packages: [],
            allowedCidrs: [],
          },
          session,
        );
      });
    const client = createRegistryClient({
      baseUrl: ctx.registry.url,
      timeoutMs: ctx.env.timeoutMs,
      retry: DEFAULT_RETRY,
      credentials: { token: created.token, source: 'credentials file' },
    });
    const me = await client.me();
    return { token: created.token, email: me.account.email };
  } finally {
    // The device session only minted the token: end it (a failure leaves it to expire on its own).
    const out = await postAuth(ctx, '/api/auth/sign-out', {}, session).catch(() => undefined);
    if (out?.status !== 200)
      ctx.warn('could not end the sign-in session; it expires on its own (web UI: sessions)');
  }
}
