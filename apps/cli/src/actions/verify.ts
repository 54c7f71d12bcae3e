import type { VersionDetail } from '@pkgreg/contracts';
import type { Command } from 'commander';
import { ATTESTATION_MISSING, checkAttestations } from '../attestations.js';
import type { VerifyOptions } from '../commands/verify.js';
import { type Context, createContext } from '../context.js';
import { CliError, EXIT, type ExitCode } from '../errors.js';
import { type InstallTarget, installTarget } from '../install/targets.js';
import {
  LOCKFILE_NAME,
  type LockEntry,
  type Lockfile,
  lockedFilesOf,
  sameFiles,
} from '../lockfile/lockfile.js';
import { type InstalledPackage, installedPackages, installedSites, readLockfile } from '../lockfile/read.js';
import { parsePackageArg } from '../names.js';
import { type SignatureChecker, signatureChecker } from '../signatures.js';
import { checkpointReader, inclusionProblem } from '../transparency-log.js';
import { inspectInstalled } from './list.js';

// `pkgreg verify` (docs/provenance.md, "Verifying signatures"), what `npm audit signatures` is for npm:
// for CI, every package of the lockfile checked three ways. Its installed files against the hashes the
// lockfile records (as `list` does), the lockfile against the registry's record of the version (same
// integrity, same files), and the registry's signature over the lockfile's integrity (as install
// checks it), so a pass means the registry vouches for the bytes the lockfile pins.

/** What failed, by the exit code it leads to (README: Exit codes; the first kind found wins). */
const SEVERITY = [
  { kind: 'signature', exitCode: EXIT.signature },
  // The transparency log and attestations vouch for the bytes as signatures do.
  { kind: 'log', exitCode: EXIT.signature },
  { kind: 'attestation', exitCode: EXIT.signature },
  { kind: 'files', exitCode: EXIT.integrity },
  { kind: 'notFound', exitCode: EXIT.notFound },
] as const;
type ProblemKind = (typeof SEVERITY)[number]['kind'];

interface Problem {
  kind: ProblemKind;
  /** One line: what is wrong, starting with its subject (`modified:`, `signature:` …). */
  text: string;
}

export interface PackageReport {
  name: string;
  version: string;
  ok: boolean;
  /** The registry key whose signature verified; null when none did (or the registry publishes none). */
  keyid: string | null;
  /**
   * The version's leaf in the transparency log and whether this run proved it in the checkpoint (false:
   * a proof that failed, a problem, or a leaf past the checkpoint, proved at a later run); null when
   * it has no leaf or the registry no log.
   */
  log: { index: number; proved: boolean } | null;
  /** A provenance attestation of the locked bytes and source verified in this run. */
  attested: boolean;
  problems: string[];
}

/**
 * A skill installed from a site (docs/discovery.md): no registry vouches for it, so its installed
 * files are checked against the lockfile, which pinned them to the digest the site's index listed.
 */
export interface SiteReport {
  name: string;
  source: { kind: 'well-known'; url: string; skill: string };
  digest: string;
  ok: boolean;
  problems: string[];
}

/** The lockfile, which must exist and be version 2 (version 1 records no version to verify). */
async function readLock(target: InstallTarget): Promise<Lockfile> {
  const read = await readLockfile(target.lockPath, target.global);
  if (!read)
    throw new CliError(EXIT.error, `No ${LOCKFILE_NAME} at ${target.lockPath}; nothing is installed here`);
  if (read.version === 1) {
    throw new CliError(
      EXIT.error,
      `${target.lockPath} is lockfile version 1 (pkgreg 0.1), which records no versions to verify; run "pkgreg install" to upgrade it`,
    );
  }
  return read.lock;
}

/** The installed folders against the lockfile, with no request. */
async function fileProblems(target: InstallTarget, pkg: InstalledPackage): Promise<Problem[]> {
  const row = await inspectInstalled(target, pkg);
  return [
    ...row.modified.map((path) => ({ kind: 'files' as const, text: `modified: ${path}` })),
    ...row.missing.map((path) => ({ kind: 'files' as const, text: `missing: ${path}` })),
  ];
}

