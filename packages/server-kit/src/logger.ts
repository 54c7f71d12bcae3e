import { type Logger, pino } from 'pino';

export type { Logger };

// Tokens, secrets and Authorization headers never reach a log line (STYLE.md, Habits).
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
];

export function createLogger(name: string, level: string): Logger {
  return pino({ name, level, redact: { paths: REDACT, censor: '[redacted]' } });
}
