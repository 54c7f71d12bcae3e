import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  OperatorError,
  seedDemoAccounts,
  setOrganizationSuspended,
  setSiteAdmin,
  suspendAccount,
  takeOverOrganization,
  unsuspendAccount,
} from '@pkgreg/accounts';
import { parsePackageName } from '@pkgreg/contracts';
import { createDb, type Db } from '@pkgreg/db';
import {
  type IndexerDeps,
  type IndexFailure,
  type IndexRequest,
  type IndexSummary,
  indexerSettings,
  indexSource,
  listKnownSources,
  reindexAll,
  seedDemo,
} from '@pkgreg/indexer';
import {
  collectUnreferencedBlobs,
  removePackage,
  rescanVersions,
  restorePackage,
  withDependencyRefresh,
} from '@pkgreg/registry';
import { Command, InvalidArgumentError } from 'commander';
import { type Env, loadEnv } from './env.js';
import { listReports, quarantinePackage, releasePackage } from './moderation/moderation.repository.js';
import { configureLogCommands } from './provenance/log.commands.js';
import { configureSigningCommands } from './provenance/signing.commands.js';

// Operator command: `pnpm registry index <owner/repo | path>...`, `pnpm registry reindex`,
// `pnpm registry sources`, `pnpm registry seed-demo`, `pnpm registry remove|restore <@scope/name>`,
// `pnpm registry rescan`, `pnpm registry reports`, `pnpm registry quarantine|release <@scope/name>`,
// `pnpm registry gc-blobs`, and for accounts (docs/accounts.md): `pnpm registry site-admin grant|revoke
// <email>`, `pnpm registry suspend|unsuspend <email>`, `pnpm registry org suspend|unsuspend|take-over <slug>`.
// Output is for people; `--json` for scripts.
// Exit codes: 0 done, 1 a source failed, 2 bad usage or configuration.

/** The monorepo root (where pnpm-workspace.yaml lives): relative demo paths resolve against it. */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

/**
 * `github:owner/repo`, `git:path`, a URL, an existing directory or anything path-like is a local
 * repository or GitHub accordingly; a bare `owner/repo` that is not a local directory is GitHub.
 */
function resolveTarget(arg: string, cwd: string): IndexRequest {
  if (arg.startsWith('github:')) return { kind: 'github', locator: arg.slice('github:'.length) };
  if (arg.startsWith('git:')) return { kind: 'git', locator: resolve(cwd, arg.slice('git:'.length)) };
  if (/^https?:\/\//i.test(arg)) return { kind: 'github', locator: arg };
  const local = resolve(cwd, arg);
  if (arg.startsWith('.') || isAbsolute(arg) || existsSync(local)) return { kind: 'git', locator: local };
  return { kind: 'github', locator: arg };
}

function indexerDeps(env: Env, db: Db): IndexerDeps {
  return { db, ...indexerSettings(env) };
}

const COUNTS = ['indexed', 'updated', 'unchanged', 'delisted', 'rejected'] as const;

function countsLine(s: Pick<IndexSummary, (typeof COUNTS)[number]>): string {
  return COUNTS.map((k) => `${s[k]} ${k}`).join(', ');
}

function printSummary(s: IndexSummary, position: string): void {
  const name = s.sourceRepo ?? s.locator;
  if (s.status === 'failed') {
    const retry = s.error?.retryAt ? ` (retry after ${s.error.retryAt})` : '';
    console.log(`${position} ${s.kind} ${name}: FAILED ${s.error?.code}: ${s.error?.message}${retry}`);
    return;
  }
  const notes = [
    s.notModified ? 'not modified since last run' : '',
    s.truncated ? 'tree truncated, nothing delisted' : '',
  ]
    .filter(Boolean)
    .join('; ');
  console.log(`${position} ${s.kind} ${name}: ${countsLine(s)}${notes ? ` (${notes})` : ''}`);
  for (const v of s.versions) console.log(`    new version ${v.name}@${v.version}`);
  for (const r of s.rejections) console.log(`    rejected ${r.path}: ${r.reason}`);
}

function printTotals(summaries: IndexSummary[]): void {
  const total = { indexed: 0, updated: 0, unchanged: 0, delisted: 0, rejected: 0 };
  for (const s of summaries) for (const k of COUNTS) total[k] += s[k];
  const failed = summaries.filter((s) => s.status === 'failed').length;
  console.log(
    `\n${summaries.length} ${summaries.length === 1 ? 'repository' : 'repositories'}: ${countsLine(total)}${failed ? `; ${failed} failed` : ''}`,
  );
  const rejections = summaries.flatMap((s) =>
    s.rejections.map((r) => ({ ...r, repo: s.sourceRepo ?? s.locator })),
  );
  if (rejections.length > 0) {
    console.log('Rejected:');
    for (const r of rejections) console.log(`  ${r.repo}: ${r.path}: ${r.reason}`);
  }
}

async function runOne(deps: IndexerDeps, request: IndexRequest): Promise<IndexSummary> {
  try {
    return await indexSource(deps, request);
  } catch (error) {
    const summary = (error as Partial<IndexFailure>).summary;
    if (summary) return summary;
    throw error;
  }
}

/** Opens the database for one command and turns a missing migration into an instruction. */
async function withDb<T>(env: Env, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = createDb(env.DATABASE_URL, { max: 3, applicationName: 'pkgreg-registry-cli' });
  try {
    return await fn(db);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '42P01' || code === '42703') {
      console.error('The database is not migrated to the latest schema: run `pnpm db:migrate` first.');
      process.exitCode = 2;
      return undefined as T;
    }
    if (code === 'ECONNREFUSED' || code === '3D000') {
      console.error(`Cannot reach the database (${code}); check DATABASE_URL.`);
      process.exitCode = 2;
      return undefined as T;
    }
    throw error;
  } finally {
    await db.destroy();
  }
}

