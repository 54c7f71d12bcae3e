/** Why a run failed. `permanent` ones will fail the same way on retry (BullMQ: UnrecoverableError). */
export type IndexingErrorCode =
  | 'invalid_locator'
  | 'not_found'
  | 'unauthorized'
  | 'forbidden'
  | 'rate_limited'
  | 'conflict'
  | 'source_error';

const PERMANENT: ReadonlySet<IndexingErrorCode> = new Set([
  'invalid_locator',
  'not_found',
  'unauthorized',
  'forbidden',
  'conflict',
]);

export class IndexingError extends Error {
  override readonly name = 'IndexingError';
  readonly code: IndexingErrorCode;
  /** True when retrying cannot help. */
  readonly permanent: boolean;
  /** For `rate_limited`: when the host's budget resets. */
  readonly retryAt: Date | null;

  constructor(code: IndexingErrorCode, message: string, options: { retryAt?: Date; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.permanent = PERMANENT.has(code);
    this.retryAt = options.retryAt ?? null;
  }
}
