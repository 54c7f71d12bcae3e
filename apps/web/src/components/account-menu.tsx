import { useEffect, useRef, useState } from 'preact/hooks';
import { refreshAccount, useAccount } from '../account.js';
import { signOut } from '../account-session.js';
import { navigate, useLocation } from '../router.js';

// The header's account control: "Sign in" when signed out; else the account's avatar and name opening a
// small disclosure menu (settings pages, organisations, sign out). A disclosure, not an ARIA menu: plain
// links and a button, reachable with Tab, closed by Escape or a click elsewhere.

export function Avatar(props: { name: string; image?: string | null; size?: number }) {
  const size = props.size ?? 28;
  // Only https images: the CSP allows them, and an http one would be mixed content.
  if (props.image?.startsWith('https:')) {
    return <img class="avatar" src={props.image} alt="" width={size} height={size} />;
  }
  return (
    <span class="avatar avatar-initial" aria-hidden="true">
      {(props.name.trim()[0] ?? '?').toUpperCase()}
    </span>
  );
}

export function AccountMenu() {
  const account = useAccount();
  const location = useLocation();
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);

  useEffect(() => setOpen(false), [location.pathname]);
  useEffect(() => {
    if (!open) return;
    const onDown = (event: MouseEvent) => {
      if (!root.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        setOpen(false);
        button.current?.focus();
      }
    };
    document.addEventListener('mousedown', onDown);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onDown);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);

  if (account.status === 'loading') return <span class="account-placeholder" aria-hidden="true" />;
  if (account.status !== 'signed-in') {
    const here = location.pathname + location.search;
    const next = location.pathname === '/sign-in' ? '' : `?next=${encodeURIComponent(here)}`;
    return (
      <a class="button account-sign-in" href={`/sign-in${next}`} data-testid="sign-in-link">
        Sign in
      </a>
    );
  }
  const { me } = account;
  const onSignOut = async () => {
    setOpen(false);
    try {
      await signOut();
    } finally {
      await refreshAccount();
      navigate('/');
    }
  };
  return (
    <div class="account" ref={root} data-testid="account-menu">
      <button
        type="button"
        class="account-button"
        ref={button}
        aria-expanded={open}
        aria-controls="account-menu-panel"
        onClick={() => setOpen((v) => !v)}
        data-testid="account-button"
      >
        <Avatar name={me.account.name} image={me.account.image} />
        <span class="account-name">{me.account.name}</span>
        <span class="visually-hidden">: account menu</span>
      </button>
      {open ? (
        <div class="account-panel card" id="account-menu-panel">
          <p class="account-email muted">{me.account.email}</p>
          <ul class="account-links">
            <li>
              <a href="/settings/tokens">Access tokens</a>
            </li>
            <li>
              <a href="/settings/sessions">Sessions</a>
            </li>
            <li>
              <a href="/settings/connected-apps">Connected apps</a>
            </li>
            <li>
              <a href="/settings/orgs">Organisations</a>
            </li>
            {me.organizations.map((org) => (
              <li key={org.id}>
                <a href={`/orgs/${encodeURIComponent(org.slug)}`} class="account-org">
                  {org.name} <span class="muted">· {org.role}</span>
                </a>
              </li>
            ))}
          </ul>
          <button type="button" class="button account-sign-out" onClick={onSignOut} data-testid="sign-out">
            Sign out
          </button>
        </div>
      ) : null}
    </div>
  );
}
