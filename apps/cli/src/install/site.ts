import { createHash } from 'node:crypto';
import {
  AGENT_SKILLS_INDEX_PATH,
  AGENT_SKILLS_INDEX_SCHEMA,
  type AgentSkillEntry,
  AgentSkillEntrySchema,
  AgentSkillsIndexEnvelopeSchema,
  type VersionDependency,
} from '@pkgreg/contracts';
import type { Agent } from '../agents.js';
import type { InstallOptions } from '../commands/install.js';
import type { Context } from '../context.js';
import { CliError, EXIT, usageError } from '../errors.js';
import { frontmatterFields } from '../frontmatter.js';
import { JSON_MAX_BYTES } from '../http-client.js';
import {
  absoluteDir,
  FILE_MODES,
  LOCKFILE_NAME,
  type LockedFile,
  type Lockfile,
  linkDependants,
  lockedDirs,
  type SiteEntry,
  type SiteSource,
  sameFiles,
  sha256Hex,
  siteEntries,
  siteKey,
  siteLabel,
  warnOrphans,
  writeLockfile,
} from '../lockfile/lockfile.js';
import { readLock } from '../lockfile/read.js';
import { type PackageSpec, parsePackageSpec } from '../names.js';
import { type Progress, progressFor } from '../progress.js';
import { foldCollision } from '../safe-folders.js';
import { SITE_SKILL_MAX_BYTES, SITE_SKILL_MAX_FILES, unpackSiteArchive } from '../site-archive.js';
import { insecureSiteUrl, readFromSite } from '../site-client.js';
import { inspectFolder, type SkillFile } from '../skill-files.js';
import {
  applyJobs,
  checkFolders,
  dependencyLines,
  type FolderItem,
  type FolderPlan,
  modifiedError,
  warnNoVerify,
  writeFolders,
} from './apply.js';
import { dependencyJobs, type SiteNeeds } from './plan.js';
import {
  agentDir,
  agentsFromOption,
  checkDirOwners,
  customSkillsDir,
  defaultAgents,
  displayDir,
  type InstallTarget,
  packageDir,
} from './targets.js';

// `pkgreg install <site> --skill <name>` (docs/discovery.md): a skill from any site that publishes an
// Agent Skills discovery index (RFC v0.2.0), a pkgreg registry or not. The index read, the entry
// chosen, its artifact downloaded and checked against the digest the index lists, unpacked and checked
// as a manifest is, then written as a registry package is (staged beside each folder, swapped in) and
// recorded in the lockfile's `sites`, from where `pkgreg install` restores it. What its SKILL.md declares
// in `metadata.dependencies` is installed with it from the configured registry, as a package's
// dependencies are (plan.ts). Nothing is written unless every skill asked for, and what it needs, passed.
// `outdated` and `update` compare and move them: site-update.ts.

/** A site as given on the command line: its URL (origin and path) and where its index is. */
export interface Site {
  url: string;
  index: URL;
}

/**
 * A site's URL: https (http on this machine only), no credentials, query or fragment; the index is
 * `<url>/.well-known/agent-skills/index.json` (an index's own URL is taken as its site's).
 */
export function parseSite(value: string): Site {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`Invalid site URL "${value}"`);
  }
  const insecure = insecureSiteUrl(url);
  if (insecure) throw usageError(insecure);
  if (url.username || url.password) throw usageError(`${value}: a site URL carries no credentials`);
  if (url.search || url.hash) throw usageError(`${value}: a site URL has no query or fragment`);
  let path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith(AGENT_SKILLS_INDEX_PATH)) path = path.slice(0, -AGENT_SKILLS_INDEX_PATH.length);
  const site = `${url.origin}${path}`;
  return { url: site, index: new URL(`${site}${AGENT_SKILLS_INDEX_PATH}`) };
}

/** The index's entries, as read (after redirects: the URL relative artifact URLs resolve against). */
export interface SiteIndex {
  url: URL;
  entries: unknown[];
}

