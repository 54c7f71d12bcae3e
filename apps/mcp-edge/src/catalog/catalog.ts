import { createHash } from 'node:crypto';
import {
  type PackageDetail,
  parsePackageName,
  type RegistryGetArgs,
  type RegistryGetResult,
  type RegistrySearchArgs,
  type RegistrySearchResult,
  RejectError,
  type Risk,
  resolveSkillLink,
  SKILL_MANIFEST_PATH,
  SKILL_MD_PATH,
  SKILLS_HIGH_RISK_HEADER,
  SKILLS_META,
  type SkillEntry,
  type VersionFile,
} from '@pkgreg/contracts';
import type { Logger } from '@pkgreg/server-kit';
import { LRUCache } from 'lru-cache';
import { SerializedResult, StaticResult } from '../mcp/transport.js';
import type { RegistryAnswer, RegistryClient } from './registry-client.js';
import {
  decodeCursor,
  encodeCursor,
  listedResources,
  manifestOf,
  RESOURCE_TEMPLATES,
  resourceContents,
} from './resources.js';
import {
  entryResources,
  folderChildren,
  folderResource,
  frontmatterFromSkillMd,
  frontmatterProblem,
  limitProblem,
  type ServedFile,
  servedFiles,
} from './skill-entries.js';
import {
  parseSkillFolderUri,
  parseSkillUri,
  type SkillRef,
  sameSkillUri,
  skillUri,
  skillUris,
} from './skill-uri.js';

// The registry's catalog as the edge serves it (docs/decisions.md, "Skills over MCP"). The registry stays
// the one authority on visibility: every read asks it about the package (its detail: a delisted or removed
// package is 404 there, a quarantined one says so), trusted for one TTL and revalidated with its ETag.
// What never changes is kept by what names it: a version's file list by the exact version, bytes and
// built read results by SHA-256 (a version string always names the same bytes, docs/versions.md).
// A read as a person (a delegated token, with the edge's assertion: delegation-assertions.ts) asks the
// registry every time as that person and puts nothing in these caches, nor shares a load with anyone:
// what the person may see never reaches another caller. It may use bytes and built results kept by
// SHA-256 only after its own manifest, from the registry, named that SHA-256.
// The skills extension (SEP-2640: skills/list, skills/get, resources/directory/read) is built from the same
// reads: a skill's entry is its package's detail (the frontmatter, read by the registry from SKILL.md) and
// its version's record (files, risk, signatures), asked again once per TTL, since a rescan moves the risk.

/** How a skills/list or skills/get caller reads: as a person (`assertion`), and whether high risk too. */
export interface SkillReadOptions {
  assertion?: string;
  /** The request opted in (its `_meta` or header) to skills whose version's risk is `high`. */
  includeHighRisk: boolean;
}

/** Why a skill is not served through the extension; `highRisk`: only its version's risk, which an opt-in lifts. */
interface Unserved {
  why: string;
  highRisk: boolean;
}

/**
 * Each read is anonymous (public packages only) unless given `assertion`, the edge's delegation
 * assertion for the person the caller acts for: then it is that person's view of the registry.
 */
export interface Catalog {
  listResources(cursor: string | undefined, assertion?: string): Promise<object>;
  resourceTemplates(cursor: string | undefined): StaticResult;
  /** A result at once when an anonymous read of `uri` was answered from the caches and still would be. */
  readResource(uri: string, assertion?: string): StaticResult | Promise<StaticResult>;
  /**
   * skills/list: `{skills, nextCursor?}`, a page of the registry's packages by name; `_meta` counts the
   * skills left out for their risk when there are any.
   */
  listSkills(cursor: string | undefined, options: SkillReadOptions): Promise<object>;
  /** skills/get: `{skill}` of any SKILL.md URI the caller may read, listed or not (exact versions too). */
  getSkill(uri: string, options: SkillReadOptions): Promise<object>;
  /** resources/directory/read: `{resources, nextCursor?}`, the direct children of a folder of a skill. */
  readDirectory(uri: string, cursor: string | undefined, options: { assertion?: string }): Promise<object>;
  search(args: RegistrySearchArgs, assertion?: string): Promise<RegistrySearchResult>;
  get(args: RegistryGetArgs, assertion?: string): Promise<RegistryGetResult>;
  close(): Promise<void>;
}

