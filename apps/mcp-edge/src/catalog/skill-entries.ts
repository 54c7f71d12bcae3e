import {
  SKILL_EXTENSION_LIMITS,
  SKILL_MANIFEST_PATH,
  type SkillEntryResource,
  type VersionFile,
} from '@pkgreg/contracts';
import mime from 'mime-types';
import { parse as parseYaml } from 'yaml';

// The shapes of the skills extension (SEP-2640, `io.modelcontextprotocol/skills`) that need no registry:
// the rules an entry's frontmatter must pass for its clients to take it, an entry's file list, and the
// children of a folder for resources/directory/read (docs/decisions.md, "Skills over MCP").

/** A file as the extension lists and reads it: a link stands for its target's bytes. */
export interface ServedFile {
  path: string;
  /** The file itself, or the file a link leads to. */
  bytes: VersionFile;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Characters as Agent Skills counts them (code points). */
const characters = (text: string) => [...text].length;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A SKILL.md's frontmatter as the indexer reads it (packages/indexer skill-md.ts: BOM dropped, the `---`
 * block, YAML 1.2 core schema, what survives JSON), for a version whose SKILL.md is not the package's
 * current one; or why it has none.
 */
export function frontmatterFromSkillMd(bytes: Buffer): Record<string, unknown> | string {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return 'its SKILL.md is not UTF-8';
  }
  const match = /^---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!match) return 'its SKILL.md has no frontmatter';
  let data: unknown;
  try {
    data = parseYaml(match[1] ?? '', { maxAliasCount: 50 });
  } catch {
    return 'its SKILL.md frontmatter is not valid YAML';
  }
  if (!isPlainObject(data)) return 'its SKILL.md frontmatter is not a mapping';
  return JSON.parse(JSON.stringify(data)) as Record<string, unknown>;
}

/**
 * Why the frontmatter cannot be an entry of skill `name` (the rules SEP-2640 clients check before
 * taking one), or undefined. The name itself passed the registry's rule, which is Agent Skills'.
 */
export function frontmatterProblem(frontmatter: Record<string, unknown>, name: string): string | undefined {
  if (Object.getPrototypeOf(frontmatter) !== Object.prototype || Object.hasOwn(frontmatter, '__proto__'))
    return 'frontmatter has a "__proto__" key';
  if (frontmatter.name !== name) return `frontmatter name is not "${name}"`;
  const { description, compatibility, metadata } = frontmatter;
  if (typeof description !== 'string' || description === '' || characters(description) > 1024)
    return 'frontmatter description is not a string of 1-1024 characters';
  if (
    compatibility !== undefined &&
    (typeof compatibility !== 'string' || compatibility === '' || characters(compatibility) > 500)
  )
    return 'frontmatter compatibility is not a string of 1-500 characters';
  if (
    metadata !== undefined &&
    !(isPlainObject(metadata) && Object.values(metadata).every((v) => typeof v === 'string'))
  )
    return 'frontmatter metadata does not map strings to strings';
  return undefined;
}

/** The entry's `resources`: every file once, or "dynamic" past the extension's limits of one skill. */
export function entryResources(
  files: readonly ServedFile[],
  uriOf: (path: string) => string,
): SkillEntryResource[] | 'dynamic' {
  let bytes = 0;
  for (const f of files) bytes += f.bytes.size;
  if (files.length > SKILL_EXTENSION_LIMITS.files || bytes > SKILL_EXTENSION_LIMITS.bytes) return 'dynamic';
  return files
    .map((f) => ({ uri: uriOf(f.path), digest: `sha256:${f.bytes.sha256}`, size: f.bytes.size }))
    .sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
}

/**
 * What the extension serves of a version: each path that reads as a file (a link leading to one), but
 * a root `_manifest`, which the synthetic manifest resource hides.
 */
export function servedFiles(
  files: Iterable<VersionFile>,
  fileAt: (path: string) => VersionFile | undefined,
): ServedFile[] {
  const served: ServedFile[] = [];
  for (const f of files) {
    const bytes = fileAt(f.path);
    if (bytes && f.path !== SKILL_MANIFEST_PATH) served.push({ path: f.path, bytes });
  }
  return served;
}

/** A child of a folder as resources/directory/read answers it (before its URI is made). */
export type FolderChild =
  | { name: string; path: string; folder: true }
  | { name: string; path: string; folder: false; size: number };

/**
 * The direct children of folder `path` ('' for the skill's own), sorted by name; null when no file lies
 * below it (a file, or nothing at all).
 */
export function folderChildren(files: readonly ServedFile[], path: string): FolderChild[] | null {
  const prefix = path === '' ? '' : `${path}/`;
  const children = new Map<string, FolderChild>();
  for (const f of files) {
    if (!f.path.startsWith(prefix)) continue;
    const [name = '', ...below] = f.path.slice(prefix.length).split('/');
    if (children.has(name)) continue;
    children.set(
      name,
      below.length > 0
        ? { name, path: `${prefix}${name}`, folder: true }
        : { name, path: f.path, folder: false, size: f.bytes.size },
    );
  }
  if (children.size === 0) return null;
  return [...children.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The `resources` item of one child (MCP Resource; a folder's type is `inode/directory`). */
export function folderResource(child: FolderChild, uri: string): object {
  if (child.folder) return { uri, name: child.name, mimeType: 'inode/directory' };
  const type = mime.lookup(child.path) || undefined;
  return { uri, name: child.name, ...(type ? { mimeType: type } : {}), size: child.size };
}