async function runMany(env: Env, requests: IndexRequest[], json: boolean, db: Db): Promise<void> {
  const deps = indexerDeps(env, db);
  const summaries: IndexSummary[] = [];
  for (const [i, request] of requests.entries()) {
    const position = `[${i + 1}/${requests.length}]`;
    if (!json) console.log(`${position} indexing ${request.kind} ${request.locator} ...`);
    const summary = await runOne(deps, request);
    summaries.push(summary);
    if (!json) printSummary(summary, position);
  }
  if (json) console.log(JSON.stringify(summaries, null, 2));
  else printTotals(summaries);
  if (summaries.some((s) => s.status === 'failed')) process.exitCode = 1;
}

function configureIndexCommand(program: Command, env: Env): void {
  program
    .command('index')
    .description(
      'index the SKILL.md files of GitHub repositories (owner/repo) or local git repositories (path)',
    )
    .argument(
      '<targets...>',
      'owner/repo, a repository URL, a local path; prefix github: or git: to force',
      // An empty argument (say an unset shell variable) would otherwise index the current directory.
      (target: string, previous: string[] = []) => {
        if (target.replace(/^(github|git):/, '').trim() === '') {
          throw new InvalidArgumentError('an empty target names no repository');
        }
        return [...previous, target];
      },
    )
    .option(
      '--owner <owner>',
      'scope for local git repositories (default: the owner of origin on the code host, else the parent directory name)',
    )
    .option(
      '--include-hidden',
      'also index SKILL.md files under hidden folders and node_modules (installed copies; remembered for the source)',
    )
    .option('--json', 'print the summaries as JSON')
    .action(
      async (targets: string[], options: { owner?: string; includeHidden?: boolean; json?: boolean }) => {
        const cwd = env.INIT_CWD ?? process.cwd();
        const requests = targets.map((target) => {
          const request: IndexRequest = {
            ...resolveTarget(target, cwd),
            includeHidden: options.includeHidden,
          };
          return request.kind === 'git' && options.owner ? { ...request, owner: options.owner } : request;
        });
        await withDb(env, (db) => runMany(env, requests, options.json ?? false, db));
      },
    );
}

function configureReindexCommand(program: Command, env: Env): void {
  program
    .command('reindex')
    .description('re-index every known source (what the scheduled registry.reindex-all job does)')
    .option('--json', 'print the summaries as JSON')
    .action(async (options: { json?: boolean }) => {
      await withDb(env, async (db) => {
        const summaries = await reindexAll(indexerDeps(env, db));
        if (options.json) console.log(JSON.stringify(summaries, null, 2));
        else {
          summaries.forEach((s, i) => {
            printSummary(s, `[${i + 1}/${summaries.length}]`);
          });
          printTotals(summaries);
        }
        if (summaries.some((s) => s.status === 'failed')) process.exitCode = 1;
      });
    });
}

