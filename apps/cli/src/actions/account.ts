import type { TokenSummary } from '@pkgreg/contracts';
import type { Command } from 'commander';
import type { WhoamiOptions } from '../commands/login.js';
import type { TokenCreateOptions, TokenListOptions } from '../commands/token.js';
import { type Context, createContext } from '../context.js';
import { credentialsPath, forgetCredentials, readCredentialsFile, registryKey } from '../credentials.js';
import { CliError, EXIT } from '../errors.js';
import { createRegistryClient, DEFAULT_RETRY } from '../http-client.js';
import { table, terminalWidth } from '../output.js';

// `pkgreg logout`, `pkgreg whoami`, `pkgreg token create|list|revoke` (docs/cli-auth.md): the account's
// side of the registry, with the credentials of context.ts.

function requireCredentials(ctx: Context): void {
  if (ctx.credentials) return;
  throw new CliError(
    EXIT.auth,
    `Not logged in to ${new URL(ctx.registry.url).host}: run pkgreg login (or set PKGREG_TOKEN)`,
  );
}

export async function logout(command: Command): Promise<void> {
  const ctx = await createContext(command);
  const entry = (await readCredentialsFile(ctx.env, ctx.warn))[registryKey(ctx.registry.url)];
  if (!entry) {
    ctx.out(`Not logged in to ${ctx.registry.url}`);
    if (ctx.env.token) ctx.warn('PKGREG_TOKEN is set: logout does not touch it; unset it yourself');
    return;
  }
  // The stored token revokes itself (DELETE /api/tokens/current), as `npm logout` does.
  const client = createRegistryClient({
    baseUrl: ctx.registry.url,
    timeoutMs: ctx.env.timeoutMs,
    retry: DEFAULT_RETRY,
    debug: ctx.debug,
    credentials: { token: entry.token, source: 'credentials file' },
  });
  let revoked = true;
  try {
    await client.revokeCurrentToken();
  } catch (error) {
    // Refused (already revoked or expired): nothing to revoke. Anything else: say how to do it by hand.
    if (!(error instanceof CliError && error.exitCode === EXIT.auth)) {
      revoked = false;
      ctx.warn(
        `could not revoke the token on the registry (${(error as Error).message}); revoke it in the web UI or with pkgreg token revoke once back`,
      );
    }
  }
  await forgetCredentials(ctx.env, ctx.registry.url, ctx.warn);
  ctx.out(
    `Logged out of ${ctx.registry.url} (${entry.accountEmail})${revoked ? ': the token is revoked and forgotten' : ': the token is forgotten here'}`,
  );
  if (ctx.env.token) ctx.warn('PKGREG_TOKEN is set: logout does not touch it; unset it yourself');
}

export async function whoami(input: WhoamiOptions, command: Command): Promise<void> {
  const ctx = await createContext(command);
  requireCredentials(ctx);
  const me = await ctx.client.me();
  if (input.json) {
    ctx.json(me);
    return;
  }
  ctx.out(me.account.email);
  const how =
    ctx.credentials?.source === 'PKGREG_TOKEN'
      ? 'a token from PKGREG_TOKEN'
      : `a token from ${credentialsPath(ctx.env)}`;
  ctx.out(`Registry:      ${ctx.registry.url}`);
  ctx.out(
    `Authenticated: ${how}${me.token ? ` (${me.token.permission})` : ''}${me.account.siteAdmin ? ', site admin' : ''}`,
  );
  ctx.out(
    `Organisations: ${me.organizations.length ? me.organizations.map((org) => `${org.slug} (${org.role})`).join(', ') : '-'}`,
  );
  ctx.out(
    `Scopes:        ${me.scopes.length ? me.scopes.map((s) => `@${s.scope} (${s.role})`).join(', ') : '-'}`,
  );
}

function limitsOf(token: TokenSummary): string {
  const limits = [
    ...token.organizations.map((org) => `org ${org}`),
    ...token.scopes.map((scope) => `@${scope}`),
    ...token.packages.map((pkg) => `@${pkg}`),
  ];
  return limits.length ? limits.join(', ') : 'all';
}

export async function createAccountToken(input: TokenCreateOptions, command: Command): Promise<void> {
  const ctx = await createContext(command);
  requireCredentials(ctx);
  // Organisations may be named by slug: the registry takes ids.
  let organizations = input.org;
  if (organizations.length) {
    const me = await ctx.client.me();
    organizations = organizations.map((org) => me.organizations.find((o) => o.slug === org)?.id ?? org);
  }
  const created = await ctx.client.createToken({
    name: input.name,
    permission: input.publish ? 'publish' : 'read',
    organizations,
    scopes: input.scope,
    packages: input.package,
    allowedCidrs: input.cidr,
    expiresInDays: input.expiresInDays,
  });
  if (input.json) {
    ctx.json(created);
    return;
  }
  process.stderr.write(
    `Created ${created.permission} token "${created.name}" (${created.id}), limited to ${limitsOf(created)}, expiring ${created.expiresAt}.\nIts secret, shown this once (set it as PKGREG_TOKEN in CI):\n`,
  );
  ctx.out(created.token);
}

export async function listAccountTokens(input: TokenListOptions, command: Command): Promise<void> {
  const ctx = await createContext(command);
  requireCredentials(ctx);
  const tokens = await ctx.client.listTokens();
  if (input.json) {
    ctx.json(tokens);
    return;
  }
  if (tokens.length === 0) {
    ctx.out('No tokens');
    return;
  }
  const state = (t: TokenSummary) =>
    t.revokedAt ? 'revoked' : Date.parse(t.expiresAt) <= Date.now() ? 'expired' : t.expiresAt.slice(0, 10);
  // Cut to a terminal's width only: a script reading the output gets every column whole.
  const width = process.stdout.isTTY ? terminalWidth() : Number.MAX_SAFE_INTEGER;
  for (const line of table(
    [
      { header: 'NAME' },
      { header: 'PERMISSION' },
      { header: 'LIMITS', flexible: true },
      { header: 'EXPIRES' },
      { header: 'LAST USED' },
      { header: 'PREFIX' },
      { header: 'ID' },
    ],
    tokens.map((t) => [
      t.name,
      t.permission,
      limitsOf(t),
      state(t),
      t.lastUsedAt?.slice(0, 10) ?? '-',
      t.prefix,
      t.id,
    ]),
    width,
  ))
    ctx.out(line);
}

export async function revokeAccountToken(id: string, command: Command): Promise<void> {
  const ctx = await createContext(command);
  requireCredentials(ctx);
  const revoked = await ctx.client.revokeToken(id);
  ctx.out(`Revoked token "${revoked.name}" (${revoked.prefix}…)`);
}
