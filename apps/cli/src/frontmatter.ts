import { parse as parseYaml } from 'yaml';

// The few SKILL.md frontmatter fields the CLI reads itself: the name and version of a folder to upload
// (skill-folder.ts) and what a site's skill declares it needs (install/site.ts). Parsed with the same
// YAML library the registry's indexer uses, so both read a frontmatter alike.

export interface FrontmatterFields {
  name?: string;
  version?: string;
  metadataVersion?: string;
  /**
   * `metadata.dependencies` as written: one string (`"@a/b@^1, @c/d"`) or a list of strings; undefined
   * when absent.
   */
  dependencies?: string | string[];
}

const FRONTMATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** A scalar as text (a YAML `version: 1.2` is a number), or undefined for anything else. */
function scalar(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `name`, `version`, `metadata.version` and `metadata.dependencies` of a SKILL.md's frontmatter. A
 * frontmatter that is not valid YAML, or not a mapping, yields no fields (as a SKILL.md without one).
 */
export function frontmatterFields(text: string): FrontmatterFields {
  const match = FRONTMATTER.exec(text);
  if (!match) return {};
  let data: unknown;
  try {
    data = parseYaml(match[1] ?? '', { maxAliasCount: 100 });
  } catch {
    return {};
  }
  if (!isRecord(data)) return {};
  const fields: FrontmatterFields = {};
  const name = scalar(data.name);
  if (name !== undefined) fields.name = name;
  const version = scalar(data.version);
  if (version !== undefined) fields.version = version;
  const metadata = isRecord(data.metadata) ? data.metadata : {};
  const metadataVersion = scalar(metadata.version);
  if (metadataVersion !== undefined) fields.metadataVersion = metadataVersion;
  const dependencies = metadata.dependencies;
  if (Array.isArray(dependencies))
    fields.dependencies = dependencies.map(scalar).filter((entry): entry is string => entry !== undefined);
  else {
    const one = scalar(dependencies);
    if (one !== undefined) fields.dependencies = one;
  }
  return fields;
}
