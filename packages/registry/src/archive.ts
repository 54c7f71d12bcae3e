/**
 * @pkgreg/registry/archive: a version's archive format alone (what `pkgreg publish <folder>` packs and
 * the registry reads back), without the database: the CLI bundles this entry point and nothing else of
 * the package.
 */

export {
  type ArchiveFile,
  type ArchiveLimits,
  type ArchiveProblem,
  type ArchiveRead,
  readSkillArchive,
  tarBound,
} from './versions/skill-archive.js';
export { buildArchive, type FileMode, type ManifestFile, sriSha512 } from './versions/versioning.js';