export async function readIndex(ctx: Context, site: Site): Promise<SiteIndex> {
  const what = 'the discovery index';
  const read = await readFromSite(ctx, site.index, {
    what,
    accept: 'application/json',
    maxBytes: JSON_MAX_BYTES,
    download: false,
  });
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(read.bytes));
  } catch {
    throw new CliError(EXIT.unavailable, `${read.url.href} is not JSON, so not a discovery index`);
  }
  const parsed = AgentSkillsIndexEnvelopeSchema.safeParse(json);
  if (!parsed.success)
    throw new CliError(
      EXIT.unavailable,
      `${read.url.href} is not an Agent Skills discovery index (no skills list)`,
    );
  const schema = parsed.data.$schema;
  if (schema !== AGENT_SKILLS_INDEX_SCHEMA) {
    // v0.1.0 indexes (no $schema) list no digests: nothing could be verified.
    throw new CliError(
      EXIT.unavailable,
      `${read.url.href} is ${schema === undefined ? 'a v0.1.0 index (no $schema), which lists no digests' : `of schema ${schema}`}; pkgreg reads ${AGENT_SKILLS_INDEX_SCHEMA}, whose digests it verifies`,
    );
  }
  return { url: read.url, entries: parsed.data.skills };
}

const nameOf = (entry: unknown): string | undefined => {
  const name = (entry as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : undefined;
};

/**
 * The entry of `name` (exit 3 when the index has none, 4 when it has two or one the RFC does not
 * allow); with no name, the index's only skill (a usage error naming them when it has several).
 */
export function chooseEntry(index: SiteIndex, name: string | undefined): AgentSkillEntry {
  const listed = index.entries.map(nameOf).filter((n): n is string => n !== undefined);
  const shown = (names: string[]) =>
    names.length > 10 ? `${names.slice(0, 10).join(', ')} and ${names.length - 10} more` : names.join(', ');
  if (name === undefined) {
    const valid = index.entries.flatMap((entry) => {
      const parsed = AgentSkillEntrySchema.safeParse(entry);
      return parsed.success ? [parsed.data] : [];
    });
    if (valid.length === 1) return valid[0] as AgentSkillEntry;
    throw usageError(
      valid.length === 0
        ? `${index.url.href} lists no skill pkgreg can install`
        : `${index.url.href} lists ${valid.length} skills: choose one with --skill (${shown(valid.map((e) => e.name))})`,
    );
  }
  const matching = index.entries.filter((entry) => nameOf(entry) === name);
  if (matching.length === 0) {
    throw new CliError(
      EXIT.notFound,
      `${index.url.href} lists no skill ${name}${listed.length ? ` (it lists ${shown(listed)})` : ''}`,
    );
  }
  if (matching.length > 1)
    throw new CliError(
      EXIT.unavailable,
      `${index.url.href} lists ${name} twice: an index names each skill once`,
    );
  const parsed = AgentSkillEntrySchema.safeParse(matching[0]);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CliError(
      EXIT.unavailable,
      `${index.url.href}: the entry of ${name} is not an RFC v0.2.0 entry (${issue?.path.join('.') || 'entry'}: ${issue?.message})`,
    );
  }
  return parsed.data;
}

/** `sha256:<hex>` of bytes, as the index names artifacts. */
export function artifactDigest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/**
 * The artifact at `url`, checked against `digest` before anything is made of it (exit 5 on a
 * mismatch), then as files: a skill-md is the SKILL.md alone; an archive is unpacked and checked.
 */
export async function fetchSkillFiles(
  ctx: Context,
  label: string,
  artifact: { type: SiteEntry['type']; url: URL; digest: string },
  mismatchHint: string,
): Promise<SkillFile[]> {
  const read = await readFromSite(ctx, artifact.url, {
    what: `${label}: the artifact`,
    accept: artifact.type === 'skill-md' ? 'text/markdown, text/plain' : 'application/gzip, application/zip',
    // An archive's own headers and a compression that gains nothing are allowed for.
    maxBytes: SITE_SKILL_MAX_BYTES + (SITE_SKILL_MAX_FILES + 2) * 16_384,
    download: true,
  });
  const digest = artifactDigest(read.bytes);
  if (digest !== artifact.digest) {
    throw new CliError(
      EXIT.integrity,
      `Digest mismatch: ${label}: ${artifact.url.href} is ${digest}, but ${mismatchHint} ${artifact.digest}; nothing was written`,
    );
  }
  if (artifact.type === 'skill-md')
    return [{ path: 'SKILL.md', mode: FILE_MODES.file, content: Buffer.from(read.bytes) }];
  return unpackSiteArchive(label, read.bytes);
}

/** Files as the lockfile records them (a link by the hash of its target). */
export function lockedFilesOfSkill(files: readonly SkillFile[]): Record<string, LockedFile> {
  return Object.fromEntries(
    files.map((file) => [file.path, { mode: file.mode, sha256: sha256Hex(file.content) }]),
  );
}

