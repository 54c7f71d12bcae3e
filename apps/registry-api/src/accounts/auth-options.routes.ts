import type { AuthOptions } from '@pkgreg/contracts';
import type { Env } from '../env.js';
import type { RegistryHandlers } from '../routes/route-table.js';

// What the web UI's sign-in page offers: read from the same settings auth-setup.ts configures
// better-auth with, so the page never shows a button whose provider is not there.

/** The sign-in methods of this env; the development sign-in never in production (env.ts refuses it too). */
export function authOptionsOf(env: Env): AuthOptions {
  const providers: AuthOptions['providers'] = [];
  if (env.GITHUB_OAUTH_CLIENT_ID && env.GITHUB_OAUTH_CLIENT_SECRET)
    providers.push({ id: 'github', name: 'GitHub' });
  if (env.OIDC_SIGN_IN_DISCOVERY_URL && env.OIDC_SIGN_IN_CLIENT_ID && env.OIDC_SIGN_IN_CLIENT_SECRET) {
    providers.push({ id: 'oidc', name: env.OIDC_SIGN_IN_NAME });
  }
  return { devSignIn: env.DEV_SIGN_IN && env.NODE_ENV !== 'production', providers };
}

export function authOptionsRoutes(env: Env): Pick<RegistryHandlers, 'auth-options'> {
  const options = authOptionsOf(env);
  return {
    'auth-options': (_req, res) => {
      res.json(options);
    },
  };
}
