import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Env } from './env.js';

// Where each agent reads skills: a folder under the project for a project install, one under a root of
// the user's (home, XDG config, CLAUDE_CONFIG_DIR, CODEX_HOME) for --global. Checked against the
// ecosystem's reference table (vercel-labs/skills src/agents.ts). Many agents share `.agents/skills` at
// project scope, so installing for several of them writes one folder.
//
// A place is written `root:path`; detection markers are places whose existence says the agent is used.

export type Root = 'project' | 'home' | 'config' | 'claude' | 'codex';

interface Place {
  root: Root;
  path: string;
}

export interface Agent {
  id: string;
  displayName: string;
  aliases: string[];
  /** Skills folder relative to the project. */
  projectDir: string;
  /** Skills folder for --global installs. */
  globalDir: Place;
  /** Places whose existence means the agent is used here. */
  markers: Place[];
}

interface AgentRow {
  name: string;
  aliases?: string[];
  project: string;
  global: string;
  detect?: string[];
}

export const SHARED_SKILLS_DIR = '.agents/skills';
/** The agent that stands for "any agent reading .agents/skills": the fallback when none is detected. */
export const UNIVERSAL_AGENT = 'universal';

const ROWS: Record<string, AgentRow> = {
  universal: {
    name: 'any agent reading .agents/skills',
    aliases: ['generic', 'agents'],
    project: SHARED_SKILLS_DIR,
    global: 'home:.agents/skills',
  },
  'claude-code': {
    name: 'Claude Code',
    aliases: ['claude'],
    project: '.claude/skills',
    global: 'claude:skills',
    detect: ['project:.claude', 'project:CLAUDE.md', 'claude:'],
  },
  codex: {
    name: 'Codex',
    aliases: ['openai-codex'],
    project: SHARED_SKILLS_DIR,
    global: 'codex:skills',
    detect: ['project:.codex', 'codex:'],
  },
  cursor: {
    name: 'Cursor',
    project: SHARED_SKILLS_DIR,
    global: 'home:.cursor/skills',
    detect: ['project:.cursor', 'home:.cursor'],
  },
  'github-copilot': {
    name: 'GitHub Copilot',
    aliases: ['copilot'],
    project: SHARED_SKILLS_DIR,
    global: 'home:.copilot/skills',
    detect: ['project:.github/copilot-instructions.md', 'home:.copilot'],
  },
  'gemini-cli': {
    name: 'Gemini CLI',
    aliases: ['gemini'],
    project: SHARED_SKILLS_DIR,
    global: 'home:.gemini/skills',
    detect: ['project:.gemini', 'project:GEMINI.md', 'home:.gemini'],
  },
  windsurf: {
    name: 'Windsurf',
    project: '.windsurf/skills',
    global: 'home:.codeium/windsurf/skills',
    detect: ['project:.windsurf', 'home:.codeium/windsurf'],
  },
  cline: {
    name: 'Cline',
    project: SHARED_SKILLS_DIR,
    global: 'home:.agents/skills',
    detect: ['project:.clinerules', 'home:.cline'],
  },
  roo: {
    name: 'Roo Code',
    aliases: ['roo-code'],
    project: '.roo/skills',
    global: 'home:.roo/skills',
    detect: ['project:.roo', 'home:.roo'],
  },
  goose: {
    name: 'Goose',
    project: '.goose/skills',
    global: 'config:goose/skills',
    detect: ['project:.goose', 'project:.goosehints', 'config:goose'],
  },
  opencode: {
    name: 'OpenCode',
    project: SHARED_SKILLS_DIR,
    global: 'config:opencode/skills',
    detect: ['project:.opencode', 'project:opencode.json', 'config:opencode'],
  },
  amp: {
    name: 'Amp',
    project: SHARED_SKILLS_DIR,
    global: 'config:agents/skills',
    detect: ['config:amp'],
  },
  'kiro-cli': {
    name: 'Kiro',
    aliases: ['kiro'],
    project: '.kiro/skills',
    global: 'home:.kiro/skills',
    detect: ['project:.kiro', 'home:.kiro'],
  },
  continue: {
    name: 'Continue',
    project: '.continue/skills',
    global: 'home:.continue/skills',
    detect: ['project:.continue', 'home:.continue'],
  },
  junie: {
    name: 'Junie',
    project: '.junie/skills',
    global: 'home:.junie/skills',
    detect: ['project:.junie', 'home:.junie'],
  },
  trae: {
    name: 'Trae',
    project: '.trae/skills',
    global: 'home:.trae/skills',
    detect: ['project:.trae', 'home:.trae'],
  },
  augment: {
    name: 'Augment',
    project: '.augment/skills',
    global: 'home:.augment/skills',
    detect: ['project:.augment', 'home:.augment'],
  },
  kilo: {
    name: 'Kilo Code',
    aliases: ['kilo-code', 'kilocode'],
    project: SHARED_SKILLS_DIR,
    global: 'home:.kilo/skills',
    detect: ['project:.kilocode', 'home:.kilo', 'home:.kilocode'],
  },
  'qwen-code': {
    name: 'Qwen Code',
    aliases: ['qwen'],
    project: '.qwen/skills',
    global: 'home:.qwen/skills',
    detect: ['project:.qwen', 'home:.qwen'],
  },
  openhands: {
    name: 'OpenHands',
    project: '.openhands/skills',
    global: 'home:.openhands/skills',
    detect: ['project:.openhands', 'home:.openhands'],
  },
  droid: {
    name: 'Factory Droid',
    aliases: ['factory'],
    project: SHARED_SKILLS_DIR,
    global: 'home:.factory/skills',
    detect: ['project:.factory', 'home:.factory'],
  },
  crush: {
    name: 'Crush',
    project: '.crush/skills',
    global: 'config:crush/skills',
    detect: ['project:.crush', 'config:crush'],
  },
  zed: {
    name: 'Zed',
    project: SHARED_SKILLS_DIR,
    global: 'home:.agents/skills',
    detect: ['project:.zed', 'config:zed'],
  },
  warp: {
    name: 'Warp',
    project: SHARED_SKILLS_DIR,
    global: 'home:.agents/skills',
    detect: ['home:.warp'],
  },
  'mistral-vibe': {
    name: 'Mistral Vibe',
    aliases: ['vibe'],
    project: '.vibe/skills',
    global: 'home:.vibe/skills',
    detect: ['project:.vibe', 'home:.vibe'],
  },
  'kimi-code-cli': {
    name: 'Kimi Code CLI',
    aliases: ['kimi'],
    project: SHARED_SKILLS_DIR,
    global: 'home:.agents/skills',
    detect: ['home:.kimi', 'home:.kimi-code'],
  },
  qoder: {
    name: 'Qoder',
    project: '.qoder/skills',
    global: 'home:.qoder/skills',
    detect: ['project:.qoder', 'home:.qoder'],
  },
  codebuddy: {
    name: 'CodeBuddy',
    project: '.codebuddy/skills',
    global: 'home:.codebuddy/skills',
    detect: ['project:.codebuddy', 'home:.codebuddy'],
  },
  antigravity: {
    name: 'Antigravity',
    project: SHARED_SKILLS_DIR,
    global: 'home:.gemini/antigravity/skills',
    detect: ['home:.gemini/antigravity'],
  },
  pi: {
    name: 'Pi',
    project: '.pi/skills',
    global: 'home:.pi/agent/skills',
    detect: ['project:.pi', 'home:.pi/agent'],
  },
  'tabnine-cli': {
    name: 'Tabnine CLI',
    aliases: ['tabnine'],
    project: '.tabnine/agent/skills',
    global: 'home:.tabnine/agent/skills',
    detect: ['project:.tabnine', 'home:.tabnine'],
  },
  rovodev: {
    name: 'Rovo Dev',
    aliases: ['rovo-dev'],
    project: '.rovodev/skills',
    global: 'home:.rovodev/skills',
    detect: ['project:.rovodev', 'home:.rovodev'],
  },
  devin: {
    name: 'Devin for Terminal',
    project: '.devin/skills',
    global: 'config:devin/skills',
    detect: ['project:.devin', 'config:devin'],
  },
  firebender: {
    name: 'Firebender',
    project: SHARED_SKILLS_DIR,
    global: 'home:.firebender/skills',
    detect: ['home:.firebender'],
  },
  'iflow-cli': {
    name: 'iFlow CLI',
    aliases: ['iflow'],
    project: '.iflow/skills',
    global: 'home:.iflow/skills',
    detect: ['project:.iflow', 'home:.iflow'],
  },
  lingma: {
    name: 'Lingma',
    project: '.lingma/skills',
    global: 'home:.lingma/skills',
    detect: ['project:.lingma', 'home:.lingma'],
  },
  'command-code': {
    name: 'Command Code',
    project: '.commandcode/skills',
    global: 'home:.commandcode/skills',
    detect: ['project:.commandcode', 'home:.commandcode'],
  },
  cortex: {
    name: 'Cortex Code',
    project: '.cortex/skills',
    global: 'home:.snowflake/cortex/skills',
    detect: ['project:.cortex', 'home:.snowflake/cortex'],
  },
  zencoder: {
    name: 'Zencoder',
    project: '.zencoder/skills',
    global: 'home:.zencoder/skills',
    detect: ['project:.zencoder', 'home:.zencoder'],
  },
  openclaw: {
    name: 'OpenClaw',
    project: 'skills',
    global: 'home:.openclaw/skills',
    detect: ['home:.openclaw'],
  },
  replit: {
    name: 'Replit',
    project: SHARED_SKILLS_DIR,
    global: 'config:agents/skills',
    detect: ['project:.replit'],
  },
  neovate: {
    name: 'Neovate',
    project: '.neovate/skills',
    global: 'home:.neovate/skills',
    detect: ['project:.neovate', 'home:.neovate'],
  },
  mux: {
    name: 'Mux',
    project: '.mux/skills',
    global: 'home:.mux/skills',
    detect: ['home:.mux'],
  },
};

