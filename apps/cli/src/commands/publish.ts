import type { Command } from 'commander';
import { commandOptions, type OptionsOf } from '../command-options.js';
import { PROOF_HELP, UPLOAD_HELP, YES_HELP } from '../constants.js';

/** An existing folder: `pkgreg publish ./skills` uploads, `pkgreg publish owner/repo` indexes. */
function isFolder(path: string): boolean {
  const { statSync } = process.getBuiltinModule('node:fs');
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

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
    // Uploads of a folder (docs/publishing.md, "Uploading (hosted packages)").
    setVersion: z.string().min(1).optional(),
    scope: z
      .string()
      .transform((value) => value.replace(/^@/, ''))
      .pipe(z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { error: 'must be a scope name (a-z, 0-9, -)' }))
      .optional(),
    oidcTokenEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be a variable name' })
      .optional(),
  });
});
export type PublishOptions = OptionsOf<typeof publishOptions>;

export function configurePublishCommand(program: Command): void {
  program
    .command('publish')
    .description(
      'upload a skill folder as a hosted package, or index a repository of yours now with a proof that you control it (docs: publishing)',
    )
    .argument(
      '[repository-or-folder]',
      'a folder: upload its skill (or every skill under it); else owner/repo (default: the origin of the git checkout here)',
    )
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
    .option('--scope <scope>', 'folder upload: the scope to publish into (required)')
    // Not --version: pkgreg's own -V/--version is recognised anywhere on the command line.
    .option(
      '--set-version <version>',
      'folder upload: the version (default: the SKILL.md frontmatter version)',
    )
    .option(
      '--oidc-token-env <name>',
      'folder upload: the variable holding a CI OIDC token (GitLab id_tokens)',
    )
    .addHelpText('after', `\n${PROOF_HELP}\n\n${UPLOAD_HELP}\n`)
    .action(async (target: string | undefined, options: Record<string, unknown>, command: Command) => {
      const folder = target !== undefined && isFolder(target) ? target : undefined;
      const input = await publishOptions.parse({ ...options, repository: folder ? undefined : target });
      if (folder) {
        const { upload } = await import('../actions/upload.js');
        await upload(folder, input, command);
        return;
      }
      const { publish } = await import('../actions/publish.js');
      await publish(input, command);
    });
}
