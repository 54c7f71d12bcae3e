import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { DEFAULT_REGISTRY } from './constants.js';
import type { Env } from './env.js';
import { CliError, EXIT } from './errors.js';

export { DEFAULT_REGISTRY };

const RegistryUrlSchema = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

const ConfigFileSchema = z.looseObject({
  registry: RegistryUrlSchema.optional(),
  /** false turns the download counter off, like DO_NOT_TRACK=1. */
  track: z.boolean({ error: 'must be true or false' }).optional(),
});
export type ConfigFile = z.infer<typeof ConfigFileSchema>;

export type RegistrySource = 'option' | 'env' | 'config' | 'default';

export interface ResolvedRegistry {
  url: string;
  source: RegistrySource;
}

export function configFilePath(env: Env): string {
  return `${env.configDir}/config.json`;
}

/** The config file's settings; an absent file is an empty config, a broken one an error (exit 1). */
export async function readConfig(env: Env): Promise<ConfigFile> {
  const path = configFilePath(env);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(EXIT.error, `Cannot read config file ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError(EXIT.error, `Config file ${path} is not valid JSON`);
  }
  const parsed = ConfigFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CliError(
      EXIT.error,
      `Config file ${path}: ${issue?.path.join('.') || 'root'} ${issue?.message}`,
    );
  }
  return parsed.data;
}

function checkUrl(value: string, origin: string): string {
  const parsed = RegistryUrlSchema.safeParse(value);
  if (!parsed.success) {
    const exitCode = origin === '--registry' ? EXIT.usage : EXIT.error;
    throw new CliError(exitCode, `Invalid registry URL from ${origin}: ${value} (must be an http(s) URL)`);
  }
  return parsed.data.replace(/\/+$/, '');
}

/** --registry > PKGREG_REGISTRY > config file > the public default (decisions.md: Names). */
export function resolveRegistry(option: string | undefined, env: Env, config: ConfigFile): ResolvedRegistry {
  if (option !== undefined) return { url: checkUrl(option, '--registry'), source: 'option' };
  if (env.registry !== undefined) return { url: checkUrl(env.registry, 'PKGREG_REGISTRY'), source: 'env' };
  if (config.registry !== undefined)
    return { url: checkUrl(config.registry, configFilePath(env)), source: 'config' };
  return { url: DEFAULT_REGISTRY, source: 'default' };
}
