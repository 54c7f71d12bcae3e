import type { Command } from 'commander';
import { collect, commandOptions, type OptionsOf } from '../command-options.js';

// `pkgreg token create|list|revoke`: what they take. What they do: actions/account.ts
// (docs/cli-auth.md, "Tokens that create tokens").

export const tokenCreateOptions = commandOptions((z) =>
  z
    .object({
      name: z.string({ error: 'is required' }).trim().min(1).max(100),
      read: z.boolean().default(false),
      publish: z.boolean().default(false),
      scope: z
        .array(z.string())
        .default([])
        .transform((values) => values.map((value) => value.replace(/^@/, ''))),
      package: z
        .array(z.string())
        .default([])
        .transform((values) => values.map((value) => value.replace(/^@/, ''))),
      org: z.array(z.string()).default([]),
      cidr: z.array(z.string()).default([]),
      expiresInDays: z.coerce.number().int().min(1).max(3650).default(30),
      json: z.boolean().default(false),
    })
    .refine((input) => input.read !== input.publish, { error: 'give one of --read or --publish' }),
);
export type TokenCreateOptions = OptionsOf<typeof tokenCreateOptions>;

export const tokenListOptions = commandOptions((z) => z.object({ json: z.boolean().default(false) }));
export type TokenListOptions = OptionsOf<typeof tokenListOptions>;

export const tokenRevokeOptions = commandOptions((z) =>
  z.object({ id: z.uuid({ error: 'must be a token id (a UUID, from pkgreg token list)' }) }),
);

const TOKEN_RULE = `A token made here is no wider than the one you are logged in with: read, or publish
when yours is publish; within its organisations, scopes and packages; expiring no later. Listing and
revoking need the token pkgreg login stores (publish, no limits).`;

export function configureTokenCommands(program: Command): void {
  const token = program.command('token').description('create, list and revoke access tokens of your account');

  token
    .command('create')
    .description('create an access token (for CI: set it as PKGREG_TOKEN); its secret is printed once')
    .requiredOption('--name <name>', 'what it is for ("CI deploy")')
    .option('--read', 'install and read private packages only')
    .option('--publish', 'also publish')
    .option('--scope <scope>', 'limit to a scope (repeatable)', collect)
    .option('--package <@scope/name>', 'limit to a package (repeatable)', collect)
    .option('--org <organisation>', 'limit to an organisation, by slug or id (repeatable)', collect)
    .option('--cidr <range>', 'usable only from this IP address or CIDR range (repeatable)', collect)
    .option('--expires-in-days <days>', 'days until it expires (default 30)')
    .option('--json', 'print the created token as JSON')
    .addHelpText('after', `\n${TOKEN_RULE}\n`)
    .action(async (options: Record<string, unknown>, command: Command) => {
      const input = await tokenCreateOptions.parse(options);
      const { createAccountToken } = await import('../actions/account.js');
      await createAccountToken(input, command);
    });

  token
    .command('list')
    .alias('ls')
    .description("list your account's tokens (never their secrets)")
    .option('--json', 'print the list as JSON')
    .action(async (options: Record<string, unknown>, command: Command) => {
      const input = await tokenListOptions.parse(options);
      const { listAccountTokens } = await import('../actions/account.js');
      await listAccountTokens(input, command);
    });

  token
    .command('revoke')
    .description('revoke a token: refused from the next request on')
    .argument('<id>', 'the token id (pkgreg token list)')
    .action(async (id: string, _options: Record<string, unknown>, command: Command) => {
      const input = await tokenRevokeOptions.parse({ id });
      const { revokeAccountToken } = await import('../actions/account.js');
      await revokeAccountToken(input.id, command);
    });
}
