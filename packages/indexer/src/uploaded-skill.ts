import { type ArchiveFile, type ContentStore, gitBlobSha } from '@pkgreg/registry';
import { type PreparedOutcome, prepareSkills } from './folder-versions.js';
import type { SkillFolder } from './skill-folders.js';
import type { RepoMeta, TreeFile } from './types.js';

// An uploaded skill folder (docs/publishing.md, "Uploading") through the same preparation as a folder
// of a repository: the SKILL.md rules, the manifest and digest, the archive, the risk scan, the license.
// Its files are the source; a hosted package has no code host, so the repository facts are the scope's.

export interface UploadedSkillInput {
  store: ContentStore;
  scope: string;
  /** The package name the upload is for: the folder's name, as a repository's folder would be. */
  name: string;
  /** Every file of the folder (readSkillArchive's, SKILL.md among them). */
  files: ArchiveFile[];
  /** The digest of the package's latest version, when it has one (no archive is built for the same files). */
  latestDigest: string | undefined;
}

/** `@scope/name`: the `sourceRepo` of a hosted package (never an `owner/repo` of a code host). */
export function hostedSourceRepo(scope: string, name: string): string {
  return `@${scope}/${name}`;
}

export async function prepareUploadedSkill(input: UploadedSkillInput): Promise<PreparedOutcome> {
  const bySha = new Map<string, Buffer>();
  const tree: Array<TreeFile & { relativePath: string }> = input.files.map((file) => {
    const sha = gitBlobSha(file.bytes);
    bySha.set(sha, file.bytes);
    return {
      path: file.path,
      relativePath: file.path,
      sha,
      size: file.bytes.length,
      mode: file.executable ? '100755' : '100644',
    };
  });
  const skillMd = tree.find((file) => file.path === 'SKILL.md');
  if (!skillMd) return { ok: false, path: 'SKILL.md', reason: 'the upload has no SKILL.md' };
  // The folder is the whole upload: a nested SKILL.md is one of its files, not a skill of its own.
  const folder: SkillFolder = { dir: '', skillMd, files: tree };
  const repo: RepoMeta = {
    owner: input.scope,
    name: input.name,
    defaultBranch: '',
    stars: 0,
    license: null,
    homepageUrl: null,
    repoUrl: null,
  };
  const [outcome] = await prepareSkills({
    source: {
      async readBlobs(shas) {
        return new Map(shas.map((sha) => [sha, bySha.get(sha) as Buffer]));
      },
    },
    store: input.store,
    folders: [folder],
    rootLicenseFiles: [],
    repo,
    scope: input.scope,
    sourceRepo: hostedSourceRepo(input.scope, input.name),
    latestDigest: () => input.latestDigest,
  });
  return outcome as PreparedOutcome;
}
