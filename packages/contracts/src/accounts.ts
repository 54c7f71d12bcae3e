import { z } from 'zod';
import { PACKAGE_SEGMENT_PATTERN } from './registry.js';
import { PackagePathParamsSchema } from './route-params.js';
import { hasLoneSurrogate, hasNul } from './storable-text.js';

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

export const OrganizationParamsSchema = z.object({
  // PostgreSQL cannot hold U+0000 or a lone surrogate: such a slug names no organisation (400, not 500).
  slug: z
    .string()
    .min(1)
    .max(100)
    .refine((s) => !hasNul(s) && !hasLoneSurrogate(s), {
      error: 'slug must not contain U+0000 or a lone surrogate',
    }),
});

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

/** Path of DELETE /api/packages/{scope}/{name}/trusted-publishers/{id}. */
export const TrustedPublisherParamsSchema = PackagePathParamsSchema.extend({
  id: z.uuid({ error: 'trusted publisher id must be a UUID' }),
});

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

/** Body of POST /api/admin/orgs/{slug}/take-over (site administrators). */
export const TakeOverRequestSchema = z.object({ reason: z.string().trim().min(1).max(500) });
export const TakeOverSchema = z.object({ organization: z.string(), owner: z.string() });

/** A session of the signed-in account as GET /api/sessions lists it (never its token). */
export const SessionSummarySchema = z.object({
  id: z.string(),
  createdAt: IsoTimestamp,
  expiresAt: IsoTimestamp,
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
  /** The session this request came with. */
  current: z.boolean(),
});
export const SessionListSchema = z.object({ data: z.array(SessionSummarySchema) });
export const SessionIdParamsSchema = z.object({ id: z.string().min(1).max(100) });
// The CLI's browser sign-in (docs/cli-auth.md): an OAuth-style authorization code with PKCE (RFC 7636)
// sent to a loopback redirect (RFC 8252), exchanged for a pkgreg access token.

/** `http://127.0.0.1:<port>/callback` or `http://[::1]:<port>/callback`: the CLI's own loopback server. */
export const CliRedirectUriSchema = z
  .string()
  .max(100)
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return (
          url.protocol === 'http:' &&
          (url.hostname === '127.0.0.1' || url.hostname === '[::1]') &&
          url.port !== '' &&
          url.pathname === '/callback' &&
          url.search === '' &&
          url.hash === '' &&
          url.username === '' &&
          url.password === '' &&
          value === `http://${url.host}/callback`
        );
      } catch {
        return false;
      }
    },
    { error: 'redirect_uri must be http://127.0.0.1:<port>/callback or http://[::1]:<port>/callback' },
  );

/** A PKCE S256 challenge: base64url of a SHA-256 digest (43 characters). */
const CodeChallenge = z
  .string()
  .regex(/^[A-Za-z0-9_-]{43}$/, { error: 'code_challenge must be a S256 challenge' });

/** Query of GET /api/cli/authorize (and the fields of its form). */
export const CliAuthorizeQuerySchema = z.object({
  redirect_uri: CliRedirectUriSchema,
  /** The CLI's random value, returned unchanged so it knows the answer is to its own request. */
  state: z.string().regex(/^[A-Za-z0-9_-]{16,128}$/, { error: 'state must be 16-128 base64url characters' }),
  code_challenge: CodeChallenge,
  code_challenge_method: z.literal('S256', { error: 'code_challenge_method must be S256' }),
});
export type CliAuthorizeQuery = z.infer<typeof CliAuthorizeQuerySchema>;

/** Form of POST /api/cli/authorize: the query's fields and the person's decision. */
export const CliAuthorizeFormSchema = CliAuthorizeQuerySchema.extend({
  decision: z.enum(['approve', 'deny']),
});

