import {
  AGENT_SKILL_DESCRIPTION_MAX,
  AGENT_SKILL_NAME_PATTERN,
  AGENT_SKILLS_INDEX_SCHEMA,
  type AgentSkillEntry,
  type AgentSkillsIndex,
  PACKAGE_NOT_FOUND_MESSAGE,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import type { ReadAccess } from '@pkgreg/registry';
import { notFound } from '../http/api-error.js';
import type { AgentSkillArchives } from './agent-skill-archives.js';
import { type IndexRow, type IndexSelection, listIndexRows } from './agent-skills.repository.js';

// The discovery indexes (docs/discovery.md, the RFC's v0.2.0 format): one entry per listed package the
// reader may read whose latest version is installable, its artifact an exact version's URL (immutable
// bytes, so an index read a minute ago still names bytes that match its digest).

export const SCOPE_NOT_FOUND_MESSAGE = 'Scope not found';
/** What the organisation routes answer for one missing or not the caller's to see. */
export const ORGANIZATION_NOT_FOUND_MESSAGE = 'Organisation not found';

/**
 * An entry's description: the package's, cut to the RFC's 1024 characters (UTF-16 units, as clients
 * count them) with an ellipsis; the registry keeps longer ones with a warning.
 */
export function indexDescription(text: string): string {
  const trimmed = text.trim();
  if (trimmed.length <= AGENT_SKILL_DESCRIPTION_MAX) return trimmed;
  let cut = trimmed.slice(0, AGENT_SKILL_DESCRIPTION_MAX - 1);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** The path of a version's resources (what the versions API serves). */
function versionPath(row: IndexRow & { version: string }): string {
  return `/api/packages/@${row.scope}/${row.name}/versions/${encodeURIComponent(row.version)}`;
}

/**
 * Whether the row's latest version goes in an index: there is one (not every version yanked), its
 * risk scan found nothing high (what `pkgreg install` refuses without --allow-risk: an index is read
 * by installers that ask nothing), and its name is one the RFC allows and no other entry has.
 */
function installable(row: IndexRow): row is IndexRow & { version_id: string; version: string } {
  return (
    !row.shared &&
    row.version_id !== null &&
    row.version !== null &&
    row.risk !== 'high' &&
    AGENT_SKILL_NAME_PATTERN.test(row.name) &&
    row.description.trim() !== ''
  );
}

/**
 * The index of `selection` as `access` reads it. An organisation, scope or package with nothing the
 * reader may read listed is not found, whether it is missing or private (the same 404 for both); the
 * root always answers.
 */
export async function agentSkillsIndex(
  db: Db,
  archives: AgentSkillArchives,
  selection: IndexSelection,
  access: ReadAccess,
): Promise<AgentSkillsIndex> {
  const rows = await listIndexRows(db, selection, access);
  if (selection.kind === 'organization' && rows.length === 0) throw notFound(ORGANIZATION_NOT_FOUND_MESSAGE);
  if (selection.kind === 'scope' && rows.length === 0) throw notFound(SCOPE_NOT_FOUND_MESSAGE);
  if (selection.kind === 'package' && rows.length === 0) throw notFound(PACKAGE_NOT_FOUND_MESSAGE);
  const skills: AgentSkillEntry[] = [];
  for (const row of rows) {
    if (!installable(row)) continue;
    const entry = { name: row.name, description: indexDescription(row.description) };
    // A folder of one SKILL.md is served as the file itself (the RFC's `skill-md`); anything more as
    // the archive of the whole folder.
    if (row.file_count === 1 && row.skill_md_sha256 !== null) {
      skills.push({
        ...entry,
        type: 'skill-md',
        url: `${versionPath(row)}/files/SKILL.md`,
        digest: `sha256:${row.skill_md_sha256}`,
      });
    } else {
      skills.push({
        ...entry,
        type: 'archive',
        url: `${versionPath(row)}/agent-skill.v2.tar.gz`,
        digest: await archives.digestOf(row.version_id),
      });
    }
  }
  return { $schema: AGENT_SKILLS_INDEX_SCHEMA, skills };
}
