import { Command } from 'commander';
import { configureDeprecateCommands } from './commands/deprecate.js';
import { configureInfoCommand } from './commands/info.js';
import { configureInstallCommand } from './commands/install.js';
import { configureListCommand } from './commands/list.js';
import { configureLoginCommands } from './commands/login.js';
import { configureOutdatedCommand } from './commands/outdated.js';
import { configurePublishCommand } from './commands/publish.js';
import { configureRemoveCommand } from './commands/remove.js';
import { configureSearchCommand } from './commands/search.js';
import { configureTokenCommands } from './commands/token.js';
import { configureTrustCommand } from './commands/trust.js';
import { configureUpdateCommand } from './commands/update.js';
import { configureVerifyCommand } from './commands/verify.js';
import { configureYankCommands } from './commands/yank.js';
import { DEFAULT_REGISTRY } from './constants.js';
import { EXIT_CODES_HELP } from './errors.js';
import { CLI_VERSION } from './version.js';

// The command tree: one file per command (commands/*.ts) declares its arguments, options, help and
// zod schema, and imports the code that does the work (and the dependencies it needs: zod, the
// registry client, tar-stream…) when it runs, so `--version`, `--help` and a usage error load nothing
// but commander, and `search` nothing that only `install` uses.

const REGISTRY_HELP = `Registry address, first found wins:
  --registry <url>, PKGREG_REGISTRY, "registry" in $XDG_CONFIG_HOME/pkgreg/config.json
  (~/.config/pkgreg/config.json), then ${DEFAULT_REGISTRY}`;

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

  configureSearchCommand(program);
  configureInfoCommand(program);
  configureInstallCommand(program);
  configureListCommand(program);
  configureRemoveCommand(program);
  configureOutdatedCommand(program);
  configureUpdateCommand(program);
  configureVerifyCommand(program);
  configurePublishCommand(program);
  configureDeprecateCommands(program);
  configureYankCommands(program);
  configureLoginCommands(program);
  configureTokenCommands(program);
  configureTrustCommand(program);
  return program;
}
