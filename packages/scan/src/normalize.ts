import type { Segment } from './segments.js';

// Undoing the usual evasions before the command patterns look at a line: escapes (`\x63url`,
// `$'\143url'`), split strings (`c""url`, `'cu'+'rl'`, `['cu','rl'].join('')`), PowerShell's backtick
// (`i`e`x`), `${IFS}`, and variables holding a URL or a whole command (`u=https://…; curl $u | sh`,
// `$r = iwr …; iex $r`). The result is lowercase with quotes removed: fit for matching, not for display.

/** Literal values of the file's simple assignments, by variable name (case kept). */
export type Variables = Map<string, string>;

const ASSIGNMENTS: RegExp[] = [
  // sh: NAME=value, export/local/readonly/declare NAME=value
  /^\s*(?:export\s+|local\s+|readonly\s+|declare\s+(?:-\w+\s+)*)?([A-Za-z_]\w*)=(.*)$/,
  // fish: set [-gx] NAME value
  /^\s*set\s+(?:-\w+\s+)*([A-Za-z_]\w*)\s+(.*)$/,
  // PowerShell: $NAME = value, $env:NAME = value
  /^\s*\$(?:env:)?([A-Za-z_]\w*)\s*=\s*(.*)$/i,
  // JS/TS and python: const/let/var NAME = value, NAME = value
  /^\s*(?:const\s+|let\s+|var\s+)?([A-Za-z_]\w*)\s*=\s*(.*?);?\s*$/,
];

/** Variable assignments whose value is a plain literal or a command (no control flow). */
export function collectVariables(segments: Segment[]): Variables {
  const vars: Variables = new Map();
  for (const segment of segments) {
    for (const pattern of ASSIGNMENTS) {
      const match = pattern.exec(segment.text);
      if (!match) continue;
      const [, name, raw] = match as unknown as [string, string, string];
      const value = raw.trim();
      if (value === '' || value.length > 2000 || value.startsWith('=')) break;
      // Substitute what is already known: U="$BASE/install.sh".
      vars.set(name, expandVariables(decodeEscapes(joinLiterals(value)), vars, 1).replace(/["']/g, ''));
      break;
    }
  }
  return vars;
}

/** `\xHH`, `\uHHHH`, `\u{H…}`, `\NNN` (octal, in $'…' and printf), as the shell or language would. */
function decodeEscapes(text: string): string {
  if (!text.includes('\\')) return text;
  return text
    .replace(/\\x([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/\\u\{([0-9a-fA-F]{1,6})\}/g, (_, hex: string) => safeCodePoint(Number.parseInt(hex, 16)))
    .replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    .replace(/\\([0-3][0-7]{2})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)));
}

function safeCodePoint(cp: number): string {
  return cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
}

/** `'cu'+'rl'`, `"cu" . "rl"` (perl/php), `['cu','rl'].join('')` → one literal. */
function joinLiterals(text: string): string {
  let out = text;
  if (out.includes('join')) {
    out = out.replace(
      /\[\s*((?:'[^']*'|"[^"]*")(?:\s*,\s*(?:'[^']*'|"[^"]*"))*)\s*\]\s*\.join\(\s*(?:''|"")\s*\)/g,
      (_, items: string) => `'${items.replace(/['"]\s*,\s*['"]/g, '').replace(/^['"]|['"]$/g, '')}'`,
    );
  }
  return out.replace(/(['"])\s*[+.]\s*\1/g, '').replace(/(['"])\s*[+.]\s*(['"])/g, '');
}

/** `$NAME`, `${NAME}`, `$env:NAME`, and `${NAME}` in JS templates, from the file's assignments. */
function expandVariables(text: string, vars: Variables, rounds: number): string {
  if (!text.includes('$') || vars.size === 0) return text;
  let out = text;
  for (let round = 0; round < rounds; round += 1) {
    const next = out.replace(/\$(?:env:)?\{?([A-Za-z_]\w*)\}?/gi, (whole, name: string) => {
      const value = vars.get(name);
      return value === undefined ? whole : value;
    });
    if (next === out) break;
    out = next.length > 8000 ? next.slice(0, 8000) : next;
  }
  return out;
}

/** The segment's text made fit for the command patterns (see the file comment). */
export function normalizeCode(text: string, vars: Variables): string {
  let out = decodeEscapes(text);
  // PowerShell escapes letters with a backtick (i`e`x); a backtick after a letter is never a shell
  // command substitution's opening.
  if (out.includes('`')) out = out.replace(/(?<=[A-Za-z])`(?=[A-Za-z])/g, '');
  out = joinLiterals(out);
  out = out.replace(/\$\{IFS\}|\$IFS\b/g, ' ').replace(/\$[@*](?![\w{])|\$\{[@*]\}/g, '');
  out = expandVariables(out, vars, 3);
  // Backtick command substitution reads as $( … ) for the patterns.
  out = out.replace(/`([^`]*)`/g, '$($1)');
  // Split strings: c""url, 'cu''rl', "cu"rl; then escaped letters c\url.
  out = out.replace(/["']/g, '').replace(/\\(?=[A-Za-z0-9])/g, '');
  return out.replace(/\s+/g, ' ').toLowerCase();
}
