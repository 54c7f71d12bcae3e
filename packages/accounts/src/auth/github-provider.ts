import type { GenericOAuthConfig } from 'better-auth/plugins';

// Sign-in with GitHub's OAuth web flow through better-auth's generic OAuth plugin rather than its
// built-in GitHub provider, because the built-in one names github.com's hosts: here the web and API
// hosts are settings (GitHub Enterprise Server, and the tests' stand-in). The account it links holds
// GitHub's numeric user id, which is what scopes bound by publishing name (scope_owners.owner_id).

export interface GitHubSignIn {
  clientId: string;
  clientSecret: string;
  /** `https://github.com`, or a GitHub Enterprise Server's host. */
  webUrl: string;
  /** `https://api.github.com`, or `https://HOST/api/v3`. */
  apiUrl: string;
}

interface GitHubUser {
  id: number;
  login: string;
  name: string | null;
  email: string | null;
  avatar_url: string | null;
}

interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

async function getJson<T>(url: string, accessToken: string): Promise<T> {
  const response = await fetch(url, {
    headers: {
      authorization: `Bearer ${accessToken}`,
      accept: 'application/vnd.github+json',
      'user-agent': 'pkgreg-registry',
    },
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`GitHub answered ${response.status} for ${new URL(url).pathname}`);
  return (await response.json()) as T;
}

export function gitHubProvider(settings: GitHubSignIn): GenericOAuthConfig {
  const web = settings.webUrl.replace(/\/$/, '');
  const api = settings.apiUrl.replace(/\/$/, '');
  return {
    providerId: 'github',
    name: 'GitHub',
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    authorizationUrl: `${web}/login/oauth/authorize`,
    tokenUrl: `${web}/login/oauth/access_token`,
    // read:org proves an organisation's admin when an organisation is linked to a GitHub organisation.
    scopes: ['read:user', 'user:email', 'read:org'],
    pkce: true,
    getUserInfo: async (tokens) => {
      if (!tokens.accessToken) return null;
      const user = await getJson<GitHubUser>(`${api}/user`, tokens.accessToken);
      let email = user.email;
      let verified = false;
      const emails = await getJson<GitHubEmail[]>(`${api}/user/emails`, tokens.accessToken).catch(() => []);
      const primary = emails.find((entry) => entry.primary && entry.verified);
      if (primary) {
        email = primary.email;
        verified = true;
      }
      // An account without a public or verified email still signs in, under a per-id placeholder.
      return {
        id: String(user.id),
        email: email ?? `${user.id}+${user.login}@users.noreply.github.invalid`,
        emailVerified: verified,
        name: user.name ?? user.login,
        image: user.avatar_url ?? undefined,
      };
    },
  };
}
