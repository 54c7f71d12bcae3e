import type { Me } from '@pkgreg/contracts';
import { ApiError, RegistryUnavailableError } from './api.js';

// Who is signed in, and the one way every account call reaches the same-origin API (docs/web-accounts.md):
// the session is an HttpOnly cookie the browser sends by itself, and every write is JSON from this origin,
// which is what the registry's CSRF guard and better-auth's origin check accept. The header needs only
// this module; the account pages' calls (accounts-api.ts) are in their own chunk.

const TIMEOUT_MS = 10_000;

// The contract schemas live in the client's chunk (api.ts): asked for when an answer needs parsing, so the
// first chunk stays without zod (docs/benchmarks.md, the registry client a chunk of its own).
export const contracts = () => import('./account-schemas.js');

/** An error body of ours (`{error}`) or better-auth's (`{message}`, `{error_description}`). */
function messageOf(body: unknown, fallback: string): string {
  if (body && typeof body === 'object') {
    const value = body as Record<string, unknown>;
    for (const key of ['error_description', 'message', 'error']) {
      if (typeof value[key] === 'string' && value[key]) return value[key] as string;
    }
  }
  return fallback;
}

export async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      cache: 'no-store',
      headers: body === undefined ? { Accept: 'application/json' } : { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch {
    throw new RegistryUnavailableError();
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    if (res.ok) throw new RegistryUnavailableError('The registry sent an unreadable answer');
  }
  if (!res.ok) {
    if (res.status >= 500 && parsed === null) throw new RegistryUnavailableError();
    throw new ApiError(res.status, messageOf(parsed, res.statusText || `HTTP ${res.status}`));
  }
  return parsed;
}

export const get = (path: string) => call('GET', path);
export const post = (path: string, body: unknown = {}) => call('POST', path, body);

/** Who is signed in; null when nobody is (401). */
export async function getMe(): Promise<Me | null> {
  try {
    return (await contracts()).MeSchema.parse(await get('/api/me'));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

export async function signOut(): Promise<void> {
  await post('/api/auth/sign-out');
}
