// Which files the viewer shows as text. Known binary names are never fetched; anything else is fetched
// up to TEXT_PREVIEW_BYTES and shown as text only when it passes a simple check (git's: no NUL byte near
// the start) and decodes as UTF-8. Everything else is a download.

/** How much of a text file the page shows; the rest is one click away as the raw file. */
export const TEXT_PREVIEW_BYTES = 256 * 1024;

/** Git looks this far for a NUL byte to call a file binary. */
const SNIFF_BYTES = 8000;

const BINARY_EXTENSIONS = new Set(
  [
    // images (SVG is text and stays out), documents, archives
    'png jpg jpeg gif webp avif bmp ico icns tif tiff heic psd',
    'pdf doc docx xls xlsx ppt pptx odt ods odp epub',
    'zip gz tgz bz2 xz zst 7z rar tar jar whl',
    // media and fonts
    'mp3 mp4 m4a wav ogg oga flac webm mov avi mkv woff woff2 ttf otf eot',
    // compiled code and data
    'wasm exe dll so dylib o a class pyc bin dat db sqlite npy pkl',
  ].flatMap((line) => line.split(' ')),
);

function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

/** A name that says binary: offered as a download without fetching it. */
export function isBinaryName(path: string): boolean {
  return BINARY_EXTENSIONS.has(extensionOf(path));
}

export function isMarkdownName(path: string): boolean {
  return ['md', 'markdown', 'mdx'].includes(extensionOf(path));
}

/** A Content-Type that no text check should overrule (the API derives it from the name). */
export function isBinaryContentType(contentType: string): boolean {
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'image/svg+xml') return false;
  return (
    /^(image|audio|video|font)\//.test(type) ||
    ['application/pdf', 'application/zip', 'application/gzip', 'application/wasm'].includes(type)
  );
}

/**
 * The bytes as text, or null when they look binary. `truncated`: the bytes are a prefix, so a character
 * cut in two at the end is not an error.
 */
export function decodeText(bytes: Uint8Array, truncated: boolean): string | null {
  if (bytes.subarray(0, SNIFF_BYTES).includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: truncated });
  } catch {
    return null;
  }
}
