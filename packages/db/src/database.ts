import type { ColumnType, Generated, JSONColumnType } from 'kysely';

/** A timestamp: read as Date, written as Date or ISO string, defaulted by the database. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
type Json<T extends object | null> = JSONColumnType<T, T | string, T | string>;

export interface PackagesTable {
  id: Generated<string>;
  scope: string;
  name: string;
  description: Generated<string>;
  kind: Generated<'skill' | 'composite' | 'workflow' | 'app'>;
  category: string | null;
  tags: Generated<string[]>;
  compatibility: Generated<string[]>;
  language: string | null;
  version: string | null;
  source_repo: string;
  source_path: Generated<string>;
  source_ref: Generated<string>;
  repo_url: string | null;
  homepage_url: string | null;
  repo_owner: string;
  author: string | null;
  repo_stars: Generated<number>;
  license: string | null;
  skill_md_raw: string;
  frontmatter: Json<Record<string, unknown>>;
  allowed_tools: Generated<string[]>;
  token_count: Generated<number>;
  file_count: Generated<number>;
  progressive_disclosure: Generated<boolean>;
  /** bigint; parsed to number by createDb (counts stay far below 2^53). */
  download_count: Generated<number>;
  /** bigint: the sum over UTC days of that day's unique downloaders (the downloads order). */
  unique_download_count: Generated<number>;
  dep_count: Generated<number>;
  dependant_count: Generated<number>;
  verified: Generated<boolean>;
  featured: Generated<boolean>;
  status: Generated<'active' | 'deprecated' | 'delisted'>;
  hosted: Generated<boolean>;
  first_indexed_at: Timestamp;
  last_indexed_at: Timestamp;
  last_commit_sha: string | null;
  /** Bumped by trigger on every update; the ETag source. */
  row_version: Generated<number>;
  /** The last change of the package (set by trigger; the download fold is no change). */
  updated_at: Timestamp;
  /** xid8 of the transaction of that change (pg returns it as a string): the sync feed's order. */
  updated_xid: ColumnType<string, never, never>;
  /** Generated column; never written. */
  search_vector: ColumnType<string, never, never>;
  /** The latest version's indexing warnings (rules agents tolerate). */
  warnings: ColumnType<string[], string[] | string | undefined, string[] | string>;
  /** Set by an operator's removal (malware): every version then answers 410 with `removal_reason`. */
  removed_at: NullableTimestamp;
  removal_reason: string | null;
  /** The latest version's risk (its scan's highest severity, or 'none'); null before any scan. */
  risk: 'none' | 'low' | 'medium' | 'high' | null;
  /** Set by an operator's quarantine: out of list and search, install refused; the reason is shown. */
  quarantined_at: NullableTimestamp;
  quarantine_reason: string | null;
  /** Set by the owner's `deprecate` (kept across indexing runs, which rewrite `status` from the SKILL.md). */
  deprecated_at: NullableTimestamp;
  /** The owner's deprecation message. */
  deprecation_message: string | null;
  /** The package's own visibility setting (docs/accounts.md). */
  visibility: Generated<'public' | 'private'>;
  /** Effective: the package or its scope is private. Every read path filters on it. */
  private: Generated<boolean>;
  /** The package has been public at some point (trigger-kept): the sync feed may name it once private. */
  was_public: Generated<boolean>;
}

/** Bytes stored once per SHA-256: every file of every version, and every version's archive. */
export interface ContentBlobsTable {
  sha256: string;
  /** Git's blob id of the same bytes (what tree listings name). */
  git_sha1: string;
  /** bigint; parsed to number by createDb. */
  size: number;
  bytes: Buffer;
  created_at: Timestamp;
}

/** One immutable version of a package: the whole skill folder at one indexing run. Never updated. */
export interface PackageVersionsTable {
  id: Generated<string>;
  package_id: string;
  /** Identity: creation order (newest = highest). */
  seq: ColumnType<number, never, never>;
  version: string;
  /** The semver the SKILL.md declared, when it did. */
  declared_version: string | null;
  /** `sha256:<hex>` over the manifest (path, mode, content of every file). */
  digest: string;
  /** SRI sha512 of the archive. */
  integrity: string;
  archive_sha256: string;
  file_count: number;
  total_bytes: number;
  source_commit: string | null;
  warnings: ColumnType<string[], string[] | string | undefined, string[] | string>;
  created_at: Timestamp;
  /** The scan's highest severity, or 'none'; null for versions created before the scan (rescan fills it). */
  risk: 'none' | 'low' | 'medium' | 'high' | null;
  /** The scan's findings (contracts' ScanFinding), in file and line order. */
  findings: ColumnType<
    Array<Record<string, unknown>>,
    Array<Record<string, unknown>> | string | undefined,
    Array<Record<string, unknown>> | string
  >;
  scanned_at: NullableTimestamp;
  /** The indexing run that created the version (the link to its publish run); null before it was kept. */
  indexing_run_id: ColumnType<string | null, string | null | undefined, never>;
}

