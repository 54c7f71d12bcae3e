import { createRequire } from 'node:module';
import { posix } from 'node:path';
import { hasLoneSurrogate, hasNul, PACKAGE_SEGMENT_PATTERN, PackageKindSchema } from '@pkgreg/contracts';
import { type DerivedPackage, parseDependencies } from '@pkgreg/registry';
import semver from 'semver';
import { parse as parseYaml } from 'yaml';
import { spdxFromDeclared } from './license.js';
import type { RepoMeta } from './types.js';

// The tokenizer's tables are slow to load and large in memory: loaded on the first SKILL.md counted, so
// the processes that import the indexer and never count (the API serving reads, the operator commands) do
// not pay for them at start (docs/benchmarks.md, Indexer, "Process start").
const require = createRequire(import.meta.url);
type Tokenizer = typeof import('gpt-tokenizer/encoding/o200k_base');
let tokenizer: Tokenizer | undefined;
function countTokens(text: string): number {
  tokenizer ??= require('gpt-tokenizer/encoding/o200k_base') as Tokenizer;
  return tokenizer.countTokens(text);
}

// SKILL.md -> package fields. The rules agents' own loaders enforce reject (YAML that does not parse, no
// name or description, an illegal name); the ones they tolerate (agentskills.io's length limits, unknown
// keys) index the skill with warnings. Field mapping: decisions.md (Registry / Indexing). Pure: no I/O.

/** Larger files are refused before they are fetched or tokenized. */
export const MAX_SKILL_MD_BYTES = 512 * 1024;
const MAX_DESCRIPTION_CHARS = 1024;
const MAX_COMPATIBILITY_CHARS = 500;
const MAX_TAGS = 32;
const MAX_TAG_CHARS = 64;
/** Subdirectories the agentskills.io layout loads on demand. */
const DISCLOSURE_DIRS = ['references/', 'scripts/', 'assets/'];
/**
 * Top-level keys the agentskills.io specification defines, plus the ones the registry reads at the top
 * level as well as under `metadata`; any other key is indexed with a warning.
 */
const KNOWN_KEYS = new Set([
  'name',
  'description',
  'license',
  'compatibility',
  'allowed-tools',
  'metadata',
  'version',
  'author',
  'tags',
  'category',
  'language',
]);

export interface SkillInput {
  /** SKILL.md text. */
  raw: string;
  /** Its git blob SHA-1. */
  sha: string;
  /** The skill's directory from the repository root ('' at the root). */
  dir: string;
  /** Every file of the skill's directory, relative to it (SKILL.md included, nested skills excluded). */
  dirFiles: string[];
  repo: RepoMeta;
  /** Registry scope (the repository owner, lowercased and sanitized). */
  scope: string;
  /** `owner/repo`. */
  sourceRepo: string;
}

export type Analysis = { ok: true; pkg: DerivedPackage } | { ok: false; reason: string };

/** True when `value` satisfies the agentskills.io name rule (also the registry's scope/name rule). */
export function isValidName(value: string): boolean {
  return PACKAGE_SEGMENT_PATTERN.test(value);
}

type Frontmatter = Record<string, unknown>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How deep frontmatter may nest (mappings and lists): deeper is refused, not walked recursively. */
const MAX_FRONTMATTER_DEPTH = 32;

/**
 * Why parsed frontmatter cannot be stored as jsonb, or undefined. YAML escapes can produce what jsonb
 * refuses: NUL ("\0") and a lone UTF-16 surrogate ("\uD800"). Iterative, with a depth limit, so no file
 * can exhaust the stack here or in the JSON round trip after it.
 */
function frontmatterProblem(data: unknown): string | undefined {
  const pending: Array<[value: unknown, depth: number]> = [[data, 0]];
  const textProblem = (text: string) =>
    hasNul(text)
      ? 'frontmatter contains a NUL character'
      : hasLoneSurrogate(text)
        ? 'frontmatter contains a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape)'
        : undefined;
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, depth] = next;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) return problem;
    } else if (typeof value === 'object' && value !== null) {
      if (depth >= MAX_FRONTMATTER_DEPTH)
        return `frontmatter nests deeper than ${MAX_FRONTMATTER_DEPTH} levels`;
      for (const [key, child] of Object.entries(value)) {
        const problem = textProblem(key);
        if (problem) return problem;
        pending.push([child, depth + 1]);
      }
    }
  }
  return undefined;
}

