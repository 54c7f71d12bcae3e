import {
  SKILL_EXTENSION_LIMITS,
  SKILL_MANIFEST_PATH,
  type SkillEntryResource,
  type VersionFile,
} from '@pkgreg/contracts';
import mime from 'mime-types';
import {
  CST,
  type Document,
  isCollection,
  isMap,
  isScalar,
  isSeq,
  Lexer,
  parseDocument,
  Scalar,
  visit,
  type YAMLMap,
} from 'yaml';

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

// `ignoreBOM`: the BOM is dropped below, as SEP-2640 clients drop it.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Nesting of collections the v2 client reads (its frontmatter reader refuses deeper). */
const MAX_DEPTH = 32;

const NOT_SUPPORTED = {
  props: 'anchors, aliases and tags are not supported',
  complexKey: 'complex keys ("?") are not supported',
  indentIndicator: 'block scalar indentation indicators are not supported',
  quoted: 'a quoted value must close on the same line (multi-line quoted values are not supported)',
  flow: 'a flow collection must close on the same line',
  tab: 'tabs cannot be used for indentation',
  bom: 'a byte order mark inside the frontmatter is not supported',
  documentMarker: 'document markers ("---", "...") inside the frontmatter are not supported',
} as const;

/**
 * What SEP-2640 clients refuse in a frontmatter that YAML 1.2 reads, token by token: the v2 client reads a
 * subset of YAML (its frontmatter reader: block collections, one-line flow collections and quoted values,
 * no anchors, aliases or tags) and throws on the rest rather than read it differently.
 */
function tokenProblem(yaml: string): string | undefined {
  let flowDepth = 0;
  let scalarNext = false;
  for (const token of new Lexer().lex(yaml)) {
    // A scalar's source follows its marker: it is text, whatever it starts with.
    if (scalarNext) {
      scalarNext = false;
      continue;
    }
    const type = CST.tokenType(token);
    if (type === 'scalar') scalarNext = true;
    else if (type === 'anchor' || type === 'tag' || type === 'alias') return NOT_SUPPORTED.props;
    else if (type === 'explicit-key-ind') return NOT_SUPPORTED.complexKey;
    else if (type === 'block-scalar-header' && /\d/.test(token)) return NOT_SUPPORTED.indentIndicator;
    else if ((type === 'single-quoted-scalar' || type === 'double-quoted-scalar') && token.includes('\n'))
      return NOT_SUPPORTED.quoted;
    else if (type === 'flow-map-start' || type === 'flow-seq-start') flowDepth++;
    else if (type === 'flow-map-end' || type === 'flow-seq-end') flowDepth--;
    else if (type === 'newline' && flowDepth > 0) return NOT_SUPPORTED.flow;
    else if (type === 'doc-start' || type === 'doc-end') return NOT_SUPPORTED.documentMarker;
  }
  return undefined;
}

/**
 * Lines the v2 client refuses: one whose indentation ends in a tab (but in a block scalar's content),
 * and a byte order mark opening the first. `blockLines` holds the indexes of block scalars' content lines
 * with their content's indentation.
 */
function lineProblem(lines: string[], blockLines: Map<number, number>): string | undefined {
  let first = true;
  for (const [index, line] of lines.entries()) {
    const indent = /^ */.exec(line)?.[0].length ?? 0;
    const text = line.replace(/^[ \t]+/, '');
    const contentIndent = blockLines.get(index);
    if (contentIndent !== undefined) {
      // In a block scalar: its content may hold tabs, a line indented less than it may not.
      if (indent < line.length && indent < contentIndent && line[indent] === '\t') return NOT_SUPPORTED.tab;
      continue;
    }
    if (text === '' || text.startsWith('#')) continue;
    if (line[indent] === '\t') return NOT_SUPPORTED.tab;
    if (first && text.startsWith('\uFEFF')) return NOT_SUPPORTED.bom;
    first = false;
  }
  return undefined;
}

/** What the v2 client refuses in a frontmatter YAML parsed: its keys, flow pairs, numbers and depth. */
function nodeProblem(doc: Document, yaml: string): string | undefined {
  let problem: string | undefined;
  const depthOf = new Map<unknown, number>();
  const refuse = (why: string) => {
    problem ??= why;
    return visit.BREAK;
  };
  visit(doc, {
    Collection(_key, node, path) {
      const parent = path.findLast((p) => isCollection(p));
      const depth = parent === undefined ? 0 : (depthOf.get(parent) ?? 0) + 1;
      if (depth > MAX_DEPTH) return refuse(`nesting deeper than ${MAX_DEPTH} levels is not supported`);
      depthOf.set(node, depth);
      // `[a: b]`: a pair in a flow sequence.
      if (
        isSeq(node) &&
        node.flow &&
        node.items.some((item) => isMap(item) && yaml[item.range?.[0] ?? 0] !== '{')
      )
        return refuse('mappings inside flow collections are not supported; quote the value');
      return undefined;
    },
    Pair(_key, pair, path) {
      const map = path.at(-1) as YAMLMap;
      const key = pair.key;
      if (!isScalar(key)) return refuse('keys must be plain or quoted strings');
      if (key.value === '__proto__') return refuse('the key "__proto__" is not supported');
      const [start = 0, end = 0] = key.range ?? [];
      const plain = key.type === Scalar.PLAIN;
      if (plain && (typeof key.value !== 'string' || start === end))
        return refuse(`key "${yaml.slice(start, end)}" must be a string; quote it`);
      // The client reads `key: value` on one line: a plain key's colon after spaces at most, a quoted
      // key's right after it in a block mapping; in a flow mapping, a plain key's colon before a space.
      const gap = plain || map.flow ? (/^[ \t]*/.exec(yaml.slice(end))?.[0].length ?? 0) : 0;
      if (yaml[end + gap] !== ':' || yaml.slice(start, end).includes('\n'))
        return refuse(map.flow ? 'expected "key: value" in a flow mapping' : 'expected "key: value"');
      if (map.flow && plain && !/[ \t]/.test(yaml[end + gap + 1] ?? ''))
        return refuse('expected "key: value" in a flow mapping');
      const value = pair.value;
      if (map.flow && (value === null || (isScalar(value) && value.range?.[0] === value.range?.[1])))
        return refuse('empty value in a flow collection');
      return undefined;
    },
    Scalar(_key, node) {
      if (typeof node.value === 'number' && !Number.isFinite(node.value))
        return refuse(`"${node.source ?? String(node.value)}" cannot be represented in JSON; quote it`);
      return undefined;
    },
  });
  return problem;
}

