import type { Database } from '@pkgreg/db';
import { type BetterAuthPlugin, betterAuth } from 'better-auth';
import { createAuthMiddleware, getSessionFromCtx } from 'better-auth/api';
import { admin, bearer, deviceAuthorization, genericOAuth, organization } from 'better-auth/plugins';
import { createAccessControl } from 'better-auth/plugins/access';
import { defaultStatements } from 'better-auth/plugins/organization/access';
import type { Kysely } from 'kysely';
import { recordAuditEvent } from '../audit/audit.repository.js';
import { devSignIn } from './dev-sign-in.js';
import { type GitHubSignIn, gitHubProvider } from './github-provider.js';

// Accounts, sessions, sign-in and organisations are better-auth's (docs/decisions.md, "Accounts"):
// configured here once for the registry-api, on our PostgreSQL through our Kysely instance, with its
// tables created by our migration (2026-11-29T0100-accounts).

/** An operator-configured OpenID Connect provider (Okta, Entra ID, Google Workspace, Keycloak…). */
export interface OidcSignIn {
  /** Shown on the sign-in button. */
  name: string;
  /** The issuer's discovery document, `<issuer>/.well-known/openid-configuration`. */
  discoveryUrl: string;
  clientId: string;
  clientSecret: string;
}

/** Rate-limit counters better-auth keeps per client and path (Redis here, shared by every process). */
export interface RateLimitStore {
  /** Counts one request against `key` in a window of `rule.window` seconds; atomic. */
  consume(
    key: string,
    rule: { window: number; max: number },
  ): Promise<{ allowed: boolean; retryAfter: number | null }>;
}

/** The request header carrying the client's address to better-auth (set by the server, never the client). */
export const CLIENT_ADDRESS_HEADER = 'x-pkgreg-client-address';

export interface AuthSettings {
  db: Kysely<Database>;
  /** The registry's public URL; better-auth's endpoints live under `<it>/api/auth`. */
  baseUrl: string;
  /** Signs session cookies and encrypts what better-auth keeps; at least 32 characters. */
  secret: string;
  /** Origins (besides baseUrl's) whose cookie-authenticated requests are trusted: the web UI's in dev. */
  trustedOrigins: readonly string[];
  /** Where a device code is entered (the web UI's /device page). */
  deviceVerificationUrl: string;
  github?: GitHubSignIn;
  oidc?: OidcSignIn;
  /** The development sign-in (never in production: env.ts refuses it). */
  devSignIn: boolean;
  /** Who may create an organisation: anyone signed in, or site administrators only. */
  organizationCreation: 'anyone' | 'site-admins';
  /** How long an invitation link stays valid. */
  invitationTtlS: number;
  /** Sign-in attempts per client address per minute. */
  signInPerMinute: number;
  rateLimitStore?: RateLimitStore;
  /** Where better-auth's own warnings go; it never logs secrets at warn and above. */
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
}

/** The roles of docs/accounts.md as better-auth's access control statements. */
export function organizationRoles() {
  const ac = createAccessControl({ ...defaultStatements, package: ['read', 'publish', 'settings'] });
  return {
    ac,
    roles: {
      owner: ac.newRole({
        organization: ['update', 'delete'],
        member: ['create', 'update', 'delete'],
        invitation: ['create', 'cancel'],
        package: ['read', 'publish', 'settings'],
      }),
      admin: ac.newRole({
        organization: ['update'],
        member: ['create', 'update', 'delete'],
        invitation: ['create', 'cancel'],
        package: ['read', 'publish', 'settings'],
      }),
      publisher: ac.newRole({ package: ['read', 'publish'] }),
      reader: ac.newRole({ package: ['read'] }),
    },
  };
}

/** better-auth paths whose success is a change the audit log keeps, and the action it is written as. */
const AUDITED: Record<string, string> = {
  '/organization/create': 'organization.create',
  '/organization/update': 'organization.update',
  '/organization/delete': 'organization.delete',
  '/organization/invite-member': 'invitation.create',
  '/organization/cancel-invitation': 'invitation.cancel',
  '/organization/accept-invitation': 'member.join',
  '/organization/remove-member': 'member.remove',
  '/organization/update-member-role': 'member.role',
  '/organization/leave': 'member.leave',
  '/revoke-session': 'session.revoke',
  '/revoke-sessions': 'session.revoke-all',
  '/revoke-other-sessions': 'session.revoke-others',
  '/admin/ban-user': 'account.suspend',
  '/admin/unban-user': 'account.unsuspend',
};

/** Body fields an audit entry may repeat (never a token or a secret). */
const AUDIT_FIELDS = [
  'organizationId',
  'memberIdOrEmail',
  'memberId',
  'email',
  'role',
  'invitationId',
  'userId',
  'name',
  'slug',
];

function pick(body: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (body && typeof body === 'object') {
    for (const field of AUDIT_FIELDS) {
      const value = (body as Record<string, unknown>)[field];
      if (typeof value === 'string') out[field] = value;
    }
  }
  return out;
}

function organizationIdOf(details: Record<string, unknown>, returned: unknown): string | null {
  if (typeof details.organizationId === 'string') return details.organizationId;
  if (returned && typeof returned === 'object') {
    const value = returned as Record<string, unknown>;
    if (typeof value.organizationId === 'string') return value.organizationId;
    const member = value.member as Record<string, unknown> | undefined;
    if (member && typeof member.organizationId === 'string') return member.organizationId;
    const invitation = value.invitation as Record<string, unknown> | undefined;
    if (invitation && typeof invitation.organizationId === 'string') return invitation.organizationId;
    if (typeof value.id === 'string' && typeof value.slug === 'string') return value.id;
  }
  return null;
}

