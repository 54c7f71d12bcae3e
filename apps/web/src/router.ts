import { useEffect, useState } from 'preact/hooks';

// A tiny history router: a dozen routes do not justify a dependency. Every push or back/forward counts
// (`visit`, a number) so a page can tell a navigation from its own URL rewrites (the home page's typing).

export interface RouteLocation {
  pathname: string;
  search: string;
  /** Increments on every push and every back/forward; replace() keeps it. */
  visit: number;
}

let visit = 0;
const listeners = new Set<() => void>();

function snapshot(): RouteLocation {
  return { pathname: window.location.pathname, search: window.location.search, visit };
}

function notify(): void {
  for (const listener of listeners) listener();
}

export interface NavigateOptions {
  /** Rewrite the current history entry instead of adding one. */
  replace?: boolean;
  /** Stay where the page is scrolled (a view changing within the page, like opening a file). */
  keepScroll?: boolean;
}

export function navigate(to: string, options: NavigateOptions = {}): void {
  const url = new URL(to, window.location.href);
  // Another site, or a page the server answers itself (/api: the CLI sign-in, an app's consent).
  if (url.origin !== window.location.origin || url.pathname.startsWith('/api/')) {
    if (options.replace) window.location.replace(url);
    else window.location.assign(url);
    return;
  }
  if (options.replace) {
    window.history.replaceState(null, '', url);
  } else {
    window.history.pushState(null, '', url);
    visit += 1;
    if (!options.keepScroll) window.scrollTo(0, 0);
  }
  notify();
}

function isRoutableClick(event: MouseEvent): HTMLAnchorElement | null {
  if (event.defaultPrevented || event.button !== 0) return null;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return null;
  const anchor = (event.target as Element | null)?.closest?.('a');
  if (!anchor?.href || anchor.hasAttribute('download')) return null;
  if (anchor.target && anchor.target !== '_self') return null;
  const url = new URL(anchor.href);
  // /api links (the source redirect, raw files) belong to the server, not to the SPA.
  if (url.origin !== window.location.origin || url.pathname.startsWith('/api/')) return null;
  return anchor;
}

/** Installs the click and popstate listeners once; returns the uninstaller. */
export function startRouter(): () => void {
  const onClick = (event: MouseEvent) => {
    const anchor = isRoutableClick(event);
    if (!anchor) return;
    event.preventDefault();
    const url = new URL(anchor.href);
    const here = window.location;
    if (url.pathname === here.pathname && url.search === here.search && url.hash) {
      window.location.hash = url.hash;
      return;
    }
    navigate(url.pathname + url.search + url.hash, { keepScroll: anchor.hasAttribute('data-keep-scroll') });
  };
  const onPop = () => {
    visit += 1;
    notify();
  };
  document.addEventListener('click', onClick);
  window.addEventListener('popstate', onPop);
  return () => {
    document.removeEventListener('click', onClick);
    window.removeEventListener('popstate', onPop);
  };
}

export function useLocation(): RouteLocation {
  const [location, setLocation] = useState(snapshot);
  useEffect(() => {
    const listener = () => setLocation(snapshot());
    listeners.add(listener);
    // A navigation may have happened between render and effect.
    listener();
    return () => {
      listeners.delete(listener);
    };
  }, []);
  return location;
}

export type Route =
  | { page: 'home' }
  | { page: 'package'; scope: string; name: string }
  | { page: 'package-settings'; scope: string; name: string }
  | { page: 'sign-in' }
  | { page: 'settings-tokens' }
  | { page: 'settings-sessions' }
  | { page: 'settings-connected-apps' }
  | { page: 'settings-orgs' }
  | { page: 'org'; slug: string }
  | { page: 'invitation'; id: string }
  | { page: 'device' }
  | { page: 'not-found' };

/** The routes of the account pages (a chunk of their own). */
export type AccountRoute = Exclude<Route, { page: 'home' | 'package' | 'not-found' }>;

const FIXED: Record<string, Route> = {
  '/sign-in': { page: 'sign-in' },
  '/settings': { page: 'settings-tokens' },
  '/settings/tokens': { page: 'settings-tokens' },
  '/settings/sessions': { page: 'settings-sessions' },
  '/settings/connected-apps': { page: 'settings-connected-apps' },
  '/settings/orgs': { page: 'settings-orgs' },
  '/device': { page: 'device' },
};

/** A path segment decoded, or null when it is not valid percent-encoding. */
function segment(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

export function matchRoute(pathname: string): Route {
  if (pathname === '/' || pathname === '') return { page: 'home' };
  const fixed = FIXED[pathname.replace(/\/+$/, '')];
  if (fixed) return fixed;
  const org = /^\/orgs\/([^/]+)\/?$/.exec(pathname);
  if (org?.[1]) {
    const slug = segment(org[1]);
    return slug ? { page: 'org', slug } : { page: 'not-found' };
  }
  const invitation = /^\/invitations\/([^/]+)\/?$/.exec(pathname);
  if (invitation?.[1]) {
    const id = segment(invitation[1]);
    return id ? { page: 'invitation', id } : { page: 'not-found' };
  }
  const settings = /^\/packages\/(?:@|%40)([^/]+)\/([^/]+)\/settings\/?$/.exec(pathname);
  if (settings?.[1] && settings[2]) {
    const scope = segment(settings[1]);
    const name = segment(settings[2]);
    return scope && name ? { page: 'package-settings', scope, name } : { page: 'not-found' };
  }
  const match = /^\/(?:@|%40)([^/]+)\/([^/]+)\/?$/.exec(pathname);
  if (match?.[1] && match[2]) {
    try {
      return { page: 'package', scope: decodeURIComponent(match[1]), name: decodeURIComponent(match[2]) };
    } catch {
      return { page: 'not-found' };
    }
  }
  return { page: 'not-found' };
}
