import { executableFormat } from './rules/files.js';

// What a file is by its magic number, whatever its name: compiled programs and bytecode (a finding),
// archives and compressed files (a finding, opened where we can: archives.ts), and media the text rules
// skip (images, fonts, PDF, audio, video, databases). Anything else is read as text.

export type ArchiveType = 'zip' | 'tar' | 'gzip';

export type FileFormat =
  | { kind: 'executable'; name: string; bytecode?: boolean }
  | { kind: 'archive'; name: string; opens?: ArchiveType }
  | { kind: 'media'; name: string };

const ascii = (bytes: Uint8Array, at: number, text: string) => {
  if (bytes.length < at + text.length) return false;
  for (let i = 0; i < text.length; i += 1) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
};
const starts = (bytes: Uint8Array, ...magic: number[]) =>
  bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b);

/** Zip-based formats named by extension (the bytes are a plain zip either way). */
const ZIP_NAMES: Array<[RegExp, string]> = [
  [/\.jar$|\.war$|\.ear$/i, 'Java archive (zip)'],
  [/\.whl$/i, 'Python wheel (zip)'],
  [/\.egg$/i, 'Python egg (zip)'],
  [/\.apk$|\.aab$/i, 'Android package (zip)'],
  [/\.(?:docx|docm|xlsx|xlsm|pptx|pptm)$/i, 'Office document (zip)'],
  [/\.(?:odt|ods|odp)$/i, 'OpenDocument file (zip)'],
  [/\.(?:vsix|nupkg|xpi|crx|ipa|epub|kmz)$/i, 'package (zip)'],
];

function archiveFormat(path: string, bytes: Uint8Array): FileFormat | null {
  if (
    starts(bytes, 0x50, 0x4b) &&
    (starts(bytes.subarray(2), 3, 4) || starts(bytes.subarray(2), 5, 6) || starts(bytes.subarray(2), 7, 8))
  ) {
    const named = ZIP_NAMES.find(([re]) => re.test(path));
    return { kind: 'archive', name: named ? named[1] : 'zip archive', opens: 'zip' };
  }
  if (ascii(bytes, 257, 'ustar')) return { kind: 'archive', name: 'tar archive', opens: 'tar' };
  if (starts(bytes, 0x1f, 0x8b)) return { kind: 'archive', name: 'gzip-compressed file', opens: 'gzip' };
  if (ascii(bytes, 0, 'BZh') && (bytes[3] ?? 0) >= 0x31 && (bytes[3] ?? 0) <= 0x39)
    return { kind: 'archive', name: 'bzip2-compressed file' };
  if (starts(bytes, 0xfd, 0x37, 0x7a, 0x58, 0x5a, 0)) return { kind: 'archive', name: 'xz-compressed file' };
  if (starts(bytes, 0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c)) return { kind: 'archive', name: '7-Zip archive' };
  if (ascii(bytes, 0, 'Rar!\x1a\x07')) return { kind: 'archive', name: 'RAR archive' };
  if (starts(bytes, 0x28, 0xb5, 0x2f, 0xfd)) return { kind: 'archive', name: 'zstd-compressed file' };
  if (starts(bytes, 0x04, 0x22, 0x4d, 0x18)) return { kind: 'archive', name: 'LZ4-compressed file' };
  if (ascii(bytes, 0, 'LZIP')) return { kind: 'archive', name: 'lzip-compressed file' };
  if (starts(bytes, 0x1f, 0x9d)) return { kind: 'archive', name: 'compress (.Z) file' };
  if (ascii(bytes, 0, '!<arch>\n')) return { kind: 'archive', name: 'ar archive (.deb, .a)' };
  if (ascii(bytes, 0, 'MSCF\0\0\0\0')) return { kind: 'archive', name: 'Windows cabinet' };
  if (ascii(bytes, 0, 'xar!')) return { kind: 'archive', name: 'xar archive (.pkg)' };
  if (starts(bytes, 0xed, 0xab, 0xee, 0xdb)) return { kind: 'archive', name: 'RPM package' };
  if (ascii(bytes, 0, 'hsqs')) return { kind: 'archive', name: 'squashfs image' };
  if (/^07070[127]$/.test(String.fromCharCode(...bytes.subarray(0, 6))) && bytes.length >= 110)
    return { kind: 'archive', name: 'cpio archive' };
  if (starts(bytes, 0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1))
    return { kind: 'archive', name: 'OLE compound file (.msi, legacy Office)' };
  if (ascii(bytes, 0x8001, 'CD001')) return { kind: 'archive', name: 'ISO 9660 disk image' };
  if (bytes.length >= 512 && ascii(bytes, bytes.length - 512, 'koly'))
    return { kind: 'archive', name: 'Apple disk image (.dmg)' };
  return null;
}