/** Body of POST /api/cli/token. */
export const CliTokenRequestSchema = z.object({
  /** The one-time code the loopback redirect carried. */
  code: z.string().min(1).max(200),
  /** The PKCE verifier (RFC 7636: 43-128 unreserved characters). */
  code_verifier: z
    .string()
    .regex(/^[A-Za-z0-9._~-]{43,128}$/, { error: 'code_verifier must be 43-128 characters' }),
  /** The redirect_uri the code was issued for. */
  redirect_uri: CliRedirectUriSchema,
  /** The token's name, e.g. "pkgreg CLI on my-laptop". */
  name: z.string().trim().min(1).max(100),
});
export type CliTokenRequest = z.infer<typeof CliTokenRequestSchema>;

/** Answer of POST /api/cli/token: a new publish token (shown this once) and whose it is. */
export const CliTokenResponseSchema = z.object({
  token: z.string(),
  id: z.string(),
  expiresAt: IsoTimestamp,
  account: z.object({ email: z.string() }),
});
export type CliTokenResponse = z.infer<typeof CliTokenResponseSchema>;

// An MCP client (an agent app) signing in to the edge (docs/accounts.md, "Consent for MCP clients"): the
// edge hands the browser to the registry's consent page, and what the person allowed is a connected app.

/** The id in /api/mcp/consent/{id}: 32 random bytes, base64url, that the edge sent the browser with. */
export const McpConsentParamsSchema = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{43}$/) });

/** Form of POST /api/mcp/consent/{id}: the person's decision. */
export const McpConsentFormSchema = z.object({ decision: z.enum(['allow', 'deny']) });

/** An app allowed to use the MCP edge as the account (GET /api/connected-apps). */
export const ConnectedAppSchema = z.object({
  /** The OAuth client id: an https URL (a client metadata document) or one the edge registered. */
  clientId: z.string(),
  /** The name the app gave itself when last allowed: its own claim. */
  clientName: z.string().nullable(),
  /** The scopes allowed (SCOPES names). */
  scopes: z.array(z.string()),
  /** When it was first allowed (since its last revocation). */
  createdAt: IsoTimestamp,
  /** When the edge last saw it use a token; null before then. */
  lastUsedAt: IsoTimestamp.nullable(),
});
export type ConnectedApp = z.infer<typeof ConnectedAppSchema>;

export const ConnectedAppListSchema = z.object({ apps: z.array(ConnectedAppSchema) });

/** DELETE /api/connected-apps/{clientId}: the client id, URL-encoded in the path. */
export const ConnectedAppParamsSchema = z.object({ clientId: z.string().min(1).max(2048) });

// The device flow (RFC 8628) as better-auth answers it under /api/auth/device: what the CLI reads.

/** Answer of POST /api/auth/device/code. */
export const DeviceCodeResponseSchema = z.object({
  device_code: z.string().min(1),
  user_code: z.string().min(1),
  verification_uri: z.string(),
  verification_uri_complete: z.string().optional(),
  /** Seconds until the codes expire. */
  expires_in: z.number().int().positive(),
  /** Seconds to wait between polls. */
  interval: z.number().int().positive().default(5),
});
export type DeviceCodeResponse = z.infer<typeof DeviceCodeResponseSchema>;

/** Answer of POST /api/auth/device/token once approved: a better-auth session token. */
export const DeviceTokenResponseSchema = z.object({ access_token: z.string().min(1) });

/** Refusal of POST /api/auth/device/token (RFC 8628 section 3.5). */
export const DeviceTokenErrorSchema = z.object({
  error: z.string(),
  error_description: z.string().optional(),
});

/** A sign-in provider the registry is configured with (GitHub's OAuth app, an operator's OIDC provider). */
export const SignInProviderSchema = z.object({
  /** better-auth's provider id: POST /api/auth/sign-in/social {provider: id} starts its flow. */
  id: z.enum(['github', 'oidc']),
  /** What the sign-in button says. */
  name: z.string(),
});

/** Answer of GET /api/auth-options: the sign-in methods the web UI offers. */
export const AuthOptionsSchema = z.object({
  /** The development sign-in (POST /api/auth/dev/sign-in {handle}); never in production. */
  devSignIn: z.boolean(),
  providers: z.array(SignInProviderSchema),
});
export type AuthOptions = z.infer<typeof AuthOptionsSchema>;