/** One site skill to put in place. */
export interface SiteJob {
  key: string;
  entry: SiteEntry;
  /** What the lockfile recorded for it before, if anything. */
  locked: SiteEntry | undefined;
  /** The folders to name in the output (the new ones, else all). */
  shown: string[];
  files?: SkillFile[];
  plans?: FolderPlan[];
  /** What its SKILL.md declares in `metadata.dependencies`. */
  dependencies?: VersionDependency[];
}

/** What an index lists for a skill now: its entry, the artifact's URL resolved, the index as read. */
export interface ListedSkill {
  entry: AgentSkillEntry;
  url: URL;
  index: URL;
}

/** The lockfile entry of a listed skill in its folders, before its files are known. */
export function siteEntryOf(
  source: SiteSource,
  listed: ListedSkill,
  place: { agents: readonly string[]; dirs: readonly string[] },
): SiteEntry {
  return {
    source,
    index: listed.index.href,
    type: listed.entry.type,
    url: listed.url.href,
    digest: listed.entry.digest,
    agents: [...new Set(place.agents)],
    dirs: [...place.dirs],
    files: {},
  };
}

/** At most this many dependencies are read, as the registry reads them (docs/versions.md). */
const MAX_DEPENDENCIES = 64;

const quoted = (text: string) => JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);

/**
 * What a site skill's SKILL.md declares in `metadata.dependencies`, by the registry's rules
 * (docs/versions.md, Dependencies): `@scope/name[@range]` entries, comma-separated or a list, no range
 * or `latest` for the latest version; an entry that cannot be read is left out with a warning, as
 * agents tolerate it. The names carry no registry: they are the configured registry's packages, as
 * every package of the lockfile is (docs/discovery.md).
 */
export function declaredDependencies(
  label: string,
  files: readonly SkillFile[],
  note: (line: string) => void,
): VersionDependency[] {
  const skillMd = files.find((file) => file.path === 'SKILL.md' && file.mode !== FILE_MODES.symlink);
  const declared = skillMd ? frontmatterFields(skillMd.content.toString('utf8')).dependencies : undefined;
  if (declared === undefined) return [];
  const entries = (typeof declared === 'string' ? declared.split(',') : declared)
    .map((entry) => entry.trim())
    .filter(Boolean);
  const found = new Map<string, VersionDependency>();
  for (const entry of entries) {
    if (found.size === MAX_DEPENDENCIES) {
      note(`warning: ${label}: more than ${MAX_DEPENDENCIES} dependencies; the rest were ignored`);
      break;
    }
    let spec: PackageSpec;
    try {
      spec = parsePackageSpec(entry);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      note(`warning: ${label}: dependency ${quoted(entry)} is not @scope/name[@range]; it was ignored`);
      continue;
    }
    if (found.has(spec.ref.full)) {
      note(`warning: ${label}: dependency ${spec.ref.full} is listed more than once; the first is kept`);
      continue;
    }
    found.set(spec.ref.full, { name: spec.ref.full, range: spec.requested });
  }
  return [...found.values()];
}

/**
 * Downloads a site skill's artifact and checks it against the entry's digest (exit 5, nothing written,
 * on a mismatch), reads what it declares, then checks its folders on disk (a modified one: exit 5
 * unless `force`). Nothing is written.
 */
export async function prepareSiteJob(
  ctx: Context,
  target: InstallTarget,
  job: SiteJob,
  options: { force: boolean; mismatchHint: string; modifiedHint: string; note: (line: string) => void },
): Promise<void> {
  const label = siteLabel(job.entry.source);
  job.files = await fetchSkillFiles(
    ctx,
    label,
    { type: job.entry.type, url: new URL(job.entry.url), digest: job.entry.digest },
    options.mismatchHint,
  );
  job.entry.files = lockedFilesOfSkill(job.files);
  job.dependencies = declaredDependencies(label, job.files, options.note);
  job.entry.dependencies = job.dependencies.length
    ? Object.fromEntries(job.dependencies.map((d) => [d.name, d.range]))
    : undefined;
  const modified: string[] = [];
  job.plans = await checkFolders(target, job.entry.dirs, job.entry.files, job.locked?.files, modified);
  if (modified.length && !options.force) throw modifiedError(label, modified, options.modifiedHint);
}

