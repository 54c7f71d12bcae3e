import { describe, expect, it } from 'vitest';
import {
  decodeText,
  isBinaryContentType,
  isBinaryName,
  isMarkdownName,
  TEXT_PREVIEW_BYTES,
} from '../../src/file-kind.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('which files are text', () => {
  it('knows binaries by name, and leaves text and unknown names to the check', () => {
    for (const name of ['assets/logo.PNG', 'a.pdf', 'fonts/x.woff2', 'model.tgz', 'lib.wasm']) {
      expect(isBinaryName(name), name).toBe(true);
    }
    for (const name of ['icon.svg', 'LICENSE', 'Makefile', 'run.sh', '.png', 'dir.png/readme', 'x.weights']) {
      expect(isBinaryName(name), name).toBe(false);
    }
    expect(isMarkdownName('docs/Guide.MD')).toBe(true);
    expect(isMarkdownName('notes.txt')).toBe(false);
  });

  it('lets no text check overrule a binary Content-Type, but reads SVG and octet-stream', () => {
    expect(isBinaryContentType('image/png')).toBe(true);
    expect(isBinaryContentType('application/pdf')).toBe(true);
    expect(isBinaryContentType('font/woff2')).toBe(true);
    expect(isBinaryContentType('image/svg+xml; charset=utf-8')).toBe(false);
    expect(isBinaryContentType('application/octet-stream')).toBe(false);
    expect(isBinaryContentType('text/html; charset=utf-8')).toBe(false);
  });

  it('decodes UTF-8 text and calls NUL bytes and invalid UTF-8 binary', () => {
    expect(decodeText(utf8('héllo → wörld\n'), false)).toBe('héllo → wörld\n');
    expect(decodeText(new Uint8Array([0x70, 0x00, 0x71]), false)).toBeNull();
    expect(decodeText(new Uint8Array([0xff, 0xfe, 0x41]), false)).toBeNull();
    expect(decodeText(new Uint8Array(), false)).toBe('');
  });

  it('forgives a character cut in two at the end of a prefix, and only there', () => {
    const bytes = utf8('abc€'); // € is three bytes
    const cut = bytes.subarray(0, bytes.length - 1);
    expect(decodeText(cut, true)).toBe('abc');
    expect(decodeText(cut, false)).toBeNull();
  });

  it('looks for NUL only near the start, as git does', () => {
    const late = new Uint8Array(9000).fill(0x61);
    late[8500] = 0;
    expect(decodeText(late, false)).not.toBeNull();
    late[100] = 0;
    expect(decodeText(late, false)).toBeNull();
  });

  it('previews 256 KiB', () => {
    expect(TEXT_PREVIEW_BYTES).toBe(262_144);
  });
});
