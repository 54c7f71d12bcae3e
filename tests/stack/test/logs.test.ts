import { describe, expect, it } from 'vitest';
import { assertLogsClean, errorLines } from '../src/apps.js';

// The log check every stack test ends with: it must catch a secret anywhere in a line, and its own
// message must not repeat the secret (test output is kept like logs are).

const token = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJwa2NfYWJjIn0.c2lnbmF0dXJl';
const memory = 'the launch code is 0000 and nobody may know it';

describe('assertLogsClean', () => {
  it('passes lines that hold none of the secrets', () => {
    expect(() =>
      assertLogsClean(
        ['{"level":30,"msg":"request","authorization":"[redacted]"}', 'plain text'],
        [token, memory],
      ),
    ).not.toThrow();
  });

  it('fails on a secret anywhere in a line, naming which secret without showing it', () => {
    const lines = [
      '{"level":30,"msg":"ok"}',
      `{"level":40,"msg":"stored","content":${JSON.stringify(memory)}}`,
    ];
    let message = '';
    try {
      assertLogsClean(lines, [token, memory]);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('secret #1');
    expect(message).toContain('<secret>');
    expect(message).not.toContain(memory);
  });

  it('refuses secrets too short to check', () => {
    expect(() => assertLogsClean([], ['abc'])).toThrow(/shorter than 8/);
  });
});

describe('errorLines', () => {
  it('keeps pino lines at error and fatal, nothing else', () => {
    const lines = ['{"level":50,"msg":"a"}', '{"level":60,"msg":"b"}', '{"level":40,"msg":"c"}', 'not json'];
    expect(errorLines(lines)).toEqual(lines.slice(0, 2));
  });
});
