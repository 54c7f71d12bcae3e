import { Command } from 'commander';
import { AGENT_NAMES } from './agents.js';
import type { SearchOptions } from './commands/search.js';
import { DEFAULT_REGISTRY, LOCKFILE_NAME } from './constants.js';
import { EXIT_CODES_HELP } from './errors.js';
import { CLI_VERSION } from './version.js';

// The command tree: names, arguments, options and help. Each command's code (and the dependencies it
// needs: zod, the registry client, tar-stream…) is imported when that command runs, so `--version`,
// `--help` and a usage error load nothing but commander, and `search` nothing that only `install` uses.

const REGISTRY_HELP = `Registry address, first found wins:
  --registry <url>, PKGREG_REGISTRY, "registry" in $XDG_CONFIG_HOME/pkgreg/config.json
  (~/.config/pkgreg/config.json), then ${DEFAULT_REGISTRY}`;

const PROOF_HELP = `Proof of ownership, first found wins:
  --token <token>; in GitHub Actions with "permissions: id-token: write", an OIDC token for the
  registry URL (trusted publishing, no secret to store); GITHUB_TOKEN; \`gh auth token\`.
  A proof goes only to an https registry (or http on this machine). GITHUB_TOKEN or gh's token goes
  to a registry other than ${DEFAULT_REGISTRY} only once you confirm, or with --yes.`;

