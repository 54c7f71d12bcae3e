export {
  type CreateDbOptions,
  createDb,
  createPool,
  type Db,
  type PgPool,
  poolOf,
  queryNamed,
  quoteIdent,
  requirePool,
} from './create-db.js';
export type {
  AuditRecordsTable,
  ContentBlobsTable,
  Database,
  IdempotencyRecordsTable,
  IndexedSourcesTable,
  IndexingRejectionsTable,
  IndexingRunsTable,
  MemoryEntriesTable,
  OauthClientsTable,
  OauthSigningKeysTable,
  PackageDerivedStateTable,
  PackageDownloadBatchesTable,
  PackageListRanksTable,
  PackageSearchDocsTable,
  PackageSearchLexemesTable,
  PackagesTable,
  PackageVersionFilesTable,
  PackageVersionsTable,
  QuarantinedSourcesTable,
  TasksTable,
  Timestamp,
  TunnelNoncesTable,
} from './database.js';
export { ensureDatabase } from './ensure-database.js';
export { type MigrateOptions, migrateToLatest } from './migrate.js';
export { migrations } from './migrations/index.js';
