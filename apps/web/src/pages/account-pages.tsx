import type { AccountRoute, RouteLocation } from '../router.js';
import { DevicePage } from './device-page.js';
import { InvitationPage } from './invitation-page.js';
import { OrgPage } from './org-page.js';
import { PackageSettingsPage } from './package-settings-page.js';
import { ConnectedAppsPage } from './settings/connected-apps-page.js';
import { OrgsPage } from './settings/orgs-page.js';
import { SessionsPage } from './settings/sessions-page.js';
import { TokensPage } from './settings/tokens-page.js';
import { SignInPage } from './sign-in-page.js';

// The account pages, one chunk loaded by app.tsx when one of their routes is opened.

export function AccountPages(props: { route: AccountRoute; location: RouteLocation }) {
  const { route, location } = props;
  switch (route.page) {
    case 'package-settings':
      return (
        <PackageSettingsPage key={`${route.scope}/${route.name}`} scope={route.scope} name={route.name} />
      );
    case 'sign-in':
      return <SignInPage search={location.search} />;
    case 'settings-tokens':
      return <TokensPage />;
    case 'settings-sessions':
      return <SessionsPage />;
    case 'settings-connected-apps':
      return <ConnectedAppsPage />;
    case 'settings-orgs':
      return <OrgsPage />;
    case 'org':
      return <OrgPage key={route.slug} slug={route.slug} />;
    case 'invitation':
      return <InvitationPage key={route.id} id={route.id} />;
    case 'device':
      return <DevicePage search={location.search} />;
  }
}
