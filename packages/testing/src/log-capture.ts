/** What an app logged, through the destination handed to its logger (pino's `{ write(line) }`). */
export interface LogCapture {
  /** Pass to createLogger(name, level, destination), or as pino's destination. */
  destination: { write(line: string): void };
  /** Each line as written, without its newline. */
  readonly lines: readonly string[];
  /** Each JSON line, parsed (what pino writes); other lines are only in `lines`. */
  readonly records: ReadonlyArray<Record<string, unknown>>;
  /** The secrets of `candidates` that appear in any line (JSON-escaped forms included). */
  leaked(candidates: Iterable<string>): string[];
}

export function captureLogs(): LogCapture {
  const lines: string[] = [];
  const records: Array<Record<string, unknown>> = [];
  return {
    destination: {
      write(chunk: string) {
        for (const line of String(chunk).split('\n')) {
          if (!line) continue;
          lines.push(line);
          try {
            records.push(JSON.parse(line) as Record<string, unknown>);
          } catch {
            // not a JSON log line: kept in `lines` only
          }
        }
      },
    },
    lines,
    records,
    leaked(candidates) {
      const text = lines.join('\n');
      // Tokens and secrets are runs of these characters, and a log line holds one between quotes,
      // spaces or `=`: one pass splits the text into runs, so a large run's log is checked against
      // thousands of secrets in linear time. Anything else is searched for as it is.
      const runs = new Set(text.split(/[^A-Za-z0-9._~+/-]+/));
      const found = new Set<string>();
      for (const secret of candidates) {
        const bare = secret.replace(/=+$/, '');
        if (!bare) continue;
        const hit = /^[A-Za-z0-9._~+/-]+$/.test(bare)
          ? runs.has(bare)
          : text.includes(secret) || text.includes(JSON.stringify(secret).slice(1, -1));
        if (hit) found.add(secret);
      }
      return [...found];
    },
  };
}
