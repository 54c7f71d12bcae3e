/**
 * @pkgreg/registry: the registry's domain, filed by what it is (docs/decisions.md, Project and tooling,
 * says what stays in the API and why).
 *
 * - `scopes/`: how a scope is bound to its owner (the code host's account id), and scope names.
 * - `publish-runs/`: the record of a publish, from the API's 202 to the worker's result.
 * - `packages/`: package rows: what an indexing run writes, owners' deprecation, operator removal.
 * - `versions/`: immutable versions and their files: version strings and archives (`versioning.ts`),
 *   writing what a source prepared (`prepared-versions.service.ts`), yanks, the risk rescan.
 * - `dependencies/`: what a version declares, the counts kept on packages, both directions as read.
 * - `content/`: content-addressed bytes (every file and archive, once per SHA-256).
 * - `access/`: who may read which private packages (a reader's `ReadAccess` and its SQL condition).
 *
 * The indexer reads sources and hands prepared versions to `writePreparedVersions`; the API serves
 * these functions over HTTP; the worker's indexing job reports to publish runs with them.
 */

export {
  canRead,
  isPublicOnly,
  PUBLIC_ONLY,
  privateReadableSql,
  type ReadAccess,
  readableBy,
  readableSql,
} from './access/read-access.js';
export {
  type BlobCollection,
  type CollectBlobsOptions,
  type ContentStore,
  collectUnreferencedBlobs,
  createPgContentStore,
  holdBlobWriters,
  holdBlobWritersInTransaction,
  releaseBlobWriters,
  type StoredBlob,
} from './content/content-store.js';
export { gitBlobSha } from './content/git-blob-sha.js';
export {
  type DeclaredDependency,
  MAX_DEPENDENCIES,
  type ParsedDependencies,
  parseDependencies,
  unknownDependencyWarning,
} from './dependencies/declared-dependencies.js';
export {
  type DependencyChange,
  type DependencyRow,
  lockDependencyGraph,
  refreshDependencyState,
} from './dependencies/dependencies.repository.js';
export {
  latestDependencies,
  listDependants,
  type PackageKey,
  versionDependencies,
  withDependencyRefresh,
} from './dependencies/dependencies.service.js';
export {
  type DerivedPackage,
  type IndexedPackage,
  type ListItemRow,
  toPackageListItem,
} from './packages/package-values.js';
export {
  countListedOfRepo,
  deprecatePackage,
  findManagedPackage,
  findPackage,
  listedOfRepo,
  type ManagedPackage,
  type PackageRow,
  packagesOfRepo,
  removePackage,
  restorePackage,
  setHosted,
  setVerified,
  undeprecatePackage,
} from './packages/packages.repository.js';
export {
  type AttestationCheck,
  type AttestedVersion,
  BUILD_TYPE_CI_PUBLISH,
  BUILD_TYPE_CI_UPLOAD,
  BUILD_TYPE_INDEXED,
  type CiRun,
  type DsseEnvelope,
  type ExpectedProvenance,
  githubRun,
  IN_TOTO_PAYLOAD_TYPE,
  IN_TOTO_STATEMENT_TYPE,
  type ProvenanceStatement,
  preAuthEncoding,
  provenanceStatement,
  SLSA_PROVENANCE_TYPE,
  sha512HexOf,
  signStatement,
  subjectName,
  verifyAttestation,
} from './provenance/attestations.js';
export {
  type Checkpoint,
  checkpointText,
  type NoteCheck,
  noteKeyHash,
  noteVerifierKey,
  openCheckpointNote,
  publicKeyFromVerifierKey,
  signCheckpoint,
} from './provenance/checkpoint-note.js';
export { type CiUploadSource, ciUploadSourceOf, githubOriginOf } from './provenance/ci-claims.js';
export {
  appendToRange,
  type CompactRange,
  EMPTY_ROOT,
  emptyRange,
  leafHash,
  type NodeId,
  type NodeReader,
  nodeHash,
  proveConsistency,
  proveInclusion,
  rangeRoot,
  subtreesOf,
  treeHash,
  verifyConsistency,
  verifyInclusion,
} from './provenance/merkle.js';
export {
  type PublishedKey,
  publishedKeys,
  registerSigningKey,
  retireSigningKey,
  signAllVersions,
  signaturesOf,
  signPendingVersions,
  type VersionSignature,
} from './provenance/signatures.js';
export {
  keyIdOf,
  publicKeyBase64,
  publicKeyFromBase64,
  type RegistrySigner,
  signerFromPem,
  verifySignature,
  versionSignedText,
} from './provenance/signer.js';
export {
  appendToLog,
  checkpoint,
  consistencyProof,
  inclusionProof,
  type LogAppend,
  type LogEntry,
  latestCheckpoint,
  logEntries,
  logEntryText,
  logIndexOf,
  logOrigin,
  logPendingVersions,
  logRoot,
  logSize,
  type StoredCheckpoint,
  type UnloggedVersion,
  unloggedVersions,
} from './provenance/transparency-log.js';
export {
  attestationsOf,
  attestPendingVersions,
  type VersionAttestation,
} from './provenance/version-attestations.js';
export {
  createPublishRun,
  findPublishRun,
  finishPublishRun,
  type NewPublishRun,
  type PublishRunRow,
  startPublishRun,
} from './publish-runs/publish-runs.repository.js';
export {
  bindScope,
  checkPackageOwner,
  decideScope,
  type PackageOwnership,
  type ScopeClaim,
  type ScopeDecision,
  ScopeTakenError,
  scopeTakenMessage,
} from './scopes/scope-binding.service.js';
export { sanitizeScope } from './scopes/scope-names.js';
export { findScopeOfOwner, findScopeOwner, type ScopeOwnerRow } from './scopes/scope-owners.repository.js';
export {
  type NewVersionSummary,
  type PreparedVersion,
  type Rejection,
  type RunCounts,
  skillMdPath,
  type WriteInput,
  writePreparedVersions,
  ZERO_COUNTS,
} from './versions/prepared-versions.service.js';
export { type RescanOptions, type RescanSummary, rescanVersions } from './versions/rescan.js';
export {
  type ArchiveFile,
  type ArchiveLimits,
  type ArchiveProblem,
  type ArchiveRead,
  readSkillArchive,
  tarBound,
} from './versions/skill-archive.js';
export {
  type AgentSkillArchiveForm,
  buildAgentSkillArchive,
  buildArchive,
  chooseVersion,
  type FileMode,
  gzipStored,
  type ManifestFile,
  manifestDigest,
  pseudoVersion,
  sha256Hex,
  sriSha512,
  type VersionChoice,
} from './versions/versioning.js';
export {
  countVersions,
  findExactArchiveRow,
  findPackageForVersions,
  findVersionFile,
  findVersionOf,
  findVersionRow,
  listVersionFiles,
  listVersionRows,
  type VersionedPackageRow,
  type VersionHistory,
  type VersionRow,
  versionHistories,
} from './versions/versions.repository.js';
export { unyankVersion, yankVersion } from './versions/yanks.repository.js';
export { setVersionYank } from './versions/yanks.service.js';
