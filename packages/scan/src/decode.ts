// How the scan reads a file's bytes as text. Shells and agents read files the scan would once have called
// binary: bash skips NUL bytes (past its first line) and runs the rest, an agent's file tool decodes
// UTF-16 or reads invalid UTF-8 with replacement characters. So every file is decoded, however encoded,
// and the decoding is named on its findings (docs/risk-scan.md, "How the rules read files").

/** How a file's text was decoded; `utf-8` (strict, no NUL) is the ordinary case, left off findings. */
export type TextEncoding =
  | 'utf-8'
  | 'utf-8-lenient'
  | 'latin1'
  | 'utf-16le'
  | 'utf-16be'
  | 'utf-32le'
  | 'utf-32be';

export interface TextView {
  /** The text, NUL characters dropped (as bash drops them). */
  text: string;
  encoding: TextEncoding;
}

export interface DecodedFile extends TextView {
  /**
   * Mostly not text: more than 1% (and 4) of its characters are control characters, NULs or
   * replacement characters. Binary data read as text; a script that is so "cannot be decoded".
   */
  binary: boolean;
  /**
   * What a shell reads when it differs from `text`: for UTF-16/32 the bytes with their NULs dropped
   * (bash runs UTF-16 ASCII that way), so NULs that only look like UTF-16 hide nothing from the rules.
   */
  shellView?: TextView;
}

const strict = new TextDecoder('utf-8', { fatal: true });
const lenient = new TextDecoder('utf-8');
const windows1252 = new TextDecoder('latin1');
const utf16le = new TextDecoder('utf-16le');
const utf16be = new TextDecoder('utf-16be');

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const NOT_TEXT = /[\u0000-\u0008\u000e-\u001a\u001c-\u001f\u007f\ufffd]/;

/** Decodes a file for the rules: BOM, then UTF-16/32 by its NUL pattern, UTF-8, lenient UTF-8, Latin-1. */
export function decodeFile(bytes: Uint8Array): DecodedFile {
  const b0 = bytes[0];
  const b1 = bytes[1];
  if (bytes.length >= 4 && b0 === 0xff && b1 === 0xfe && bytes[2] === 0 && bytes[3] === 0) {
    if (bytes.length % 4 === 0) return wide(bytes, 'utf-32le', 4);
  }
  if (bytes.length >= 4 && b0 === 0 && b1 === 0 && bytes[2] === 0xfe && bytes[3] === 0xff) {
    return wide(bytes, 'utf-32be', 4);
  }
  if (bytes.length >= 2 && b0 === 0xff && b1 === 0xfe) return wide(bytes, 'utf-16le', 2);
  if (bytes.length >= 2 && b0 === 0xfe && b1 === 0xff) return wide(bytes, 'utf-16be', 2);
  const body = b0 === 0xef && b1 === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  if (body.includes(0)) {
    const guessed = wideWithoutBom(body);
    if (guessed) return wide(body, guessed, 0);
  }
  const view = byteView(body);
  const nuls = view.encoding === 'utf-8' ? 0 : nulCount(body);
  return { ...view, binary: isBinary(view.text, view.text.length + nuls, nuls) };
}

/** The bytes as a shell reads them: NULs dropped, then UTF-8, lenient UTF-8 or Latin-1. */
export function byteView(bytes: Uint8Array): TextView {
  const hasNul = bytes.includes(0);
  const clean = hasNul ? dropNuls(bytes) : bytes;
  try {
    return { text: strict.decode(clean), encoding: hasNul ? 'utf-8-lenient' : 'utf-8' };
  } catch {
    // Not UTF-8: replacement characters where UTF-8 text has a few bad bytes, Latin-1 where the
    // high bytes are mostly not UTF-8 at all (a Latin-1 or Windows-1252 file).
    const text = lenient.decode(clean);
    let replaced = 0;
    let other = 0;
    for (let i = 0; i < text.length; i += 1) {
      const c = text.charCodeAt(i);
      if (c === 0xfffd) replaced += 1;
      else if (c > 0x7f) other += 1;
    }
    if (replaced > other) return { text: windows1252.decode(clean), encoding: 'latin1' };
    return { text, encoding: 'utf-8-lenient' };
  }
}

/**
 * Whether the first `limit` bytes are binary by the same measure as `DecodedFile.binary`, counted on the
 * bytes (control bytes, NUL included) without decoding: the cheap test for files of a binary format.
 */
