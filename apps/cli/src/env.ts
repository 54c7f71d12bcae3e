import { homedir } from 'node:os';
import { z } from 'zod';

// The only place the CLI reads process.env (STYLE.md §5).
const optionalText = z
  .string()
  .optional()
  .transform((value) => (value?.trim() ? value.trim() : undefined));

export const EnvSchema = z.object({
  /** Registry address (decisions.md: Names), below --registry, above the config file. */
  PKGREG_REGISTRY: optionalText,
  /** Per-request timeout in milliseconds. */
  PKGREG_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  HOME: optionalText,
  XDG_CONFIG_HOME: optionalText,
});

export interface Env {
  registry: string | undefined;
  timeoutMs: number;
  /** The user's home: HOME when set (so tests and sandboxes can move it), else the OS's idea of it. */
  home: string;
  /** Folder holding pkgreg's config.json and the global lockfile. */
  configDir: string;
}

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  const parsed = EnvSchema.safeParse(source);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`Invalid environment: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  const env = parsed.data;
  const home = env.HOME ?? homedir();
  const configBase = env.XDG_CONFIG_HOME ?? `${home}/.config`;
  return {
    registry: env.PKGREG_REGISTRY,
    timeoutMs: env.PKGREG_TIMEOUT_MS,
    home,
    configDir: `${configBase}/pkgreg`,
  };
}
