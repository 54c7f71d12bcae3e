import { resolveSkillLink } from '@pkgreg/contracts';
import { parseDocument } from 'yaml';
import type { Lines } from '../text.js';
import type { RawFinding, ScanFile } from '../types.js';

// Rules on the folder rather than the text: links leaving it, native executables in it, and what the
// SKILL.md's frontmatter lets the agent run.

const SENSITIVE_TARGET =
  /(?:^|\/)(?:\.ssh|\.aws|\.gnupg|\.kube|\.docker|\.config|\.netrc|\.npmrc|\.pypirc|\.git-credentials|\.env\b|\.bash_history|\.zsh_history|id_(?:rsa|dsa|ecdsa|ed25519)|etc\/(?:shadow|passwd|sudoers)|proc\/|Library\/Keychains)|^~/;

/** Symbolic links whose target, followed through the folder's other links, leaves the folder. */
export function symlinkFindings(files: ScanFile[]): RawFinding[] {
  const links = new Map<string, string>();
  for (const file of files) if (file.linkTarget != null) links.set(file.path, file.linkTarget);
  const out: RawFinding[] = [];
  for (const [path, target] of links) {
    if (resolveSkillLink(path, links) !== null) continue;
    const sensitive = SENSITIVE_TARGET.test(target) || target.startsWith('/');
    out.push({
      rule: 'symlink-escape',
      severity: sensitive ? 'high' : 'medium',
      file: path,
      line: null,
      text: `${path} -> ${target}`,
      message: sensitive
        ? 'a symbolic link to a file outside the skill (an absolute path, a home folder or credentials)'
        : 'a symbolic link that leaves the skill folder',
    });
  }
  return out;
}

/** ELF, PE (MZ … PE\0\0) and Mach-O (thin and fat; Java's 0xCAFEBABE class files excepted). */
export function executableFormat(bytes: Uint8Array): string | null {
  if (bytes.length < 4) return null;
  const b0 = bytes[0];
  const b1 = bytes[1];
  const b2 = bytes[2];
  const b3 = bytes[3];
  if (b0 === 0x7f && b1 === 0x45 && b2 === 0x4c && b3 === 0x46) return 'ELF';
  if (b0 === 0x4d && b1 === 0x5a && bytes.length >= 64) {
    const offset = (bytes[60] ?? 0) | ((bytes[61] ?? 0) << 8) | ((bytes[62] ?? 0) << 16);
    if (
      offset + 4 <= bytes.length &&
      bytes[offset] === 0x50 &&
      bytes[offset + 1] === 0x45 &&
      bytes[offset + 2] === 0 &&
      bytes[offset + 3] === 0
    )
      return 'PE (Windows)';
  }
  const magic = ((b0 as number) << 24) | ((b1 as number) << 16) | ((b2 as number) << 8) | (b3 as number);
  const le = ((b3 as number) << 24) | ((b2 as number) << 16) | ((b1 as number) << 8) | (b0 as number);
  for (const m of [magic, le]) {
    if (m === (0xfeedface | 0) || m === (0xfeedfacf | 0)) return 'Mach-O';
  }
  // Fat Mach-O shares 0xCAFEBABE with Java classes; a fat header's architecture count is small.
  if (
    magic === (0xcafebabe | 0) &&
    bytes.length >= 8 &&
    bytes[4] === 0 &&
    bytes[5] === 0 &&
    (bytes[7] ?? 0) < 20
  ) {
    return 'Mach-O (universal)';
  }
  return null;
}

export function binaryFinding(path: string, format: string, bytecode = false): RawFinding {
  return {
    rule: 'binary-executable',
    severity: 'medium',
    file: path,
    line: null,
    text: bytecode ? `${path}: ${format}` : `${path}: ${format} executable`,
    message: bytecode
      ? `${format}: its behaviour cannot be read from the skill`
      : `a compiled ${format} program: its behaviour cannot be read from the skill`,
  };
}

/** Tools that run arbitrary commands when granted without a pattern. */
const SHELL_TOOLS = /^(?:bash|shell|powershell|pwsh|terminal|run_shell_command|exec|computer)$/i;

/** Entries of `allowed-tools` that grant a shell without restriction: `Bash`, `Bash(*)`, `*`. */
export function allowedToolsFindings(path: string, text: string, lines: Lines): RawFinding[] {
  if (!text.startsWith('---')) return [];
  const end = /\r?\n---\s*(?:\r?\n|$)/.exec(text.slice(3));
  if (!end) return [];
  const front = text.slice(text.indexOf('\n') + 1, end.index + 3);
  let value: unknown;
  try {
    value = parseDocument(front, { uniqueKeys: false }).toJS()?.['allowed-tools'];
  } catch {
    return [];
  }
  const entries =
    typeof value === 'string'
      ? (value.match(/[^\s,()]+(?:\([^)]*\))?/g) ?? [])
      : Array.isArray(value)
        ? value.filter((v): v is string => typeof v === 'string').map((v) => v.trim())
        : [];
  const out: RawFinding[] = [];
  const keyLine = lines.lineOf(text.search(/^allowed-tools\s*:/m));
  for (const entry of entries) {
    const match = /^([\w-]+)\s*(?:\((.*)\))?$/.exec(entry);
    const unrestricted =
      entry === '*' ||
      (match !== null &&
        SHELL_TOOLS.test(match[1] as string) &&
        (match[2] === undefined || /^\s*(?:\*|\*:\*|:\*|\*\*)?\s*$/.test(match[2] as string)));
    if (!unrestricted) continue;
    // The line naming the entry: the key's line for a string, the item's line for a list.
    let line = keyLine;
    for (let n = keyLine; n <= Math.min(lines.count, keyLine + 40); n += 1) {
      if (lines.line(n).includes(entry)) {
        line = n;
        break;
      }
    }
    out.push({
      rule: 'unrestricted-tools',
      severity: 'medium',
      file: path,
      line,
      text: lines.line(line),
      column: Math.max(0, lines.line(line).indexOf(entry)),
      message: `allowed-tools grants "${entry}": any shell command, without a pattern limiting it`,
    });
  }
  return out;
}