/** The registry's record of the locked version; undefined when it no longer serves it. */
async function registryRecord(ctx: Context, entry: LockEntry): Promise<VersionDetail | undefined> {
  const ref = parsePackageArg(entry.name);
  try {
    return await ctx.client.version(ref.scope, ref.name, entry.version);
  } catch (error) {
    if (error instanceof CliError && error.exitCode === EXIT.notFound) return undefined;
    throw error;
  }
}

/** The registry's record against the lockfile, then its signatures over the lockfile's integrity. */
async function registryProblems(
  ctx: Context,
  checker: SignatureChecker,
  entry: LockEntry,
): Promise<Pick<PackageReport, 'keyid' | 'log' | 'attested'> & { problems: Problem[] }> {
  const record = await registryRecord(ctx, entry);
  if (!record) {
    return {
      problems: [{ kind: 'notFound', text: 'not found: the registry no longer serves this version' }],
      keyid: null,
      log: null,
      attested: false,
    };
  }
  const problems: Problem[] = [];
  if (record.integrity !== entry.integrity)
    problems.push({ kind: 'files', text: `integrity: the registry's differs from ${LOCKFILE_NAME}'s` });
  else if (!sameFiles(lockedFilesOf(record), entry.files))
    problems.push({ kind: 'files', text: `integrity: the registry lists other files than ${LOCKFILE_NAME}` });
  // The lockfile's integrity, not the record's: what must be vouched for is what is pinned here.
  const check = await checker.check({ ...record, name: entry.name, integrity: entry.integrity });
  if (check && !check.ok) problems.push({ kind: 'signature', text: `signature: ${check.problem}` });
  const logged = await logProblems(ctx, checker, entry, record);
  problems.push(...logged.problems);
  const attestation = entry.attested && check ? await attestationProblems(ctx, checker, entry) : [];
  problems.push(...attestation);
  return {
    problems,
    keyid: check?.ok ? check.keyid : null,
    log: logged.log,
    attested: Boolean(entry.attested && check) && attestation.length === 0,
  };
}

/**
 * The lockfile's entry proved in the log's current checkpoint (at the lockfile's leaf, else the
 * record's); a version with no leaf is a problem unless it is private (its record hidden from anyone
 * without a token: the public log never names one).
 */
async function logProblems(
  ctx: Context,
  checker: SignatureChecker,
  entry: LockEntry,
  record: VersionDetail,
): Promise<{ problems: Problem[]; log: PackageReport['log'] }> {
  const checkpoint = await checkpointReader(ctx, checker)();
  if (!checkpoint) return { problems: [], log: null };
  const index = entry.log?.index ?? record.log?.index;
  if (index === undefined) {
    if (!(await isPublic(ctx, entry))) return { problems: [], log: null };
    return { problems: [{ kind: 'log', text: 'log: not in the transparency log' }], log: null };
  }
  const problem = await inclusionProblem(ctx, checkpoint, entry, index);
  const proved = problem === undefined && index < checkpoint.size;
  return { problems: problem ? [{ kind: 'log', text: `log: ${problem}` }] : [], log: { index, proved } };
}

/** Whether anyone may read the version: without a token, whatever was read is. */
async function isPublic(ctx: Context, entry: LockEntry): Promise<boolean> {
  if (!ctx.credentials) return true;
  const ref = parsePackageArg(entry.name);
  try {
    await ctx.client.version(ref.scope, ref.name, entry.version, { anonymous: true });
    return true;
  } catch (error) {
    if (error instanceof CliError && error.exitCode === EXIT.notFound) return false;
    throw error;
  }
}

/** A package attested at install must still carry a verifying attestation of the locked bytes and source. */
async function attestationProblems(
  ctx: Context,
  checker: SignatureChecker,
  entry: LockEntry,
): Promise<Problem[]> {
  const result = await checkAttestations(ctx, await checker.keys(), parsePackageArg(entry.name), entry);
  if (result.kind === 'ok') return [];
  const text = result.kind === 'none' ? ATTESTATION_MISSING : result.problem;
  return [{ kind: 'attestation', text: `attestation: ${text}` }];
}

