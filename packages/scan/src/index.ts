/**
 * `@pkgreg/scan`: the risk scan of a skill version's files (issue 19, docs/risk-scan.md).
 *
 * `scanVersion(files)` reads every file of a version (path, bytes, executable bit, link target) and
 * returns findings `{rule, severity, file, line, excerpt, message}` and the version's `risk` (the
 * highest severity, or `none`). The indexer calls it for each new version, in the run that creates it.
 */

export { ARCHIVE_LIMITS } from './archives.js';
export { decodeFile, type TextEncoding } from './decode.js';
export { findSkillFolders, readSkillFolder } from './folder.js';
export { type ScanOptions, scanVersion } from './scan.js';
export { EXCERPT_MAX, excerptOf } from './text.js';
export {
  type Finding,
  type Risk,
  RULES,
  type RuleId,
  type ScanFile,
  type ScanResult,
  type ScanStats,
  type Severity,
} from './types.js';