/** What prepared site skills need of the registry, for `dependencyJobs`. */
export function siteNeeds(jobs: readonly SiteJob[]): SiteNeeds[] {
  return jobs.map((job) => ({
    key: job.key,
    dependencies: job.dependencies ?? [],
    dirs: job.entry.dirs,
    agents: job.entry.agents,
  }));
}

/** Prepared site skills' folders, to write with the packages' (`alsoWrite`). */
export function siteFolders(jobs: readonly SiteJob[]): FolderItem[] {
  return jobs.map((job) => ({ owner: job.key, plans: job.plans ?? [], files: job.files }));
}

/** A folder one case-fold apart from another is one folder there: refused before anything is written. */
function refuseFoldClash(target: InstallTarget, lock: Lockfile, dirs: readonly string[]): void {
  const clash = foldCollision(new Set([...lockedDirs(lock), ...dirs]));
  if (clash) {
    throw new CliError(
      EXIT.integrity,
      `${displayDir(target, clash[0])} and ${displayDir(target, clash[1])} are the same folder on a case-insensitive file system; pkgreg does not write where one name could mean the other`,
    );
  }
}

/** `pkgreg install <site> [--skill <name>…]`: those skills, into the agents' folders, recorded in `sites`. */
export async function installFromSite(
  ctx: Context,
  target: InstallTarget,
  input: InstallOptions,
  siteArgument: string,
): Promise<void> {
  const site = parseSite(siteArgument);
  const named = agentsFromOption(input.agent);
  const custom = input.dir.map((dir) => customSkillsDir(target, dir));
  const progress = progressFor(Math.max(1, input.skill.length));
  try {
    const loaded = await readLock(ctx, target, { frozen: input.frozen, progress });
    if (loaded.v1.size > 0) {
      throw new CliError(
        EXIT.error,
        `${target.lockPath} is lockfileVersion 1: run "pkgreg install" first to upgrade it, then install from the site`,
      );
    }
    if (!loaded.existed && input.frozen)
      throw new CliError(EXIT.integrity, `--frozen: no ${LOCKFILE_NAME} at ${target.lockPath}`);
    const { lock } = loaded;
    progress.status(`reading ${site.index.href}`);
    const index = await readIndex(ctx, site);
    const wanted = input.skill.length > 0 ? [...new Set(input.skill)] : [undefined];
    let detected: Agent[] | undefined;
    const jobs: SiteJob[] = [];
    for (const name of wanted) {
      const chosen = chooseEntry(index, name);
      const source: SiteSource = { kind: 'well-known', url: site.url, skill: chosen.name };
      const key = siteKey(source);
      const locked = lock.sites?.[key];
      const ref = { name: chosen.name };
      const asked = [
        ...named.map((agent) => agentDir(target, agent, ref)),
        ...custom.map((dir) => packageDir(target, dir, ref)),
      ];
      const recorded = locked?.dirs ?? [];
      let agents = [...(locked?.agents ?? [])];
      let newDirs = asked;
      if (asked.length === 0 && recorded.length === 0) {
        detected ??= defaultAgents(target, (line) => progress.note(line));
        newDirs = detected.map((agent) => agentDir(target, agent, ref));
        agents = [...agents, ...detected.map((agent) => agent.id)];
      } else agents = [...agents, ...named.map((agent) => agent.id)];
      const dirs = [...new Set([...recorded, ...newDirs])];
      checkDirOwners(lock, key, dirs, target);
      const url = new URL(chosen.url, index.url);
      if (input.frozen) {
        if (!locked)
          throw new CliError(EXIT.integrity, `--frozen: ${siteLabel(source)} is not in ${LOCKFILE_NAME}`);
        if (locked.digest !== chosen.digest || locked.url !== url.href) {
          throw new CliError(
            EXIT.integrity,
            `--frozen: ${site.index.href} now lists ${chosen.name} as ${chosen.digest} at ${url.href}, not what ${LOCKFILE_NAME} locks`,
          );
        }
        const extra = dirs.filter((dir) => !locked.dirs.includes(dir));
        if (extra.length) {
          throw new CliError(
            EXIT.integrity,
            `--frozen: ${siteLabel(source)} is not locked for ${extra.map((dir) => displayDir(target, dir)).join(', ')}`,
          );
        }
      }
      const entry = siteEntryOf(source, { entry: chosen, url, index: index.url }, { agents, dirs });
      jobs.push({ key, entry, locked, shown: newDirs.length ? newDirs : dirs });
    }
    refuseFoldClash(
      target,
      lock,
      jobs.flatMap((job) => job.entry.dirs),
    );
    // Every artifact downloaded and checked, then every folder, before anything is written.
    const note = (line: string) => progress.note(line);
    for (const job of jobs) {
      progress.step(`installing ${siteLabel(job.entry.source)}`);
      await prepareSiteJob(ctx, target, job, {
        force: input.force,
        mismatchHint: 'the index lists',
        modifiedHint: 'use --force to overwrite',
        note,
      });
      if (input.frozen && job.locked && !sameFiles(job.entry.files, job.locked.files)) {
        throw new CliError(
          EXIT.integrity,
          `--frozen: ${siteLabel(job.entry.source)}: its files differ from ${LOCKFILE_NAME}`,
        );
      }
    }
    // What their SKILL.md declares, from the configured registry, installed with them (all or none).
    const needed = await dependencyJobs(
      ctx,
      target,
      lock,
      { packages: [], sites: siteNeeds(jobs) },
      { allowRisk: input.allowRisk, frozen: input.frozen, progress },
    );
    if (needed.size > 0 && !input.verify) warnNoVerify(ctx);
    progress.done();
    const applying = progressFor(needed.size);
    const results = await applyJobs(ctx, target, [...needed.keys()], {
      force: input.force,
      modifiedHint: 'use --force to overwrite',
      progress: applying,
      lockedDirs: lockedDirs(lock),
      verify: input.verify,
      alsoWrite: siteFolders(jobs),
    }).finally(() => applying.done());
    // As for a named package: its folders, the new ones when it had some already.
    for (const job of jobs) {
      for (const dir of job.shown)
        ctx.out(`installed ${siteLabel(job.entry.source)} -> ${displayDir(target, dir)}`);
    }
    for (const line of dependencyLines(target, results, needed)) ctx.out(line);
    if (input.frozen) return;
    lock.sites = { ...lock.sites };
    for (const job of jobs) lock.sites[job.key] = job.entry;
    for (const job of needed.keys()) lock.packages[job.ref.full] = job.entry;
    linkDependants(lock);
    await writeLockfile(target.lockPath, lock);
    warnOrphans(lock, (line) => ctx.warn(line));
  } finally {
    progress.done();
  }
}

