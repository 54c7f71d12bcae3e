export {
  type CallOptions,
  createRegistryClient,
  type DownloadOptions,
  type DownloadProgress,
  type FileHead,
  JSON_MAX_BYTES,
  type ListParams,
  type RegistryClient,
  type RegistryClientOptions,
  type Revalidated,
} from './client.js';
export { RegistryError, type RegistryErrorCode } from './errors.js';
export { type FetchTransportOptions, fetchTransport } from './fetch-transport.js';
export {
  archivePath,
  filePath,
  filterParams,
  packagePath,
  sourcePath,
  versionPath,
} from './paths.js';
export { backoffMs, type RetryPolicy, retryAfterMs } from './retry.js';
export {
  type BodyRead,
  type Method,
  readChunks,
  type Transport,
  TransportError,
  type TransportRequest,
  type TransportResponse,
} from './transport.js';
