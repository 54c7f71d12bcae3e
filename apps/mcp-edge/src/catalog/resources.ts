import {
  type PackageListItem,
  RejectError,
  SKILL_MANIFEST_PATH,
  SKILL_URI_TEMPLATES,
  SKILLS_META,
  type SkillManifest,
  type VersionDetail,
} from '@pkgreg/contracts';
import mime from 'mime-types';
import { z } from 'zod';
import { skillUris } from './skill-uri.js';

// The MCP shapes of skill resources (MCP 2025-11-25, server/resources), laid out as the skills interest
// group's "skills as resources" example does: SKILL.md (priority 1) and _manifest (0.5) listed per skill,
// every other file reached through a template (0.2).

const AUDIENCE = ['user', 'assistant'];

/**
 * The two listed resources of one package. SKILL.md's `name` is its frontmatter's (SEP-2640, "Resource
 * Metadata": the package's name is it). A latest version whose risk is `high` says so in `_meta`.
 */
export function listedResources(p: PackageListItem): object[] {
  const id = `@${p.scope}/${p.name}`;
  const { uri, manifestUri } = skillUris(p.scope, p.name);
  const annotations = (priority: number) => ({ audience: AUDIENCE, priority, lastModified: p.lastIndexedAt });
  const meta = p.risk === 'high' ? { _meta: { [SKILLS_META.risk]: p.risk } } : {};
  return [
    {
      uri,
      name: p.name,
      title: id,
      description: p.description,
      mimeType: 'text/markdown',
      annotations: annotations(1),
      ...meta,
    },
    {
      uri: manifestUri,
      name: `${id}/${SKILL_MANIFEST_PATH}`,
      title: `Files of ${id}`,
      description: `Every file of the latest version of ${id}: path, size and sha256.`,
      mimeType: 'application/json',
      annotations: annotations(0.5),
      ...meta,
    },
  ];
}

export const RESOURCE_TEMPLATES = {
  resourceTemplates: [
    {
      uriTemplate: SKILL_URI_TEMPLATES.file,
      name: 'skill-file',
      title: 'A file of a skill',
      description:
        "A file of a skill's latest version, by its path in the skill folder; the paths are in skill://{scope}/{name}/_manifest.",
      annotations: { audience: AUDIENCE, priority: 0.2 },
    },
    {
      uriTemplate: SKILL_URI_TEMPLATES.fileAtVersion,
      name: 'skill-file-at-version',
      title: 'A file of a skill at an exact version',
      description:
        'A file of one exact version of a skill (never changes); _manifest as the path lists that version.',
      annotations: { audience: AUDIENCE, priority: 0.2 },
    },
  ],
};

/** The `_manifest` JSON of one version. */
export function manifestOf(v: VersionDetail): SkillManifest {
  return {
    skill: `@${v.scope}/${v.name}`,
    version: v.version,
    digest: v.digest,
    integrity: v.integrity,
    signatures: v.signatures,
    risk: v.risk,
    files: v.files.map((f) => ({
      path: f.path,
      size: f.size,
      sha256: f.sha256,
      hash: `sha256:${f.sha256}`,
      linkTarget: f.linkTarget,
    })),
  };
}

// `ignoreBOM`: a BOM is kept as U+FEFF, so `text` encodes back to exactly the bytes the manifest and a
// skills entry hash (the skills extension's clients check that).
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Known types whose bytes are text when they decode as UTF-8. */
function isTextType(type: string): boolean {
  return (
    type.startsWith('text/') ||
    type.endsWith('+json') ||
    type.endsWith('+xml') ||
    [
      'application/json',
      'application/xml',
      'application/javascript',
      'application/yaml',
      'application/toml',
    ].includes(type) ||
    type.startsWith('application/x-sh')
  );
}

/**
 * One item of `contents`: `text` for text files, `blob` (base64) for the rest; either way exactly the
 * file's bytes. The type comes from the path as the registry's files endpoint gives it; a file of no known
 * type is text/plain when its bytes are UTF-8 without NUL, as the web UI decides. `meta`: its `_meta`.
 */
export function resourceContents(uri: string, path: string, bytes: Buffer, meta?: object): object {
  const type = mime.lookup(path) || undefined;
  const extra = meta ? { _meta: meta } : {};
  if (type === undefined || isTextType(type)) {
    let text: string | undefined;
    try {
      text = utf8.decode(bytes);
    } catch {
      text = undefined;
    }
    if (text !== undefined && !text.includes('\0'))
      return { uri, mimeType: type ?? 'text/plain', text, ...extra };
  }
  return { uri, mimeType: type ?? 'application/octet-stream', blob: bytes.toString('base64'), ...extra };
}

// ---- resources/list cursors: opaque to clients, a page of the registry's name order inside ----

const CursorSchema = z.object({
  p: z.number().int().min(1).max(10_000_000),
  n: z.number().int().min(1).max(100),
});
export type ListCursor = z.infer<typeof CursorSchema>;

export const encodeCursor = (c: ListCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

/** A cursor this edge issued; anything else is -32602 (MCP pagination: invalid cursors are an error). */
export function decodeCursor(cursor: string): ListCursor {
  try {
    return CursorSchema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new RejectError('request_schema_invalid', 'invalid cursor');
  }
}
