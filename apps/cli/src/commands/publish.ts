import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';
import { PROOF_HELP, YES_HELP } from '../constants.js';

// `pkgreg publish [repository]`: what it takes. What it does: actions/publish.ts.

export const publishOptions = commandOptions(async (z) => {
  const { BranchSchema } = await import('@pkgreg/contracts/publishing');
  return z.object({
    repository: z.string().optional(),
    ref: BranchSchema.optional(),
    token: z.string().min(1, { error: 'must not be empty' }).optional(),
    json: z.boolean().default(false),
    wait: z.boolean().default(true),
    rotateWebhookSecret: z.boolean().default(false),
    yes: z.boolean().default(false),
    run: z.uuid({ error: 'must be a run id (a UUID)' }).optional(),
  });
});
export type PublishOptions = OptionsOf<typeof publishOptions>;

export function configurePublishCommand(program: Command): void {
  program
    .command('publish')
    .description(
      'index a repository of yours into the registry now, with a proof that you control it (docs: publishing)',
    )
    .argument('[repository]', 'owner/repo (default: the origin of the git checkout here)')
    .option('--ref <branch>', 'branch to index (default: the repository default branch; remembered)')
    .option(
      '--token <token>',
      'a GitHub token with push access (default: OIDC in GitHub Actions, GITHUB_TOKEN, gh auth token)',
    )
    .option('-y, --yes', YES_HELP)
    .option('--json', 'print the run (and the webhook set-up) as JSON')
    .option('--no-wait', 'print the run id and return without waiting')
    .option('--rotate-webhook-secret', 'replace the webhook secret and show the new one (a user token only)')
    .option('--run <runId>', 'wait for (or show) an earlier run instead of publishing')
    .addHelpText('after', `\n${PROOF_HELP}\n`)
    .action(async (repository: string | undefined, options: Record<string, unknown>, command: Command) => {
      const input = await publishOptions.parse({ ...options, repository });
      const { publish } = await import('../actions/publish.js');
      await publish(input, command);
    });
}
