import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';
import { PROOF_HELP, YES_HELP } from '../constants.js';

// `pkgreg deprecate <package>` and `pkgreg undeprecate <package>`: what they take. What they do:
// actions/manage.ts.

export const deprecateOptions = commandOptions((z) =>
  z.object({
    name: z.string(),
    token: z.string().min(1, { error: 'must not be empty' }).optional(),
    json: z.boolean().default(false),
    yes: z.boolean().default(false),
    message: z.string().max(1024, { error: 'must be at most 1024 characters' }).optional(),
  }),
);
export type DeprecateOptions = OptionsOf<typeof deprecateOptions>;

export function configureDeprecateCommands(program: Command): void {
  program
    .command('deprecate')
    .description('mark a package of yours deprecated; info, install and the web page show the message')
    .argument('<package>', 'package name as @scope/name')
    .option('-m, --message <text>', 'what to tell users (e.g. what to use instead)')
    .option(
      '--token <token>',
      'a GitHub token with push access to the source repository, or a pkgreg publish token',
    )
    .option('-y, --yes', YES_HELP)
    .option('--json', 'print the package state as JSON')
    .addHelpText('after', `\n${PROOF_HELP}\n`)
    .action((name: string, options: Record<string, unknown>, command: Command) =>
      run(true, name, options, command),
    );

  program
    .command('undeprecate')
    .description('lift your deprecation of a package')
    .argument('<package>', 'package name as @scope/name')
    .option(
      '--token <token>',
      'a GitHub token with push access to the source repository, or a pkgreg publish token',
    )
    .option('-y, --yes', YES_HELP)
    .option('--json', 'print the package state as JSON')
    .action((name: string, options: Record<string, unknown>, command: Command) =>
      run(false, name, options, command),
    );
}

async function run(
  deprecated: boolean,
  name: string,
  options: Record<string, unknown>,
  command: Command,
): Promise<void> {
  const { parsePackageArg } = await import('../names.js');
  const ref = parsePackageArg(name);
  const input = await deprecateOptions.parse({ ...options, name });
  const { setDeprecated } = await import('../actions/manage.js');
  await setDeprecated(deprecated, ref, input, command);
}
