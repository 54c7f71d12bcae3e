import type { Command } from 'commander';
import type { InfoOptions } from '../commands/info.js';
import { createContext } from '../context.js';
import { dependencyTree, treeLines } from '../dependency-tree.js';
import { CliError, EXIT } from '../errors.js';
import { parsePackageArg } from '../names.js';
import { formatCount } from '../output.js';
import { NOT_SCANNED, notScanned } from '../risk.js';
import { oneLine } from '../terminal-text.js';

/** The risk line: the level and how many findings, or that the version was not scanned (never "none"). */
function riskText(risk: string | null, findings: number): string {
  if (risk === null) return NOT_SCANNED;
  if (risk === 'none') return 'none (the scan found nothing)';
  return `${risk} (${findings} ${findings === 1 ? 'finding' : 'findings'}, below)`;
}

function list(values: string[]): string {
  return values.length ? values.join(', ') : '-';
}

export async function info(input: InfoOptions, command: Command): Promise<void> {
  const ref = parsePackageArg(input.name);
  const ctx = await createContext(command);
  const pkg = await ctx.client.detail(ref.scope, ref.name);
  if (pkg.status === 'delisted') throw new CliError(EXIT.notFound, `${ref.full}: Package not found`);
  // Each range resolved as install would (one request or two per package version, each made once).
  const tree = await dependencyTree(ctx, ref.full, pkg.dependencies);
  if (input.json) {
    ctx.json({ ...pkg, dependencyTree: tree });
    return;
  }
  if (pkg.status === 'deprecated') {
    ctx.warn(`${ref.full} is deprecated${pkg.deprecationMessage ? `: ${pkg.deprecationMessage}` : ''}`);
  }
  if (pkg.status === 'quarantined') {
    ctx.warn(
      `${ref.full} is quarantined by the registry${pkg.quarantineReason ? `: ${pkg.quarantineReason}` : ''}`,
    );
  }
  if (pkg.risk === null) ctx.warn(notScanned(pkg.version ? `${ref.full}@${pkg.version}` : ref.full));
  const source = pkg.sourcePath
    ? `${pkg.sourceRepo} (${pkg.sourcePath}, ${pkg.sourceRef})`
    : `${pkg.sourceRepo} (${pkg.sourceRef})`;
  const fields: [string, string][] = [
    ['Kind', pkg.kind],
    ['Version', pkg.version ?? '-'],
    ['Source', source],
    ['Repository', pkg.repoUrl ?? '-'],
    ['License', pkg.license ?? '-'],
    ['Author', pkg.author ?? '-'],
    ['Stars', formatCount(pkg.repoStars)],
    ['Downloads', formatCount(pkg.downloadCount)],
    ['Tokens', formatCount(pkg.tokenCount)],
    ['Files', formatCount(pkg.fileCount)],
    ['Allowed tools', list(pkg.allowedTools)],
    ['Compatibility', list(pkg.compatibility)],
    [
      'Status',
      pkg.status !== 'deprecated'
        ? pkg.status
        : pkg.deprecationMessage
          ? `deprecated: ${pkg.deprecationMessage}`
          : 'deprecated (no longer maintained; avoid for new installs)',
    ],
    ['Risk', riskText(pkg.risk, pkg.findings.length)],
    ['Verified', pkg.verified ? 'yes' : 'no'],
    ['Last indexed', pkg.lastIndexedAt],
  ];
  // Registry text, each value on its own line: no value can forge another line (terminal-text.ts).
  ctx.out(`${ref.full}${pkg.verified ? ' ✓' : ''}`);
  if (pkg.description) ctx.out(oneLine(pkg.description));
  ctx.out('');
  const width = Math.max(...fields.map(([label]) => label.length)) + 1;
  for (const [label, value] of fields) ctx.out(`${`${label}:`.padEnd(width)} ${oneLine(value)}`);
  // What the indexer tolerated in the latest version: one per line, under the others.
  const [first, ...rest] = pkg.warnings.map(oneLine);
  ctx.out(`${'Warnings:'.padEnd(width)} ${first ?? '-'}`);
  for (const warning of rest) ctx.out(`${''.padEnd(width)} ${warning}`);
  // What the latest version needs, and what that needs (README: Dependencies).
  ctx.out(`${'Dependencies:'.padEnd(width)} ${tree.length === 0 ? '-' : ''}`.trimEnd());
  for (const line of treeLines(tree)) ctx.out(oneLine(line));
  if (pkg.dependantCount > 0)
    ctx.out(
      `${'Dependants:'.padEnd(width)} ${formatCount(pkg.dependantCount)} (packages whose latest version needs it)`,
    );
  // The latest version's risk scan: every finding, with its file and line and the line's excerpt.
  if (pkg.findings.length > 0) {
    ctx.out('');
    ctx.out('Findings:');
    for (const f of pkg.findings) {
      ctx.out(
        oneLine(
          `  ${f.severity.padEnd(6)} ${f.rule}  ${f.file}${f.line === null ? '' : `:${f.line}`}  ${f.message}`,
        ),
      );
      ctx.out(`         ${oneLine(f.excerpt)}`);
    }
  }
}