export interface CatalogOptions {
  registry: RegistryClient;
  logger: Logger;
  /** A package's visibility is trusted this long, then served once more while it is asked again. */
  ttlMs: number;
  /** Bytes of file contents and built read results kept (0: none). */
  cacheBytes: number;
  /** Packages per resources/list page. */
  pageSize: number;
}

interface PackageState {
  detail: PackageDetail;
  etag: string | undefined;
  checkedAt: number;
}

/** A version's files by path, and its links (for resolving one to its target). */
interface Manifest {
  version: string;
  digest: string;
  risk: Risk | null;
  /** The key ids of the registry's signatures, newest first. */
  keyids: string[];
  /** The same, joined ('' while unsigned), and when it was fetched. */
  signedBy: string;
  fetchedAt: number;
  files: Map<string, VersionFile>;
  links: Map<string, string>;
  result: object;
  /** What the skills extension serves of it, worked out on first use. */
  served?: ServedFile[];
}

/** A SKILL.md's frontmatter as the extension's clients read it, or why they cannot. */
type SkillMdReading = Record<string, unknown> | string;
/** What the readings kept may hold, counted in UTF-16 units of their JSON (about 64 MiB). */
const READINGS_MAX_SIZE = 32 * 1024 * 1024;

type Visibility = { ok: true; state: PackageState } | { ok: false; message: string };

/**
 * How an anonymous read of one URI was last answered from the caches: by this state of its package (the
 * detail that named the version), that version's manifest, and the kept result under `resultKey` (a key
 * made once).
 */
interface RecentRead {
  state: PackageState;
  manifest: Manifest;
  resultKey: string;
}

/** URIs whose last read is remembered (the map starts over when full, as parseSkillUri's memo). */
const RECENT_READS_MAX = 1000;
/** The longest URI remembered, so callers cannot make the map hold more than a few megabytes. */
const RECENT_READ_MAX_URI = 1024;

const notFound = (message: string, data: Record<string, unknown>) =>
  new RejectError('resource_not_found', message, data);

/** `_meta` of every file read of a version whose risk is `high` (made once). */
const HIGH_RISK_META = Object.freeze({ [SKILLS_META.risk]: 'high' });

/** The detail when it is served; else why not (missing, removed, quarantined or delisted). */
function served(key: string, answer: RegistryAnswer<PackageDetail>): PackageDetail | string {
  if (answer.status !== 200) return `@${key}: ${answer.error}`;
  const detail = answer.body;
  if (detail.status === 'quarantined' || detail.status === 'delisted') {
    const why = detail.quarantineReason ? `: ${detail.quarantineReason}` : '';
    return `@${key} is ${detail.status}${why}`;
  }
  return detail;
}

/** Concurrent loads of one key share one promise. */
function sharedLoads<T>() {
  const pending = new Map<string, Promise<T>>();
  return (key: string, load: () => Promise<T>): Promise<T> => {
    let p = pending.get(key);
    if (!p) {
      p = load();
      pending.set(key, p);
      p.finally(() => pending.delete(key)).catch(() => {});
    }
    return p;
  };
}

