import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';
import { LOCKFILE_NAME } from '../constants.js';

// `pkgreg update [packages...]`: what it takes. What it does: install/update.ts (site skills:
// install/site-update.ts).

export const updateOptions = commandOptions((z) =>
  z.object({
    names: z.array(z.string()),
    global: z.boolean().default(false),
    force: z.boolean().default(false),
    allowRisk: z.boolean().default(false),
    verify: z.boolean().default(true),
  }),
);
export type UpdateOptions = OptionsOf<typeof updateOptions>;

export function configureUpdateCommand(program: Command): void {
  program
    .command('update')
    .description(
      `update installed packages to the newest version their range allows, and site skills to what their site's index lists now, and record it in ${LOCKFILE_NAME}`,
    )
    .argument(
      '[packages...]',
      'package names as @scope/name, site skills by name or <site URL>#<name> (default: every locked package and site skill)',
    )
    .option('-g, --global', 'update the global installs')
    .option('-f, --force', 'overwrite skills that were modified locally')
    .option(
      '--allow-risk',
      'install a new version whose risk scan found high-risk content (exit 7 without it)',
    )
    .option(
      '--no-verify',
      "update without checking the registry's signatures of the new versions (prints a warning)",
    )
    .action(async (names: string[], options: Record<string, unknown>, command: Command) => {
      const input = await updateOptions.parse({ ...options, names });
      const { update } = await import('../install/update.js');
      await update(input, command);
    });
}
