import { setTimeout as sleep } from 'node:timers/promises';
import { type PublishAccepted, type PublishRun, RepositorySchema, type SkillResult } from '@pkgreg/contracts';
import type { Command } from 'commander';
import type { PublishOptions } from '../commands/publish.js';
import { type Context, createContext } from '../context.js';
import { CliError, EXIT, usageError } from '../errors.js';
import { originRepository } from '../git-origin.js';
import { createProgress } from '../progress.js';
import { describeProof, resolveProof } from '../proof.js';
import { oneLine } from '../terminal-text.js';

// `pkgreg publish [owner/repo] [--ref <branch>]` (docs/publishing.md): proves control of the repository,
// asks the registry to index it now, waits for the run on the runtime worker and prints what became of
// each skill. Exit 0 when every skill was indexed, 6 when some were rejected, 1 when the run failed.

/** How long publish waits for its run before giving up (the run itself goes on). */
const WAIT_LIMIT_MS = 15 * 60_000;
const STEPS = ['queued, waiting for a worker', 'indexing on the runtime worker'];

async function repositoryFor(ctx: Context, argument: string | undefined): Promise<string> {
  const chosen = argument ?? (await originRepository(process.cwd())) ?? ctx.env.githubRepository;
  if (chosen === undefined) {
    throw usageError('Name the repository (owner/repo): this folder is no git checkout with an origin');
  }
  const parsed = RepositorySchema.safeParse(chosen.replace(/\.git$/, ''));
  if (!parsed.success) throw usageError(`Invalid repository "${chosen}": expected owner/repo`);
  if (argument === undefined) ctx.debug(`repository ${parsed.data} (from the checkout)`);
  return parsed.data;
}

/** Polls the run until it ends, showing its state on stderr (queued, then indexing). */
async function waitFor(ctx: Context, runId: string, quiet: boolean): Promise<PublishRun> {
  const progress = quiet ? undefined : createProgress(STEPS.length);
  let reached = 0;
  const deadline = Date.now() + WAIT_LIMIT_MS;
  let delay = 250;
  try {
    for (;;) {
      const run = await ctx.client.publishRun(runId);
      const at = run.status === 'queued' ? 1 : 2;
      for (; reached < at; reached++) progress?.step(STEPS[reached] ?? '');
      if (run.status === 'succeeded' || run.status === 'failed') return run;
      if (Date.now() > deadline) {
        throw new CliError(
          EXIT.error,
          `Run ${runId} is still ${run.status} after ${WAIT_LIMIT_MS / 60_000} minutes; see later with: pkgreg publish --run ${runId}`,
        );
      }
      await sleep(delay);
      delay = Math.min(2_000, delay * 2);
    }
  } finally {
    progress?.done();
  }
}

const LABELS: Record<SkillResult['outcome'], string> = {
  'new-version': 'new version',
  unchanged: 'unchanged',
  rejected: 'rejected',
  delisted: 'delisted',
};

function printResult(ctx: Context, run: PublishRun): void {
  const skills = run.result?.skills ?? [];
  const width = Math.max(...Object.values(LABELS).map((l) => l.length));
  for (const skill of skills) {
    const label = LABELS[skill.outcome].padEnd(width);
    const what = skill.name ? `${skill.name}${skill.version ? `@${skill.version}` : ''}` : skill.path;
    const reason = skill.reason ? `: ${skill.reason}` : '';
    ctx.out(
      `  ${label}  ${what}${skill.outcome === 'rejected' && skill.name ? ` (${skill.path})` : ''}${reason}`,
    );
    for (const warning of skill.warnings)
      ctx.out(`  ${'warning'.padEnd(width)}  ${skill.name ?? skill.path}: ${warning}`);
  }
  const count = (outcome: SkillResult['outcome']) => skills.filter((s) => s.outcome === outcome).length;
  const parts = (['new-version', 'unchanged', 'rejected', 'delisted'] as const)
    .filter((o) => count(o) > 0)
    .map((o) => `${count(o)} ${LABELS[o]}`);
  const warnings = skills.reduce((sum, s) => sum + s.warnings.length, 0);
  if (warnings > 0) parts.push(`${warnings} warning${warnings === 1 ? '' : 's'}`);
  const notes = run.result?.notModified ? ' (GitHub: nothing changed since the last run)' : '';
  ctx.out(
    `${skills.length} skill${skills.length === 1 ? '' : 's'}: ${parts.join(', ') || 'none found'}${notes}`,
  );
}

function printWebhook(ctx: Context, accepted: PublishAccepted): void {
  const hook = accepted.webhook;
  if (!hook) return;
  ctx.out('');
  ctx.out('Webhook: re-index on every push. Add it under Settings > Webhooks of the repository.');
  ctx.out(
    'The secret is shown this once; the registry cannot show it again (rotate with --rotate-webhook-secret).',
  );
  ctx.out(`  Payload URL:  ${hook.url}`);
  ctx.out(`  Content type: ${hook.contentType}`);
  ctx.out(`  Secret:       ${hook.secret}`);
  ctx.out(`  Events:       ${hook.events.join(', ')}`);
}

function exitFor(run: PublishRun): void {
  if (run.status === 'failed')
    throw new CliError(EXIT.error, `Publish failed: ${run.error ?? 'the run failed'}`);
  if (run.result?.skills.some((s) => s.outcome === 'rejected')) process.exitCode = EXIT.rejected;
}

export async function publish(input: PublishOptions, command: Command): Promise<void> {
  const ctx = await createContext(command);
  if (input.run) {
    const run = await waitFor(ctx, input.run, input.json || !input.wait);
    if (input.json) ctx.json(run);
    else {
      ctx.out(`run ${run.runId}: ${run.repository} (@${run.scope}) ${run.status}`);
      printResult(ctx, run);
    }
    exitFor(run);
    return;
  }
  const repo = await repositoryFor(ctx, input.repository);
  const proof = await resolveProof(ctx, { token: input.token, yes: input.yes });
  const accepted = await ctx.client.publish(proof.token, {
    repository: repo,
    ...(input.ref ? { ref: input.ref } : {}),
    ...(input.rotateWebhookSecret ? { rotateWebhookSecret: true } : {}),
  });
  const ref = accepted.ref ? ` (${accepted.ref})` : '';
  if (!input.wait) {
    if (input.json) ctx.json(accepted);
    else {
      ctx.out(accepted.runId);
      printWebhook(ctx, accepted);
    }
    return;
  }
  if (!input.json) {
    process.stderr.write(
      `${oneLine(`Publishing ${accepted.repository}${ref} into @${accepted.scope} with ${describeProof(proof)}: run ${accepted.runId}`)}\n`,
    );
  }
  const run = await waitFor(ctx, accepted.runId, input.json);
  if (input.json) ctx.json({ ...run, webhook: accepted.webhook });
  else {
    if (run.status === 'succeeded') printResult(ctx, run);
    printWebhook(ctx, accepted);
  }
  exitFor(run);
}
