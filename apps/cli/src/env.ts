import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

// The only place the CLI reads process.env: every setting is parsed and checked once, here.
const optionalText = z
  .string()
  .optional()
  .transform((value) => (value?.trim() ? value.trim() : undefined));

// consoledonottrack.com: any value but an empty one, 0, false or no turns tracking off; explicit, because
// z.coerce.boolean() would read "0" as true.
const doNotTrack = z
  .string()
  .optional()
  .transform((value) => {
    const text = value?.trim().toLowerCase() ?? '';
    return !['', '0', 'false', 'no'].includes(text);
  });

export const EnvSchema = z.object({
  /** Registry address (decisions.md: Names), below --registry, above the config file. */
  PKGREG_REGISTRY: optionalText,
  /** A pkgreg access token for the registry (CI); wins over the credentials file (docs/cli-auth.md). */
  PKGREG_TOKEN: optionalText,
  /** A graphical session on Linux and other Unixes: `pkgreg login` may open a browser. */
  DISPLAY: optionalText,
  WAYLAND_DISPLAY: optionalText,
  /** Per-request timeout in milliseconds. */
  PKGREG_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  /** Turns the download counter (track) off. */
  DO_NOT_TRACK: doNotTrack,
  HOME: optionalText,
  XDG_CONFIG_HOME: optionalText,
  /** Where Claude Code keeps its settings and user skills (default ~/.claude). */
  CLAUDE_CONFIG_DIR: optionalText,
  /** Where Codex keeps its settings and user skills (default ~/.codex). */
  CODEX_HOME: optionalText,
  // Proofs for publish, deprecate and yank (docs/publishing.md). Never printed.
  /** Set by GitHub Actions for a job with `permissions: id-token: write`: where to ask for an OIDC token. */
  ACTIONS_ID_TOKEN_REQUEST_URL: optionalText,
  /** The bearer token of that request. */
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: optionalText,
  /** A GitHub user token (below --token, above `gh auth token`). */
  GITHUB_TOKEN: optionalText,
  /** `true` inside GitHub Actions. */
  GITHUB_ACTIONS: optionalText,
  /** `owner/repo` of the workflow's repository (GitHub Actions). */
  GITHUB_REPOSITORY: optionalText,
  // Uploads (`pkgreg publish <folder>`, docs/publishing.md) take PKGREG_TOKEN above. Never printed.
  /** A CI OIDC token for the registry (GitLab CI: an `id_tokens:` entry of this name). */
  PKGREG_ID_TOKEN: optionalText,
});

export interface Env {
  registry: string | undefined;
  /** PKGREG_TOKEN. Never printed. */
  token: string | undefined;
  /** Whether a browser can be opened here: macOS, Windows, or a DISPLAY / WAYLAND_DISPLAY. */
  canOpenBrowser: boolean;
  timeoutMs: number;
  doNotTrack: boolean;
  /** The user's home: HOME when set (so tests and sandboxes can move it), else the OS's idea of it. */
  home: string;
  /** $XDG_CONFIG_HOME, default ~/.config. */
  configHome: string;
  /** Folder holding pkgreg's config.json and the global lockfile. */
  configDir: string;
  claudeHome: string;
  codexHome: string;
  /** GitHub Actions' OIDC token request, when the job may ask for one. */
  actionsIdToken: { url: string; token: string } | undefined;
  githubToken: string | undefined;
  inGitHubActions: boolean;
  githubRepository: string | undefined;
  /** PKGREG_ID_TOKEN. */
  idToken: string | undefined;
  /** The value of another variable a flag names (`--oidc-token-env NAME`), trimmed; undefined when empty. */
  variable(name: string): string | undefined;
}

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  const parsed = EnvSchema.safeParse(source);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`Invalid environment: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  const env = parsed.data;
  const home = env.HOME ?? homedir();
  const configHome = env.XDG_CONFIG_HOME ?? join(home, '.config');
  return {
    registry: env.PKGREG_REGISTRY,
    token: env.PKGREG_TOKEN,
    canOpenBrowser:
      process.platform === 'darwin' ||
      process.platform === 'win32' ||
      env.DISPLAY !== undefined ||
      env.WAYLAND_DISPLAY !== undefined,
    timeoutMs: env.PKGREG_TIMEOUT_MS,
    doNotTrack: env.DO_NOT_TRACK,
    home,
    configHome,
    configDir: join(configHome, 'pkgreg'),
    claudeHome: env.CLAUDE_CONFIG_DIR ?? join(home, '.claude'),
    codexHome: env.CODEX_HOME ?? join(home, '.codex'),
    actionsIdToken:
      env.ACTIONS_ID_TOKEN_REQUEST_URL && env.ACTIONS_ID_TOKEN_REQUEST_TOKEN
        ? { url: env.ACTIONS_ID_TOKEN_REQUEST_URL, token: env.ACTIONS_ID_TOKEN_REQUEST_TOKEN }
        : undefined,
    githubToken: env.GITHUB_TOKEN,
    inGitHubActions: env.GITHUB_ACTIONS === 'true',
    githubRepository: env.GITHUB_REPOSITORY,
    idToken: env.PKGREG_ID_TOKEN,
    variable: (name) => source[name]?.trim() || undefined,
  };
}