const ROOTS: readonly Root[] = ['project', 'home', 'config', 'claude', 'codex'];

function place(text: string): Place {
  const colon = text.indexOf(':');
  const root = text.slice(0, colon) as Root;
  if (colon < 0 || !ROOTS.includes(root)) throw new Error(`agents table: bad place ${text}`);
  return { root, path: text.slice(colon + 1) };
}

export const AGENTS: readonly Agent[] = Object.entries(ROWS).map(([id, row]) => ({
  id,
  displayName: row.name,
  aliases: row.aliases ?? [],
  projectDir: row.project,
  globalDir: place(row.global),
  markers: (row.detect ?? []).map(place),
}));

const BY_NAME = new Map<string, Agent>();
for (const agent of AGENTS) {
  for (const name of [agent.id, ...agent.aliases]) BY_NAME.set(name, agent);
}

/** Every name --agent accepts: ids and aliases, sorted. */
export const AGENT_NAMES: readonly string[] = [...BY_NAME.keys()].sort();

/** The agent an id or alias names (case-insensitive), or undefined. */
export function findAgent(name: string): Agent | undefined {
  return BY_NAME.get(name.trim().toLowerCase());
}

/** Absolute folders of the roots, for one run. */
export type Roots = Record<Root, string>;

export function rootsFor(env: Env, project: string): Roots {
  return {
    project,
    home: env.home,
    config: env.configHome,
    claude: env.claudeHome,
    codex: env.codexHome,
  };
}

function resolvePlace(roots: Roots, at: Place): string {
  return at.path ? join(roots[at.root], ...at.path.split('/')) : roots[at.root];
}

/** The absolute skills folder of an agent (the package's folder goes inside it). */
export function skillsDirOf(agent: Agent, roots: Roots, global: boolean): string {
  return global ? resolvePlace(roots, agent.globalDir) : join(roots.project, ...agent.projectDir.split('/'));
}

/**
 * The agents used here: any marker in the project (not for --global) or under the user's roots.
 * Never the universal agent itself, which is the fallback the caller announces.
 */
export function detectAgents(roots: Roots, global: boolean, exists = existsSync): Agent[] {
  return AGENTS.filter((agent) =>
    agent.markers.some(
      (marker) => !(global && marker.root === 'project') && exists(resolvePlace(roots, marker)),
    ),
  );
}

/** "Claude Code, Codex and Cursor". */
export function agentList(agents: readonly Agent[]): string {
  const names = agents.map((agent) => agent.displayName);
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}
