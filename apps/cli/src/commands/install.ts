import { AGENT_SKILL_NAME_PATTERN } from '@pkgreg/contracts';
import type { Command } from 'commander';
import { AGENT_NAMES } from '../agents.js';
import { collect, commandOptions, type OptionsOf } from '../command-options.js';
import { LOCKFILE_NAME } from '../constants.js';

// `pkgreg install [packages...]`: what it takes. What it does, step by step: install/install.ts.

export const installOptions = commandOptions((z) => {
  const commaList = z
    .array(z.string())
    .default([])
    .transform((values) =>
      values
        .flatMap((value) => value.split(','))
        .map((value) => value.trim())
        .filter(Boolean),
    );
  return z
    .object({
      names: z.array(z.string()),
      /** With a site's URL: the skills of its discovery index to install (docs/discovery.md). */
      skill: z
        .array(
          z.string().regex(AGENT_SKILL_NAME_PATTERN, {
            error: 'must be a skill name (lowercase letters, digits and single hyphens, at most 64)',
          }),
        )
        .default([]),
      agent: commaList,
      dir: z.array(z.string()).default([]),
      global: z.boolean().default(false),
      force: z.boolean().default(false),
      frozen: z.boolean().default(false),
      allowRisk: z.boolean().default(false),
      verify: z.boolean().default(true),
    })
    .refine((input) => !(input.force && input.frozen), { error: '--force and --frozen cannot be combined' })
    .refine((input) => input.names.length > 0 || (input.agent.length === 0 && input.dir.length === 0), {
      error: '--agent and --dir apply to named packages; without names the lockfile decides where',
    })
    .refine((input) => !input.names.some(isSite) || input.names.length === 1, {
      error: 'a site is installed on its own: pkgreg install <url> --skill <name>, then the packages',
    })
    .refine((input) => input.skill.length === 0 || input.names.some(isSite), {
      error: '--skill chooses skills of a site: pkgreg install <url> --skill <name>',
    });
});
export type InstallOptions = OptionsOf<typeof installOptions>;

/** A site's URL rather than a package name (docs/discovery.md). */
export function isSite(value: string): boolean {
  return /^https?:\/\//i.test(value);
}

export function configureInstallCommand(program: Command): void {
  program
    .command('install')
    .description(
      `install skills and the skills they depend on, and record them in ${LOCKFILE_NAME}; with no names, install exactly what the lockfile lists`,
    )
    .argument(
      '[packages...]',
      "package names as @scope/name, @scope/name@1.2.0 or @scope/name@^1.2; or one site's URL (its Agent Skills discovery index)",
    )
    .option(
      '-s, --skill <name>',
      "with a site's URL: the skill of its /.well-known/agent-skills/index.json to install (repeatable; not needed when it lists one)",
      collect,
    )
    .option(
      '-a, --agent <agent>',
      'agent to install for (repeatable or comma-separated; default: the agents detected here, else .agents/skills)',
      collect,
    )
    .option(
      '-d, --dir <path>',
      'also install into this skills folder (inside the project, or home with --global)',
      collect,
    )
    .option('-g, --global', "install into the user's home folder instead of the project")
    .option('-f, --force', 'overwrite skills that were modified locally')
    .option('--frozen', 'never modify the lockfile; fail on any difference from it (for CI)')
    .option(
      '--allow-risk',
      'install a version whose risk scan found high-risk content, named or restored from the lockfile (exit 7 without it)',
    )
    .option(
      '--no-verify',
      "install without checking the registry's signatures of the versions (prints a warning; exit 9 without it when one fails)",
    )
    .addHelpText('after', `\nAgents (ids and aliases): ${AGENT_NAMES.join(', ')}`)
    .action(async (names: string[], options: Record<string, unknown>, command: Command) => {
      const input = await installOptions.parse({ ...options, names });
      const { install } = await import('../install/install.js');
      await install(input, command);
    });
}