function configureSourcesCommand(program: Command, env: Env): void {
  program
    .command('sources')
    .description('list the sources the registry indexes, with their last run')
    .option('--json', 'print as JSON')
    .action(async (options: { json?: boolean }) => {
      await withDb(env, async (db) => {
        const sources = await listKnownSources(db);
        if (options.json) {
          console.log(JSON.stringify(sources, null, 2));
          return;
        }
        if (sources.length === 0) {
          console.log(
            'No sources yet: `pnpm registry index <owner/repo | path>` or `pnpm registry seed-demo`.',
          );
          return;
        }
        for (const s of sources) {
          const run = s.lastRun
            ? `last run ${s.lastRun.status} ${(s.lastRun.finishedAt ?? s.lastRun.startedAt).toISOString()}` +
              (s.lastRun.status === 'failed' ? `: ${s.lastRun.error}` : ` (${countsLine(s.lastRun.counts)})`)
            : 'never run';
          console.log(
            `${s.kind.padEnd(6)} ${s.sourceRepo.padEnd(36)} ${String(s.listedPackages).padStart(4)} listed  ${run}`,
          );
          console.log(`       ${s.locator}`);
        }
      });
    });
}

function configureSeedDemoCommand(program: Command, env: Env): void {
  program
    .command('seed-demo')
    .description('create the demo git repositories (idempotent) and index them with the real indexer')
    .option('--dir <dir>', 'where to put the demo repositories (default: DEMO_REPOS_DIR)')
    .action(async (options: { dir?: string }) => {
      const base = options.dir ? (env.INIT_CWD ?? process.cwd()) : repoRoot();
      const dir = resolve(base, options.dir ?? env.DEMO_REPOS_DIR);
      await withDb(env, async (db) => {
        console.log(`demo repositories in ${dir}`);
        // The demo's people first, so the private scope is private before its skills are indexed.
        const demo = await seedDemoAccounts(db);
        console.log(
          `demo account ${demo.email} (development sign-in: "developer"), organisation ${demo.organization}, private scope @${demo.privateScope}`,
        );
        const { summaries } = await seedDemo(indexerDeps(env, db), dir);
        summaries.forEach((s, i) => {
          printSummary(s, `[${i + 1}/${summaries.length}]`);
        });
        printTotals(summaries);
      });
    });
}

function packageArg(value: string): { scope: string; name: string } {
  const key = parsePackageName(value);
  if (!key) throw new InvalidArgumentError(`"${value}" is not a package name (@scope/name)`);
  return key;
}

function configureRemoveCommands(program: Command, env: Env): void {
  program
    .command('remove')
    .description(
      'take a package down (malware): every version answers 410 with the reason, it leaves list, search and detail, and re-indexing never brings it back',
    )
    .argument('<package>', '@scope/name', packageArg)
    .requiredOption('--reason <text>', 'shown to everyone who asks for the package')
    .action(async (key: { scope: string; name: string }, options: { reason: string }) => {
      const reason = options.reason.trim();
      if (reason === '') throw new InvalidArgumentError('--reason must say why');
      await withDb(env, async (db) => {
        if (!(await withDependencyRefresh(db, key, (trx) => removePackage(trx, key, reason)))) {
          console.error(`No package @${key.scope}/${key.name}`);
          process.exitCode = 1;
          return;
        }
        console.log(`removed @${key.scope}/${key.name}: ${reason}`);
      });
    });
  program
    .command('restore')
    .description('lift a removal; the next indexing run of its source lists the package again')
    .argument('<package>', '@scope/name', packageArg)
    .action(async (key: { scope: string; name: string }) => {
      await withDb(env, async (db) => {
        if (!(await restorePackage(db, key))) {
          console.error(`@${key.scope}/${key.name} is not removed`);
          process.exitCode = 1;
          return;
        }
        console.log(`restored @${key.scope}/${key.name}; re-index its source to list it again`);
      });
    });
}

