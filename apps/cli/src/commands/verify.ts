import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';
import { LOCKFILE_NAME } from '../constants.js';

// `pkgreg verify`: what it takes. What it does: actions/verify.ts.

export const verifyOptions = commandOptions((z) =>
  z.object({ json: z.boolean().default(false), global: z.boolean().default(false) }),
);
export type VerifyOptions = OptionsOf<typeof verifyOptions>;

export function configureVerifyCommand(program: Command): void {
  program
    .command('verify')
    .description(
      `check each package of ${LOCKFILE_NAME}: installed files, the registry's record and its signature (for CI)`,
    )
    .option('-g, --global', 'verify the global installs')
    .option('--json', 'print the report as JSON')
    .action(async (options: Record<string, unknown>, command: Command) => {
      const input = await verifyOptions.parse(options);
      const { verify } = await import('../actions/verify.js');
      await verify(input, command);
    });
}
