import { QUARANTINED_INSTALL_MESSAGE, type ScanFinding } from '@pkgreg/contracts';
import { CliError, EXIT } from './errors.js';

// What install does with the registry's risk scan (docs/risk-scan.md): a quarantined package and a
// high-risk version are refused (exit 7) unless --allow-risk; a medium-risk version is installed with a
// warning on stderr naming its findings, and so is a version never scanned (risk null: "not scanned",
// never "none"). Named installs, lockfile restores, dependencies and updates all pass these gates.

/** How `info` shows a risk of null: the version was never scanned, which says nothing about it. */
export const NOT_SCANNED = 'not scanned (the registry has not scanned this version)';

/** The warning for a version the registry never scanned. */
export function notScanned(label: string): string {
  return `${label} was not scanned for risk by the registry (risk: not scanned); review its files before you use it`;
}

/** The warning for a deprecated package, with the owner's message. */
export function deprecatedNote(name: string, message: string | null | undefined): string {
  return `warning: ${name} is deprecated${message ? `: ${message}` : '; consider an alternative'}`;
}

/** The warning for a yanked version (reached only by an exact version: typed, or locked). */
export function yankedNote(label: string, reason: string | null | undefined): string {
  return `warning: ${label} is yanked by its owner${reason ? ` (${reason})` : ''}`;
}

/** How many findings a warning names before "and N more". */
const SHOWN = 5;

export function findingLines(findings: ScanFinding[], atLeast: 'medium' | 'low' = 'medium'): string[] {
  const order = { low: 1, medium: 2, high: 3 } as const;
  const shown = findings.filter((f) => order[f.severity] >= order[atLeast]);
  const lines = shown
    .slice(0, SHOWN)
    .map((f) => `  ${f.severity} ${f.rule} ${f.file}${f.line === null ? '' : `:${f.line}`}: ${f.excerpt}`);
  if (shown.length > SHOWN) lines.push(`  … and ${shown.length - SHOWN} more (pkgreg info shows them all)`);
  return lines;
}

/** Refuses a quarantined package: the operator's reason, exit 7. */
export function refuseQuarantined(name: string, status: string, reason: string | null | undefined): void {
  if (status !== 'quarantined') return;
  throw new CliError(EXIT.refused, `${name}: ${QUARANTINED_INSTALL_MESSAGE}${reason ? ` (${reason})` : ''}`);
}

/** Refuses a high-risk version unless allowed; warns for medium (and for high when allowed). */
export function checkVersionRisk(
  name: string,
  version: { version: string; risk: string | null; findings: ScanFinding[] },
  allowRisk: boolean,
  warn: (line: string) => void,
): void {
  const label = `${name}@${version.version}`;
  if (version.risk === null) {
    warn(`warning: ${notScanned(label)}`);
    return;
  }
  if (version.risk !== 'high' && version.risk !== 'medium') return;
  if (version.risk === 'high' && !allowRisk) {
    warn(`${label} has high-risk findings:`);
    for (const line of findingLines(version.findings)) warn(line);
    throw new CliError(
      EXIT.refused,
      `${label}: high risk, not installed; review the findings (pkgreg info ${name}), then use --allow-risk to install anyway`,
    );
  }
  warn(
    `warning: ${label} has ${version.risk}-risk findings${version.risk === 'high' ? ' (--allow-risk)' : ''}:`,
  );
  for (const line of findingLines(version.findings)) warn(line);
}
