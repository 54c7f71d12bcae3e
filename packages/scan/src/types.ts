import type { Risk, ScanFinding, Severity } from '@pkgreg/contracts';
import type { TextEncoding } from './decode.js';

export type { Risk, Severity };

/** One file of a version as the scan sees it. */
export interface ScanFile {
  /** Relative to the skill folder, `/`-separated. */
  path: string;
  /** The file's bytes (for a symbolic link: unused, may be empty). */
  bytes: Uint8Array;
  /** Git mode 100755. */
  executable?: boolean;
  /** A symbolic link's target; null or absent for regular files. */
  linkTarget?: string | null;
}

/** Every rule the scan has; docs/risk-scan.md says what each looks for. */
export const RULES = [
  'remote-code-execution',
  'executable-download',
  'encoded-execution',
  'encoded-blob',
  'secret',
  'secret-exfiltration',
  'network-access',
  'process-spawn',
  'unrestricted-tools',
  'hidden-instructions',
  'invisible-characters',
  'bidi-control',
  'prompt-injection',
  'symlink-escape',
  'binary-executable',
  'undecodable-script',
  'archive',
] as const;
export type RuleId = (typeof RULES)[number];

export type Finding = ScanFinding & { rule: RuleId; encoding?: TextEncoding };

export interface ScanStats {
  files: number;
  /** Text files the rules read. */
  textFiles: number;
  /** Files that are not text: binary formats and data (decode.ts); the rules read those a shell runs. */
  binaryFiles: number;
  /** Files read inside archives (zip, tar, gzip). */
  archiveFiles: number;
  /** Bytes of every regular file. */
  bytes: number;
  /** Wall time of the scan. */
  ms: number;
}

export interface ScanResult {
  risk: Risk;
  /** Sorted by file, line, rule. */
  findings: Finding[];
  stats: ScanStats;
}

/** What a rule reports before excerpts are cut and secrets masked. */
export interface RawFinding {
  rule: RuleId;
  severity: Severity;
  file: string;
  line: number | null;
  /** The text to cut the excerpt from (usually the line) and where the match starts in it. */
  text: string;
  column?: number;
  message: string;
  /** How the file was decoded, when not plain UTF-8. */
  encoding?: TextEncoding;
}