/** Splits SKILL.md into its YAML frontmatter (parsed) and body. */
export function parseFrontmatter(
  raw: string,
): { ok: true; data: Frontmatter } | { ok: false; reason: string } {
  const text = raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
  const match = /^---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!match) return { ok: false, reason: 'missing YAML frontmatter (SKILL.md must start with ---)' };
  let data: unknown;
  try {
    data = parseYaml(match[1] ?? '', { maxAliasCount: 50 });
  } catch (error) {
    const first = String((error as Error).message).split('\n')[0];
    return { ok: false, reason: `frontmatter is not valid YAML: ${first}` };
  }
  if (data === null || data === undefined) data = {};
  if (!isPlainObject(data)) return { ok: false, reason: 'frontmatter must be a YAML mapping' };
  // Stored as jsonb and served as JSON: keep exactly what survives a JSON round trip.
  const problem = frontmatterProblem(data);
  if (problem) return { ok: false, reason: problem };
  return { ok: true, data: JSON.parse(JSON.stringify(data)) as Frontmatter };
}

function chars(value: string): number {
  return [...value].length;
}

function optionalString(value: unknown): string | null {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/** Splits on whitespace and commas, but not inside parentheses (`Bash(git status:*)` stays whole). */
function splitTools(value: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of value) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && (ch === ',' || /\s/.test(ch))) {
      if (current) out.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (current) out.push(current);
  return out;
}

function stringList(value: unknown, split: (s: string) => string[]): string[] | null {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return split(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) {
    return value.map((v) => String(v).trim()).filter((v) => v !== '');
  }
  return null;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

/** semver or null: exact versions as given, `1.2`/`v1` widened to `1.2.0`/`1.0.0`, anything else null. */
export function normalizeVersion(value: unknown): string | null {
  const text = optionalString(value);
  if (!text) return null;
  const exact = semver.valid(text);
  if (exact) return exact;
  if (/^v?\d+(\.\d+){0,2}$/.test(text)) return semver.coerce(text)?.version ?? null;
  return null;
}

/** Relative link targets of the markdown body, resolved against the skill directory. */
function linkedPaths(raw: string): string[] {
  const targets: string[] = [];
  const inline = /\]\(\s*<?([^)\s>]+)>?(?:\s+["'][^"']*["'])?\s*\)/g;
  const reference = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm;
  for (const re of [inline, reference]) {
    for (const m of raw.matchAll(re)) if (m[1]) targets.push(m[1]);
  }
  const resolved: string[] = [];
  for (const target of targets) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#') || target.startsWith('/')) continue;
    let clean = target.replace(/[#?].*$/, '');
    try {
      clean = decodeURIComponent(clean);
    } catch {
      // Keep the raw target: a broken escape is still a path someone may have meant literally.
    }
    const normal = posix.normalize(clean).replace(/\/+$/, '');
    if (normal === '' || normal === '.' || normal.startsWith('..')) continue;
    resolved.push(normal);
  }
  return resolved;
}

function hasProgressiveDisclosure(raw: string, dirFiles: string[]): boolean {
  const others = dirFiles.filter((f) => f !== 'SKILL.md');
  if (others.some((f) => DISCLOSURE_DIRS.some((d) => f.startsWith(d)))) return true;
  const links = linkedPaths(raw);
  return links.some((link) => others.some((f) => f === link || f.startsWith(`${link}/`)));
}