/** Every public key that ever signed versions (issue 30); never deleted, so old signatures verify. */
export interface RegistrySigningKeysTable {
  keyid: string;
  algorithm: 'ed25519';
  /** Base64 of the SPKI DER. */
  public_key: string;
  created_at: Generated<Date>;
  /** When the key stopped being trusted for new signatures; null while current. */
  expires_at: NullableTimestamp;
}

/** The registry's signature of a version, over `@scope/name@version:integrity` (base64 Ed25519). */
export interface VersionSignaturesTable {
  version_id: string;
  keyid: string;
  signature: string;
  created_at: Generated<Date>;
}

/** The registry's attestation of where a version came from: a DSSE envelope of an in-toto statement. */
/** What a CI upload's verified OIDC token said of its source (migration 2026-11-29T0630). */
export interface VersionCiUploadsTable {
  version_id: string;
  issuer: string;
  repository_url: string;
  commit: string;
  /** The skill's folder in the repository, as the uploader named it ('' for the root). */
  path: string;
  /** The run (CiRun of @pkgreg/registry's attestations). */
  run: JSONColumnType<
    {
      provider: 'github' | 'gitlab';
      workflow: { repository: string; path: string; ref: string } | null;
      ref: string | null;
      runUrl: string | null;
      sha: string | null;
      eventName: string | null;
    },
    string,
    string
  >;
  created_at: Generated<Date>;
}

export interface VersionAttestationsTable {
  version_id: string;
  keyid: string;
  envelope: JSONColumnType<
    { payloadType: string; payload: string; signatures: Array<{ keyid: string; sig: string }> },
    string,
    string
  >;
  created_at: Generated<Date>;
}

/** A leaf of the transparency log (issue 30): never updated or deleted (docs/provenance.md). */
export interface LogLeavesTable {
  /** The leaf's position: 0, 1, 2, … with no gap. */
  idx: number;
  version_id: string;
  /** `@scope/name@version sha512-…`: what the leaf hash covers. */
  entry: string;
  /** SHA-256(0x00 || entry). */
  leaf_hash: Buffer;
  created_at: Timestamp;
}

/** The hash of a complete subtree of the log: 2^level leaves from leaf idx·2^level (level 0: a leaf). */
export interface LogNodesTable {
  level: number;
  idx: number;
  hash: Buffer;
}

/** A signed tree head of the log, by its size. */
export interface LogCheckpointsTable {
  size: number;
  root_hash: Buffer;
  /** The signed note: origin, size and base64 root lines, a blank line, the signature line. */
  note: string;
  created_at: Timestamp;
}

/** A version's manifest: one row per file. */
export interface PackageVersionFilesTable {
  version_id: string;
  path: string;
  size: number;
  sha256: string;
  git_sha1: string;
  executable: Generated<boolean>;
  link_target: string | null;
}

/**
 * A dependency a version's SKILL.md declares (`metadata.dependencies`); written with its version, never
 * updated. Names a package by scope and name: it may be indexed later.
 */
export interface PackageVersionDependenciesTable {
  version_id: string;
  /** Declared order, from 0. */
  position: number;
  scope: string;
  name: string;
  /** The declared semver range; null asks for the latest version. */
  range: string | null;
}

/** Materialized view: each visible package's dense position in each list order (refreshed by registry-api). */
export interface PackageListRanksTable {
  id: string;
  name_asc: number;
  name_desc: number;
  stars_asc: number;
  stars_desc: number;
  indexed_asc: number;
  indexed_desc: number;
}

/** Visible packages' search vectors in ranking order (stars desc, scope, name); rebuilt by registry-api. */
export interface PackageSearchDocsTable {
  ord: number;
  id: string;
  search_vector: string;
}

/** Documents per search lexeme (ts_stat), for telling selective queries from broad ones. */
export interface PackageSearchLexemesTable {
  lexeme: string;
  ndoc: number;
}

