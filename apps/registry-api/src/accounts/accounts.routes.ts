import {
  type AccessTokenRow,
  type Auth,
  atLeast,
  canAct,
  changePackageVisibility,
  changeScopeSettings,
  createToken,
  deleteTrustedPublisher,
  findAccountToken,
  findPackageVisibility,
  findScopeSettings,
  insertTrustedPublisher,
  isAccountWideToken,
  isScopeUnclaimed,
  listOrganizationAudit,
  listTokens,
  listTrustedPublishers,
  memberRole,
  OperatorError,
  recordAuditEvent,
  revokeAccountToken,
  SettingsError,
  TokenInputError,
  takeOverOrganization,
  widerThanToken,
} from '@pkgreg/accounts';
import {
  AuditQuerySchema,
  CreateTokenRequestSchema,
  GitHubOrgLinkRequestSchema,
  OrganizationParamsSchema,
  PACKAGE_SEGMENT_PATTERN,
  type PackageSettings,
  PackageSettingsRequestSchema,
  type ScopeSettings,
  ScopeSettingsRequestSchema,
  SessionIdParamsSchema,
  TakeOverRequestSchema,
  TokenIdParamsSchema,
  type TokenSummary,
  TrustedPublisherRequestSchema,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { fromNodeHeaders } from 'better-auth/node';
import type { Request } from 'express';
import { badRequest, conflict, forbidden, notFound, unauthorized, unavailable } from '../http/api-error.js';
import { requestIdOf } from '../http/request-id.js';
import { parseBody, parseQuery } from '../http/validate.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import { personalSession } from './personal-session.js';
import { type AccountViewer, isOwnBearer, type ViewerOf } from './viewer.js';

// The registry's own account routes (docs/accounts.md): who am I, tokens, scope and package settings,
// trusted publishers, an organisation's audit log. Sign-in, sessions and membership are better-auth's
// under /api/auth. Settings of a scope the caller cannot see are a 404, as for a missing one.

export interface AccountsRoutesDeps {
  db: Db;
  auth: Auth;
  viewerOf: ViewerOf;
  tokenMaxDays: number;
  /** GitHub's REST API (GITHUB_API_URL): where an organisation admin is proven. */
  githubApiUrl: string;
}

type Handlers = Pick<
  RegistryHandlers,
  | 'me'
  | 'tokens-list'
  | 'tokens-create'
  | 'tokens-revoke'
  | 'tokens-revoke-current'
  | 'scope-settings'
  | 'scope-settings-update'
  | 'package-settings'
  | 'package-settings-update'
  | 'trusted-publisher-add'
  | 'trusted-publisher-remove'
  | 'organization-audit'
  | 'organization-github-link'
  | 'admin-organization-take-over'
  | 'sessions-list'
  | 'sessions-revoke'
>;

/** A change of settings: a read token may look, never change (403). */
function writing(viewer: AccountViewer): void {
  if (viewer.permission !== 'publish') {
    throw forbidden('A read token cannot change settings: use a publish token or sign in');
  }
}

/** `@scope` or `scope` from the path; a 400 when it breaks the scope rule. */
function scopeOf(segment: string | undefined): string {
  const scope = String(segment ?? '').replace(/^(@|%40)/, '');
  if (!PACKAGE_SEGMENT_PATTERN.test(scope))
    throw badRequest('scope must be lowercase letters, digits and single dashes');
  return scope;
}

const SIGN_IN = 'Sign in, or send an access token (Authorization: Bearer pkgreg_…)';
const DELEGATION_READS_ONLY = 'An app connected through the MCP edge may only read packages';

function tokenSummary(row: AccessTokenRow): TokenSummary {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    permission: row.permission,
    organizations: row.organizations,
    scopes: row.scopes,
    packages: row.packages,
    allowedCidrs: row.allowed_cidrs,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

/** GitHub's answer that the account's GitHub identity is an active admin of `login` (docs/accounts.md). */
async function proveGitHubOrgAdmin(
  deps: AccountsRoutesDeps,
  userId: string,
  accountRowId: string,
  login: string,
): Promise<{ login: string; id: number }> {
  let accessToken: string | undefined;
  try {
    accessToken = (await deps.auth.api.getAccessToken({ body: { accountId: accountRowId, userId } }))
      .accessToken;
  } catch {
    accessToken = undefined;
  }
  if (!accessToken) throw conflict('Your GitHub sign-in has expired: sign in with GitHub again');
  let response: Response;
  try {
    response = await fetch(
      `${deps.githubApiUrl.replace(/\/$/, '')}/user/memberships/orgs/${encodeURIComponent(login)}`,
      {
        headers: {
          authorization: `Bearer ${accessToken}`,
          accept: 'application/vnd.github+json',
          'user-agent': 'pkgreg-registry',
        },
        signal: AbortSignal.timeout(10_000),
      },
    );
  } catch (error) {
    throw unavailable('GitHub did not answer', error);
  }
  if (response.status === 404 || response.status === 403) {
    throw forbidden(`GitHub says you are not a member of ${login} (or the sign-in lacks read:org)`);
  }
  if (!response.ok) throw unavailable(`GitHub answered ${response.status}`);
  const membership = (await response.json()) as {
    state?: string;
    role?: string;
    organization?: { login?: string; id?: number };
  };
  if (membership.state !== 'active' || membership.role !== 'admin') {
    throw forbidden(`GitHub says you are not an active admin of ${login}`);
  }
  const id = membership.organization?.id;
  if (typeof id !== 'number') throw unavailable('GitHub answered without the organisation id');
  return { login: membership.organization?.login ?? login, id };
}

export function accountsRoutes(deps: AccountsRoutesDeps): Handlers {
  const { db } = deps;

  async function account(req: Request): Promise<AccountViewer> {
    const viewer = await deps.viewerOf(req);
    if (viewer.kind === 'anonymous') throw unauthorized(SIGN_IN);
    // An app reading through the MCP edge reads packages only: the account itself is the person's.
    if (viewer.via === 'delegation') throw forbidden(DELEGATION_READS_ONLY);
    return viewer;
  }

  /**
   * Who manages tokens: a signed-in person (a session cookie, or the CLI's device-flow session bearer),
   * or, as npm allows, an access token of the account (docs/cli-auth.md): a publish token creates tokens
   * no wider than itself, and one without limits also lists and revokes the account's tokens.
   */
  async function tokenManager(req: Request): Promise<{ accountId: string; token?: AccessTokenRow }> {
    // A `pkgreg_` token, or an MCP edge delegation (refused by `account`).
    if (isOwnBearer(req.headers.authorization ?? '')) {
      const viewer = await account(req);
      const token = viewer.tokenId ? await findAccountToken(db, viewer.accountId, viewer.tokenId) : undefined;
      if (!token) throw unauthorized(SIGN_IN);
      return { accountId: viewer.accountId, token };
    }
    const session = await deps.auth.api.getSession({ headers: fromNodeHeaders(req.headers) });
    if (!session) throw unauthorized('Sign in to manage tokens');
    return { accountId: session.user.id };
  }

  /** A manager that may list and revoke any of the account's tokens: a person, or an account-wide token. */
  async function accountWideManager(req: Request): Promise<string> {
    const manager = await tokenManager(req);
    if (manager.token && !isAccountWideToken(manager.token)) {
      throw forbidden(
        'Only a publish token without limits (the one `pkgreg login` stores) lists and revokes tokens; or sign in',
      );
    }
    return manager.accountId;
  }

  const sessionOf = (req: Request) => personalSession(deps.auth, req, 'Sessions');

  async function sessionList(userId: string, currentId: string) {
    const rows = await db
      .selectFrom('auth_session')
      .select(['id', 'createdAt', 'expiresAt', 'ipAddress', 'userAgent'])
      .where('userId', '=', userId)
      .where('expiresAt', '>', new Date())
      .orderBy('createdAt', 'desc')
      .execute();
    return rows.map((row) => ({
      id: row.id,
      createdAt: row.createdAt.toISOString(),
      expiresAt: row.expiresAt.toISOString(),
      ipAddress: row.ipAddress,
      userAgent: row.userAgent,
      current: row.id === currentId,
    }));
  }

  /**
   * The viewer, when it administers the scope (or claims an unclaimed one into an organisation: the
   * organisation's admin role is checked by the change itself); a 404 for one that cannot see it.
   */
  async function administeredScope(req: Request, scope: string, claiming = false): Promise<AccountViewer> {
    const viewer = await account(req);
    if (canAct(viewer.access, scope, null, 'admin') || viewer.siteAdmin) return viewer;
    if (claiming && (await isScopeUnclaimed(db, scope))) return viewer;
    if (viewer.access.roles.has(scope)) throw forbidden(`Changing @${scope}'s settings needs the admin role`);
    throw notFound('Scope not found');
  }

  async function scopeSettings(scope: string): Promise<ScopeSettings> {
    const row = await findScopeSettings(db, scope);
    return {
      scope,
      visibility: row?.visibility ?? 'public',
      organization:
        row?.organization_id && row.organization_slug && row.organization_name
          ? { id: row.organization_id, slug: row.organization_slug, name: row.organization_name }
          : null,
    };
  }

  async function packageSettings(scope: string, name: string): Promise<PackageSettings> {
    const own = await findPackageVisibility(db, scope, name);
    if (!own) throw notFound('Package not found');
    const publishers = await listTrustedPublishers(db, scope, name);
    return {
      name: `@${scope}/${name}`,
      visibility: own.visibility,
      private: own.private,
      trustedPublishers: publishers.map((row) => ({
        id: row.id,
        issuer: row.issuer,
        repository: row.repository,
        workflow: row.workflow,
        environment: row.environment,
        package: row.name === null ? null : `@${row.scope}/${row.name}`,
      })),
    };
  }

  /** A package the viewer administers; a 404 when it cannot see it or it is missing. */
  async function administeredPackage(req: Request) {
    // Credentials first: a caller without any learns nothing, not even whether the path is well formed.
    const viewer = await account(req);
    const key = packageKeyFromParams(req.params as Record<string, string>);
    const own = await findPackageVisibility(db, key.scope, key.name);
    const visible = own && (!own.private || viewer.access.roles.has(key.scope) || viewer.siteAdmin);
    if (!visible) throw notFound('Package not found');
    if (!canAct(viewer.access, key.scope, key.name, 'admin') && !viewer.siteAdmin) {
      throw forbidden(`Changing @${key.scope}/${key.name}'s settings needs the admin role`);
    }
    return { key, viewer };
  }

  return {
    me: async (req, res) => {
      const viewer = await account(req);
      const user = await db
        .selectFrom('auth_user')
        .select(['id', 'name', 'email', 'image'])
        .where('id', '=', viewer.accountId)
        .executeTakeFirstOrThrow();
      const organizations = await db
        .selectFrom('auth_member')
        .innerJoin('auth_organization', 'auth_organization.id', 'auth_member.organizationId')
        .select([
          'auth_organization.id',
          'auth_organization.slug',
          'auth_organization.name',
          'auth_member.role',
        ])
        .where('auth_member.userId', '=', viewer.accountId)
        .orderBy('auth_organization.slug')
        .execute();
      res.json({
        account: {
          id: user.id,
          name: user.name,
          email: user.email,
          image: user.image,
          siteAdmin: viewer.siteAdmin,
        },
        via: viewer.via,
        token: viewer.tokenId ? { id: viewer.tokenId, permission: viewer.permission } : null,
        organizations,
        scopes: [...viewer.access.roles]
          .map(([scope, role]) => ({ scope, role }))
          .sort((a, b) => a.scope.localeCompare(b.scope)),
      });
    },
    'sessions-list': async (req, res) => {
      const session = await sessionOf(req);
      res.json({ data: await sessionList(session.userId, session.id) });
    },
    'sessions-revoke': async (req, res) => {
      const session = await sessionOf(req);
      const { id } = parseQuery(SessionIdParamsSchema, req.params);
      const ended = await db.transaction().execute(async (trx) => {
        const deleted = await trx
          .deleteFrom('auth_session')
          .where('id', '=', id)
          .where('userId', '=', session.userId)
          .returning('id')
          .executeTakeFirst();
        if (deleted) {
          await recordAuditEvent(trx, {
            actorId: session.userId,
            action: 'session.revoke',
            target: id,
            requestId: requestIdOf(res),
          });
        }
        return deleted;
      });
      if (!ended) throw notFound('Session not found');
      res.json({ data: await sessionList(session.userId, session.id) });
    },
    'tokens-list': async (req, res) => {
      const accountId = await accountWideManager(req);
      res.json({ data: (await listTokens(db, accountId)).map(tokenSummary) });
    },
    'tokens-create': async (req, res) => {
      const { accountId, token: parent } = await tokenManager(req);
      const input = parseBody(CreateTokenRequestSchema, req.body);
      const wider = parent ? widerThanToken(parent, input) : undefined;
      if (wider) throw forbidden(`A token creates only tokens no wider than itself: ${wider}`);
      try {
        const { token, row } = await createToken(db, accountId, input, {
          maxDays: deps.tokenMaxDays,
          requestId: requestIdOf(res),
        });
        res.status(201).json({ ...tokenSummary(row), token });
      } catch (error) {
        if (error instanceof TokenInputError) throw badRequest(error.message);
        throw error;
      }
    },
    'tokens-revoke': async (req, res) => {
      const accountId = await accountWideManager(req);
      const { id } = parseQuery(TokenIdParamsSchema, req.params);
      const revoked = await revokeAccountToken(db, accountId, id, requestIdOf(res));
      if (!revoked) throw notFound('Token not found');
      res.json(tokenSummary(revoked));
    },
    'tokens-revoke-current': async (req, res) => {
      // The token presented revokes itself (`pkgreg logout`), whatever its permission or limits.
      const viewer = await deps.viewerOf(req);
      if (viewer.kind === 'anonymous' || !viewer.tokenId)
        throw unauthorized('Send the token to revoke: Authorization: Bearer pkgreg_…');
      const revoked = await revokeAccountToken(db, viewer.accountId, viewer.tokenId, requestIdOf(res));
      if (!revoked) throw unauthorized(SIGN_IN);
      res.json(tokenSummary(revoked));
    },
    'scope-settings': async (req, res) => {
      const scope = scopeOf(req.params.scope);
      await administeredScope(req, scope);
      res.json(await scopeSettings(scope));
    },
    'scope-settings-update': async (req, res) => {
      const scope = scopeOf(req.params.scope);
      // Credentials before the body: a caller without any learns nothing about what a body should hold.
      await account(req);
      const change = parseBody(ScopeSettingsRequestSchema, req.body);
      const viewer = await administeredScope(req, scope, change.organizationId !== undefined);
      writing(viewer);
      try {
        await changeScopeSettings(db, scope, change, {
          accountId: viewer.accountId,
          requestId: requestIdOf(res),
        });
      } catch (error) {
        if (error instanceof SettingsError)
          throw error.kind === 'forbidden' ? forbidden(error.message) : notFound(error.message);
        throw error;
      }
      res.json(await scopeSettings(scope));
    },
    'package-settings': async (req, res) => {
      const { key } = await administeredPackage(req);
      res.json(await packageSettings(key.scope, key.name));
    },
    'package-settings-update': async (req, res) => {
      const { key, viewer } = await administeredPackage(req);
      writing(viewer);
      const { visibility } = parseBody(PackageSettingsRequestSchema, req.body);
      await changePackageVisibility(db, key.scope, key.name, visibility, {
        accountId: viewer.accountId,
        requestId: requestIdOf(res),
      });
      res.json(await packageSettings(key.scope, key.name));
    },
    'trusted-publisher-add': async (req, res) => {
      const { key, viewer } = await administeredPackage(req);
      writing(viewer);
      const body = parseBody(TrustedPublisherRequestSchema, req.body);
      await insertTrustedPublisher(db, {
        scope: key.scope,
        name: body.wholeScope ? null : key.name,
        issuer: body.issuer,
        repository: body.repository,
        workflow: body.workflow ?? null,
        environment: body.environment ?? null,
        createdBy: viewer.accountId,
      });
      res.status(201).json(await packageSettings(key.scope, key.name));
    },
    'trusted-publisher-remove': async (req, res) => {
      const { key, viewer } = await administeredPackage(req);
      writing(viewer);
      const removed = await deleteTrustedPublisher(db, key.scope, String(req.params.id ?? ''));
      if (!removed) throw notFound('Trusted publisher not found');
      res.json(await packageSettings(key.scope, key.name));
    },
    'organization-github-link': async (req, res) => {
      const viewer = await account(req);
      if (viewer.via !== 'session')
        throw forbidden('Linking a GitHub organisation needs a signed-in session');
      const { slug } = parseQuery(OrganizationParamsSchema, req.params);
      const { login } = parseBody(GitHubOrgLinkRequestSchema, req.body);
      const org = await db
        .selectFrom('auth_organization')
        .select(['id', 'slug'])
        .where('slug', '=', slug)
        .executeTakeFirst();
      const role = org ? await memberRole(db, org.id, viewer.accountId) : undefined;
      if (!org || !role) throw notFound('Organisation not found');
      if (!atLeast(role, 'admin'))
        throw forbidden('Linking a GitHub organisation needs the owner or admin role');
      const linked = await db
        .selectFrom('auth_account')
        .select('id')
        .where('userId', '=', viewer.accountId)
        .where('providerId', '=', 'github')
        .executeTakeFirst();
      if (!linked) throw conflict('Sign in with GitHub first: the link is proven with your GitHub account');
      const proof = await proveGitHubOrgAdmin(deps, viewer.accountId, linked.id, login);
      try {
        await db.transaction().execute(async (trx) => {
          await trx
            .updateTable('auth_organization')
            .set({ githubOrgId: proof.id, githubOrgLogin: proof.login })
            .where('id', '=', org.id)
            .execute();
          await recordAuditEvent(trx, {
            actorId: viewer.accountId,
            organizationId: org.id,
            action: 'organization.github-link',
            target: proof.login,
            details: { githubOrgId: proof.id },
            requestId: requestIdOf(res),
          });
        });
      } catch (error) {
        if ((error as { code?: string }).code === '23505') {
          throw conflict(`The GitHub organisation ${proof.login} is linked to another organisation here`);
        }
        throw error;
      }
      res.json({ organization: org.slug, github: proof });
    },
    'admin-organization-take-over': async (req, res) => {
      const viewer = await account(req);
      // Outsiders cannot tell the administrators' routes exist.
      if (!viewer.siteAdmin || viewer.via !== 'session') throw notFound('Not found');
      const { slug } = parseQuery(OrganizationParamsSchema, req.params);
      const { reason } = parseBody(TakeOverRequestSchema, req.body);
      const user = await db
        .selectFrom('auth_user')
        .select('email')
        .where('id', '=', viewer.accountId)
        .executeTakeFirstOrThrow();
      try {
        await takeOverOrganization(db, slug, user.email, reason, viewer.accountId);
      } catch (error) {
        if (error instanceof OperatorError) throw notFound('Organisation not found');
        throw error;
      }
      res.json({ organization: slug, owner: user.email });
    },
    'organization-audit': async (req, res) => {
      const viewer = await account(req);
      const { slug } = parseQuery(OrganizationParamsSchema, req.params);
      const query = parseQuery(AuditQuerySchema, req.query);
      const org = await db
        .selectFrom('auth_organization')
        .select('id')
        .where('slug', '=', slug)
        .executeTakeFirst();
      // A token's limits narrow what its account reaches (docs/accounts.md, "Tokens"). The log names every
      // scope and package of the organisation, private ones included, so a token reads it only without
      // limits or limited to this organisation; one limited to other scopes or packages (even scopes of
      // this organisation) is answered as a non-member is. The role alone let such a token read private
      // names it cannot read anywhere else (test/access-matrix.test.ts).
      const token = viewer.tokenId ? await findAccountToken(db, viewer.accountId, viewer.tokenId) : undefined;
      const limited =
        token !== undefined &&
        (token.organizations.length > 0 || token.scopes.length > 0 || token.packages.length > 0);
      // A token whose row is gone (revoked as this request ran) reaches nothing: fail closed.
      const tokenGone = Boolean(viewer.tokenId) && token === undefined;
      const reaches =
        org !== undefined && !tokenGone && (!limited || token.organizations.includes(org.id));
      const role = org && reaches ? await memberRole(db, org.id, viewer.accountId) : undefined;
      if (!org || !reaches || (!role && !viewer.siteAdmin)) throw notFound('Organisation not found');
      if (role && !atLeast(role, 'admin') && !viewer.siteAdmin)
        throw forbidden('The audit log is for owners and admins');
      const rows = await listOrganizationAudit(db, org.id, { limit: query.limit, beforeId: query.before });
      res.json({
        data: rows.map((row) => ({
          id: row.id,
          at: row.at.toISOString(),
          actorId: row.actor_id,
          action: row.action,
          target: row.target,
          details: row.details,
        })),
        nextBefore: rows.length === query.limit ? (rows.at(-1)?.id ?? null) : null,
      });
    },
  };
}
