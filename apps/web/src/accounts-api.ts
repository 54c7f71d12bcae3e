import type {
  AuditEventDto,
  AuthOptions,
  ConnectedApp,
  CreatedToken,
  CreateTokenRequest,
  PackageSettings,
  RoleName,
  ScopeSettings,
  TokenSummary,
  Visibility,
} from '@pkgreg/contracts';
import { call, contracts, get, post } from './account-session.js';
import { ApiError } from './api.js';

// The account pages' calls (docs/web-accounts.md): the registry's own routes (/api/tokens, settings, the
// audit log) and better-auth's under /api/auth (sign-in, sessions, organisations, device codes). Every
// write is JSON from this origin (account-session.ts), which the CSRF guard and better-auth accept.

// --- Sign-in and the account ---

export async function getAuthOptions(): Promise<AuthOptions> {
  return (await contracts()).AuthOptionsSchema.parse(await get('/api/auth-options'));
}

export async function devSignIn(handle: string): Promise<void> {
  await post('/api/auth/dev/sign-in', { handle });
}

/**
 * Starts a provider's sign-in (better-auth 1.7: generic OAuth providers are social providers, signed in
 * through /sign-in/social, not a plugin endpoint); resolves with the provider's authorization URL.
 * `next` is a path of this site: the callback URLs are absolute on this origin, because the dev server's
 * origin is not the registry's (it is one of WEB_ORIGINS, which better-auth trusts).
 */
export async function providerSignInUrl(provider: string, next: string): Promise<string> {
  const origin = window.location.origin;
  const answer = (await post('/api/auth/sign-in/social', {
    provider,
    callbackURL: new URL(next, origin).href,
    errorCallbackURL: new URL(`/sign-in?error=provider&next=${encodeURIComponent(next)}`, origin).href,
    disableRedirect: true,
  })) as { url?: string };
  if (!answer?.url) throw new ApiError(502, 'The sign-in provider did not answer with an address');
  return answer.url;
}

// --- Tokens ---

export async function listTokens(): Promise<TokenSummary[]> {
  return (await contracts()).TokenListSchema.parse(await get('/api/tokens')).data;
}

export async function createToken(input: CreateTokenRequest): Promise<CreatedToken> {
  return (await contracts()).CreatedTokenSchema.parse(await post('/api/tokens', input));
}

export async function revokeToken(id: string): Promise<void> {
  await call('DELETE', `/api/tokens/${encodeURIComponent(id)}`, {});
}

// --- Sessions (the registry's /api/sessions: listed and ended by id, never by token) ---

export interface SessionInfo {
  id: string;
  createdAt: string;
  expiresAt: string;
  ipAddress: string | null;
  userAgent: string | null;
  /** The session this browser is signed in with. */
  current: boolean;
}

export async function listSessions(): Promise<SessionInfo[]> {
  return ((await get('/api/sessions')) as { data: SessionInfo[] } | null)?.data ?? [];
}

export async function revokeSession(id: string): Promise<void> {
  await call('DELETE', `/api/sessions/${encodeURIComponent(id)}`);
}

/** Signs out everywhere, this browser included. */
export async function revokeAllSessions(): Promise<void> {
  await post('/api/auth/revoke-sessions');
}

// --- Connected apps (MCP clients allowed to use the edge as the account: /api/connected-apps) ---

/** A connected app with each scope's plain words beside its name (null for a scope without any). */
export interface ConnectedAppView extends Omit<ConnectedApp, 'scopes'> {
  scopes: { name: string; description: string | null }[];
}

export async function listConnectedApps(): Promise<ConnectedAppView[]> {
  const { ConnectedAppListSchema, SCOPE_DESCRIPTIONS } = await contracts();
  const described = SCOPE_DESCRIPTIONS as Readonly<Record<string, string>>;
  return ConnectedAppListSchema.parse(await get('/api/connected-apps')).apps.map((app) => ({
    ...app,
    scopes: app.scopes.map((name) => ({ name, description: described[name] ?? null })),
  }));
}

export async function revokeConnectedApp(clientId: string): Promise<void> {
  await call('DELETE', `/api/connected-apps/${encodeURIComponent(clientId)}`);
}

// --- Organisations (better-auth's organization plugin, our audit log and scope settings) ---

export interface OrgMember {
  id: string;
  userId: string;
  role: RoleName;
  createdAt: string;
  user: { id: string; name: string; email: string; image?: string | null };
}

export interface OrgInvitation {
  id: string;
  email: string;
  role: RoleName;
  status: 'pending' | 'accepted' | 'rejected' | 'canceled';
  expiresAt: string;
}

export interface FullOrganization {
  id: string;
  name: string;
  slug: string;
  members: OrgMember[];
  invitations: OrgInvitation[];
}

