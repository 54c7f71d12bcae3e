import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';
import { LOCKFILE_NAME } from '../constants.js';

// `pkgreg outdated`: what it takes. What it does: actions/outdated.ts.

export const outdatedOptions = commandOptions((z) =>
  z.object({ json: z.boolean().default(false), global: z.boolean().default(false) }),
);
export type OutdatedOptions = OptionsOf<typeof outdatedOptions>;

export function configureOutdatedCommand(program: Command): void {
  program
    .command('outdated')
    .description(
      `list installed packages with a newer version than ${LOCKFILE_NAME} records (within its range), and site skills whose index lists another digest`,
    )
    .option('-g, --global', 'check the global installs')
    .option('--json', 'print the comparison as JSON')
    .action(async (options: Record<string, unknown>, command: Command) => {
      const input = await outdatedOptions.parse(options);
      const { outdated } = await import('../actions/outdated.js');
      await outdated(input, command);
    });
}
