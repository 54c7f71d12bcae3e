import { z } from 'zod';

// Publishing (docs/publishing.md): an author proves control of a repository on the code host, the
// registry indexes it now on the runtime worker and reports per skill. Owners deprecate packages and
// yank versions with the same proofs.

/**
 * `owner/repo` as the code host spells it: an owner of letters, digits and single hyphens (GitHub's
 * login rule, up to 39 characters), a repository name of letters, digits, `.`, `_` and `-`.
 */
export const REPOSITORY_PATTERN =
  /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}\/[A-Za-z0-9._-]{1,100}$/;
export const INVALID_REPOSITORY_MESSAGE = 'repository must be "owner/repo" as the code host names it';

/** A branch name as git allows it (git check-ref-format, without the rare forms nobody publishes from). */
export const BRANCH_PATTERN =
  /^(?![-/.])(?!.*(?:\.\.|\/\/|@\{|\/\.|\.lock(?:\/|$)))[^\s~^:?*[\\\p{Cc}]{1,255}(?<![/.])$/u;
export const INVALID_REF_MESSAGE = 'ref must be a branch name (as in refs/heads/<ref>)';

export const RepositorySchema = z.string().regex(REPOSITORY_PATTERN, { error: INVALID_REPOSITORY_MESSAGE });
export const BranchSchema = z.string().regex(BRANCH_PATTERN, { error: INVALID_REF_MESSAGE });

/**
 * How a caller proved control of the repository: a CI OIDC token (trusted publishing), a code-host user
 * token with push access, or a webhook delivery signed with the secret issued at a proven publish.
 */
export const PublishProofSchema = z.enum(['oidc', 'token', 'webhook']);
export type PublishProof = z.infer<typeof PublishProofSchema>;

export const PublishRunStatusSchema = z.enum(['queued', 'running', 'succeeded', 'failed']);
export type PublishRunStatus = z.infer<typeof PublishRunStatusSchema>;

const IsoTimestamp = z.iso.datetime({ offset: true });

/** Body of POST /api/publish; the proof travels in `Authorization: Bearer <token>`. */
export const PublishRequestSchema = z.object({
  /** The repository to index, `owner/repo`. */
  repository: RepositorySchema,
  /** Branch to index (default: the repository's default branch); an OIDC token's `ref` must name it. */
  ref: BranchSchema.optional(),
  /** Replace the repository's webhook secret with a new one, shown in this response only. */
  rotateWebhookSecret: z.boolean().optional(),
});
export type PublishRequest = z.infer<typeof PublishRequestSchema>;

/** What to configure on the code host so pushes re-index the repository (shown once). */
export const WebhookSetupSchema = z.object({
  /** Payload URL: the registry's POST /api/hooks/github. */
  url: z.string(),
  /** The HMAC secret of `X-Hub-Signature-256`; shown in this response only, never again. */
  secret: z.string(),
  /** Content type to choose on the code host. */
  contentType: z.literal('application/json'),
  /** Events to send. */
  events: z.array(z.string()),
});
export type WebhookSetup = z.infer<typeof WebhookSetupSchema>;

/** 202 answer of POST /api/publish. */
export const PublishAcceptedSchema = z.object({
  /** Poll GET /api/publish/{runId}. */
  runId: z.uuid(),
  status: z.literal('queued'),
  /** `owner/repo` as the code host names it now. */
  repository: z.string(),
  /** The registry scope the repository's packages go to (bound to the owner's account id). */
  scope: z.string(),
  ref: z.string().nullable(),
  proof: PublishProofSchema,
  /** Path of the run's status. */
  statusUrl: z.string(),
  /** Set when a webhook secret was created (the first publish of the repository, or a rotation). */
  webhook: WebhookSetupSchema.nullable(),
});
export type PublishAccepted = z.infer<typeof PublishAcceptedSchema>;

export const SkillOutcomeSchema = z.enum(['new-version', 'unchanged', 'rejected', 'delisted']);
export type SkillOutcome = z.infer<typeof SkillOutcomeSchema>;

/** What a run did with one SKILL.md of the repository. */
export const SkillResultSchema = z.object({
  /** Path of the SKILL.md in the repository. */
  path: z.string(),
  /** `@scope/name`; null when the SKILL.md was rejected before a name could be read. */
  name: z.string().nullable(),
  outcome: SkillOutcomeSchema,
  /** The version created (`new-version`) or the latest one (`unchanged`); null otherwise. */
  version: z.string().nullable(),
  /** What agents tolerate that this skill breaks (indexed anyway). */
  warnings: z.array(z.string()),
  /** Why it was rejected or delisted; null otherwise. */
  reason: z.string().nullable(),
});
export type SkillResult = z.infer<typeof SkillResultSchema>;

export const PublishResultSchema = z.object({
  /** `owner/repo` as indexed. */
  sourceRepo: z.string(),
  /** Commit the tree was read at, when the source said. */
  commit: z.string().nullable(),
  /** The code host said nothing changed since the last run (nothing was read). */
  notModified: z.boolean(),
  skills: z.array(SkillResultSchema),
});
export type PublishResult = z.infer<typeof PublishResultSchema>;

/** GET /api/publish/{runId}. */
export const PublishRunSchema = z.object({
  runId: z.uuid(),
  repository: z.string(),
  scope: z.string(),
  ref: z.string().nullable(),
  proof: PublishProofSchema,
  status: PublishRunStatusSchema,
  createdAt: IsoTimestamp,
  startedAt: IsoTimestamp.nullable(),
  finishedAt: IsoTimestamp.nullable(),
  /** Why the run failed; null unless `failed`. */
  error: z.string().nullable(),
  /** Per skill, once `succeeded`. */
  result: PublishResultSchema.nullable(),
});
export type PublishRun = z.infer<typeof PublishRunSchema>;

/** Answer of POST /api/hooks/github. */
export const WebhookResponseSchema = z.object({
  /** The `X-GitHub-Event` received. */
  event: z.string(),
  /**
   * `pong` for ping, `queued` when a re-index was enqueued, `ignored` otherwise (with `reason`);
   * `duplicate` for a delivery already received (the same `X-GitHub-Delivery`, or the same signed body,
   * within a day): nothing was done.
   */
  action: z.enum(['pong', 'queued', 'ignored', 'duplicate']),
  runId: z.uuid().nullable(),
  reason: z.string().nullable(),
});
export type WebhookResponse = z.infer<typeof WebhookResponseSchema>;

export const DEPRECATION_MESSAGE_MAX_LENGTH = 1024;

/** Body of PUT /api/packages/@scope/name/deprecation. */
export const DeprecateRequestSchema = z.object({
  /** Shown by info, install and the web page (e.g. what to use instead). */
  message: z
    .string()
    .trim()
    .max(DEPRECATION_MESSAGE_MAX_LENGTH, { error: 'message must be at most 1024 characters' })
    .optional(),
});
export type DeprecateRequest = z.infer<typeof DeprecateRequestSchema>;

/** Answer of PUT/DELETE /api/packages/@scope/name/deprecation. */
export const PackageStateSchema = z.object({
  scope: z.string(),
  name: z.string(),
  status: z.enum(['active', 'deprecated', 'delisted']),
  /** The owner's message; null when not deprecated by its owner (or none given). */
  deprecationMessage: z.string().nullable(),
});
export type PackageState = z.infer<typeof PackageStateSchema>;

/** Body of PUT /api/packages/@scope/name/versions/{version}/yank. */
export const YankRequestSchema = z.object({
  /** Why (shown beside the version). */
  reason: z
    .string()
    .trim()
    .max(DEPRECATION_MESSAGE_MAX_LENGTH, { error: 'reason must be at most 1024 characters' })
    .optional(),
});
export type YankRequest = z.infer<typeof YankRequestSchema>;

/** Answer of PUT/DELETE …/versions/{version}/yank. */
export const YankStateSchema = z.object({
  scope: z.string(),
  name: z.string(),
  version: z.string(),
  yanked: z.boolean(),
  yankReason: z.string().nullable(),
  /** What `latest` resolves to now (the newest version not yanked); null when every one is. */
  latest: z.string().nullable(),
});
export type YankState = z.infer<typeof YankStateSchema>;

/** How an upload proved it may publish (docs/publishing.md, "Uploading (hosted packages)"). */
export const UploadProofSchema = z.enum(['token', 'session', 'oidc']);
export type UploadProof = z.infer<typeof UploadProofSchema>;

/**
 * Query of PUT /api/packages/{scope}/{name}/versions/{version}: the skill's folder in the repository a CI
 * job uploads from, as the uploader says (`git rev-parse --show-prefix`); a CI upload's attestation names
 * it beside the repository and commit its OIDC token names. Ignored for other uploads.
 */
export const UploadQuerySchema = z.object({
  sourcePath: z
    .string()
    .max(500, { error: 'sourcePath must be at most 500 characters' })
    .regex(/^(?:[A-Za-z0-9._@+-][A-Za-z0-9 ._@+-]*(?:\/[A-Za-z0-9._@+-][A-Za-z0-9 ._@+-]*)*)?$/, {
      error:
        'sourcePath must be a relative folder path (letters, digits, . _ - @ + and spaces; / between parts)',
    })
    .refine((path) => !path.split('/').some((part) => part === '.' || part === '..'), {
      error: 'sourcePath may not hold . or .. parts',
    })
    .default(''),
});
export type UploadQuery = z.infer<typeof UploadQuerySchema>;

/** Where a CI upload came from, as its verified OIDC token says: what its attestation names. */
export const UploadCiSourceSchema = z.object({
  /** The repository's web URL. */
  repository: z.string(),
  /** The commit the job ran on (the token's `sha`). */
  commit: z.string(),
  /** The skill's folder in it, as the uploader said (`sourcePath`). */
  path: z.string(),
  /** The run's web page, when the token names one. */
  run: z.string().nullable(),
});
export type UploadCiSource = z.infer<typeof UploadCiSourceSchema>;

/** Answer of PUT /api/packages/{scope}/{name}/versions/{version} (201): the version stored. */
export const UploadResultSchema = z.object({
  /** `@scope/name`. */
  name: z.string(),
  version: z.string(),
  /** SRI sha512 of the version's archive as the registry stored it (it rebuilds the archive). */
  integrity: z.string(),
  /** `sha256:` over the manifest: the version's identity. */
  digest: z.string(),
  fileCount: z.number().int().nonnegative(),
  totalBytes: z.number().int().nonnegative(),
  /** The risk scan's highest severity, or `none`. */
  risk: z.enum(['none', 'low', 'medium', 'high']),
  /** Rules agents tolerate that the SKILL.md breaks. */
  warnings: z.array(z.string()),
  /** Always true: the registry holds the only copy. */
  hosted: z.literal(true),
  /** Readers only (the package or its scope is private). */
  private: z.boolean(),
  proof: UploadProofSchema,
  /** The upload claimed the scope for the uploader's account (nobody held it before). */
  claimedScope: z.boolean(),
  /**
   * A CI upload whose token names its commit: the source the registry's attestation of the version will
   * name (docs/provenance.md); null for other uploads.
   */
  ciSource: UploadCiSourceSchema.nullable().default(null),
});
export type UploadResult = z.infer<typeof UploadResultSchema>;
