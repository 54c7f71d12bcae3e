import { z } from 'zod';
import type { Env } from './env.js';
import { CliError, EXIT } from './errors.js';
import { isLoopbackHost } from './proof.js';

// Where `pkgreg login` keeps tokens (docs/cli-auth.md): $XDG_CONFIG_HOME/pkgreg/credentials.json, one
// entry per registry URL, readable by the user only (0600 in a 0700 folder), written whole through a
// temporary file and a rename. A file others can read is ignored with a warning, as ssh does with a key:
// its tokens may have leaked. PKGREG_TOKEN wins over the file (CI). A token goes only to an https
// registry or to this machine over http (the proofs' rule, proof.ts), and is never printed.

const EntrySchema = z.object({
  token: z.string().min(1),
  accountEmail: z.string(),
  createdAt: z.string(),
});
export type CredentialsEntry = z.infer<typeof EntrySchema>;

const FileSchema = z.record(z.string(), EntrySchema);
type CredentialsFile = z.infer<typeof FileSchema>;

export interface Credentials {
  token: string;
  /** Where it came from, for messages. */
  source: 'PKGREG_TOKEN' | 'credentials file';
  /** The account, as login recorded it (the file only). */
  accountEmail?: string;
}

export function credentialsPath(env: Env): string {
  return `${env.configDir}/credentials.json`;
}

/** The key of a registry in the file: its URL without a trailing slash (origin and path). */
export function registryKey(registryUrl: string): string {
  const url = new URL(registryUrl);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** Whether a token may be sent to this registry: https, or http to this machine. */
export function mayReceiveToken(registryUrl: string): boolean {
  const url = new URL(registryUrl);
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}

/** The file's entries; an absent, foreign-readable or broken file is none (the last two with a warning). */
export async function readCredentialsFile(env: Env, warn: (line: string) => void): Promise<CredentialsFile> {
  const { open } = process.getBuiltinModule('node:fs/promises');
  const path = credentialsPath(env);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    warn(`cannot read ${path}: ${(error as Error).message}; ignoring it`);
    return {};
  }
  try {
    const stat = await handle.stat();
    if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
      warn(
        `${path} can be read by other users (mode ${(stat.mode & 0o777).toString(8)}): ignoring it; its tokens may have leaked, so revoke them (pkgreg token list / revoke, or the web UI), then run pkgreg login`,
      );
      return {};
    }
    const parsed = FileSchema.safeParse(JSON.parse(await handle.readFile('utf8')));
    if (!parsed.success) {
      warn(`${path} is not a pkgreg credentials file; ignoring it`);
      return {};
    }
    return parsed.data;
  } catch {
    warn(`${path} is not valid JSON; ignoring it`);
    return {};
  } finally {
    await handle.close();
  }
}

/** Writes the whole file: a 0600 temporary file in the 0700 folder, then a rename over the old one. */
async function writeCredentialsFile(env: Env, entries: CredentialsFile): Promise<void> {
  const { mkdir, writeFile, rename, chmod, rm } = process.getBuiltinModule('node:fs/promises');
  const path = credentialsPath(env);
  await mkdir(env.configDir, { recursive: true, mode: 0o700 });
  // A folder made earlier (config.json) may be wider: only its owner needs to list it.
  await chmod(env.configDir, 0o700);
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(entries, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new CliError(EXIT.error, `Cannot write ${path}: ${(error as Error).message}`);
  }
}

export async function saveCredentials(
  env: Env,
  registryUrl: string,
  entry: CredentialsEntry,
  warn: (line: string) => void,
): Promise<void> {
  const entries = await readCredentialsFile(env, warn);
  entries[registryKey(registryUrl)] = entry;
  await writeCredentialsFile(env, entries);
}

/** Forgets the registry's entry; false when there was none. */
export async function forgetCredentials(
  env: Env,
  registryUrl: string,
  warn: (line: string) => void,
): Promise<boolean> {
  const entries = await readCredentialsFile(env, warn);
  const key = registryKey(registryUrl);
  if (!(key in entries)) return false;
  delete entries[key];
  await writeCredentialsFile(env, entries);
  return true;
}

/**
 * The credentials requests to this registry carry: PKGREG_TOKEN, else the file's entry; none for a
 * registry that may not receive a token (with a warning when there was one to send).
 */
export async function resolveCredentials(
  env: Env,
  registryUrl: string,
  warn: (line: string) => void,
): Promise<Credentials | undefined> {
  let found: Credentials | undefined;
  if (env.token) found = { token: env.token, source: 'PKGREG_TOKEN' };
  else {
    const entry = (await readCredentialsFile(env, warn))[registryKey(registryUrl)];
    if (entry) found = { token: entry.token, source: 'credentials file', accountEmail: entry.accountEmail };
  }
  if (found && !mayReceiveToken(registryUrl)) {
    warn(
      `not sending your token (${found.source}) to ${new URL(registryUrl).origin}: it is not https, so anyone on the way could read it`,
    );
    return undefined;
  }
  return found;
}