/**
 * A SKILL.md's frontmatter as SEP-2640 clients read it, or why they cannot: the v2 client's split (CRLF as
 * a line break, a BOM dropped, the first line exactly `---`, the block to the next `---` line) and its
 * subset of YAML 1.2 (core schema), refused where the client refuses (tested case by case against it). The
 * values are the `yaml` package's reading, which is the client's inside that subset.
 */
export function frontmatterFromSkillMd(skillMd: Buffer | string): Record<string, unknown> | string {
  let text: string;
  try {
    text = typeof skillMd === 'string' ? skillMd : utf8.decode(skillMd);
  } catch {
    return 'its SKILL.md is not UTF-8';
  }
  text = text.replaceAll('\r\n', '\n');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (!text.startsWith('---\n')) return 'its SKILL.md must begin with a "---" line';
  const rest = text.slice(4);
  const close = /^---[\t ]*$/m.exec(rest);
  if (!close) return 'its SKILL.md frontmatter has no closing "---" line';
  const yaml = rest.slice(0, close.index);
  const refused = (why: string) =>
    `its SKILL.md frontmatter cannot be read by the extension's clients: ${why}`;
  const byToken = tokenProblem(yaml);
  if (byToken) return refused(byToken);
  const doc = parseDocument(yaml);
  if (doc.errors.length > 0) return 'its SKILL.md frontmatter is not valid YAML';
  const lines = yaml.split('\n');
  const byLine = lineProblem(lines, blockScalarLines(doc, yaml));
  if (byLine) return refused(byLine);
  const byNode = nodeProblem(doc, yaml);
  if (byNode) return refused(byNode);
  if (doc.contents === null) return {}; // comments only: the client reads an empty mapping
  const data: unknown = doc.toJS();
  if (!isPlainObject(data)) return 'its SKILL.md frontmatter is not a mapping';
  return JSON.parse(JSON.stringify(data)) as Record<string, unknown>;
}

/** The content lines of every block scalar (by index in the YAML's lines), with their content's indent. */
function blockScalarLines(doc: Document, yaml: string): Map<number, number> {
  const lines = new Map<number, number>();
  // Where each line break is, to tell a scalar's line by binary search (counting from the top each time
  // made a frontmatter of many block scalars quadratic).
  const breaks: number[] = [];
  for (let at = yaml.indexOf('\n'); at !== -1; at = yaml.indexOf('\n', at + 1)) breaks.push(at);
  const lineAfter = (breakAt: number) => {
    let low = 0;
    let high = breaks.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((breaks[mid] as number) < breakAt) low = mid + 1;
      else high = mid;
    }
    return low + 1; // breaks before breakAt, plus this one
  };
  visit(doc, {
    Scalar(_key, node) {
      if (node.type !== Scalar.BLOCK_LITERAL && node.type !== Scalar.BLOCK_FOLDED) return;
      const [start = 0, end = 0] = node.range ?? [];
      const headerEnd = yaml.indexOf('\n', start);
      if (headerEnd === -1 || headerEnd >= end) return; // no content lines
      const first = lineAfter(headerEnd); // the line after the header's
      const body = yaml
        .slice(headerEnd + 1, end)
        .replace(/\n$/, '')
        .split('\n');
      const content = body.find((line) => !/^ *$/.test(line));
      const indent =
        content === undefined ? Number.POSITIVE_INFINITY : (/^ */.exec(content)?.[0].length ?? 0);
      for (let i = 0; i < body.length; i++) lines.set(first + i, indent);
    },
  });
  return lines;
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

/**
 * Why the extension does not serve a skill of these files (SEP-2640's limits of one skill: entries of
 * `resources`, SKILL.md included, and the sum of their sizes), or undefined.
 */
export function limitProblem(files: readonly ServedFile[]): string | undefined {
  const { files: maxFiles, bytes: maxBytes } = SKILL_EXTENSION_LIMITS;
  if (files.length > maxFiles)
    return `it has ${files.length} files, over the skills extension's limit of ${maxFiles} per skill`;
  let bytes = 0;
  for (const f of files) bytes += f.bytes.size;
  if (bytes > maxBytes)
    return `its files hold ${bytes} bytes, over the skills extension's limit of 16 MiB (${maxBytes} bytes) per skill`;
  return undefined;
}

/** The entry's `resources`: every file once, by URI. */
export function entryResources(
  files: readonly ServedFile[],
  uriOf: (path: string) => string,
): SkillEntryResource[] {
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
