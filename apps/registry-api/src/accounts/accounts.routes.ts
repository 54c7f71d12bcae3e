import {
  type AccessTokenRow,
  type Auth,
  atLeast,
  canAct,
  changePackageVisibility,
  changeScopeSettings,
  createToken,
  deleteTrustedPublisher,
  findPackageVisibility,
  findScopeSettings,
  insertTrustedPublisher,
  isScopeUnclaimed,
  listOrganizationAudit,
  listTokens,
  listTrustedPublishers,
  memberRole,
  revokeAccountToken,
  SettingsError,
  TokenInputError,
} from '@pkgreg/accounts';
import {
  AuditQuerySchema,
  CreateTokenRequestSchema,
  OrganizationParamsSchema,
  PACKAGE_SEGMENT_PATTERN,
  type PackageSettings,
  PackageSettingsRequestSchema,
  type ScopeSettings,
  ScopeSettingsRequestSchema,
  TokenIdParamsSchema,
  type TokenSummary,
  TrustedPublisherRequestSchema,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { fromNodeHeaders } from 'better-auth/node';
import type { Request } from 'express';
import { badRequest, forbidden, notFound, unauthorized } from '../http/api-error.js';
import { requestIdOf } from '../http/request-id.js';
import { parseBody, parseQuery } from '../http/validate.js';
import { packageKeyFromParams } from '../packages/package-path.js';
import type { RegistryHandlers } from '../routes/route-table.js';
import type { AccountViewer, ViewerOf } from './viewer.js';

// The registry's own account routes (docs/accounts.md): who am I, tokens, scope and package settings,
// trusted publishers, an organisation's audit log. Sign-in, sessions and membership are better-auth's
// under /api/auth. Settings of a scope the caller cannot see are a 404, as for a missing one.

export interface AccountsRoutesDeps {
  db: Db;
  auth: Auth;
  viewerOf: ViewerOf;
  tokenMaxDays: number;
}

type Handlers = Pick<
  RegistryHandlers,
  | 'me'
  | 'tokens-list'
  | 'tokens-create'
  | 'tokens-revoke'
  | 'scope-settings'
  | 'scope-settings-update'
  | 'package-settings'
  | 'package-settings-update'
  | 'trusted-publisher-add'
  | 'trusted-publisher-remove'
  | 'organization-audit'
>;

/** `@scope` or `scope` from the path; a 400 when it breaks the scope rule. */
function scopeOf(segment: string | undefined): string {
  const scope = String(segment ?? '').replace(/^(@|%40)/, '');
  if (!PACKAGE_SEGMENT_PATTERN.test(scope))
    throw badRequest('scope must be lowercase letters, digits and single dashes');
  return scope;
}

const SIGN_IN = 'Sign in, or send an access token (Authorization: Bearer pkgreg_…)';

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

export function accountsRoutes(deps: AccountsRoutesDeps): Handlers {
  const { db } = deps;

  async function account(req: Request): Promise<AccountViewer> {
    const viewer = await deps.viewerOf(req);
    if (viewer.kind === 'anonymous') throw unauthorized(SIGN_IN);
    return viewer;
  }

  /** Tokens are managed by a signed-in person (a session cookie, or the CLI's device-flow session), never by a token. */
  async function sessionAccount(req: Request): Promise<string> {
    if (/^bearer\s+pkgreg_/i.test(req.headers.authorization ?? '')) {
      throw forbidden('Tokens are managed while signed in (the web UI or `pkgreg login`), not with a token');
    }
    const session = await deps.auth.api.getSession({ headers: fromNodeHeaders(req.headers) });
    if (!session) throw unauthorized('Sign in to manage tokens');
    return session.user.id;
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
    const key = packageKeyFromParams(req.params as Record<string, string>);
    const viewer = await account(req);
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
    'tokens-list': async (req, res) => {
      const accountId = await sessionAccount(req);
      res.json({ data: (await listTokens(db, accountId)).map(tokenSummary) });
    },
    'tokens-create': async (req, res) => {
      const accountId = await sessionAccount(req);
      const input = parseBody(CreateTokenRequestSchema, req.body);
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
      const accountId = await sessionAccount(req);
      const { id } = parseQuery(TokenIdParamsSchema, req.params);
      const revoked = await revokeAccountToken(db, accountId, id, requestIdOf(res));
      if (!revoked) throw notFound('Token not found');
      res.json(tokenSummary(revoked));
    },
    'scope-settings': async (req, res) => {
      const scope = scopeOf(req.params.scope);
      await administeredScope(req, scope);
      res.json(await scopeSettings(scope));
    },
    'scope-settings-update': async (req, res) => {
      const scope = scopeOf(req.params.scope);
      const change = parseBody(ScopeSettingsRequestSchema, req.body);
      const viewer = await administeredScope(req, scope, change.organizationId !== undefined);
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
      const { visibility } = parseBody(PackageSettingsRequestSchema, req.body);
      await changePackageVisibility(db, key.scope, key.name, visibility, {
        accountId: viewer.accountId,
        requestId: requestIdOf(res),
      });
      res.json(await packageSettings(key.scope, key.name));
    },
    'trusted-publisher-add': async (req, res) => {
      const { key, viewer } = await administeredPackage(req);
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
      const { key } = await administeredPackage(req);
      const removed = await deleteTrustedPublisher(db, key.scope, String(req.params.id ?? ''));
      if (!removed) throw notFound('Trusted publisher not found');
      res.json(await packageSettings(key.scope, key.name));
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
      const role = org ? await memberRole(db, org.id, viewer.accountId) : undefined;
      if (!org || (!role && !viewer.siteAdmin)) throw notFound('Organisation not found');
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
