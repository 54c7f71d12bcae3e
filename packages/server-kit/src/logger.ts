import { type DestinationStream, type Logger, pino } from 'pino';
import { NO_TRACE_FIELDS, traceLogFields } from './tracing.js';

export type { Logger };

// Tokens, secrets and Authorization headers never reach a log line: logs are shipped and kept where
// credentials must not be.
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'token',
  'accessToken',
  'access_token',
  'clientSecret',
  'client_secret',
  'secret',
  'password',
  '*.token',
  '*.secret',
  '*.client_secret',
  '*.password',
  '*.authorization',
  '*.accessToken',
  '*.access_token',
  '*.clientSecret',
];

/**
 * `destination` defaults to stdout; tests pass a stream to read what would be logged. A line logged
 * inside a traced request or job carries its trace_id and span_id (tracing.ts).
 */
export function createLogger(name: string, level: string, destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    redact: { paths: REDACT, censor: '[redacted]' },
    mixin: traceLogFields,
    // pino's default merge assigns the line's fields onto the mixin's object; the shared empty one is
    // passed by instead, which is what pino does with no mixin at all.
    mixinMergeStrategy: (fields: object, traceFields: object) =>
      traceFields === NO_TRACE_FIELDS ? fields : Object.assign(traceFields, fields),
  };
  return destination ? pino(options, destination) : pino(options);
}