/** A frequent search key's ranking positions (package_search_docs.ord) in one block; rebuilt by registry-api. */
export interface PackageSearchBlocksTable {
  key: string;
  block: number;
  ords: number[];
}

/** The ranking positions whose name (`a`) or scope (`b`) holds the search key; rebuilt by registry-api. */
export interface PackageSearchNameKeysTable {
  key: string;
  a: number[];
  b: number[];
}

/** The visible private packages in ranking order, rebuilt with the search tables (migration 2026-11-29T0300). */
export interface PackagePrivateSearchDocsTable {
  ord: number;
  id: string;
  scope: string;
  /** The result columns as the rebuild read them from packages. */
  name: string;
  description: string;
  kind: string;
  category: string | null;
  source_repo: string;
  token_count: number;
  verified: boolean;
  repo_stars: number;
  risk: string | null;
  /** The rebuild's snapshot, on ord 1 only: rows changed by a transaction it could not see are read live. */
  mark: string | null;
}

/** Positions per `<scope>/<key>` of private packages: anywhere, in the name (`a`), in name or scope (`ab`). */
/**
 * A group of private positions (registry-api search-tables.repository.ts): `scope`'s positions are also
 * stored, with those of the group's other scopes (`size` in all), under the key prefix `grp`.
 */
export interface PackagePrivateSearchGroupsTable {
  scope: string;
  grp: string;
  size: number;
}

export interface PackagePrivateSearchKeysTable {
  key: string;
  ords: number[];
  a: number[];
  ab: number[];
}

/**
 * A filter key's ranking positions in one block (`stored` of package_search_facet_stats: the key, or
 * `!key` holding the positions without it); rebuilt by registry-api.
 */
export interface PackageSearchFacetsTable {
  key: string;
  block: number;
  ords: number[];
}

/** Packages per filter key, and under which key its positions are stored; rebuilt by registry-api. */
export interface PackageSearchFacetStatsTable {
  key: string;
  docs: number;
  stored: string;
}

/** Unique downloaders of a package on one UTC day (rows before issue 26: downloads), added to by the fold. */
export interface PackageDownloadsDailyTable {
  package_id: string;
  day: ColumnType<string, string, string>;
  /** bigint; parsed to number by createDb. */
  count: number;
}

/** The downloaders the fold has counted, per UTC day and package; only today's and yesterday's are kept. */
export interface PackageDownloadersTable {
  day: ColumnType<string, string, string>;
  package_id: string;
  /**
   * int8 digest (HMAC-SHA256 under the day's key, first 8 bytes), written as a decimal string; read it
   * as `downloader::text` (createDb's int8 parser would round it to a double).
   */
  downloader: string;
}

/** The HMAC key of one UTC day's downloader digests; deleted once the day is over. */
export interface DownloadDayKeysTable {
  day: ColumnType<string, string, string>;
  key: Buffer;
}

/** Each visible package's dense position by downloads and by trending score; rebuilt by registry-api. */
export interface PackagePopularityRanksTable {
  id: string;
  downloads_asc: number;
  downloads_desc: number;
  trending_asc: number;
  trending_desc: number;
}

/** Per package_search_docs row, a bit per first character of its lexemes; rebuilt by registry-api. */
export interface PackageSearchInitialsTable {
  ord: number;
  /** int8: pg returns it as a string. */
  initials: string;
}

/** One row: the package_list_changes value the derived tables were last rebuilt at. */
export interface PackageDerivedStateTable {
  id: Generated<boolean>;
  change_counter: number;
  refreshed_at: Timestamp;
  /** package_download_changes and the UTC day the popularity ranks were last refreshed at. */
  popularity_counter: number | null;
  popularity_day: ColumnType<string | null, string | null | undefined, string | null>;
}

/** One group-committed batch of track calls: parallel arrays, folded into packages.download_count. */
export interface PackageDownloadBatchesTable {
  id: Generated<number>;
  /** NULL at a position whose package the batch did not count (keeps downloader_refs' positions). */
  package_ids: Array<string | null>;
  counts: number[];
  created_at: Timestamp;
  /** The UTC day the calls were received on (null: the commit's day). */
  day: ColumnType<string | null, string | null | undefined, string | null>;
  /** 1-based positions in package_ids, one per distinct (package, downloader) of the batch. */
  downloader_refs: number[] | null;
  /** The downloader digests (int8, as strings), parallel to downloader_refs. */
  downloaders: string[] | null;
}

