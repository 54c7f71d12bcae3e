import { useEffect, useRef, useState } from 'preact/hooks';
import { RegistryUnavailableError } from './api.js';
import { AccountMenu } from './components/account-menu.js';
import { ErrorState, SkeletonList } from './components/states.js';
import { HomePage } from './pages/home-page.js';
import { NotFoundPage } from './pages/not-found-page.js';
import { PackagePage } from './pages/package-page.js';
import { type AccountRoute, matchRoute, type Route, type RouteLocation, useLocation } from './router.js';

function Page(props: { route: Route; location: RouteLocation }) {
  const { route, location } = props;
  switch (route.page) {
    case 'home':
      return <HomePage search={location.search} visit={location.visit} />;
    case 'package':
      // Keyed by the package: arriving on its page (a reload, a link, back from elsewhere) mounts a new
      // visit (track once per visit); picking a version or opening a file stays in it.
      return (
        <PackagePage
          key={`${route.scope}/${route.name}`}
          scope={route.scope}
          name={route.name}
          search={location.search}
        />
      );
    case 'not-found':
      return <NotFoundPage />;
    default:
      // Sign-in, settings, organisations, invitations, devices: a chunk of their own, loaded when one is
      // opened (most visits only browse).
      return <AccountPage route={route} location={location} />;
  }
}

type AccountPagesModule = typeof import('./pages/account-pages.js');
let accountPages: Promise<AccountPagesModule> | null = null;

function AccountPage(props: { route: AccountRoute; location: RouteLocation }) {
  const [loaded, setLoaded] = useState<AccountPagesModule | null>(null);
  const [failed, setFailed] = useState<unknown>(null);
  useEffect(() => {
    accountPages ??= import('./pages/account-pages.js');
    accountPages.then(setLoaded, (error: unknown) => {
      accountPages = null;
      setFailed(error);
    });
  }, []);
  if (failed) return <ErrorState error={new RegistryUnavailableError()} heading="h1" />;
  if (!loaded) return <SkeletonList rows={2} label="Loading the page" />;
  return <loaded.AccountPages route={props.route} location={props.location} />;
}

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
          <AccountMenu />
        </div>
      </header>
      <main id="main" class="main" ref={mainRef} tabIndex={-1}>
        <Page route={route} location={location} />
      </main>
      <footer class="site-footer">
        <p>
          pkgreg · install with <code>pkgreg install @scope/name</code> · <a href="/api/packages">REST API</a>
        </p>
      </footer>
    </div>
  );
}