async function verifyPackage(
  ctx: Context,
  target: InstallTarget,
  checker: SignatureChecker,
  pkg: InstalledPackage,
  entry: LockEntry,
): Promise<{ report: PackageReport; kinds: ProblemKind[] }> {
  const files = await fileProblems(target, pkg);
  const registry = await registryProblems(ctx, checker, entry);
  const problems = [...files, ...registry.problems];
  return {
    report: {
      name: entry.name,
      version: entry.version,
      ok: problems.length === 0,
      keyid: registry.keyid,
      log: registry.log,
      attested: registry.attested,
      problems: problems.map((problem) => problem.text),
    },
    kinds: problems.map((problem) => problem.kind),
  };
}

/** Exit 0 when nothing failed; else the code of the most serious kind of problem found. */
export function verifyExitCode(kinds: Iterable<ProblemKind>): ExitCode {
  const found = new Set(kinds);
  return SEVERITY.find(({ kind }) => found.has(kind))?.exitCode ?? EXIT.ok;
}

function printReport(ctx: Context, reports: readonly PackageReport[], checked: boolean): void {
  for (const report of reports) {
    ctx.out(`${report.ok ? 'ok    ' : 'FAILED'} ${report.name}@${report.version}`);
    for (const problem of report.problems) ctx.out(`  ${problem}`);
  }
  if (reports.length === 0) return;
  const failed = reports.filter((report) => !report.ok).length;
  const signatures = checked
    ? 'registry signatures checked'
    : 'the registry publishes no signing keys, so no signature was checked';
  ctx.out(
    `${reports.length} package${reports.length === 1 ? '' : 's'}: ${reports.length - failed} ok, ${failed} failed (${signatures})`,
  );
}

function printSites(ctx: Context, reports: readonly SiteReport[]): void {
  for (const report of reports) {
    ctx.out(`${report.ok ? 'ok    ' : 'FAILED'} ${report.name} ${report.digest}`);
    for (const problem of report.problems) ctx.out(`  ${problem}`);
  }
  if (reports.length === 0) return;
  const failed = reports.filter((report) => !report.ok).length;
  ctx.out(
    `${reports.length} site skill${reports.length === 1 ? '' : 's'}: ${reports.length - failed} ok, ${failed} failed (files against ${LOCKFILE_NAME}; no registry signs them)`,
  );
}

export async function verify(input: VerifyOptions, command: Command): Promise<void> {
  const ctx = await createContext(command);
  const target = installTarget(ctx, input.global);
  const lock = await readLock(target);
  const checker = signatureChecker(ctx);
  // A log that forked stops the run before any package (exit 9), as at install.
  const checkpoint =
    Object.keys(lock.packages).length > 0 ? await checkpointReader(ctx, checker)() : undefined;
  const reports: PackageReport[] = [];
  const kinds: ProblemKind[] = [];
  // One package at a time: the requests are small and the registry's keys are fetched once, first.
  for (const pkg of installedPackages({ version: 2, lock })) {
    const result = await verifyPackage(ctx, target, checker, pkg, lock.packages[pkg.name] as LockEntry);
    reports.push(result.report);
    kinds.push(...result.kinds);
  }
  const sites: SiteReport[] = [];
  for (const site of installedSites({ version: 2, lock })) {
    const problems = await fileProblems(target, site.pkg);
    sites.push({
      name: site.pkg.name,
      source: site.entry.source,
      digest: site.entry.digest,
      ok: problems.length === 0,
      problems: problems.map((problem) => problem.text),
    });
    kinds.push(...problems.map((problem) => problem.kind));
  }
  const ok = kinds.length === 0;
  if (input.json) {
    const log = checkpoint ? { origin: checkpoint.origin, size: checkpoint.size } : null;
    ctx.json({ packages: reports, ...(sites.length ? { sites } : {}), checkpoint: log, ok });
  } else if (reports.length === 0 && sites.length === 0)
    ctx.out(`Nothing to verify: ${LOCKFILE_NAME} lists no packages.`);
  else {
    if (reports.length > 0) printReport(ctx, reports, await checker.keysPublished());
    printSites(ctx, sites);
  }
  const exitCode = verifyExitCode(kinds);
  if (exitCode !== EXIT.ok) {
    const all = [...reports, ...sites];
    const failed = all.filter((report) => !report.ok).length;
    throw new CliError(exitCode, `${failed} of ${all.length} packages failed verification`);
  }
}