export interface IndexedSourcesTable {
  id: Generated<string>;
  kind: 'github' | 'git';
  locator: string;
  source_repo: string;
  default_branch: string | null;
  etags: Json<Record<string, string>>;
  /** Repository metadata last received with the ETag in `etags` (a 304 carries no body). */
  repo_meta: JSONColumnType<
    Record<string, unknown>,
    Record<string, unknown> | string | undefined,
    Record<string, unknown> | string
  >;
  created_at: Timestamp;
  last_run_at: NullableTimestamp;
  /** The operator asked to index SKILL.md files under hidden folders and node_modules too. */
  include_hidden: Generated<boolean>;
  /** GitHub: the branch a publish asked for; null indexes the default branch. */
  ref: string | null;
  /** GitHub's repository id (survives renames and transfers); null for local git sources. */
  repository_id: number | null;
}

export interface IndexingRunsTable {
  id: Generated<string>;
  source_id: string | null;
  locator: string;
  status: Generated<'running' | 'succeeded' | 'failed'>;
  indexed: Generated<number>;
  updated: Generated<number>;
  unchanged: Generated<number>;
  delisted: Generated<number>;
  rejected: Generated<number>;
  error: string | null;
  started_at: Timestamp;
  finished_at: NullableTimestamp;
}

export interface IndexingRejectionsTable {
  id: Generated<number>;
  run_id: string;
  path: string;
  reason: string;
  created_at: Timestamp;
}

export interface MemoryEntriesTable {
  entry_id: Generated<string>;
  namespace: string;
  tier: 'stm' | 'ltm';
  content: string;
  tags: Generated<string[]>;
  metadata: Json<Record<string, string>>;
  status: Generated<'active' | 'superseded' | 'deleted'>;
  supersedes_entry_id: string | null;
  superseded_by_entry_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
  search_vector: ColumnType<string, never, never>;
  /** Identity: insertion order, the tie-break where created_at (transaction time) ties. */
  seq: ColumnType<number, never, never>;
  /** Generated: sha256 hex of the lowercased, whitespace-collapsed content (fact dedup). */
  content_fingerprint: ColumnType<string, never, never>;
}

/** One embedding per memory entry (optional semantic search), written by the runtime worker. */
export interface MemoryEmbeddingsTable {
  entry_id: string;
  /** The embedding model and its output length; rows of another model or length are not read. */
  model: string;
  dimensions: number;
  /** float32 little-endian, unit length (cosine = dot product). */
  embedding: Buffer;
  created_at: Timestamp;
}

export interface TasksTable {
  task_id: Generated<string>;
  tool_name: string;
  subject_namespace: string;
  client_id: string | null;
  canonical_run_id: Generated<string>;
  status: Generated<'queued' | 'running' | 'completed' | 'failed'>;
  input: Json<Record<string, unknown>>;
  result: Json<Record<string, unknown>> | null;
  error: Json<Record<string, unknown>> | null;
  attempts: Generated<number>;
  submitted_at: Timestamp;
  updated_at: Timestamp;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  expires_at: NullableTimestamp;
  /** What the running task is doing now (tasks/get's `statusMessage`); null before a step and once it ended. */
  status_message: string | null;
}

