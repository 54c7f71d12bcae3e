/**
 * Where to go after signing in: `next` when it is a path of this site (`/settings/tokens`), else `/`. A
 * sign-in link must never become a redirect to another site (`//host`, `/\host`, `https://host`).
 */
export function safeNext(next: string | null | undefined, origin: string = window.location.origin): string {
  if (!next?.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  try {
    const url = new URL(next, origin);
    if (url.origin !== origin) return '/';
    return url.pathname + url.search + url.hash;
  } catch {
    return '/';
  }
}