/** Bytecode: run by an interpreter, not readable in the skill. */
function bytecodeFormat(path: string, bytes: Uint8Array): string | null {
  // .pyc: a 16-bit version number then \r\n (3.x: 0x0c??-0x0e??; 2.7: 0xf303).
  if (
    bytes.length >= 16 &&
    bytes[2] === 0x0d &&
    bytes[3] === 0x0a &&
    [0x0c, 0x0d, 0x0e, 0xf3].includes(bytes[1] ?? 0)
  )
    return 'compiled Python bytecode (.pyc)';
  if (
    starts(bytes, 0xca, 0xfe, 0xba, 0xbe) &&
    bytes[4] === 0 &&
    bytes[5] === 0 &&
    bytes[6] === 0 &&
    (bytes[7] ?? 0) >= 45
  )
    return 'compiled Java class';
  if (starts(bytes, 0, 0x61, 0x73, 0x6d)) return 'WebAssembly module';
  if (ascii(bytes, 0, 'dex\n')) return 'Android Dalvik bytecode';
  if (ascii(bytes, 0, '\x1bLua')) return 'compiled Lua bytecode';
  // A pickle runs code when it is loaded; told by its name and its protocol opcode.
  if (
    /\.(?:pkl|pickle|pt|pth|joblib)$/i.test(path) &&
    bytes[0] === 0x80 &&
    (bytes[1] ?? 0) >= 2 &&
    (bytes[1] ?? 0) <= 5
  )
    return 'Python pickle (runs code when loaded)';
  return null;
}

function mediaFormat(bytes: Uint8Array): string | null {
  if (starts(bytes, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'PNG image';
  if (starts(bytes, 0xff, 0xd8, 0xff)) return 'JPEG image';
  if (ascii(bytes, 0, 'GIF87a') || ascii(bytes, 0, 'GIF89a')) return 'GIF image';
  if (ascii(bytes, 0, 'RIFF') && bytes.length >= 12) return 'RIFF media (WebP, WAV, AVI)';
  if (ascii(bytes, 0, 'II*\0') || ascii(bytes, 0, 'MM\0*')) return 'TIFF image';
  if (starts(bytes, 0, 0, 1, 0) && bytes.length >= 22) return 'icon';
  if (ascii(bytes, 0, '8BPS')) return 'Photoshop image';
  if (ascii(bytes, 4, 'ftyp')) return 'MP4/QuickTime/HEIF media';
  if (starts(bytes, 0x1a, 0x45, 0xdf, 0xa3)) return 'Matroska/WebM video';
  if (ascii(bytes, 0, 'OggS') || ascii(bytes, 0, 'fLaC') || ascii(bytes, 0, 'ID3')) return 'audio';
  if (starts(bytes, 0, 1, 0, 0, 0) || ascii(bytes, 0, 'OTTO') || ascii(bytes, 0, 'ttcf')) return 'font';
  if (ascii(bytes, 0, 'wOFF') || ascii(bytes, 0, 'wOF2')) return 'web font';
  if (ascii(bytes, 0, '%PDF-')) return 'PDF document';
  if (ascii(bytes, 0, 'SQLite format 3\0')) return 'SQLite database';
  return null;
}

/** The file's format by its magic number, or null for anything to read as text. */
export function fileFormat(path: string, bytes: Uint8Array): FileFormat | null {
  if (bytes.length < 4) return null;
  const program = executableFormat(bytes) ?? null;
  if (program) return { kind: 'executable', name: program };
  const bytecode = bytecodeFormat(path, bytes);
  if (bytecode) return { kind: 'executable', name: bytecode, bytecode: true };
  const archive = archiveFormat(path, bytes);
  if (archive) return archive;
  const media = mediaFormat(bytes);
  return media ? { kind: 'media', name: media } : null;
}
