import type { Risk, ScanFinding } from '@pkgreg/contracts';
import { AlertIcon } from './icons.js';
import './risk.css';

// The registry's risk scan on the package page (docs/risk-scan.md): a badge with the shown version's
// risk, its findings with file and line (each file opens in the viewer), and the operator's quarantine.

const LABEL: Record<Risk, string> = {
  none: 'No risk found',
  low: 'Low risk',
  medium: 'Medium risk',
  high: 'High risk',
};

export function RiskBadge(props: { risk: Risk | null | undefined }) {
  const { risk } = props;
  // Never scanned is not "no risk": nothing has checked the files (issue 26).
  if (!risk) {
    return (
      <span
        class="badge risk-badge risk-unscanned"
        data-testid="risk-badge"
        data-risk="unscanned"
        title="The registry has not scanned this version: its files were not checked"
      >
        Not scanned
      </span>
    );
  }
  return (
    <span class={`badge risk-badge risk-${risk}`} data-testid="risk-badge" data-risk={risk}>
      {LABEL[risk]}
    </span>
  );
}

/** The version was never scanned (created before the scan; `pnpm registry rescan` scans it). */
export function UnscannedNotice() {
  return (
    <div class="notice notice-warning" role="note" data-testid="unscanned-notice">
      <AlertIcon width={20} height={20} />
      <div>
        <strong>The registry has not scanned this version.</strong> Its files have not been checked for
        downloads run by a shell, instructions hidden from readers, secrets or programs. Read them before
        installing.
      </div>
    </div>
  );
}

export function Findings(props: { findings: ScanFinding[]; hrefFor: (path: string) => string }) {
  const { findings, hrefFor } = props;
  if (!findings.length) return null;
  const high = findings.some((f) => f.severity === 'high');
  return (
    <section
      class={`notice risk-findings ${high ? 'notice-danger' : 'notice-warning'}`}
      data-testid="findings"
    >
      <AlertIcon width={20} height={20} />
      <div>
        <strong>
          The registry's scan found {findings.length === 1 ? 'one thing' : `${findings.length} things`} to
          check.
        </strong>{' '}
        {high
          ? 'The command-line client refuses to install this version without --allow-risk.'
          : 'Read them before installing.'}
        <ul class="finding-list">
          {findings.map((f) => (
            <li key={`${f.rule}:${f.file}:${f.line}`} data-testid="finding">
              <span class={`finding-severity risk-${f.severity}`}>{f.severity}</span>{' '}
              <span class="finding-rule">{f.rule}</span>{' '}
              {/* A file inside an archive (`a.tgz!/b.sh`) opens the archive. */}
              <a class="finding-file" href={hrefFor(f.file.split('!/')[0] as string)}>
                {f.file}
                {f.line === null ? '' : `:${f.line}`}
              </a>
              {f.encoding ? <span class="finding-encoding"> (read as {f.encoding})</span> : null}
              <span class="finding-message"> — {f.message}</span>
              <code class="finding-excerpt">{f.excerpt}</code>
            </li>
          ))}
        </ul>
      </div>
    </section>
  );
}

export function QuarantineNotice(props: { reason: string | null }) {
  return (
    <div class="notice notice-danger" role="note" data-testid="quarantine-notice">
      <AlertIcon width={20} height={20} />
      <div>
        <strong>This package is quarantined by the registry.</strong> It is out of the list and search while
        it is reviewed, its files are withheld, and the command-line client refuses to install it.
        {props.reason ? (
          <p class="quarantine-reason" data-testid="quarantine-reason">
            {props.reason}
          </p>
        ) : null}
      </div>
    </div>
  );
}
