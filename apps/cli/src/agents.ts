import { join } from 'node:path';

// Where each agent looks for skills, relative to the project folder or (with --global) the home folder.
export const AGENT_SKILL_DIRS = {
  claude: '.claude/skills',
  codex: '.codex/skills',
  cursor: '.cursor/skills',
  generic: '.agents/skills',
} as const;

export type AgentName = keyof typeof AGENT_SKILL_DIRS;
export const AGENT_NAMES = Object.keys(AGENT_SKILL_DIRS) as [AgentName, ...AgentName[]];

/** The SKILL.md path for a package, relative to the base folder, forward slashes (stored in the lockfile). */
export function skillFilePath(agent: AgentName, packageName: string): string {
  return `${AGENT_SKILL_DIRS[agent]}/${packageName}/SKILL.md`;
}

export function absolutePath(base: string, relative: string): string {
  return join(base, ...relative.split('/'));
}
