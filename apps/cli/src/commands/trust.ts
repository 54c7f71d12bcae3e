import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';

// `pkgreg trust list|add|remove <package>`: a package's trusted publishers (docs/publishing.md,
// "Trusted publishers"), with an access token of an admin of its scope. What they do: actions/trust.ts.

export const GITHUB_ACTIONS_ISSUER = 'https://token.actions.githubusercontent.com';

export const trustOptions = commandOptions((z) =>
  z.object({
    token: z.string().min(1, { error: 'must not be empty' }).optional(),
    json: z.boolean().default(false),
    issuer: z.url({ error: 'must be the issuer URL' }).default(GITHUB_ACTIONS_ISSUER),
    repository: z.string().min(1).optional(),
    workflow: z.string().min(1).optional(),
    environment: z.string().min(1).optional(),
    wholeScope: z.boolean().default(false),
  }),
);
export type TrustOptions = OptionsOf<typeof trustOptions>;

const TOKEN_HELP = 'an access token of an admin of the scope (default: PKGREG_TOKEN)';

export function configureTrustCommand(program: Command): void {
  const trust = program
    .command('trust')
    .description('list, add or remove the CI identities trusted to upload versions of a package of yours');
  trust
    .command('list')
    .description("a package's trusted publishers")
    .argument('<package>', 'package name as @scope/name')
    .option('--token <token>', TOKEN_HELP)
    .option('--json', 'print the package settings as JSON')
    .action((name: string, options: Record<string, unknown>, command: Command) =>
      run('list', name, undefined, options, command),
    );
  trust
    .command('add')
    .description('trust a CI identity (repository, workflow, environment) to upload versions')
    .argument('<package>', 'package name as @scope/name')
    .requiredOption('--repository <owner/repo>', 'GitHub owner/repo, or GitLab group/project')
    .option('--issuer <url>', `the CI's OIDC issuer (GitLab: https://gitlab.com)`, GITHUB_ACTIONS_ISSUER)
    .option('--workflow <file>', 'the workflow file (publish.yml) or GitLab CI config path; default any')
    .option('--environment <name>', 'the deployment environment the job must run in')
    .option('--whole-scope', 'trust it for every package of the scope')
    .option('--token <token>', TOKEN_HELP)
    .option('--json', 'print the package settings as JSON')
    .action((name: string, options: Record<string, unknown>, command: Command) =>
      run('add', name, undefined, options, command),
    );
  trust
    .command('remove')
    .description('stop trusting a CI identity (its id from `pkgreg trust list`)')
    .argument('<package>', 'package name as @scope/name')
    .argument('<id>', 'the trusted publisher id')
    .option('--token <token>', TOKEN_HELP)
    .option('--json', 'print the package settings as JSON')
    .action((name: string, id: string, options: Record<string, unknown>, command: Command) =>
      run('remove', name, id, options, command),
    );
}

async function run(
  action: 'list' | 'add' | 'remove',
  name: string,
  id: string | undefined,
  options: Record<string, unknown>,
  command: Command,
): Promise<void> {
  const { parsePackageArg } = await import('../names.js');
  const ref = parsePackageArg(name);
  const input = await trustOptions.parse(options);
  const { trust } = await import('../actions/trust.js');
  await trust(action, ref, id, input, command);
}
