import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';
import { LOCKFILE_NAME } from '../constants.js';

// `pkgreg list`: what it takes. What it does: actions/list.ts.

export const listOptions = commandOptions((z) =>
  z.object({ json: z.boolean().default(false), global: z.boolean().default(false) }),
);
export type ListOptions = OptionsOf<typeof listOptions>;

export function configureListCommand(program: Command): void {
  program
    .command('list')
    .alias('ls')
    .description(
      `list the installed skills from ${LOCKFILE_NAME}: version, agents, and whether they were modified`,
    )
    .option('-g, --global', 'list the global installs')
    .option('--json', 'print the list as JSON')
    .action(async (options: Record<string, unknown>, command: Command) => {
      const input = await listOptions.parse(options);
      const { list } = await import('../actions/list.js');
      await list(input, command);
    });
}