export interface InvitationDetail {
  id: string;
  email: string;
  role: RoleName;
  status: string;
  expiresAt: string;
  organizationName: string;
  organizationSlug: string;
  inviterEmail: string;
}

export async function createOrganization(name: string, slug: string): Promise<{ id: string; slug: string }> {
  return (await post('/api/auth/organization/create', { name, slug })) as { id: string; slug: string };
}

export async function getOrganization(slug: string): Promise<FullOrganization> {
  const org = (await get(
    `/api/auth/organization/get-full-organization?organizationSlug=${encodeURIComponent(slug)}`,
  )) as FullOrganization | null;
  if (!org) throw new ApiError(404, 'Organisation not found');
  return org;
}

/** The invitation's id (its link is /invitations/<id>). */
export async function inviteMember(organizationId: string, email: string, role: RoleName): Promise<string> {
  const answer = (await post('/api/auth/organization/invite-member', { organizationId, email, role })) as {
    id: string;
  };
  return answer.id;
}

export async function cancelInvitation(invitationId: string): Promise<void> {
  await post('/api/auth/organization/cancel-invitation', { invitationId });
}

export async function updateMemberRole(
  organizationId: string,
  memberId: string,
  role: RoleName,
): Promise<void> {
  await post('/api/auth/organization/update-member-role', { organizationId, memberId, role });
}

export async function removeMember(organizationId: string, memberIdOrEmail: string): Promise<void> {
  await post('/api/auth/organization/remove-member', { organizationId, memberIdOrEmail });
}

export async function getInvitation(id: string): Promise<InvitationDetail> {
  return (await get(
    `/api/auth/organization/get-invitation?id=${encodeURIComponent(id)}`,
  )) as InvitationDetail;
}

export async function acceptInvitation(invitationId: string): Promise<void> {
  await post('/api/auth/organization/accept-invitation', { invitationId });
}

export async function rejectInvitation(invitationId: string): Promise<void> {
  await post('/api/auth/organization/reject-invitation', { invitationId });
}

export async function organizationAudit(slug: string): Promise<AuditEventDto[]> {
  return (await contracts()).AuditLogSchema.parse(await get(`/api/orgs/${encodeURIComponent(slug)}/audit`))
    .data;
}

export async function getScopeSettings(scope: string): Promise<ScopeSettings> {
  return (await contracts()).ScopeSettingsSchema.parse(
    await get(`/api/scopes/${encodeURIComponent(scope)}/settings`),
  );
}

export async function updateScopeSettings(
  scope: string,
  change: { visibility?: Visibility; organizationId?: string },
): Promise<ScopeSettings> {
  return (await contracts()).ScopeSettingsSchema.parse(
    await call('PUT', `/api/scopes/${encodeURIComponent(scope)}/settings`, change),
  );
}

// --- Package settings ---

const settingsPath = (scope: string, name: string) =>
  `/api/packages/@${encodeURIComponent(scope)}/${encodeURIComponent(name)}`;

export async function getPackageSettings(scope: string, name: string): Promise<PackageSettings> {
  return (await contracts()).PackageSettingsSchema.parse(await get(`${settingsPath(scope, name)}/settings`));
}

export async function updatePackageVisibility(
  scope: string,
  name: string,
  visibility: Visibility,
): Promise<PackageSettings> {
  return (await contracts()).PackageSettingsSchema.parse(
    await call('PUT', `${settingsPath(scope, name)}/settings`, { visibility }),
  );
}

export interface TrustedPublisherInput {
  issuer: string;
  repository: string;
  workflow?: string;
  environment?: string;
  wholeScope: boolean;
}

export async function addTrustedPublisher(
  scope: string,
  name: string,
  input: TrustedPublisherInput,
): Promise<PackageSettings> {
  return (await contracts()).PackageSettingsSchema.parse(
    await post(`${settingsPath(scope, name)}/trusted-publishers`, input),
  );
}

export async function removeTrustedPublisher(
  scope: string,
  name: string,
  id: string,
): Promise<PackageSettings> {
  return (await contracts()).PackageSettingsSchema.parse(
    await call('DELETE', `${settingsPath(scope, name)}/trusted-publishers/${encodeURIComponent(id)}`, {}),
  );
}

// --- Device codes (`pkgreg login --device`) ---

/** The code's state: `pending` until approved or denied. */
export async function verifyDeviceCode(userCode: string): Promise<{ status: string }> {
  return (await get(`/api/auth/device?user_code=${encodeURIComponent(userCode)}`)) as { status: string };
}

export async function approveDevice(userCode: string): Promise<void> {
  await post('/api/auth/device/approve', { userCode });
}

export async function denyDevice(userCode: string): Promise<void> {
  await post('/api/auth/device/deny', { userCode });
}