export function looksBinary(bytes: Uint8Array, limit = 8192): boolean {
  const n = Math.min(bytes.length, limit);
  let bad = 0;
  for (let i = 0; i < n; i += 1) {
    const b = bytes[i] as number;
    if ((b < 0x20 && (b < 0x09 || (b > 0x0d && b !== 0x1b))) || b === 0x7f) bad += 1;
  }
  return bad > 4 && bad * 100 > n;
}

/** The bytes without their NULs (a plain loop: `filter` costs a call per byte). */
function dropNuls(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length - nulCount(bytes));
  let to = 0;
  for (let i = 0; i < bytes.length; i += 1) {
    const b = bytes[i] as number;
    if (b !== 0) {
      out[to] = b;
      to += 1;
    }
  }
  return out;
}

function nulCount(bytes: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < bytes.length; i += 1) if (bytes[i] === 0) n += 1;
  return n;
}

function isBinary(text: string, length: number, extra = 0): boolean {
  let bad = extra;
  // A loop, not matchAll: binary data has millions of matches.
  if (NOT_TEXT.test(text)) {
    for (let i = 0; i < text.length; i += 1) {
      const c = text.charCodeAt(i);
      if ((c < 0x20 && (c < 0x09 || (c > 0x0d && c !== 0x1b))) || c === 0x7f || c === 0xfffd) bad += 1;
    }
  }
  return bad > 4 && bad * 100 > length;
}

/**
 * UTF-16 or UTF-32 without a BOM, told by where the NULs fall: ASCII in UTF-16LE has its NULs on odd
 * bytes only. A ratio, not a share of the file, so text padded with other scripts is still found.
 */
function wideWithoutBom(bytes: Uint8Array): TextEncoding | null {
  const zeros = [0, 0, 0, 0];
  const n = bytes.length - (bytes.length % 4);
  for (let i = 0; i < n; i += 1) if (bytes[i] === 0) (zeros[i & 3] as number) += 1;
  const [z0, z1, z2, z3] = zeros as [number, number, number, number];
  const groups = n / 4;
  if (groups >= 2 && bytes.length % 4 === 0) {
    if (z3 === groups && z2 >= groups * 0.9 && z0 * 4 < groups) return 'utf-32le';
    if (z0 === groups && z1 >= groups * 0.9 && z3 * 4 < groups) return 'utf-32be';
  }
  const odd = z1 + z3;
  const even = z0 + z2;
  // At least one pair in 64 (random bytes have one NUL in 256), and few NULs on the other parity.
  const enough = Math.max(4, bytes.length / 128);
  if (odd >= enough && even * 8 <= odd) return 'utf-16le';
  if (even >= enough && odd * 8 <= even) return 'utf-16be';
  return null;
}

/** UTF-16 or UTF-32 text (after a BOM of `skip` bytes), with the shell's view of the same bytes. */
function wide(bytes: Uint8Array, encoding: TextEncoding, skip: number): DecodedFile {
  const body = bytes.subarray(skip);
  let text: string;
  if (encoding === 'utf-16le') text = utf16le.decode(body);
  else if (encoding === 'utf-16be') text = utf16be.decode(body);
  else text = decodeUtf32(body, encoding === 'utf-32le');
  const nuls = (text.match(/\0/g) ?? []).length;
  if (nuls > 0) text = text.replace(/\0/g, '');
  // The BOM is left out: a shell reading it sees it as part of the first line's first word.
  const shell = byteView(body);
  return {
    text,
    encoding,
    binary: isBinary(text, text.length + nuls, nuls),
    ...(shell.text === text ? {} : { shellView: shell }),
  };
}

/** UTF-32 (TextDecoder has none): code points past U+10FFFF and surrogates become U+FFFD. */
function decodeUtf32(bytes: Uint8Array, littleEndian: boolean): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts: string[] = [];
  let chunk: number[] = [];
  for (let at = 0; at + 4 <= bytes.length; at += 4) {
    const cp = view.getUint32(at, littleEndian);
    chunk.push(cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0xfffd : cp);
    if (chunk.length === 4096) {
      parts.push(String.fromCodePoint(...chunk));
      chunk = [];
    }
  }
  if (bytes.length % 4 !== 0) chunk.push(0xfffd);
  parts.push(String.fromCodePoint(...chunk));
  return parts.join('');
}