export interface IdempotencyRecordsTable {
  subject_namespace: string;
  tool_name: string;
  idempotency_key: string;
  request_hash: string;
  /** Null while the first call is still running. */
  result: Json<Record<string, unknown>> | null;
  created_at: Timestamp;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

/** A tunnel envelope's nonce a local runtime consumed (decisions.md, Tunnel envelope: once only). */
export interface TunnelNoncesTable {
  session_id: string;
  jti: string;
  /** The envelope's `exp`: past it the row is swept (the envelope is refused as expired by then). */
  expires_at: Timestamp;
}

/** A hosted tenant or tunnel session that belongs to a person or an organisation (exactly one). */
export interface EdgeBackendOwnersTable {
  backend_mode: 'hosted' | 'local_tunnel';
  backend_id: string;
  account_id: string | null;
  organization_id: string | null;
  created_at: Generated<Date>;
}

export interface OauthClientsTable {
  client_id: string;
  client_secret_hash: string;
  name: string;
  allowed_scopes: Generated<string[]>;
  /** Where the authorization code flow may send people back; empty: client_credentials only. */
  redirect_uris: Generated<string[]>;
  created_at: Timestamp;
  disabled_at: NullableTimestamp;
}

/**
 * A client allowed to use a hosted tenant or a tunnel session (beside those its seeded setting names).
 * `namespace` is the client's identity (decisions.md, Namespace); `client_id` is kept for people to read.
 */
export interface EdgeBackendClientsTable {
  backend_mode: 'hosted' | 'local_tunnel';
  /** The tenant, or the tunnel session id. */
  backend_id: string;
  namespace: string;
  client_id: string | null;
  created_at: Timestamp;
}

/** One row: bumped (by trigger) with every change of who may call the edge, so edges re-read it. */
export interface EdgeAccessVersionTable {
  id: Generated<boolean>;
  version: number;
}

/** What oidc-provider persists (migration 2026-11-29T0400): keyed by the SHA-256 of each id. */
export interface EdgeOauthArtifactsTable {
  /** oidc-provider's model name: Session, Interaction, AuthorizationCode, RefreshToken, Grant. */
  model: string;
  id_hash: string;
  payload: Json<Record<string, unknown>>;
  grant_id: string | null;
  uid: string | null;
  account_id: string | null;
  client_id: string | null;
  expires_at: NullableTimestamp;
  /** Set once by a conditional update: a code or refresh token used twice is seen. */
  consumed_at: NullableTimestamp;
  created_at: Generated<Date>;
}

/** A client registered by RFC 7591, expiring when unused. */
export interface EdgeDynamicClientsTable {
  client_id: string;
  metadata: Json<Record<string, unknown>>;
  /** scrypt, as oauth_clients; null for a public client. */
  secret_hash: string | null;
  registered_from: string | null;
  created_at: Generated<Date>;
  last_used_at: NullableTimestamp;
  expires_at: Timestamp;
}

/** One authorization handed from the edge (the interaction) to the registry (who decides) and back. */
export interface EdgeConsentRequestsTable {
  id_hash: string;
  interaction_uid: string;
  client_id: string;
  client_kind: 'metadata_document' | 'registered' | 'operator';
  client_name: string | null;
  client_uri: string | null;
  logo_uri: string | null;
  redirect_host: string;
  resource: string;
  scopes: string[];
  binding_hash: string;
  account_id: string | null;
  decision: 'allow' | 'deny' | null;
  decision_code_hash: string | null;
  decided_at: NullableTimestamp;
  consumed_at: NullableTimestamp;
  created_at: Generated<Date>;
  expires_at: Timestamp;
}

/** What a person allowed an app (remembered consent); revoking it refuses the app's tokens at once. */
export interface EdgeDelegationsTable {
  account_id: string;
  client_id: string;
  client_name: string | null;
  scopes: string[];
  grant_id: string | null;
  created_at: Generated<Date>;
  last_used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  /** Set by every revocation, never cleared: the app's tokens issued before it stay refused. */
  tokens_not_before: NullableTimestamp;
}

export interface OauthSigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: Json<Record<string, unknown>>;
  private_jwk: Json<Record<string, unknown>>;
  status: Generated<'active' | 'retiring' | 'retired'>;
  created_at: Timestamp;
  retired_at: NullableTimestamp;
}

export interface AuditRecordsTable {
  /** The request's time; its microsecond digits order one edge's requests of a millisecond. */
  at: Timestamp;
  request_id: string;
  namespace: string | null;
  client_id: string | null;
  method: string | null;
  tool: string | null;
  outcome: 'ok' | 'rejected' | 'error';
  reason: string | null;
  http_status: number;
  latency_ms: number;
  backend: string | null;
}