export function createAuth(settings: AuthSettings) {
  const { ac, roles } = organizationRoles();
  const { db } = settings;
  const providers = [
    ...(settings.github ? [gitHubProvider(settings.github)] : []),
    ...(settings.oidc
      ? [
          {
            providerId: 'oidc',
            name: settings.oidc.name,
            discoveryUrl: settings.oidc.discoveryUrl,
            clientId: settings.oidc.clientId,
            clientSecret: settings.oidc.clientSecret,
            scopes: ['openid', 'email', 'profile'],
            pkce: true,
            requireIdTokenVerification: true,
          },
        ]
      : []),
  ];
  const plugins: BetterAuthPlugin[] = [
    organization({
      ac,
      roles,
      creatorRole: 'owner',
      invitationExpiresIn: settings.invitationTtlS,
      allowUserToCreateOrganization: async (user) =>
        settings.organizationCreation === 'anyone' || (user as { role?: string | null }).role === 'admin',
      schema: {
        organization: { modelName: 'auth_organization' },
        member: { modelName: 'auth_member' },
        invitation: { modelName: 'auth_invitation' },
      },
    }) as unknown as BetterAuthPlugin,
    admin({ adminRoles: ['admin'] }) as unknown as BetterAuthPlugin,
    bearer() as unknown as BetterAuthPlugin,
    deviceAuthorization({
      verificationUri: settings.deviceVerificationUrl,
      expiresIn: '10m',
      interval: '5s',
      validateClient: (clientId) => clientId === 'pkgreg-cli',
      schema: { deviceCode: { modelName: 'auth_device_code' } },
    }) as unknown as BetterAuthPlugin,
  ];
  if (providers.length > 0) plugins.push(genericOAuth({ config: providers }) as unknown as BetterAuthPlugin);
  if (settings.devSignIn) plugins.push(devSignIn());
  const secure = settings.baseUrl.startsWith('https:');
  return betterAuth({
    appName: 'pkgreg',
    baseURL: settings.baseUrl,
    basePath: '/api/auth',
    secret: settings.secret,
    database: { db, type: 'postgres' },
    telemetry: { enabled: false },
    trustedOrigins: [...settings.trustedOrigins],
    user: { modelName: 'auth_user' },
    session: { modelName: 'auth_session', expiresIn: 30 * 86_400, updateAge: 86_400 },
    account: {
      modelName: 'auth_account',
      accountLinking: { enabled: true, trustedProviders: ['github', 'oidc'] },
      // GitHub tokens (read:org) are kept to prove organisation admins later: encrypted at rest.
      encryptOAuthTokens: true,
    },
    verification: { modelName: 'auth_verification' },
    emailAndPassword: { enabled: false },
    // Its session list answers every session's token to the page (and revoking takes one): the registry's
    // own /api/sessions lists and revokes by id instead, so no script ever holds a session token.
    disabledPaths: ['/list-sessions', '/revoke-session'],
    advanced: {
      // better-auth skips its origin check when NODE_ENV is `test`: say it, so tests check what runs.
      disableOriginCheck: false,
      cookiePrefix: 'pkgreg',
      useSecureCookies: secure,
      defaultCookieAttributes: { httpOnly: true, sameSite: 'lax', secure },
      database: { generateId: () => crypto.randomUUID() },
      // The registry-api sets this header from the socket and TRUST_PROXY, replacing any client's value
      // (CLIENT_ADDRESS_HEADER): rate limits and session records see the address Express would.
      ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER], ipv6Subnet: 64 },
    },
    rateLimit: {
      enabled: true,
      window: 60,
      max: 300,
      customRules: {
        '/sign-in/*': { window: 60, max: settings.signInPerMinute },
        '/dev/sign-in': { window: 60, max: settings.signInPerMinute },
        '/callback/*': { window: 60, max: settings.signInPerMinute },
        '/device/*': { window: 60, max: settings.signInPerMinute * 4 },
      },
      ...(settings.rateLimitStore
        ? { customStorage: settings.rateLimitStore }
        : { storage: 'memory' as const }),
    },
    logger: {
      level: 'warn',
      log: (level, message) => settings.log(level === 'debug' ? 'info' : level, message),
    },
    hooks: {
      after: createAuthMiddleware(async (ctx) => {
        const action = AUDITED[ctx.path];
        if (!action) return;
        const returned = ctx.context.returned;
        if (returned instanceof Error || (returned instanceof Response && !returned.ok)) return;
        // Some endpoints (organisation create, invitations) read the session themselves: ask for it.
        const session =
          ctx.context.session ?? ctx.context.newSession ?? (await getSessionFromCtx(ctx).catch(() => null));
        const actorId = session?.user.id ?? null;
        const details = pick(ctx.body);
        await recordAuditEvent(db, {
          actorId,
          organizationId: organizationIdOf(details, returned),
          action,
          target: (details.memberIdOrEmail ?? details.memberId ?? details.email ?? details.userId ?? null) as
            | string
            | null,
          details,
        });
      }),
    },
    plugins,
  });
}

export type Auth = ReturnType<typeof createAuth>;
