import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';
import { PROOF_HELP, YES_HELP } from '../constants.js';
import { usageError } from '../errors.js';

// `pkgreg yank <package@version>` and `pkgreg unyank <package@version>`: what they take. What they do:
// actions/manage.ts.

export const yankOptions = commandOptions((z) =>
  z.object({
    token: z.string().min(1, { error: 'must not be empty' }).optional(),
    json: z.boolean().default(false),
    yes: z.boolean().default(false),
    reason: z.string().max(1024, { error: 'must be at most 1024 characters' }).optional(),
  }),
);
export type YankOptions = OptionsOf<typeof yankOptions>;

export function configureYankCommands(program: Command): void {
  program
    .command('yank')
    .description(
      'yank a version of your package: still installed by exact version (lockfiles), never chosen by a range or latest',
    )
    .argument('<package@version>', 'an exact version, as @scope/name@1.2.0')
    .option('--reason <text>', 'why (shown beside the version)')
    .option(
      '--token <token>',
      'a GitHub token with push access to the source repository, or a pkgreg publish token',
    )
    .option('-y, --yes', YES_HELP)
    .option('--json', 'print the version state as JSON')
    .addHelpText('after', `\n${PROOF_HELP}\n`)
    .action((spec: string, options: Record<string, unknown>, command: Command) =>
      run(true, spec, options, command),
    );

  program
    .command('unyank')
    .description('undo a yank')
    .argument('<package@version>', 'an exact version, as @scope/name@1.2.0')
    .option(
      '--token <token>',
      'a GitHub token with push access to the source repository, or a pkgreg publish token',
    )
    .option('-y, --yes', YES_HELP)
    .option('--json', 'print the version state as JSON')
    .action((spec: string, options: Record<string, unknown>, command: Command) =>
      run(false, spec, options, command),
    );
}

async function run(
  yanked: boolean,
  spec: string,
  options: Record<string, unknown>,
  command: Command,
): Promise<void> {
  // The version is checked before the options, as before: an exact one only.
  const { parsePackageSpec } = await import('../names.js');
  const parsed = parsePackageSpec(spec);
  if (parsed.spec.kind !== 'exact') {
    throw usageError(`${yanked ? 'yank' : 'unyank'} takes an exact version: @scope/name@1.2.0`);
  }
  const input = await yankOptions.parse(options);
  const { setYanked } = await import('../actions/manage.js');
  await setYanked(yanked, parsed.ref, parsed.spec.version, input, command);
}