export function createCatalog(options: CatalogOptions): Catalog {
  const { registry, ttlMs, pageSize } = options;
  const states = new LRUCache<string, PackageState>({ max: 10_000 });
  const manifests = new LRUCache<string, Manifest>({ max: 2_000 });
  const stored = new LRUCache<string, Buffer | StaticResult>({
    maxSize: Math.max(1, options.cacheBytes),
    sizeCalculation: (v) => (v instanceof StaticResult ? v.tailBytes : v.length) || 1,
  });
  const cacheable = (size: number) => options.cacheBytes > 0 && size <= options.cacheBytes / 8;
  const checking = sharedLoads<Visibility>();
  const loadingManifest = sharedLoads<Manifest | string>();
  const loadingBytes = sharedLoads<Buffer>();

  /** Asks the registry about the package (conditionally when it was seen before). */
  function check(scope: string, name: string, cached: PackageState | undefined): Promise<Visibility> {
    const key = `${scope}/${name}`;
    return checking(key, async () => {
      const answer = await registry.detail(scope, name, cached?.etag);
      const checkedAt = Date.now();
      if (answer.status === 304) {
        // Only asked with the ETag of `cached`.
        const state = { ...(cached as PackageState), checkedAt };
        states.set(key, state);
        return { ok: true, state };
      }
      states.delete(key);
      const detail = served(key, answer);
      if (typeof detail === 'string') return { ok: false, message: detail };
      const state = { detail, etag: answer.status === 200 ? answer.etag : undefined, checkedAt };
      states.set(key, state);
      return { ok: true, state };
    });
  }

  /** A person's view of the package, asked now: never kept, never shared with another request. */
  async function detailAs(
    scope: string,
    name: string,
    data: Record<string, unknown>,
    assertion: string,
  ): Promise<PackageDetail> {
    const answer = await registry.detail(scope, name, undefined, assertion);
    if (answer.status === 304) throw new Error('a 304 to a detail asked without an ETag');
    const detail = served(`${scope}/${name}`, answer);
    if (typeof detail === 'string') throw notFound(detail, data);
    return detail;
  }

  /** The package's detail when the registry serves it; resource_not_found (with `data`) otherwise. */
  async function visiblePackage(
    scope: string,
    name: string,
    data: Record<string, unknown>,
    assertion: string | undefined,
  ): Promise<PackageDetail> {
    if (assertion !== undefined) return detailAs(scope, name, data, assertion);
    const cached = states.get(`${scope}/${name}`);
    if (cached) {
      const age = Date.now() - cached.checkedAt;
      if (age < ttlMs) return cached.detail;
      if (age < 2 * ttlMs) {
        // Stale for less than one more TTL: served while one request asks again (as the registry's own
        // detail cache does), so a busy package never waits on the registry.
        check(scope, name, cached).catch(() => {});
        return cached.detail;
      }
    }
    const visibility = await check(scope, name, cached);
    if (!visibility.ok) throw notFound(visibility.message, data);
    return visibility.state.detail;
  }

  /**
   * Whether a kept manifest is served without asking the registry. A version's files never change, but the
   * registry signs it seconds after it is created, and a rescan may move its risk: an unsigned manifest, or
   * one asked `fresh`, is asked again once per TTL, as a package's visibility is.
   */
  const manifestCurrent = (m: Manifest, fresh: boolean, now: number) =>
    (m.signedBy !== '' && !fresh) || now - m.fetchedAt < ttlMs;

  /** A version's manifest from the registry (as `assertion`'s person when given), or why it is not served. */
  async function fetchManifest(
    ref: SkillRef,
    version: string,
    assertion: string | undefined,
  ): Promise<Manifest | string> {
    const answer = await registry.version(ref.scope, ref.name, version, assertion);
    if (answer.status !== 200)
      return `@${ref.scope}/${ref.name}@${version}: ${answer.status === 404 ? 'version not found' : answer.error}`;
    const v = answer.body;
    const keyids = v.signatures.map((sig) => sig.keyid);
    return {
      version: v.version,
      digest: v.digest,
      risk: v.risk,
      keyids,
      signedBy: keyids.join(' '),
      fetchedAt: Date.now(),
      files: new Map(v.files.map((f) => [f.path, f])),
      links: new Map(v.files.flatMap((f) => (f.linkTarget === null ? [] : [[f.path, f.linkTarget]]))),
      result: manifestOf(v),
    };
  }

  /**
   * A version's manifest. `fresh`: its record (risk, signatures) as the registry says now, within one TTL
   * (for what shows the risk); else its files, which never change.
   */
  async function manifest(
    ref: SkillRef,
    version: string,
    uri: string,
    assertion: string | undefined,
    fresh = false,
  ): Promise<Manifest> {
    let loaded: Manifest | string;
    if (assertion !== undefined) loaded = await fetchManifest(ref, version, assertion);
    else {
      const key = `${ref.scope}/${ref.name}@${version}`;
      const hit = manifests.get(key);
      if (hit && manifestCurrent(hit, fresh, Date.now())) return hit;
      loaded = await loadingManifest(key, async () => {
        const m = await fetchManifest(ref, version, undefined);
        if (typeof m !== 'string') manifests.set(key, m);
        return m;
      });
    }
    if (typeof loaded === 'string') throw notFound(loaded, { uri });
    return loaded;
  }

  /** A file's bytes from the registry, checked against the manifest's SHA-256 before any use. */
  async function fetchBytes(
    ref: SkillRef,
    version: string,
    file: VersionFile,
    uri: string,
    assertion: string | undefined,
  ): Promise<Buffer> {
    const answer = await registry.file(ref.scope, ref.name, version, file.path, assertion);
    if (answer.status !== 200)
      throw notFound(`@${ref.scope}/${ref.name}@${version}: ${answer.error}`, { uri });
    const sha = createHash('sha256').update(answer.body).digest('hex');
    if (sha !== file.sha256) {
      options.logger.error({ path: file.path, version }, 'registry file does not match its sha256');
      throw new RejectError('registry_unavailable');
    }
    return answer.body;
  }

  /** A file's bytes: kept by SHA-256 when read anonymously; a person's read only uses what is kept. */
  function bytesOf(
    ref: SkillRef,
    version: string,
    file: VersionFile,
    uri: string,
    assertion: string | undefined,
  ): Promise<Buffer> {
    const key = `b:${file.sha256}`;
    const hit = stored.get(key);
    if (hit instanceof Buffer) return Promise.resolve(hit);
    if (assertion !== undefined) return fetchBytes(ref, version, file, uri, assertion);
    return loadingBytes(key, async () => {
      const bytes = await fetchBytes(ref, version, file, uri, undefined);
      if (cacheable(bytes.length)) stored.set(key, bytes);
      return bytes;
    });
  }

  /** The manifest entry `path` reads: links are followed to their target inside the folder. */
  function fileAt(m: Manifest, path: string): VersionFile | undefined {
    const file = m.files.get(path);
    if (!file || file.linkTarget === null) return file;
    const target = resolveSkillLink(path, m.links);
    const resolved = target ? m.files.get(target) : undefined;
    return resolved?.linkTarget === null ? resolved : undefined;
  }

  /** A read result kept by what names it (`keep` false for a person's read: it uses, never adds). */
  function built(key: string, build: () => object, keep: boolean): StaticResult {
    const hit = stored.get(key);
    if (hit instanceof StaticResult) return hit;
    const result = new StaticResult(new SerializedResult(JSON.stringify(build())));
    if (keep && cacheable(result.tailBytes)) stored.set(key, result);
    return result;
  }

  const servedOf = (m: Manifest): ServedFile[] => {
    m.served ??= servedFiles(m.files.values(), (path) => fileAt(m, path));
    return m.served;
  };

  // The frontmatter is the registry's reading of the package's current SKILL.md when that SKILL.md is
  // exactly the version's (the SHA-256 of the detail's text, once per detail); another version's is read
  // from its own SKILL.md bytes (skill-entries.ts). Either way the SKILL.md must be one the extension's
  // clients can read: the edge reads it as they do, once per SKILL.md (by SHA-256) while it is kept, since
  // details and delegated reads' records are built anew and a large frontmatter costs the parser's time.
  const currentSha256 = new WeakMap<PackageDetail, string>();
  const readings = new LRUCache<string, SkillMdReading>({
    maxSize: READINGS_MAX_SIZE,
    sizeCalculation: (reading) =>
      (typeof reading === 'string' ? reading : JSON.stringify(reading)).length + 64,
  });
  async function frontmatterOf(
    detail: PackageDetail,
    ref: SkillRef,
    m: Manifest,
    uri: string,
    assertion: string | undefined,
  ): Promise<SkillMdReading> {
    const file = fileAt(m, SKILL_MD_PATH);
    if (!file) return 'it has no SKILL.md';
    let sha256 = currentSha256.get(detail);
    if (sha256 === undefined) {
      sha256 = createHash('sha256').update(detail.skillMdRaw, 'utf8').digest('hex');
      currentSha256.set(detail, sha256);
    }
    const current = file.sha256 === sha256;
    let reading = readings.get(file.sha256);
    if (reading === undefined) {
      reading = frontmatterFromSkillMd(
        current ? detail.skillMdRaw : await bytesOf(ref, m.version, file, uri, assertion),
      );
      readings.set(file.sha256, reading);
    }
    return current && typeof reading !== 'string' ? detail.frontmatter : reading;
  }

  /**
   * The extension's entry of the skill whose SKILL.md `ref` names (`uri`), or why it is not served as a
   * skill; resource_not_found when the caller may not read it at all. A version's risk is judged last, so
   * `highRisk` says the opt-in alone would serve it.
   */
  async function skillEntry(
    ref: SkillRef,
    uri: string,
    read: SkillReadOptions,
  ): Promise<SkillEntry | Unserved> {
    const detail = await visiblePackage(ref.scope, ref.name, { uri }, read.assertion);
    const version = ref.version ?? detail.version;
    if (version === null) throw notFound(`@${ref.scope}/${ref.name} has no version yet`, { uri });
    const m = await manifest(ref, version, uri, read.assertion, true);
    const unserved = (why: string, highRisk = false): Unserved => ({
      why: `@${ref.scope}/${ref.name}@${m.version} is not served as a skill: ${why}`,
      highRisk,
    });
    const files = servedOf(m);
    const overLimit = limitProblem(files);
    if (overLimit) return unserved(overLimit);
    const frontmatter = await frontmatterOf(detail, ref, m, uri, read.assertion);
    if (typeof frontmatter === 'string') return unserved(frontmatter);
    const problem = frontmatterProblem(frontmatter, ref.name);
    if (problem) return unserved(problem);
    if (m.risk === 'high' && !read.includeHighRisk)
      return unserved(
        `risk high (opt in with _meta "${SKILLS_META.includeHighRisk}": true or header ${SKILLS_HIGH_RISK_HEADER}: true)`,
        true,
      );
    const at = { scope: ref.scope, name: ref.name, version: ref.version };
    return {
      uri: skillUri({ ...at, path: SKILL_MD_PATH }),
      frontmatter,
      resources: entryResources(files, (path) => skillUri({ ...at, path })),
      _meta: {
        [SKILLS_META.version]: m.version,
        [SKILLS_META.risk]: m.risk,
        [SKILLS_META.verified]: detail.verified,
        [SKILLS_META.signatures]: m.keyids,
        [SKILLS_META.digest]: m.digest,
      },
    };
  }

  // An anonymous read of a file asks for the package's state, the version's manifest and the kept result,
  // each by a key built for the request, through three async steps. While that state is within its TTL
  // and the manifest would not be asked again, the answer cannot change (a version's files never do): the
  // read of a URI remembers what it used, and the next read answers from that at once.
  const recentReads = new Map<string, RecentRead>();
  function recentRead(uri: string): StaticResult | undefined {
    const recent = recentReads.get(uri);
    if (recent === undefined) return undefined;
    const now = Date.now();
    if (now - recent.state.checkedAt >= ttlMs || !manifestCurrent(recent.manifest, false, now))
      return undefined;
    const hit = stored.get(recent.resultKey);
    return hit instanceof StaticResult ? hit : undefined;
  }
  /** Remembers an anonymous read answered with the kept result `resultKey`, by the package's cached state. */
  function rememberRead(uri: string, pkg: string, detail: PackageDetail, m: Manifest, resultKey: string) {
    const state = states.peek(pkg);
    if (state?.detail !== detail || !stored.has(resultKey) || uri.length > RECENT_READ_MAX_URI) return;
    if (recentReads.size >= RECENT_READS_MAX) recentReads.clear();
    recentReads.set(uri, { state, manifest: m, resultKey });
  }

  /** resources/read of a file or a version's manifest, through the caches and the registry. */
  async function readThrough(uri: string, assertion: string | undefined): Promise<StaticResult> {
    const ref = parseSkillUri(uri);
    const detail = await visiblePackage(ref.scope, ref.name, { uri }, assertion);
    const version = ref.version ?? detail.version;
    if (version === null) throw notFound(`@${ref.scope}/${ref.name} has no version yet`, { uri });
    const isManifest = ref.path === SKILL_MANIFEST_PATH;
    const m = await manifest(ref, version, uri, assertion, isManifest);
    const keep = assertion === undefined;
    if (isManifest) {
      return built(
        `r:${uri}\n${m.digest}\n${m.signedBy}\n${m.risk}`,
        () => ({
          contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(m.result, null, 2) }],
        }),
        keep,
      );
    }
    const file = fileAt(m, ref.path);
    if (!file) throw notFound(`@${ref.scope}/${ref.name}@${m.version} has no file ${ref.path}`, { uri });
    // A high-risk version's files say so. The latest version's risk is the detail's (asked once per TTL),
    // another's its record's.
    const highRisk = (version === detail.version ? detail.risk : m.risk) === 'high';
    const key = highRisk ? `r:${uri}\n${file.sha256}\nhigh` : `r:${uri}\n${file.sha256}`;
    let result = stored.get(key);
    if (!(result instanceof StaticResult)) {
      const bytes = await bytesOf(ref, m.version, file, uri, assertion);
      const meta = highRisk ? HIGH_RISK_META : undefined;
      result = built(key, () => ({ contents: [resourceContents(uri, file.path, bytes, meta)] }), keep);
    }
    if (keep) rememberRead(uri, `${ref.scope}/${ref.name}`, detail, m, key);
    return result;
  }

  const templates = new StaticResult(new SerializedResult(JSON.stringify(RESOURCE_TEMPLATES)));

  return {
    async listResources(cursor, assertion) {
      const at = cursor === undefined ? { p: 1, n: pageSize } : decodeCursor(cursor);
      const page = await registry.list(at.p, at.n, assertion);
      const more = at.p * at.n < page.total;
      return {
        resources: page.data.flatMap(listedResources),
        ...(more ? { nextCursor: encodeCursor({ p: at.p + 1, n: at.n }) } : {}),
      };
    },

    resourceTemplates(cursor) {
      // One page only: a cursor was never issued.
      if (cursor !== undefined) throw new RejectError('request_schema_invalid', 'invalid cursor');
      return templates;
    },

    readResource(uri, assertion) {
      return (assertion === undefined && recentRead(uri)) || readThrough(uri, assertion);
    },

    async listSkills(cursor, read) {
      const at = cursor === undefined ? { p: 1, n: pageSize } : decodeCursor(cursor);
      const page = await registry.list(at.p, at.n, read.assertion);
      const more = at.p * at.n < page.total;
      const entries = await Promise.all(
        page.data.map(async ({ scope, name }) => {
          const ref = { scope, name, version: null, path: SKILL_MD_PATH };
          try {
            return await skillEntry(ref, skillUri(ref), read);
          } catch (error) {
            // Gone since the list was read: left out, as it will be from the next list.
            if (error instanceof RejectError && error.reason === 'resource_not_found') return undefined;
            throw error;
          }
        }),
      );
      const skills: SkillEntry[] = [];
      let withheld = 0;
      for (const entry of entries) {
        if (entry === undefined) continue;
        if ('why' in entry) withheld += entry.highRisk ? 1 : 0;
        else skills.push(entry);
      }
      return {
        skills,
        ...(more ? { nextCursor: encodeCursor({ p: at.p + 1, n: at.n }) } : {}),
        // Said, so a caller learns that opting in would show more.
        ...(withheld > 0 ? { _meta: { [SKILLS_META.withheldHighRisk]: withheld } } : {}),
      };
    },

    async getSkill(uri, read) {
      const ref = parseSkillUri(uri);
      if (ref.path !== SKILL_MD_PATH) throw notFound(`not the URI of a skill's ${SKILL_MD_PATH}`, { uri });
      // The entry's URI must be the one asked, as the extension's clients compare them; a form no entry can
      // carry is named with the one to ask for.
      const own = skillUri(ref);
      if (!sameSkillUri(uri, own)) {
        throw new RejectError(
          'request_schema_invalid',
          `${uri.slice(0, 512)} cannot be the URI of a skill entry: skills/get ${own}`,
          { uri: uri.slice(0, 512) },
        );
      }
      const skill = await skillEntry(ref, uri, read);
      if ('why' in skill) throw notFound(skill.why, { uri });
      return { skill };
    },

    async readDirectory(uri, cursor, { assertion }) {
      const ref = parseSkillFolderUri(uri);
      const at = cursor === undefined ? { p: 1, n: pageSize } : decodeCursor(cursor);
      const detail = await visiblePackage(ref.scope, ref.name, { uri }, assertion);
      const version = ref.version ?? detail.version;
      if (version === null) throw notFound(`@${ref.scope}/${ref.name} has no version yet`, { uri });
      const m = await manifest(ref, version, uri, assertion);
      const children = folderChildren(servedOf(m), ref.path);
      if (!children)
        throw notFound(`@${ref.scope}/${ref.name}@${m.version} has no folder ${ref.path}`, { uri });
      const more = at.p * at.n < children.length;
      const folder = { scope: ref.scope, name: ref.name, version: ref.version };
      return {
        resources: children
          .slice((at.p - 1) * at.n, at.p * at.n)
          .map((child) => folderResource(child, skillUri({ ...folder, path: child.path }))),
        ...(more ? { nextCursor: encodeCursor({ p: at.p + 1, n: at.n }) } : {}),
      };
    },

    async search(args, assertion) {
      const answer = await registry.search(args.q, assertion);
      return {
        results: answer.results.map((item) => ({ ...item, ...skillUris(item.scope, item.name) })),
        total: answer.total,
      };
    },

    async get(args, assertion) {
      // The arguments' schema has checked the name already.
      const { scope, name } = parsePackageName(args.package) as { scope: string; name: string };
      const detail = await visiblePackage(scope, name, { package: args.package }, assertion);
      return { package: detail, ...skillUris(scope, name) };
    },

    close: () => registry.close(),
  };
}
