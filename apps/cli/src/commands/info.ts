import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';

// `pkgreg info <package>`: what it takes. What it does: actions/info.ts.

export const infoOptions = commandOptions((z) =>
  z.object({ name: z.string(), json: z.boolean().default(false) }),
);
export type InfoOptions = OptionsOf<typeof infoOptions>;

export function configureInfoCommand(program: Command): void {
  program
    .command('info')
    .description('show the details of a package and the tree of what it depends on')
    .argument('<package>', 'package name as @scope/name')
    .option('--json', 'print the registry response, with the dependency tree, as JSON')
    .action(async (name: string, options: Record<string, unknown>, command: Command) => {
      const input = await infoOptions.parse({ ...options, name });
      const { info } = await import('../actions/info.js');
      await info(input, command);
    });
}
