import { z } from 'zod';
import { PACKAGE_SEGMENT_PATTERN } from './registry.js';

// Accounts, organisations, visibility and tokens (docs/accounts.md). Sign-in, sessions and organisation
// membership are better-auth's endpoints under /api/auth; these are the registry's own.

const IsoTimestamp = z.iso.datetime({ offset: true });

/** A scope without its `@` (the registry's scope rule). */
const ScopeName = z.string().regex(PACKAGE_SEGMENT_PATTERN, { error: 'scopes are scope names without "@"' });
/** `scope/name` of one package, without the `@`. */
const PackageRef = z.string().refine(
  (value) => {
    const [scope = '', name = '', extra] = value.split('/');
    return extra === undefined && PACKAGE_SEGMENT_PATTERN.test(scope) && PACKAGE_SEGMENT_PATTERN.test(name);
  },
  { error: 'packages are "scope/name" without "@"' },
);

/**
 * A pkgreg access token anywhere in a text: `pkgreg_` + 36 base62 characters (the last 6 a checksum).
 * Secret scanners, and pkgreg's own risk scan, find leaked tokens with it.
 */
export const ACCESS_TOKEN_PATTERN = /\bpkgreg_[0-9A-Za-z]{36}\b/;

export const RoleSchema = z.enum(['reader', 'publisher', 'admin', 'owner']);
export type RoleName = z.infer<typeof RoleSchema>;

export const VisibilitySchema = z.enum(['public', 'private']);
export type Visibility = z.infer<typeof VisibilitySchema>;

export const TokenPermissionSchema = z.enum(['read', 'publish']);

/** Body of POST /api/tokens. */
export const CreateTokenRequestSchema = z.object({
  /** What the token is for ("CI deploy", "laptop"); shown in lists. */
  name: z.string().trim().min(1).max(100),
  /** `read`: install and read private packages; `publish`: also upload versions. */
  permission: TokenPermissionSchema,
  /** Organisation ids; with scopes and packages, the union the token is limited to (none: all the account reaches). */
  organizations: z.array(z.string().min(1).max(100)).max(50).default([]),
  scopes: z.array(ScopeName).max(100).default([]),
  packages: z.array(PackageRef).max(100).default([]),
  /** IP addresses or CIDR ranges the token may be used from (none: anywhere). */
  allowedCidrs: z.array(z.string().min(1).max(64)).max(20).default([]),
  /** Days until it expires (at most the registry's TOKEN_MAX_DAYS). */
  expiresInDays: z.int().min(1).max(3650),
});
export type CreateTokenRequest = z.infer<typeof CreateTokenRequestSchema>;

/** A token as lists show it: never the secret. */
export const TokenSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  /** The token's first characters, to recognise it. */
  prefix: z.string(),
  permission: TokenPermissionSchema,
  organizations: z.array(z.string()),
  scopes: z.array(z.string()),
  packages: z.array(z.string()),
  allowedCidrs: z.array(z.string()),
  createdAt: IsoTimestamp,
  expiresAt: IsoTimestamp,
  lastUsedAt: IsoTimestamp.nullable(),
  revokedAt: IsoTimestamp.nullable(),
});
export type TokenSummary = z.infer<typeof TokenSummarySchema>;

/** Answer of POST /api/tokens: the secret, shown this once. */
export const CreatedTokenSchema = TokenSummarySchema.extend({ token: z.string() });
export type CreatedToken = z.infer<typeof CreatedTokenSchema>;

export const TokenListSchema = z.object({ data: z.array(TokenSummarySchema) });

export const TokenIdParamsSchema = z.object({ id: z.uuid({ error: 'token id must be a UUID' }) });

