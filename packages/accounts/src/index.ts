/**
 * @pkgreg/accounts: people, organisations and tokens (docs/accounts.md).
 *
 * - `auth/`: better-auth configured for pkgreg: sessions, sign-in (GitHub, any OpenID Connect provider,
 *   the development sign-in), organisations with roles and invitations, device codes for the CLI.
 * - `tokens/`: granular access tokens: their form, creation, verification, revocation.
 * - `access/`: what an account (or a token of it) reaches: scopes with roles, private packages.
 * - `audit/`: the audit log of membership, role, visibility and token changes.
 * - `settings/`: scope and package visibility, a scope's organisation, trusted publishers.
 * - `operator/`: site administrators, suspensions, taking over an organisation, the demo accounts.
 */

export { memberRole, scopeRolesOfAccount } from './access/access.repository.js';
export {
  type AccountAccess,
  accessOfAccount,
  canAct,
  NO_LIMITS,
  type TokenLimits,
} from './access/account-access.js';
export { atLeast, isRole, ROLES, type Role } from './access/roles.js';
export {
  type AuditEvent,
  type AuditEventRow,
  listAccountAudit,
  listOrganizationAudit,
  recordAuditEvent,
} from './audit/audit.repository.js';
export {
  type Auth,
  type AuthSettings,
  CLIENT_ADDRESS_HEADER,
  createAuth,
  type OidcSignIn,
  organizationRoles,
  type RateLimitStore,
} from './auth/auth.js';
export { DEV_ACCOUNT_DOMAIN } from './auth/dev-sign-in.js';
export type { GitHubSignIn } from './auth/github-provider.js';
export {
  type DemoAccounts,
  OperatorError,
  seedDemoAccounts,
  setOrganizationSuspended,
  setSiteAdmin,
  suspendAccount,
  takeOverOrganization,
  unsuspendAccount,
} from './operator/operator.service.js';
export {
  claimScopeForAccount,
  deleteTrustedPublisher,
  findPackageVisibility,
  findScopeSettings,
  insertTrustedPublisher,
  isScopeUnclaimed,
  listTrustedPublishers,
  type ScopeSettingsRow,
} from './settings/settings.repository.js';
export {
  type Actor,
  changePackageVisibility,
  changeScopeSettings,
  SettingsError,
} from './settings/settings.service.js';
export {
  displayPrefix,
  generateToken,
  hashToken,
  isWellFormedToken,
  TOKEN_PATTERN,
  TOKEN_PREFIX,
} from './tokens/token-format.js';
export type { AccessTokenRow } from './tokens/tokens.repository.js';
export {
  addressAllowed,
  admitToken,
  type CreateTokenInput,
  createToken,
  findAccountToken,
  findPresentedToken,
  isAccountWideToken,
  listTokens,
  parseCidrs,
  revokeAccountToken,
  TOKEN_REFUSAL_MESSAGES,
  type TokenCheck,
  TokenInputError,
  type TokenRefusal,
  widerThanToken,
} from './tokens/tokens.service.js';