export interface QuarantinedSourcesTable {
  namespace: string;
  state: 'quarantined' | 'purged';
  reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Anyone's report of a package; read by the operator (`pnpm registry reports`). */
export interface PackageReportsTable {
  id: Generated<string>;
  package_id: string;
  reason: string;
  details: string | null;
  /** The reporting client's address (what the rate limit counts). */
  client_address: string;
  created_at: Timestamp;
}

/** A version its owner yanked: still fetchable by exact version, never chosen by a range or `latest`. */
export interface PackageVersionYanksTable {
  version_id: string;
  reason: string | null;
  yanked_at: Timestamp;
}

/** A scope belongs to the code-host account (numeric id) that first published or had indexed it. */
export interface ScopeOwnersTable {
  scope: string;
  /** bigint; the code host's account id (GitHub `owner.id`, OIDC `repository_owner_id`). */
  owner_id: number;
  /** The account's login when last seen (a renamed account keeps its scope). */
  owner_login: string;
  bound_by: 'publish' | 'index';
  bound_at: Timestamp;
  updated_at: Timestamp;
}

/** A publish (or webhook re-index): queued at the API, run by the worker's indexing job. */
export interface PublishRunsTable {
  id: Generated<string>;
  /** `owner/repo` as the code host named it at the publish. */
  repository: string;
  /** The indexer's locator (lowercased `owner/repo`). */
  locator: string;
  scope: string;
  ref: string | null;
  proof: 'oidc' | 'token' | 'webhook';
  status: Generated<'queued' | 'running' | 'succeeded' | 'failed'>;
  /** The per-skill result (contracts' PublishResult) once succeeded. */
  result: JSONColumnType<
    Record<string, unknown> | null,
    Record<string, unknown> | string | null | undefined,
    Record<string, unknown> | string | null
  >;
  error: string | null;
  indexing_run_id: string | null;
  created_at: Timestamp;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  /** Claims of the verified CI OIDC token (GitHub Actions): null unless `proof` is 'oidc'. */
  oidc_workflow_ref: string | null;
  oidc_ref: string | null;
  oidc_run_id: string | null;
  oidc_run_attempt: string | null;
  oidc_sha: string | null;
  oidc_event_name: string | null;
}

/** Per repository, the salt its webhook secret is derived from (the secret itself is never stored). */
export interface SourceWebhooksTable {
  /** bigint; the code host's repository id. */
  repository_id: number;
  /** Last known locator (lowercased `owner/repo`). */
  locator: string;
  /**
   * bigint; the code host's account id the secret was issued to (the repository's owner then); null
   * for a row from before it was recorded whose owner was never seen.
   */
  owner_id: ColumnType<number | null, number | null | undefined, number | null>;
  secret_salt: Buffer;
  created_at: Timestamp;
  rotated_at: NullableTimestamp;
}

/** better-auth's account (its own column names). `role: 'admin'` names a site administrator. */
export interface AuthUserTable {
  id: string;
  name: string;
  email: string;
  emailVerified: boolean;
  image: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  role: string | null;
  banned: boolean | null;
  banReason: string | null;
  banExpires: NullableTimestamp;
}

export interface AuthSessionTable {
  id: string;
  expiresAt: Timestamp;
  token: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  ipAddress: string | null;
  userAgent: string | null;
  userId: string;
  activeOrganizationId: string | null;
  impersonatedBy: string | null;
}

/** A sign-in identity linked to an account: `providerId` 'github' holds GitHub's numeric id in `accountId`. */
export interface AuthAccountTable {
  id: string;
  accountId: string;
  providerId: string;
  userId: string;
  accessToken: string | null;
  refreshToken: string | null;
  idToken: string | null;
  accessTokenExpiresAt: NullableTimestamp;
  refreshTokenExpiresAt: NullableTimestamp;
  scope: string | null;
  password: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface AuthOrganizationTable {
  id: string;
  name: string;
  slug: string;
  logo: string | null;
  createdAt: Timestamp;
  metadata: string | null;
  /** bigint; the linked GitHub organisation's id. */
  githubOrgId: number | null;
  githubOrgLogin: string | null;
  suspendedAt: NullableTimestamp;
}

export interface AuthMemberTable {
  id: string;
  organizationId: string;
  userId: string;
  role: 'owner' | 'admin' | 'publisher' | 'reader';
  createdAt: Timestamp;
}

export interface AuthInvitationTable {
  id: string;
  organizationId: string;
  email: string;
  role: string | null;
  status: string;
  expiresAt: Timestamp;
  createdAt: Timestamp;
  inviterId: string;
}

/** A scope's organisation or account and visibility beyond its code-host binding (scope_owners). */
export interface ScopeSettingsTable {
  scope: string;
  organization_id: string | null;
  account_id: string | null;
  visibility: Generated<'public' | 'private'>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A granular access token; the secret itself is never stored. */
export interface AccessTokensTable {
  id: Generated<string>;
  account_id: string;
  name: string;
  token_hash: Buffer;
  prefix: string;
  permission: 'read' | 'publish';
  organizations: Generated<string[]>;
  scopes: Generated<string[]>;
  packages: Generated<string[]>;
  allowed_cidrs: Generated<string[]>;
  expires_at: Timestamp;
  created_at: Timestamp;
  last_used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export interface AccountAuditEventsTable {
  /** bigint; parsed to number by createDb. */
  id: Generated<number>;
  at: Timestamp;
  actor_id: string | null;
  organization_id: string | null;
  action: string;
  target: string | null;
  details: Json<Record<string, unknown>>;
  request_id: string | null;
}

export interface TrustedPublishersTable {
  id: Generated<string>;
  scope: string;
  /** A package of the scope, or null for every package of it. */
  name: string | null;
  issuer: string;
  /** `owner/repo` as the issuer names it (GitHub `repository`, GitLab `project_path`). */
  repository: string;
  /** GitHub: the workflow file name (`publish.yml`); GitLab: the `ci_config_ref_uri` path; null: any. */
  workflow: string | null;
  environment: string | null;
  created_by: string | null;
  created_at: Timestamp;
}

export interface Database {
  auth_user: AuthUserTable;
  auth_session: AuthSessionTable;
  auth_account: AuthAccountTable;
  auth_organization: AuthOrganizationTable;
  auth_member: AuthMemberTable;
  auth_invitation: AuthInvitationTable;
  scope_settings: ScopeSettingsTable;
  access_tokens: AccessTokensTable;
  account_audit_events: AccountAuditEventsTable;
  trusted_publishers: TrustedPublishersTable;
  packages: PackagesTable;
  package_download_batches: PackageDownloadBatchesTable;
  package_list_ranks: PackageListRanksTable;
  package_search_docs: PackageSearchDocsTable;
  package_search_lexemes: PackageSearchLexemesTable;
  package_search_blocks: PackageSearchBlocksTable;
  package_search_name_keys: PackageSearchNameKeysTable;
  package_private_search_docs: PackagePrivateSearchDocsTable;
  package_private_search_keys: PackagePrivateSearchKeysTable;
  package_private_search_groups: PackagePrivateSearchGroupsTable;
  package_search_initials: PackageSearchInitialsTable;
  package_search_facets: PackageSearchFacetsTable;
  package_search_facet_stats: PackageSearchFacetStatsTable;
  package_derived_state: PackageDerivedStateTable;
  package_downloads_daily: PackageDownloadsDailyTable;
  package_downloaders: PackageDownloadersTable;
  download_day_keys: DownloadDayKeysTable;
  package_popularity_ranks: PackagePopularityRanksTable;
  content_blobs: ContentBlobsTable;
  package_versions: PackageVersionsTable;
  package_version_files: PackageVersionFilesTable;
  package_version_dependencies: PackageVersionDependenciesTable;
  package_reports: PackageReportsTable;
  indexed_sources: IndexedSourcesTable;
  indexing_runs: IndexingRunsTable;
  indexing_rejections: IndexingRejectionsTable;
  memory_entries: MemoryEntriesTable;
  memory_embeddings: MemoryEmbeddingsTable;
  tasks: TasksTable;
  idempotency_records: IdempotencyRecordsTable;
  oauth_clients: OauthClientsTable;
  oauth_signing_keys: OauthSigningKeysTable;
  /** The keys of delegation assertions: the same shape, apart from the access tokens' keys. */
  edge_delegation_keys: OauthSigningKeysTable;
  audit_records: AuditRecordsTable;
  quarantined_sources: QuarantinedSourcesTable;
  tunnel_nonces: TunnelNoncesTable;
  edge_backend_clients: EdgeBackendClientsTable;
  edge_backend_owners: EdgeBackendOwnersTable;
  registry_signing_keys: RegistrySigningKeysTable;
  version_signatures: VersionSignaturesTable;
  version_attestations: VersionAttestationsTable;
  version_ci_uploads: VersionCiUploadsTable;
  log_leaves: LogLeavesTable;
  log_nodes: LogNodesTable;
  log_checkpoints: LogCheckpointsTable;
  edge_access_version: EdgeAccessVersionTable;
  edge_oauth_artifacts: EdgeOauthArtifactsTable;
  edge_dynamic_clients: EdgeDynamicClientsTable;
  edge_consent_requests: EdgeConsentRequestsTable;
  edge_delegations: EdgeDelegationsTable;
  package_version_yanks: PackageVersionYanksTable;
  scope_owners: ScopeOwnersTable;
  publish_runs: PublishRunsTable;
  source_webhooks: SourceWebhooksTable;
}
