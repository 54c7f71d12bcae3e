// Exit codes are part of the CLI's interface: documented in `pkgreg --help` and README.md.
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  notFound: 3,
  unavailable: 4,
  integrity: 5,
  /** publish finished, but some skills were rejected (the output says why). */
  rejected: 6,
  /** A quarantined package, or a high-risk version without --allow-risk (docs/risk-scan.md). */
  refused: 7,
  /**
   * Credentials refused or missing (docs/cli-auth.md): the registry refused the token (401), or a
   * command that needs one (whoami, token) has none.
   */
  auth: 8,
  /**
   * A registry signature that fails (docs/provenance.md, "Verifying signatures"): invalid, by an unknown
   * key, by a key expired before the version was created, or missing while the registry publishes keys.
   */
  signature: 9,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODES_HELP = `Exit codes:
  0  success
  1  error (bad config or lockfile, refused write, the registry rejected the request or the
     proof of ownership, a publish run that failed, a dependency conflict or cycle, removing
     a package another installed one needs)
  2  usage error (unknown command or option, invalid name, version, range or agent)
  3  package or version not found
  4  registry unavailable (network error, timeout, 5xx after retries, malformed response)
  5  integrity mismatch (an archive or manifest that does not match, a site's artifact whose
     digest is not its index's, a path escaping the skill folder, a folder to write or delete
     reached through a symbolic link or merged with another by case, a file modified locally,
     content differing from pkgreg-lock.json)
  6  publish finished, but some skills were rejected (the output says why)
  7  refused for risk: the package is quarantined by the registry, or the version's risk scan
     found high-risk content and --allow-risk was not given (named, restored from the
     lockfile, a dependency or an update)
  8  credentials refused or missing: the registry refused your token (run pkgreg login), or
     whoami / token without one (a package pkgreg-lock.json names that is not found is exit 3;
     without a token its message says it may be private: pkgreg login, or set PKGREG_TOKEN)
  9  signature check failed: a version's registry signature does not verify, is by an
     unknown key or one expired before the version was created, or is missing while the
     registry publishes keys (install refuses it unless --no-verify; verify reports it)`;

/** The one error type of the CLI: a single line for stderr, an exit code, optional detail for --verbose. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  readonly detail: string | undefined;

  constructor(exitCode: ExitCode, message: string, detail?: string) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.detail = detail;
  }
}

export function usageError(message: string): CliError {
  return new CliError(EXIT.usage, message);
}