function configureRescanCommand(program: Command, env: Env): void {
  program
    .command('rescan')
    .description(
      'run the risk scan over stored versions: those never scanned (created before the scan), or every one with --all',
    )
    .argument(
      '[packages...]',
      'only these packages (@scope/name)',
      (value: string, previous: Array<{ scope: string; name: string }> = []) => [
        ...previous,
        packageArg(value),
      ],
    )
    .option('--all', 'scan every version again, not only those without a risk (after the rules change)')
    .option('--json', 'print the summary as JSON')
    .action(
      async (
        packages: Array<{ scope: string; name: string }> | undefined,
        options: { all?: boolean; json?: boolean },
      ) => {
        await withDb(env, async (db) => {
          const summary = await rescanVersions(db, {
            all: options.all ?? false,
            packages: packages ?? [],
            onVersion: options.json
              ? undefined
              : (v) => {
                  if (v.risk !== 'none')
                    console.log(`  ${v.name}@${v.version}: ${v.risk} (${v.findings} findings)`);
                },
          });
          if (options.json) {
            console.log(JSON.stringify(summary, null, 2));
            return;
          }
          const counts = Object.entries(summary.byRisk)
            .map(([risk, n]) => `${n} ${risk}`)
            .join(', ');
          console.log(
            `${summary.versions} ${summary.versions === 1 ? 'version' : 'versions'} scanned (${counts}) in ${Math.round(summary.ms)} ms`,
          );
        });
      },
    );
}

function configureGcBlobsCommand(program: Command, env: Env): void {
  program
    .command('gc-blobs')
    .description(
      'delete stored blobs no version references (left by failed runs or deleted packages); waits for running indexing runs',
    )
    .option('--json', 'print the summary as JSON')
    .action(async (options: { json?: boolean }) => {
      await withDb(env, async (db) => {
        const summary = await collectUnreferencedBlobs(db, { wait: true });
        if (options.json) console.log(JSON.stringify(summary, null, 2));
        else
          console.log(
            `${summary.blobs} unreferenced ${summary.blobs === 1 ? 'blob' : 'blobs'} deleted (${summary.bytes} bytes)`,
          );
      });
    });
}

function configureModerationCommands(program: Command, env: Env): void {
  program
    .command('reports')
    .description('list the reports sent with POST /api/packages/@scope/name/reports, newest first')
    .argument('[package]', 'only the reports of this package (@scope/name)', packageArg)
    .option('--limit <n>', 'how many (default 50)', (value: string) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1 || n > 10_000)
        throw new InvalidArgumentError('an integer from 1 to 10000');
      return n;
    })
    .option('--json', 'print as JSON')
    .action(
      async (
        key: { scope: string; name: string } | undefined,
        options: { limit?: number; json?: boolean },
      ) => {
        await withDb(env, async (db) => {
          const reports = await listReports(db, { key, limit: options.limit ?? 50 });
          if (options.json) {
            console.log(JSON.stringify(reports, null, 2));
            return;
          }
          if (reports.length === 0) {
            console.log('No reports.');
            return;
          }
          for (const r of reports) {
            const state = [r.quarantined_at ? 'quarantined' : '', r.risk ? `risk ${r.risk}` : '']
              .filter(Boolean)
              .join(', ');
            console.log(
              `${r.created_at.toISOString()}  @${r.scope}/${r.name}${state ? ` (${state})` : ''}  from ${r.client_address}`,
            );
            console.log(`    ${r.reason}`);
            if (r.details) console.log(`    ${r.details.replace(/\s+/g, ' ').slice(0, 300)}`);
          }
        });
      },
    );
  program
    .command('quarantine')
    .description(
      'quarantine a package: out of list and search, detail says quarantined with the reason, and the CLI refuses to install it',
    )
    .argument('<package>', '@scope/name', packageArg)
    .requiredOption('--reason <text>', 'shown on the package page and by the CLI')
    .action(async (key: { scope: string; name: string }, options: { reason: string }) => {
      const reason = options.reason.trim();
      if (reason === '') throw new InvalidArgumentError('--reason must say why');
      await withDb(env, async (db) => {
        if (!(await quarantinePackage(db, key, reason))) {
          console.error(`No package @${key.scope}/${key.name}`);
          process.exitCode = 1;
          return;
        }
        console.log(`quarantined @${key.scope}/${key.name}: ${reason}`);
      });
    });
  program
    .command('release')
    .description('lift a quarantine: the package is listed, searchable and installable again')
    .argument('<package>', '@scope/name', packageArg)
    .option('--reason <text>', 'why (printed, for the operator log)')
    .action(async (key: { scope: string; name: string }, options: { reason?: string }) => {
      await withDb(env, async (db) => {
        if (!(await releasePackage(db, key))) {
          console.error(`@${key.scope}/${key.name} is not quarantined`);
          process.exitCode = 1;
          return;
        }
        console.log(
          `released @${key.scope}/${key.name}${options.reason ? `: ${options.reason.trim()}` : ''}`,
        );
      });
    });
}

