// Demo repositories for `pnpm dev` (`pnpm registry seed-demo`): three owners, a dozen packages of all
// four kinds, some with references/, scripts/ or assets/ so progressive disclosure shows, one deprecated.
// Layout: <owner>/<repository>/<files>; the owner directory becomes the scope.

export interface DemoRepository {
  /** `<owner>/<repository>`, relative to the demo directory. */
  path: string;
  files: Record<string, string>;
}

const fm = (lines: string[]): string => `---\n${lines.join('\n')}\n---\n`;

export const DEMO_REPOSITORIES: DemoRepository[] = [
  {
    path: 'acme-labs/agent-skills',
    files: {
      'README.md':
        '# Acme Labs agent skills\n\nEveryday engineering skills our agents use across repositories.\n',
      'skills/code-review/SKILL.md': `${fm([
        'name: code-review',
        'description: Reviews a pull request diff for correctness, readability and risky changes, and writes actionable review comments. Use when asked to review a PR, a diff or a patch.',
        'license: MIT',
        'compatibility: claude-code, codex, cursor',
        'allowed-tools: Read Grep Bash(git diff:*)',
        'metadata:',
        '  kind: skill',
        '  category: code-quality',
        '  tags: review, pull-request, quality',
        '  version: 1.4.0',
        '  author: Acme Labs',
        '  language: en',
      ])}
# Code review

Review the change the way a careful senior engineer would: first understand intent, then check
behaviour, then style.

## Steps
1. Read the PR description and the linked issue. Restate the intent in one sentence.
2. Run \`git diff --stat\` and read the files in dependency order (types, then logic, then tests).
3. For each file, walk the [review checklist](references/checklist.md).
4. Write comments as: *what* is wrong, *why* it matters, *a concrete suggestion*.
5. Finish with a verdict: approve, approve with nits, or request changes, and the top three issues.

## Rules
- Never comment on formatting a linter would catch.
- Flag missing tests for every behaviour change.
- Prefer questions over assertions when intent is unclear.
`,
      'skills/code-review/references/checklist.md': `# Review checklist

- Error paths: every failure handled or propagated, never swallowed.
- Concurrency: shared state, races, idempotency of retried work.
- Security: input validation, authorization checks, secrets in logs.
- Data: migrations reversible, indexes for new queries, no N+1.
- Tests: assert behaviour that can fail; no sleeps; isolated fixtures.
`,
      'skills/test-writer/SKILL.md': `${fm([
        'name: test-writer',
        'description: Writes focused unit and integration tests for existing code, covering happy paths, error paths and edge cases. Use when asked to add tests or raise coverage for a module.',
        'license: MIT',
        'compatibility: claude-code, codex',
        'allowed-tools: Read Write Bash(npm test:*) Bash(pnpm vitest:*)',
        'metadata:',
        '  kind: skill',
        '  category: testing',
        '  tags: testing, vitest, coverage',
        '  version: 2.0.1',
        '  author: Acme Labs',
        '  language: en',
      ])}
# Test writer

Write tests that would fail if the behaviour broke.

## Steps
1. Read the module and list its observable behaviours (inputs -> outputs, side effects, errors).
2. For each behaviour write one test named after the rule it protects.
3. Use real collaborators where cheap (databases in containers, local HTTP servers); fake only
   what you cannot run.
4. Run the suite with \`scripts/run-tests.sh\` and make sure each new test fails when you break the code.

## Avoid
- Snapshot tests of large objects.
- Asserting on log output.
- Tests that pass with the implementation deleted.
`,
      'skills/test-writer/scripts/run-tests.sh': `#!/bin/sh
# Runs the nearest package's test suite; falls back to npm when pnpm is absent.
set -eu
if command -v pnpm >/dev/null 2>&1; then exec pnpm vitest run "$@"; fi
exec npm test -- "$@"
`,
      'skills/commit-message/SKILL.md': `${fm([
        'name: commit-message',
        'description: Writes a conventional commit message from the staged diff, with a short imperative subject and a body explaining why. Use before committing.',
        'license: MIT',
        'allowed-tools: Bash(git diff --cached:*)',
        'metadata:',
        '  kind: skill',
        '  category: git',
        '  tags: git, commits, conventional-commits',
        '  version: 1.0.0',
        '  author: Acme Labs',
      ])}
# Commit message

1. Read \`git diff --cached\`.
2. Pick the type: feat, fix, refactor, perf, test, docs, build, ci, chore.
3. Subject: imperative, at most 72 characters, no trailing period.
4. Body: why the change was needed and what it trades off; wrap at 72 columns.
5. Footer: \`BREAKING CHANGE:\` when an interface changed, issue references last.
`,
      'skills/security-audit/SKILL.md': `${fm([
        'name: security-audit',
        'description: Audits a service for common vulnerabilities (injection, broken access control, secrets exposure, unsafe deserialization) and reports findings by severity. Use before a release or when handling untrusted input.',
        'license: Apache-2.0',
        'compatibility: claude-code, codex, cursor, copilot',
        'allowed-tools: Read Grep Glob',
        'metadata:',
        '  kind: skill',
        '  category: security',
        '  tags: security, owasp, audit',
        '  version: 0.9.0',
        '  author: Acme Labs Security',
        '  language: en',
      ])}
# Security audit

Work through the [OWASP Top 10 notes](references/owasp-top10.md) against the code base.

## Procedure
1. Map entry points: HTTP routes, queue consumers, CLI arguments, file parsers.
2. For each entry point trace untrusted data to sinks (SQL, shell, templates, redirects, file paths).
3. Check authorization on every route, not only authentication.
4. Search for secrets: tokens in code, in logs, in error messages.
5. Report each finding with severity (critical/high/medium/low), location, exploit sketch and fix.
`,
      'skills/security-audit/references/owasp-top10.md': `# OWASP Top 10 notes

1. Broken access control: check object ownership on every read and write.
2. Cryptographic failures: no home-made crypto, TLS everywhere, hashed secrets.
3. Injection: parameterized queries, no shell string building.
4. Insecure design: threat-model new features.
5. Security misconfiguration: defaults, verbose errors, open admin endpoints.
`,
      'skills/legacy-lint/SKILL.md': `${fm([
        'name: legacy-lint',
        'description: Runs the old TSLint rule set over TypeScript sources and explains violations. Deprecated, use the Biome or ESLint skills instead.',
        'license: MIT',
        'metadata:',
        '  kind: skill',
        '  category: code-quality',
        '  tags: lint, tslint, typescript',
        '  version: 0.3.2',
        '  status: deprecated',
        '  author: Acme Labs',
      ])}
# Legacy lint (deprecated)

TSLint is end-of-life. This skill is kept for repositories that still pin it.

1. Run \`npx tslint -p tsconfig.json\`.
2. Group violations by rule and explain the three most frequent.
3. Suggest the equivalent Biome or ESLint rule for each.
`,
    },
  },
  {
    path: 'northwind/engineering-workflows',
    files: {
      'README.md':
        '# Northwind engineering workflows\n\nMulti-step workflows and skill bundles for delivery teams.\n',
      'workflows/release-train/SKILL.md': `${fm([
        'name: release-train',
        'description: Cuts a release end to end - freeze, changelog, version bump, tag, deploy to staging, smoke test, promote to production and announce. Use when preparing a scheduled release.',
        'license: MIT',
        'compatibility: claude-code, codex',
        'allowed-tools: Read Write Bash(git:*) Bash(node scripts/changelog.mjs:*)',
        'metadata:',
        '  kind: workflow',
        '  category: release',
        '  tags: release, changelog, deployment, semver',
        '  version: 3.1.0',
        '  author: Northwind Platform Team',
        '  language: en',
      ])}
# Release train

## Stages
1. **Freeze**: confirm main is green; list merged PRs since the last tag.
2. **Changelog**: run \`node scripts/changelog.mjs <last-tag>\` and edit the draft by hand.
3. **Version**: bump per semver (breaking -> major, feature -> minor, fix -> patch).
4. **Tag**: \`git tag -s vX.Y.Z\` and push the tag.
5. **Staging**: deploy, run smoke tests, watch error rates for 15 minutes.
6. **Production**: promote the same artifact; never rebuild.
7. **Announce**: post the changelog summary to the release channel.

Stop and roll back at any stage whose checks fail.
`,
      'workflows/release-train/scripts/changelog.mjs': `// Drafts a changelog from conventional commits since the given tag.
import { execFileSync } from 'node:child_process';

const since = process.argv[2] ?? '';
const log = execFileSync('git', ['log', '--format=%s', since ? \`\${since}..HEAD\` : 'HEAD'], { encoding: 'utf8' });
const groups = { feat: [], fix: [], other: [] };
for (const line of log.split('\\n').filter(Boolean)) {
  const type = line.split(':')[0].replace(/\\(.*\\)!?$/, '');
  (groups[type] ?? groups.other).push(line);
}
for (const [type, lines] of Object.entries(groups)) {
  if (lines.length) console.log(\`## \${type}\\n\${lines.map((l) => \`- \${l}\`).join('\\n')}\\n\`);
}
`,
      'workflows/incident-response/SKILL.md': `${fm([
        'name: incident-response',
        'description: Guides an on-call engineer through an incident - triage, severity, mitigation, communication and the blameless postmortem. Use when an alert fires or users report an outage.',
        'license: CC-BY-4.0',
        'compatibility: claude-code, codex, cursor',
        'allowed-tools: Read Bash(kubectl get:*) Bash(kubectl logs:*)',
        'metadata:',
        '  kind: workflow',
        '  category: operations',
        '  tags: incident, on-call, postmortem, sre',
        '  version: 1.2.0',
        '  author: Northwind SRE',
        '  language: en',
      ])}
# Incident response

1. **Acknowledge** the page and open an incident channel.
2. **Assess severity** with the [severity levels](references/severity-levels.md).
3. **Mitigate first**: roll back, fail over or shed load before debugging root cause.
4. **Communicate** every 30 minutes: impact, current action, next update time.
5. **Resolve** when metrics are back to baseline for 30 minutes.
6. **Postmortem** within five working days: timeline, contributing factors, action items with owners.
`,
      'workflows/incident-response/references/severity-levels.md': `# Severity levels

| Level | Impact | Response |
|---|---|---|
| SEV1 | Full outage or data loss | All hands, status page, exec update hourly |
| SEV2 | Major feature degraded | On-call plus owning team |
| SEV3 | Minor degradation, workaround exists | Next business day |
`,
      'workflows/feature-delivery/SKILL.md': `${fm([
        'name: feature-delivery',
        'description: Takes a feature from ticket to production - clarify requirements, design, implement behind a flag, test, review, ship and measure. Use when starting work on a new feature.',
        'license: MIT',
        'compatibility: claude-code, codex',
        'metadata:',
        '  kind: workflow',
        '  category: delivery',
        '  tags: planning, feature-flags, delivery',
        '  version: 1.0.0',
        '  author: Northwind Platform Team',
      ])}
# Feature delivery

1. Clarify: acceptance criteria, non-goals, metrics that prove success.
2. Design: a one-page note covering data model, API changes and rollout plan.
3. Implement behind a feature flag in small, reviewable PRs.
4. Test: unit tests per rule, one end-to-end test per user journey.
5. Review with the \`code-review\` skill; fix before merge.
6. Ship: enable the flag for staff, then 10%, then everyone.
7. Measure against the success metrics; remove the flag within two sprints.
`,
      'composites/full-stack-review/SKILL.md': `${fm([
        'name: full-stack-review',
        'description: Bundles code review, security audit and test gap analysis into one pass over a pull request, producing a single prioritized report. Use for high-risk changes.',
        'license: MIT',
        'compatibility: claude-code, codex, cursor',
        'allowed-tools: Read Grep Glob Bash(git diff:*)',
        'metadata:',
        '  kind: composite',
        '  category: code-quality',
        '  tags: review, security, testing, bundle',
        '  version: 1.1.0',
        '  author: Northwind Platform Team',
        '  language: en',
      ])}
# Full-stack review

Runs three skills in order and merges their findings:

1. \`@acme-labs/code-review\` for correctness and readability.
2. \`@acme-labs/security-audit\` scoped to the changed files.
3. \`@acme-labs/test-writer\` in analysis mode: list behaviours the diff changes without tests.

Merge duplicate findings, sort by severity, and cap the report at ten items.
`,
      'composites/api-design-kit/SKILL.md': `${fm([
        'name: api-design-kit',
        'description: Designs and documents an HTTP API - resource modelling, error format, pagination, versioning - and emits an OpenAPI 3.1 skeleton. Use when adding or changing a public endpoint.',
        'license: Apache-2.0',
        'compatibility: claude-code, codex, cursor',
        'allowed-tools: Read Write',
        'metadata:',
        '  kind: composite',
        '  category: api-design',
        '  tags: api, openapi, rest, design',
        '  version: 2.3.0',
        '  author: Northwind API Guild',
        '  language: en',
      ])}
# API design kit

1. Model resources and their states before endpoints.
2. Use one error body shape everywhere (\`{error}\` plus a request id).
3. Paginate every list; document limits and defaults.
4. Start from the [OpenAPI template](assets/openapi-template.yaml) and fill paths, schemas and examples.
5. Review the design with the consumers before implementing.
`,
      'composites/api-design-kit/assets/openapi-template.yaml': `openapi: 3.1.0
info:
  title: Example API
  version: 0.1.0
paths: {}
components:
  schemas:
    Error:
      type: object
      required: [error]
      properties:
        error: { type: string }
`,
    },
  },
  {
    path: 'pkgreg-labs/agent-apps',
    files: {
      'README.md':
        '# pkgreg labs agent apps\n\nSmall agent applications with their own scripts and assets.\n',
      'apps/changelog-studio/SKILL.md': `${fm([
        'name: changelog-studio',
        'description: An agent app that turns merged pull requests into a curated, user-facing changelog with sections, highlights and upgrade notes. Use when publishing release notes.',
        'license: MIT',
        'compatibility: claude-code, codex',
        'allowed-tools: Read Write Bash(gh pr list:*) Bash(node scripts/render.mjs:*)',
        'metadata:',
        '  kind: app',
        '  category: release',
        '  tags: changelog, release-notes, github',
        '  version: 0.4.0',
        '  author: pkgreg labs',
        '  language: en',
      ])}
# Changelog studio

1. Collect merged PRs since the last release with \`gh pr list --state merged\`.
2. Classify each as feature, fix, breaking or internal; drop internal ones.
3. Write user-facing entries: what changed for the user, not how.
4. Render with \`node scripts/render.mjs\` using the [template](assets/changelog-template.md).
`,
      'apps/changelog-studio/scripts/render.mjs': `// Renders classified entries (JSON on stdin) into the markdown template.
import { readFileSync } from 'node:fs';

const entries = JSON.parse(readFileSync(0, 'utf8'));
const template = readFileSync(new URL('../assets/changelog-template.md', import.meta.url), 'utf8');
const section = (kind) => entries.filter((e) => e.kind === kind).map((e) => \`- \${e.text}\`).join('\\n');
console.log(template.replace('{{features}}', section('feature')).replace('{{fixes}}', section('fix')));
`,
      'apps/changelog-studio/assets/changelog-template.md':
        '## Highlights\n\n{{features}}\n\n## Fixes\n\n{{fixes}}\n',
      'apps/db-migration-assistant/SKILL.md': `${fm([
        'name: db-migration-assistant',
        'description: Plans and writes zero-downtime PostgreSQL schema migrations (expand, migrate, contract), with lock-safe DDL and a rollback for each step. Use when changing a production schema.',
        'license: MIT',
        'compatibility: claude-code, codex, cursor',
        'allowed-tools: Read Write Bash(psql:*)',
        'metadata:',
        '  kind: app',
        '  category: databases',
        '  tags: postgres, migrations, zero-downtime, sql',
        '  version: 1.0.0-beta.2',
        '  author: pkgreg labs',
        '  language: en',
      ])}
# DB migration assistant

1. Expand: add new columns nullable, new tables, new indexes \`concurrently\`.
2. Migrate: backfill in batches of at most 10k rows; dual-write from the application.
3. Contract: drop old columns only after a release that no longer reads them.
4. Every statement gets \`set lock_timeout = '2s'\` and a tested rollback.
`,
      'apps/dependency-doctor/SKILL.md': `${fm([
        'name: dependency-doctor',
        'description: Audits a JavaScript or Python project for outdated, vulnerable or unused dependencies and opens a prioritized upgrade plan. Use during maintenance weeks.',
        'license: MIT',
        'compatibility: claude-code, codex',
        'allowed-tools: Read Bash(npm outdated:*) Bash(npm audit:*) Bash(pip list:*)',
        'metadata:',
        '  kind: app',
        '  category: maintenance',
        '  tags: dependencies, security, upgrades',
        '  version: 0.2.0',
        '  author: pkgreg labs',
      ])}
# Dependency doctor

1. List outdated packages and known vulnerabilities.
2. Group upgrades: security first, then majors with migration guides, then the rest.
3. For each major upgrade, read the changelog and list breaking changes that touch this code.
4. Propose one PR per group with the test plan.
`,
    },
  },
];
