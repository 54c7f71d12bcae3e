import { useEffect, useRef } from 'preact/hooks';
import { HomePage } from './pages/home-page.js';
import { NotFoundPage } from './pages/not-found-page.js';
import { PackagePage } from './pages/package-page.js';
import { matchRoute, useLocation } from './router.js';

export function App() {
  const location = useLocation();
  const route = matchRoute(location.pathname);
  const mainRef = useRef<HTMLElement>(null);
  const lastPath = useRef(location.pathname);

  // Moving to another page moves focus to it, so screen readers announce the new page; paging and
  // sorting within a page keep focus where it was.
  useEffect(() => {
    if (lastPath.current === location.pathname) return;
    lastPath.current = location.pathname;
    mainRef.current?.focus({ preventScroll: true });
  }, [location.pathname]);

  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="site-header">
        <div class="site-header-inner">
          <a class="brand" href="/" aria-label="pkgreg home">
            <img src="/favicon.svg" alt="" width="28" height="28" />
            <span>pkgreg</span>
          </a>
          <nav class="site-nav" aria-label="Main">
            <a href="/">Browse</a>
            <a href="/?sort=stars">Popular</a>
            <a href="/?sort=indexed">New</a>
          </nav>
        </div>
      </header>
      <main id="main" class="main" ref={mainRef} tabIndex={-1}>
        {route.page === 'home' ? (
          <HomePage search={location.search} visit={location.visit} />
        ) : route.page === 'package' ? (
          // Keyed by the package: arriving on its page (a reload, a link, back from elsewhere) mounts a new
          // visit (track once per visit); picking a version or opening a file stays in it.
          <PackagePage
            key={`${route.scope}/${route.name}`}
            scope={route.scope}
            name={route.name}
            search={location.search}
          />
        ) : (
          <NotFoundPage />
        )}
      </main>
      <footer class="site-footer">
        <p>
          pkgreg · install with <code>pkgreg install @scope/name</code> · <a href="/api/packages">REST API</a>
        </p>
      </footer>
    </div>
  );
}
