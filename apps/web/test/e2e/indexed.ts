import type { Db } from '@pkgreg/db';
import { indexSource } from '@pkgreg/indexer';
import { commitFiles, createRepo, type FileSpec, git, skillMd } from '@pkgreg/indexer/testing';

// Packages with versions, made the way production makes them: a real git repository per source, indexed
// by the real indexer (docs/versions.md), so every file, mode, link and archive is what the registry
// would serve. Self-contained like seed.ts: the screenshots script imports this file with Node's type
// stripping.

/** A small PNG (a 1x1 transparent pixel): binary by name. */
export const PNG_BYTES = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

/** Bytes with NUL in them under a name that says nothing: binary by the text check alone. */
export const WEIGHTS_BYTES = Buffer.from([0x70, 0x6b, 0x67, 0x00, 0x01, 0x02, 0x00, 0xff, 0x10, 0x00]);

/** A text file over the viewer's 256 KiB preview: 4,000 lines of 80 bytes. */
export const BIG_TEXT = Array.from(
  { length: 4000 },
  (_, i) =>
    `line ${String(i + 1).padStart(5, '0')} ${'lorem ipsum dolor sit amet '.repeat(3).slice(0, 68)}\n`,
).join('');

export const PAGE_HTML =
  '<!doctype html>\n<title>hostile</title>\n<script>window.__pwned = "html"; alert("html")</script>\n<h1>Not rendered</h1>\n';

export const FORMS_MD = `# Filling forms

Use [fill_form.py](../scripts/fill_form.py) for AcroForms, or read the [upstream guide](https://example.com/pdf).

<script>window.__pwned = 'forms-script'</script>

<img src="x" alt="a broken image" onerror="window.__pwned = 'forms-img'">

| Field | Kind |
|---|---|
| name | text |
`;

export const EXTRACT_V1 = '#!/bin/sh\nset -eu\npdftotext "$1" -\n';
export const EXTRACT_V2 = '#!/bin/sh\nset -eu\npdftotext -layout "$1" -\n';

/** Over agentskills.io's 1,024 characters: indexed with a warning (issue 17). */
export const LONG_DESCRIPTION =
  `Fill, split and extract PDF forms. ${'Works with AcroForms, XFA and scanned pages. '.repeat(24)}`.trim();

function pdfSkillMd(version: string, description: string): string {
  return skillMd(
    ['name: pdf', `description: ${description}`, 'license: MIT', `version: ${version}`],
    `# PDF\n\nRun [the extractor](scripts/extract.sh) and read [the forms guide](references/forms.md).\n\nVersion ${version} of the skill.\n`,
  );
}

/** `@tools/pdf`: version 1.0.0, then 1.1.0 (a new script, a changed one, a description too long). */
export async function indexPdfSkill(db: Db, root: string): Promise<{ repo: string }> {
  const files: Record<string, FileSpec> = {
    'pdf/SKILL.md': pdfSkillMd('1.0.0', 'Fill, split and extract PDF forms.'),
    'pdf/scripts/extract.sh': { content: EXTRACT_V1, executable: true },
    'pdf/scripts/fill_form.py': 'import sys\n\n\ndef main() -> None:\n    print(sys.argv)\n',
    'pdf/references/forms.md': FORMS_MD,
    'pdf/assets/logo.png': PNG_BYTES,
    'pdf/assets/model.weights': WEIGHTS_BYTES,
    'pdf/LICENSE': 'MIT License\n\nCopyright (c) 2026 Tools\n',
    'pdf/page.html': PAGE_HTML,
    'pdf/guide.md': { symlink: 'references/forms.md' },
    'pdf/data/big.txt': BIG_TEXT,
    'pdf/empty.txt': '',
  };
  const repo = createRepo(root, 'tools', 'pdf-skills', files);
  git(repo, 'remote', 'add', 'origin', 'https://github.com/tools/pdf-skills.git');
  const index = () => indexSource({ db }, { kind: 'git', locator: repo, owner: 'tools' });
  await expectIndexed(index(), '@tools/pdf 1.0.0');
  commitFiles(repo, {
    'pdf/SKILL.md': pdfSkillMd('1.1.0', LONG_DESCRIPTION),
    'pdf/scripts/extract.sh': { content: EXTRACT_V2, executable: true },
    'pdf/scripts/merge.sh': {
      content: '#!/bin/sh\nqpdf --empty --pages "$@" -- out.pdf\n',
      executable: true,
    },
  });
  await expectIndexed(index(), '@tools/pdf 1.1.0');
  return { repo };
}

/** `@tools/many`: 81 files in 8 folders, past the tree's 60 that start open. */
export async function indexManyFilesSkill(db: Db, root: string): Promise<void> {
  const files: Record<string, FileSpec> = {
    'many/SKILL.md': skillMd(['name: many', 'description: A skill with many reference files.']),
  };
  for (let part = 1; part <= 8; part++) {
    for (let n = 1; n <= 10; n++) {
      const name = `file-${String(n).padStart(2, '0')}.txt`;
      files[`many/data/part-${part}/${name}`] = `part ${part}, ${name}\n`;
    }
  }
  const repo = createRepo(root, 'tools', 'many-skills', files);
  await expectIndexed(indexSource({ db }, { kind: 'git', locator: repo, owner: 'tools' }), '@tools/many');
}

export const CODE_REVIEW_CHECKLIST = `# Review checklist

- [ ] Every new branch of logic has a test
- [ ] Errors are handled, not swallowed
- [ ] No secrets in the diff
`;

/**
 * `@acme/code-review` as a real source (the screenshots' package): 2.0.0, then 2.1.0 with `skillMd`.
 * Its repository is `acme/review-skills`: indexing a source delists that repository's packages it no
 * longer finds, so it must not share `acme/skills` with the inserted packages.
 */
export async function indexCodeReview(db: Db, root: string, skillMdText: string): Promise<void> {
  const repo = createRepo(root, 'acme', 'review-skills', {
    'skills/code-review/SKILL.md': skillMdText.replace('version: "2.1.0"', 'version: "2.0.0"'),
    'skills/code-review/references/checklist.md': CODE_REVIEW_CHECKLIST,
    'skills/code-review/scripts/diff-stats.sh': {
      content: '#!/bin/sh\nset -eu\ngit diff --staged --stat\n',
      executable: true,
    },
    'skills/code-review/assets/severity.png': PNG_BYTES,
  });
  git(repo, 'remote', 'add', 'origin', 'https://github.com/acme/review-skills.git');
  const index = () => indexSource({ db }, { kind: 'git', locator: repo, owner: 'acme' });
  await expectIndexed(index(), '@acme/code-review 2.0.0');
  commitFiles(repo, {
    'skills/code-review/SKILL.md': skillMdText,
    'skills/code-review/references/severity.md':
      '# Severity\n\n- **blocker**: must fix before merge\n- **nit**: optional\n',
  });
  await expectIndexed(index(), '@acme/code-review 2.1.0');
}

async function expectIndexed(
  run: Promise<{ status: string; rejected: number }>,
  what: string,
): Promise<void> {
  const summary = await run;
  if (summary.status !== 'succeeded' || summary.rejected !== 0) {
    throw new Error(`indexing ${what} failed: ${JSON.stringify(summary)}`);
  }
}