/** Answer of GET /api/me: who the credentials belong to and what they reach. */
export const MeSchema = z.object({
  account: z.object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
    image: z.string().nullable(),
    siteAdmin: z.boolean(),
  }),
  /** How this request authenticated. */
  via: z.enum(['session', 'token']),
  token: z.object({ id: z.string(), permission: TokenPermissionSchema }).nullable(),
  organizations: z.array(z.object({ id: z.string(), slug: z.string(), name: z.string(), role: RoleSchema })),
  /** Scopes these credentials reach, with the role there. */
  scopes: z.array(z.object({ scope: z.string(), role: RoleSchema })),
});
export type Me = z.infer<typeof MeSchema>;

/** Body of PUT /api/scopes/{scope}/settings. */
export const ScopeSettingsRequestSchema = z
  .object({
    visibility: VisibilitySchema.optional(),
    /** Move the scope into an organisation (its id) the caller administers. */
    organizationId: z.string().min(1).max(100).optional(),
  })
  .refine((body) => body.visibility !== undefined || body.organizationId !== undefined, {
    error: 'give visibility or organizationId',
  });

export const ScopeSettingsSchema = z.object({
  scope: z.string(),
  visibility: VisibilitySchema,
  organization: z.object({ id: z.string(), slug: z.string(), name: z.string() }).nullable(),
});
export type ScopeSettings = z.infer<typeof ScopeSettingsSchema>;

export const ScopeParamsSchema = z.object({ scope: z.string().min(1) });

/** Body of PUT /api/packages/{scope}/{name}/settings. */
export const PackageSettingsRequestSchema = z.object({ visibility: VisibilitySchema });

export const PackageSettingsSchema = z.object({
  name: z.string(),
  /** The package's own setting. */
  visibility: VisibilitySchema,
  /** What readers get: private when the package or its scope is. */
  private: z.boolean(),
  trustedPublishers: z.array(
    z.object({
      id: z.string(),
      issuer: z.string(),
      repository: z.string(),
      workflow: z.string().nullable(),
      environment: z.string().nullable(),
      /** null: every package of the scope. */
      package: z.string().nullable(),
    }),
  ),
});
export type PackageSettings = z.infer<typeof PackageSettingsSchema>;

export const AuditEventSchema = z.object({
  id: z.number(),
  at: IsoTimestamp,
  actorId: z.string().nullable(),
  action: z.string(),
  target: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
});
export type AuditEventDto = z.infer<typeof AuditEventSchema>;

export const AuditLogSchema = z.object({
  data: z.array(AuditEventSchema),
  nextBefore: z.number().nullable(),
});

export const AuditQuerySchema = z.object({
  before: z.coerce.number().int().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const OrganizationParamsSchema = z.object({ slug: z.string().min(1).max(100) });

/** Body of POST /api/packages/{scope}/{name}/trusted-publishers. */
export const TrustedPublisherRequestSchema = z.object({
  /** The CI's OIDC issuer (GitHub Actions: `https://token.actions.githubusercontent.com`; GitLab: `https://gitlab.com`). */
  issuer: z.url().max(300),
  /** `owner/repo` (GitHub) or `group/project` (GitLab). */
  repository: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)+$/, { error: 'repository must be "owner/repo"' })
    .max(300),
  /** GitHub: the workflow file (`publish.yml`); GitLab: the CI config path. Omitted: any workflow. */
  workflow: z.string().min(1).max(300).optional(),
  /** A deployment environment the job must run in. */
  environment: z.string().min(1).max(100).optional(),
  /** Trust it for every package of the scope, not only this one. */
  wholeScope: z.boolean().default(false),
});

export const TrustedPublisherParamsSchema = z.object({ id: z.uuid() });

/** Body of POST /api/orgs/{slug}/github: link the GitHub organisation the caller administers. */
export const GitHubOrgLinkRequestSchema = z.object({
  login: z.string().regex(/^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/, {
    error: 'login must be a GitHub organisation login',
  }),
});

export const GitHubOrgLinkSchema = z.object({
  organization: z.string(),
  github: z.object({ login: z.string(), id: z.number() }),
});
