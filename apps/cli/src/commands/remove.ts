import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';
import { LOCKFILE_NAME } from '../constants.js';

// `pkgreg remove <packages...>`: what it takes. What it does: actions/remove.ts.

export const removeOptions = commandOptions((z) =>
  z.object({
    names: z.array(z.string()).min(1, { error: 'name at least one package to remove' }),
    global: z.boolean().default(false),
    force: z.boolean().default(false),
  }),
);
export type RemoveOptions = OptionsOf<typeof removeOptions>;

export function configureRemoveCommand(program: Command): void {
  program
    .command('remove')
    .alias('rm')
    .description(
      `delete installed skills (with the dependencies nothing else needs) and their ${LOCKFILE_NAME} entries`,
    )
    .argument(
      '<packages...>',
      'package names as @scope/name; a skill installed from a site by its name, or by <site URL>#<name>',
    )
    .option('-g, --global', 'remove global installs')
    .option('-f, --force', 'remove skills even when their files were modified locally')
    .action(async (names: string[], options: Record<string, unknown>, command: Command) => {
      const input = await removeOptions.parse({ ...options, names });
      const { remove } = await import('../actions/remove.js');
      await remove(input, command);
    });
}
