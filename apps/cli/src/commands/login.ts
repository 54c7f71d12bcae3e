import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';

// `pkgreg login`, `pkgreg logout`, `pkgreg whoami`: what they take. What they do: actions/login.ts and
// actions/account.ts (docs/cli-auth.md).

export const loginOptions = commandOptions((z) =>
  z
    .object({ device: z.boolean().default(false), browser: z.boolean().default(false) })
    .refine((input) => !(input.device && input.browser), {
      error: '--device and --browser cannot be combined',
    }),
);
export type LoginOptions = OptionsOf<typeof loginOptions>;

export const whoamiOptions = commandOptions((z) => z.object({ json: z.boolean().default(false) }));
export type WhoamiOptions = OptionsOf<typeof whoamiOptions>;

export const CREDENTIALS_HELP = `Credentials: $XDG_CONFIG_HOME/pkgreg/credentials.json (~/.config/pkgreg/credentials.json),
  one token per registry, readable by you only (0600; a file others can read is ignored).
  PKGREG_TOKEN (for CI) wins over it. Tokens go only to https registries, or http on this machine.`;

export function configureLoginCommands(program: Command): void {
  program
    .command('login')
    .description(
      'sign in to the registry: in your browser (a loopback redirect), or with a device code where no browser opens (SSH, containers); stores a token for the registry',
    )
    .option('--device', 'sign in with a code shown here, entered on another device')
    .option(
      '--browser',
      'use the browser sign-in even when no browser is detected (open the printed URL yourself)',
    )
    .addHelpText('after', `\n${CREDENTIALS_HELP}\n`)
    .action(async (options: Record<string, unknown>, command: Command) => {
      const input = await loginOptions.parse(options);
      const { login } = await import('../actions/login.js');
      await login(input, command);
    });

  program
    .command('logout')
    .description("revoke the registry's stored token and forget it")
    .action(async (_options: Record<string, unknown>, command: Command) => {
      const { logout } = await import('../actions/account.js');
      await logout(command);
    });

  program
    .command('whoami')
    .description('show the account your credentials for the registry belong to, its organisations and roles')
    .option('--json', 'print the registry response as JSON')
    .action(async (options: Record<string, unknown>, command: Command) => {
      const input = await whoamiOptions.parse(options);
      const { whoami } = await import('../actions/account.js');
      await whoami(input, command);
    });
}