/**
 * The site skills of a restore (`pkgreg install` with no names): each folder that does not hold the
 * locked files gets the locked artifact again, downloaded from where it was and checked against the
 * locked digest and files (exit 5 when the site serves other bytes there now). Returns the output lines.
 */
export async function restoreSites(
  ctx: Context,
  target: InstallTarget,
  lock: Lockfile,
  options: { force: boolean; frozen: boolean; progress?: Progress },
): Promise<string[]> {
  const lines: string[] = [];
  const pending: { key: string; entry: SiteEntry }[] = [];
  for (const [key, entry] of siteEntries(lock)) {
    const states = await Promise.all(
      entry.dirs.map((dir) => inspectFolder(absoluteDir(target.base, dir), entry.files)),
    );
    if (states.every((state) => state.kind === 'intact')) lines.push(`up to date ${siteLabel(entry.source)}`);
    else pending.push({ key, entry });
  }
  if (pending.length === 0) return lines;
  const progress = options.progress ?? progressFor(pending.length);
  try {
    const items: { plans: FolderPlan[]; files: SkillFile[] }[] = [];
    for (const { entry } of pending) {
      const label = siteLabel(entry.source);
      progress.step(`installing ${label}`);
      const files = await fetchSkillFiles(
        ctx,
        label,
        { type: entry.type, url: new URL(entry.url), digest: entry.digest },
        `${LOCKFILE_NAME} locks`,
      );
      if (!sameFiles(lockedFilesOfSkill(files), entry.files)) {
        throw new CliError(
          EXIT.integrity,
          `${label}: the artifact holds other files than ${LOCKFILE_NAME} locks`,
        );
      }
      const modified: string[] = [];
      const plans = await checkFolders(target, entry.dirs, entry.files, entry.files, modified);
      if (modified.length && !options.force) {
        const hint = options.frozen
          ? 'restore the files or update the lockfile'
          : 'use --force to restore the locked files';
        throw modifiedError(label, modified, hint);
      }
      items.push({ plans, files });
      for (const plan of plans.filter((p) => p.write))
        lines.push(`installed ${label} -> ${displayDir(target, plan.dir)}`);
    }
    await writeFolders(target, items);
  } finally {
    progress.done();
  }
  return lines;
}
