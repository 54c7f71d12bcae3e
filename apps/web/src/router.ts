import { useEffect, useState } from 'preact/hooks';

// A tiny history router: three routes do not justify a dependency. Every push or back/forward counts
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
  if (url.origin !== window.location.origin) {
    window.location.assign(url);
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
  | { page: 'not-found' };

export function matchRoute(pathname: string): Route {
  if (pathname === '/' || pathname === '') return { page: 'home' };
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
