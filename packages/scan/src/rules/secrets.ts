import { lintSource } from '@secretlint/core';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintCoreConfig } from '@secretlint/types';
import type { Lines } from '../text.js';
import type { RawFinding } from '../types.js';
import { PKGREG_TOKEN_RULE_ID, pkgregTokenRule } from './pkgreg-token-rule.js';

// Credentials and private keys, found by secretlint's recommended preset (a maintained rule set: AWS,
// GCP, GitHub, GitLab, Slack, npm, OpenAI, Anthropic, private keys, connection strings, …) rather than
// regular expressions of our own.

const CONFIG: SecretLintCoreConfig = {
  rules: [
    { id: '@secretlint/secretlint-rule-preset-recommend', rule: recommended },
    { id: PKGREG_TOKEN_RULE_ID, rule: pkgregTokenRule },
  ],
};

export interface SecretInput {
  path: string;
  text: string;
  lines: Lines;
}

export interface SecretHit {
  path: string;
  line: number;
  /** Offsets within the line of the secret, for masking every excerpt of that line. */
  start: number;
  end: number;
  /** secretlint's rule, e.g. `@secretlint/secretlint-rule-github`. */
  ruleId: string;
}

/** Rules that read the file name (package.json, .npmrc, a service-account .json) get files alone. */
const NAMED = /(?:^|\/)(?:package(?:-lock)?\.json|\.npmrc)$|\.json$/i;

async function lint(text: string, name: string) {
  // The file path only selects rules; `.p12` would make the GCP rule read the path from disk.
  const ext = (/\.[^./]+$/.exec(name)?.[0] ?? '').replace(/^\.p12$/i, '.bin');
  return lintSource({
    source: { content: text, filePath: `/skill/${name}`, ext, contentType: 'text' },
    // Unmasked so `data` names the secret (its exact place is found from it: a rule's range can be off);
    // secretlint's messages, which quote it, are never shown.
    options: { config: CONFIG, maskSecrets: false, noPhysicFilePath: true },
  });
}

/**
 * Every secret in the files. Files are linted together (one secretlint call per version, joined by
 * blank lines) except those whose rules depend on the file name; a call costs ~0.3 ms before any text.
 */
export async function findSecrets(files: SecretInput[]): Promise<SecretHit[]> {
  const hits: SecretHit[] = [];
  const toHit = (file: SecretInput, rangeStart: number, rangeEnd: number, ruleId: string, data: unknown) => {
    // The secret itself, where the rule says what it is: its range (some rules report the match's start
    // with the secret's length) is only a hint of where to look.
    const secret = secretOf(data);
    let offset = rangeStart;
    let end = rangeEnd;
    if (secret) {
      const near = file.text.indexOf(secret, Math.max(0, rangeStart - 512));
      const at = near >= 0 ? near : file.text.indexOf(secret);
      if (at >= 0) {
        offset = at;
        end = at + secret.length;
      }
    }
    const line = file.lines.lineOf(offset);
    const lineStart = file.lines.starts[line - 1] ?? 0;
    const lineEnd = lineStart + file.lines.line(line).length;
    hits.push({
      path: file.path,
      line,
      start: offset - lineStart,
      end: Math.min(end, lineEnd) - lineStart,
      ruleId,
    });
  };
  const joined: SecretInput[] = [];
  for (const file of files) {
    if (!NAMED.test(file.path)) {
      joined.push(file);
      continue;
    }
    const result = await lint(file.text, file.path);
    for (const m of result.messages) toHit(file, m.range[0], m.range[1], m.ruleId, m.data);
  }
  if (joined.length > 0) {
    const starts: number[] = [];
    let text = '';
    for (const file of joined) {
      starts.push(text.length);
      text += `${file.text}\n\n`;
    }
    const result = await lint(text, 'skill.txt');
    for (const m of result.messages) {
      let i = starts.length - 1;
      while (i > 0 && (starts[i] as number) > m.range[0]) i -= 1;
      const file = joined[i] as SecretInput;
      const base = starts[i] as number;
      toHit(file, m.range[0] - base, Math.min(m.range[1] - base, file.text.length), m.ruleId, m.data);
    }
  }
  return hits;
}

/** The longest string value of a message's data (KEY, TOKEN, URL, …): the secret. */
function secretOf(data: unknown): string | null {
  if (!data || typeof data !== 'object') return null;
  let best: string | null = null;
  for (const [key, value] of Object.entries(data)) {
    if (typeof value !== 'string' || key === 'typeName' || key === 'FILE_NAME' || value.length < 8) continue;
    if (!best || value.length > best.length) best = value;
  }
  // A multi-line secret (a private key) is masked from its start to the end of its first line.
  return best?.split('\n')[0] ?? null;
}

const KIND: Record<string, string> = {
  privatekey: 'a private key',
  aws: 'an AWS credential',
  gcp: 'a GCP service-account key',
  github: 'a GitHub token',
  gitlab: 'a GitLab token',
  slack: 'a Slack token or webhook',
  npm: 'an npm token',
  openai: 'an OpenAI API key',
  anthropic: 'an Anthropic API key',
  basicauth: 'a password in a URL',
  'database-connection-string': 'a database password',
  [PKGREG_TOKEN_RULE_ID]: 'a pkgreg access token',
};

export function secretFinding(hit: SecretHit, lineText: string): RawFinding {
  const short = hit.ruleId.replace(/^@secretlint\/secretlint-rule-/, '');
  return {
    rule: 'secret',
    severity: 'high',
    file: hit.path,
    line: hit.line,
    text: lineText,
    column: hit.start,
    message: `${KIND[short] ?? `a credential (${short})`} in the file (secretlint)`,
  };
}
