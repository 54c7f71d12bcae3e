import { stripVTControlCharacters } from 'node:util';

// Text from the registry (descriptions, deprecation, yank and quarantine reasons, findings, error
// messages) is written to the user's terminal. A hostile registry or package could hide escape
// sequences in it: move the cursor over earlier lines, set the window title, write the clipboard
// (OSC 52), plant a link that shows one address and opens another (OSC 8), or reorder what is read with
// bidi overrides. What commands print goes through `terminalSafe` at the few places that write to
// the terminal (the context's out/warn/debug, progress notes, the error handler), so no registry
// string printed there reaches the terminal as anything but plain characters.

// OSC, DCS, SOS, PM and APC carry a string up to BEL or ST (ESC \ or the C1 ST), or to the end of the
// text: removed whole, so no payload (a title, a clipboard, a link) is left behind as text.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes.
const STRING_SEQUENCE = /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[\s\S]*?(?:\x07|\x1b\\|\x9c|$)/g;

// What is left after the sequences: C0 controls but tab and newline (a CR rewrites the line), DEL, C1
// controls, and the bidi marks, embeddings, overrides and isolates (Trojan Source).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The text with every terminal control removed: string sequences (OSC, DCS, …) whole, then CSI and
 * other escape sequences (Node's own `stripVTControlCharacters`, the ansi-regex pattern), then any
 * control character left. Tabs and newlines stay.
 */
export function terminalSafe(text: string): string {
  return stripVTControlCharacters(text.replace(STRING_SEQUENCE, '')).replace(CONTROL, '');
}

/** One line of text: `terminalSafe`, with line breaks and tabs as spaces (no forged lines). */
export function oneLine(text: string): string {
  return terminalSafe(text.replace(/[\t\n\v\f\r\u2028\u2029]+/g, ' '));
}

// JSON.stringify escapes C0 controls but not DEL, C1 or the bidi characters: escaped here as \uXXXX,
// which parses back to the same string, so --json output stays the registry's value exactly.
const JSON_UNSAFE = /[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** `value` as indented JSON with no raw control character: safe to print, and equal once parsed. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    JSON_UNSAFE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
