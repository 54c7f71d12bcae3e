// @pkgreg/memory: the public memory service behind pkgreg.memory.v1.* (mcp-edge.md, decisions.md).
// Every function takes `db` (the Kysely instance or a transaction) first. Explicit named exports only.

export { type DbOrTx, inTransaction } from './db.js';
export {
  createEmbedder,
  decodeVector,
  type Embedder,
  type EmbedderConfig,
  type EmbedFailure,
  type EmbedOutcome,
  encodeVector,
  normalize,
  similarity,
} from './embeddings/embedding-client.js';
export {
  EmbeddingError,
  type EmbedEntriesResult,
  embedEntries,
  embedRecentEntries,
  readEmbeddings,
} from './embeddings/embeddings.service.js';
export {
  findActiveByContent,
  insertEntries,
  listActiveWindow,
  type NewMemoryEntry,
  type SupersedeManyResult,
  supersedeMany,
} from './entries/compaction.service.js';
export { createEntryReader, type EntryReader } from './entries/entries.repository.js';
export {
  beginNamespaceWrite,
  deleteEntry,
  ENTRY_NOT_FOUND_MESSAGE,
  type EntryAccessOptions,
  getEntry,
  putEntry,
} from './entries/entries.service.js';
export { toMemoryEntry } from './entries/entry.mapper.js';
export { extractSearchTerms, MAX_SEARCH_TERMS, MAX_TERM_LENGTH } from './entries/search-terms.js';
export { type MemoryEnv, type MemorySettings, memoryEnvShape, memorySettings } from './env.js';
export { canonicalJson, requestHash } from './idempotency/canonical-json.js';
export { deleteExpiredIdempotencyRecords } from './idempotency/idempotency.repository.js';
export {
  IDEMPOTENCY_IN_PROGRESS_MESSAGE,
  IDEMPOTENCY_REUSED_MESSAGE,
  IDEMPOTENCY_TTL_SECONDS,
  type IdempotencyOptions,
  type IdempotencyRequest,
  withIdempotency,
} from './idempotency/idempotency.service.js';
export {
  assertNotQuarantined,
  getQuarantineState,
  listQuarantined,
  type PurgeResult,
  purgeNamespace,
  type QuarantineRecord,
  type QuarantineState,
  quarantineNamespace,
  releaseNamespace,
} from './quarantine/quarantine.service.js';
export { type SearchEntriesArgs, type SearchOptions, searchEntries } from './search/search.service.js';
export {
  DEFAULT_SEARCH_SETTINGS,
  type SearchSettings,
  scoreWeights,
  searchSettings,
} from './search/search-settings.js';