const YES_HELP = "send GITHUB_TOKEN or gh's token to a registry other than the default without asking";

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Builds the command tree; never exits the process itself (index.ts maps errors to exit codes). */
export function createProgram(): Command {
  const program = new Command('pkgreg')
    .description('Find, inspect and install agent-skill packages from the pkgreg registry')
    .version(CLI_VERSION, '-V, --version', 'print the version')
    .option('--registry <url>', 'registry address (overrides PKGREG_REGISTRY and the config file)')
    .option('--verbose', 'print requests, retries and error details on stderr')
    .helpOption('-h, --help', 'show help')
    .addHelpText('after', `\n${REGISTRY_HELP}\n\n${EXIT_CODES_HELP}\n`)
    .showHelpAfterError('(run "pkgreg --help" for usage)')
    .exitOverride();

  program
    .command('search')
    .description('search the registry by scope, name and description, or list it by a sort')
    .argument('[terms...]', 'search terms (each matches as a word prefix)')
    .option('--kind <kind>', 'only this kind: skill, composite, workflow, app')
    .option('--category <category>', 'only this category')
    .option('--tag <tag>', 'only packages with this tag')
    .option('--agent <agent>', 'only packages compatible with this agent (e.g. claude-code)')
    .option('--license <spdx>', 'only this license (the whole SPDX expression)')
    .option('--verified', 'only verified publishers')
    .option('--status <status>', 'active (deprecated left out) or deprecated')
    .option('--risk <level>', 'at most this risk: none, low, medium, high')
    .option('--owner <scope>', "only this scope's packages")
    .option('--sort <sort>', 'list instead of search: name, stars, indexed, downloads, trending')
    .option('--order <order>', 'with --sort: asc or desc (default: name asc, the others desc)')
    .option('--json', 'print the registry response as JSON')
    .action(async (terms: string[], options: SearchOptions, command: Command) => {
      const { search } = await import('./commands/search.js');
      await search(terms, options, command);
    });

  program
    .command('info')
    .description('show the details of a package and the tree of what it depends on')
    .argument('<package>', 'package name as @scope/name')
    .option('--json', 'print the registry response, with the dependency tree, as JSON')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const { info } = await import('./commands/info.js');
      await info(name, options, command);
    });

  program
    .command('install')
    .description(
      `install skills and the skills they depend on, and record them in ${LOCKFILE_NAME}; with no names, install exactly what the lockfile lists`,
    )
    .argument('[packages...]', 'package names as @scope/name, @scope/name@1.2.0 or @scope/name@^1.2')
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
    .addHelpText('after', `\nAgents (ids and aliases): ${AGENT_NAMES.join(', ')}`)
    .action(async (names: string[], options: Record<string, unknown>, command: Command) => {
      const { install } = await import('./commands/install.js');
      await install(names, options, command);
    });

  program
    .command('list')
    .alias('ls')
    .description(
      `list the installed skills from ${LOCKFILE_NAME}: version, agents, and whether they were modified`,
    )
    .option('-g, --global', 'list the global installs')
    .option('--json', 'print the list as JSON')
    .action(async (options: Record<string, unknown>, command: Command) => {
      const { list } = await import('./commands/list.js');
      await list(options, command);
    });

  program
    .command('remove')
    .alias('rm')
    .description(
      `delete installed skills (with the dependencies nothing else needs) and their ${LOCKFILE_NAME} entries`,
    )
    .argument('<packages...>', 'package names as @scope/name')
    .option('-g, --global', 'remove global installs')
    .option('-f, --force', 'remove skills even when their files were modified locally')
    .action(async (names: string[], options: Record<string, unknown>, command: Command) => {
      const { remove } = await import('./commands/remove.js');
      await remove(names, options, command);
    });

  program
    .command('outdated')
    .description(
      `list installed packages with a newer version than ${LOCKFILE_NAME} records (within its range)`,
    )
    .option('-g, --global', 'check the global installs')
    .option('--json', 'print the comparison as JSON')
    .action(async (options: Record<string, unknown>, command: Command) => {
      const { outdated } = await import('./commands/outdated.js');
      await outdated(options, command);
    });

  program
    .command('update')
    .description(
      `update installed packages to the newest version their range allows and record it in ${LOCKFILE_NAME}`,
    )
    .argument('[packages...]', 'package names as @scope/name (default: every locked package)')
    .option('-g, --global', 'update the global installs')
    .option('-f, --force', 'overwrite skills that were modified locally')
    .option(
      '--allow-risk',
      'install a new version whose risk scan found high-risk content (exit 7 without it)',
    )
    .action(async (names: string[], options: Record<string, unknown>, command: Command) => {
      const { update } = await import('./commands/update.js');
      await update(names, options, command);
    });

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
      const { publish } = await import('./commands/publish.js');
      await publish(repository, options, command);
    });

  program
    .command('deprecate')
    .description('mark a package of yours deprecated; info, install and the web page show the message')
    .argument('<package>', 'package name as @scope/name')
    .option('-m, --message <text>', 'what to tell users (e.g. what to use instead)')
    .option('--token <token>', 'a GitHub token with push access to the source repository')
    .option('-y, --yes', YES_HELP)
    .option('--json', 'print the package state as JSON')
    .addHelpText('after', `\n${PROOF_HELP}\n`)
    .action(async (name: string, options: Record<string, unknown>, command: Command) => {
      const { setDeprecated } = await import('./commands/manage.js');
      await setDeprecated(true, name, options, command);
    });

  program
    .command('undeprecate')
    .description('lift your deprecation of a package')
    .argument('<package>', 'package name as @scope/name')
    .option('--token <token>', 'a GitHub token with push access to the source repository')
    .option('-y, --yes', YES_HELP)
    .option('--json', 'print the package state as JSON')
    .action(async (name: string, options: Record<string, unknown>, command: Command) => {
      const { setDeprecated } = await import('./commands/manage.js');
      await setDeprecated(false, name, options, command);
    });

  program
    .command('yank')
    .description(
      'yank a version of your package: still installed by exact version (lockfiles), never chosen by a range or latest',
    )
    .argument('<package@version>', 'an exact version, as @scope/name@1.2.0')
    .option('--reason <text>', 'why (shown beside the version)')
    .option('--token <token>', 'a GitHub token with push access to the source repository')
    .option('-y, --yes', YES_HELP)
    .option('--json', 'print the version state as JSON')
    .addHelpText('after', `\n${PROOF_HELP}\n`)
    .action(async (spec: string, options: Record<string, unknown>, command: Command) => {
      const { setYanked } = await import('./commands/manage.js');
      await setYanked(true, spec, options, command);
    });

  program
    .command('unyank')
    .description('undo a yank')
    .argument('<package@version>', 'an exact version, as @scope/name@1.2.0')
    .option('--token <token>', 'a GitHub token with push access to the source repository')
    .option('-y, --yes', YES_HELP)
    .option('--json', 'print the version state as JSON')
    .action(async (spec: string, options: Record<string, unknown>, command: Command) => {
      const { setYanked } = await import('./commands/manage.js');
      await setYanked(false, spec, options, command);
    });

  return program;
}