/** Applies the agentskills.io rules and the registry's field mapping to one SKILL.md. */
export function analyzeSkill(input: SkillInput): Analysis {
  const { raw, dir, repo } = input;
  if (Buffer.byteLength(raw, 'utf8') > MAX_SKILL_MD_BYTES) {
    return { ok: false, reason: `SKILL.md is larger than ${MAX_SKILL_MD_BYTES} bytes` };
  }
  // PostgreSQL text and jsonb cannot hold NUL; one such file must not fail the whole repository's run.
  if (hasNul(raw)) return { ok: false, reason: 'SKILL.md contains NUL bytes (not a text file)' };
  const parsed = parseFrontmatter(raw);
  if (!parsed.ok) return parsed;
  const fm = parsed.data;

  const dirName = dir === '' ? repo.name : posix.basename(dir);
  let name: string;
  if (fm.name === undefined || fm.name === null) {
    if (!isValidName(dirName)) {
      return {
        ok: false,
        reason: `name is missing and the directory name "${dirName}" is not a valid name (1-64 of a-z 0-9 -, no leading, trailing or double -)`,
      };
    }
    name = dirName;
  } else {
    if (typeof fm.name !== 'string') return { ok: false, reason: 'name must be a string' };
    name = fm.name;
    if (!isValidName(name)) {
      return {
        ok: false,
        reason: `invalid name "${name.slice(0, 80)}": 1-64 of a-z 0-9 -, no leading, trailing or double -`,
      };
    }
  }

  if (fm.description === undefined || fm.description === null) {
    return { ok: false, reason: 'description is missing' };
  }
  if (typeof fm.description !== 'string') return { ok: false, reason: 'description must be a string' };
  const description = fm.description.trim();
  if (description === '') return { ok: false, reason: 'description is empty' };
  const warnings: string[] = [];
  // agentskills.io asks for the directory's name; agents load by `name`, and installs use it. The root
  // directory's name is the checkout's, which the author does not control.
  if (dir !== '' && name !== dirName) {
    warnings.push(`name "${name}" does not match its directory "${dirName}"; it is installed as "${name}"`);
  }
  if (chars(description) > MAX_DESCRIPTION_CHARS) {
    warnings.push(
      `description is longer than ${MAX_DESCRIPTION_CHARS} characters (${chars(description)}); some agents cut it`,
    );
  }

  if (fm.metadata !== undefined && fm.metadata !== null && !isPlainObject(fm.metadata)) {
    return { ok: false, reason: 'metadata must be a mapping' };
  }
  const metadata = isPlainObject(fm.metadata) ? fm.metadata : {};
  const field = (key: string): unknown => metadata[key] ?? fm[key];

  let compatibility: string[];
  if (typeof fm.compatibility === 'string' && chars(fm.compatibility) > MAX_COMPATIBILITY_CHARS) {
    warnings.push(`compatibility is longer than ${MAX_COMPATIBILITY_CHARS} characters`);
  }
  {
    const list = stringList(fm.compatibility, (s) => s.split(',').map((p) => p.trim()));
    if (!list) return { ok: false, reason: 'compatibility must be a string or a list of strings' };
    compatibility = unique(list.filter((p) => p !== ''));
  }

  const tools = stringList(fm['allowed-tools'], splitTools);
  if (!tools) return { ok: false, reason: 'allowed-tools must be a string or a list of strings' };

  const kindValue = metadata.kind ?? 'skill';
  const kind = PackageKindSchema.safeParse(kindValue);
  if (!kind.success) {
    return {
      ok: false,
      reason: `metadata.kind "${String(kindValue).slice(0, 40)}" is not one of ${PackageKindSchema.options.join(', ')}`,
    };
  }

  const tagList = stringList(field('tags'), (s) => s.split(/[,\s]+/)) ?? [];
  const tags = unique(
    tagList.map((t) => t.trim()).filter((t) => t !== '' && chars(t) <= MAX_TAG_CHARS),
  ).slice(0, MAX_TAGS);

  const authorValue = field('author');
  const author = isPlainObject(authorValue) ? optionalString(authorValue.name) : optionalString(authorValue);
  const status = optionalString(metadata.status)?.toLowerCase() === 'deprecated' ? 'deprecated' : 'active';
  const declared = parseDependencies(metadata.dependencies, { scope: input.scope, name });
  warnings.push(...declared.warnings);
  const unknown = Object.keys(fm).filter((key) => !KNOWN_KEYS.has(key));
  if (unknown.length > 0) {
    const shown = unknown.slice(0, 10).map((key) => `"${key.slice(0, 40)}"`);
    warnings.push(
      `unknown frontmatter ${unknown.length === 1 ? 'key' : 'keys'} ${shown.join(', ')}${unknown.length > 10 ? ', …' : ''} (agentskills.io defines name, description, license, compatibility, allowed-tools, metadata)`,
    );
  }

  return {
    ok: true,
    pkg: {
      scope: input.scope,
      name,
      description,
      kind: kind.data,
      category: optionalString(field('category')),
      tags,
      compatibility,
      language: optionalString(field('language')),
      declaredVersion: normalizeVersion(field('version')),
      sourceRepo: input.sourceRepo,
      sourcePath: dir,
      sourceRef: repo.defaultBranch,
      repoUrl: repo.repoUrl,
      homepageUrl: repo.homepageUrl,
      repoOwner: repo.owner,
      author,
      repoStars: repo.stars,
      declaredLicense: spdxFromDeclared(fm.license),
      skillMdRaw: raw,
      frontmatter: fm,
      allowedTools: unique(tools),
      tokenCount: countTokens(raw),
      fileCount: input.dirFiles.length,
      progressiveDisclosure: hasProgressiveDisclosure(raw, input.dirFiles),
      status,
      dependencies: declared.dependencies,
      lastCommitSha: input.sha,
      warnings,
    },
  };
}