/** Runs an accounts change; an OperatorError (no such account or organisation) is exit 1 with its message. */
async function operatorChange(env: Env, change: (db: Db) => Promise<void>, done: string): Promise<void> {
  await withDb(env, async (db) => {
    try {
      await change(db);
      console.log(done);
    } catch (error) {
      if (!(error instanceof OperatorError)) throw error;
      console.error(error.message);
      process.exitCode = 1;
    }
  });
}

function required(text: string | undefined, option: string): string {
  const value = text?.trim() ?? '';
  if (value === '') throw new InvalidArgumentError(`${option} must say why`);
  return value;
}

function configureAccountCommands(program: Command, env: Env): void {
  const admin = program.command('site-admin').description('name or unname a site administrator (by email)');
  admin
    .command('grant')
    .argument('<email>')
    .action((email: string) =>
      operatorChange(env, (db) => setSiteAdmin(db, email, true), `${email} is a site administrator`),
    );
  admin
    .command('revoke')
    .argument('<email>')
    .action((email: string) =>
      operatorChange(
        env,
        (db) => setSiteAdmin(db, email, false),
        `${email} is no longer a site administrator`,
      ),
    );
  program
    .command('suspend')
    .description('suspend an account: its sessions end, its tokens are refused, it reaches nothing')
    .argument('<email>')
    .requiredOption('--reason <text>', 'why (kept in the audit log)')
    .action((email: string, options: { reason: string }) =>
      operatorChange(
        env,
        (db) => suspendAccount(db, email, required(options.reason, '--reason')),
        `suspended ${email}`,
      ),
    );
  program
    .command('unsuspend')
    .description('lift an account suspension')
    .argument('<email>')
    .action((email: string) =>
      operatorChange(env, (db) => unsuspendAccount(db, email), `lifted the suspension of ${email}`),
    );
  const org = program.command('org').description('organisations');
  org
    .command('suspend')
    .description('suspend an organisation: its members reach nothing through it')
    .argument('<slug>')
    .requiredOption('--reason <text>', 'why (kept in the audit log)')
    .action((slug: string, options: { reason: string }) =>
      operatorChange(
        env,
        (db) => setOrganizationSuspended(db, slug, true, required(options.reason, '--reason')),
        `suspended ${slug}`,
      ),
    );
  org
    .command('unsuspend')
    .argument('<slug>')
    .action((slug: string) =>
      operatorChange(
        env,
        (db) => setOrganizationSuspended(db, slug, false),
        `lifted the suspension of ${slug}`,
      ),
    );
  org
    .command('take-over')
    .description('make an account an owner of an organisation (its owners are gone)')
    .argument('<slug>')
    .requiredOption('--to <email>', 'the account that becomes an owner')
    .requiredOption('--reason <text>', 'why (kept in the audit log)')
    .action((slug: string, options: { to: string; reason: string }) =>
      operatorChange(
        env,
        (db) => takeOverOrganization(db, slug, options.to, required(options.reason, '--reason')),
        `${options.to} is an owner of ${slug}`,
      ),
    );
}

async function main(): Promise<void> {
  let env: Env;
  try {
    env = loadEnv();
  } catch (error) {
    console.error((error as Error).message);
    process.exitCode = 2;
    return;
  }
  const program = new Command()
    .name('registry')
    .description('pkgreg registry operator commands')
    .showHelpAfterError()
    .exitOverride();
  configureIndexCommand(program, env);
  configureReindexCommand(program, env);
  configureSourcesCommand(program, env);
  configureSeedDemoCommand(program, env);
  configureRemoveCommands(program, env);
  configureRescanCommand(program, env);
  configureGcBlobsCommand(program, env);
  configureModerationCommands(program, env);
  configureAccountCommands(program, env);
  configureSigningCommands(program, env, withDb);
  configureLogCommands(program, env, withDb);
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    const code = (error as { code?: string; exitCode?: number }).code;
    if (typeof code === 'string' && code.startsWith('commander.')) {
      // help and version are successes; anything else commander rejects is a usage error.
      process.exitCode = code === 'commander.helpDisplayed' || code === 'commander.version' ? 0 : 2;
      return;
    }
    throw error;
  }
}

await main();
