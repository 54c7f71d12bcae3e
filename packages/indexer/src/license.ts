import { createRequire } from 'node:module';
import spdxCorrect from 'spdx-correct';
import parseSpdx from 'spdx-expression-parse';

// A package's license as an SPDX expression (docs/decisions.md, "License"): the frontmatter's when it
// is one (corrected by spdx-correct when it is a near miss such as "Apache 2"), else the one a LICENSE
// file's text matches, else null.

/** File names (case-insensitive) read as a folder's license text. */
const LICENSE_FILE = /^(?:licen[cs]e|copying|unlicense)(?:[-_.][a-z0-9]+)?(?:\.(?:txt|md|markdown|rst))?$/i;

export function isLicenseFileName(name: string): boolean {
  return LICENSE_FILE.test(name);
}

function isExpression(text: string): boolean {
  try {
    parseSpdx(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * spdx-correct guesses from any text ("Proprietary. LICENSE.txt has complete terms" comes back as
 * MPL-2.0, npm's "UNLICENSED" as Unlicense), so only short texts that name a license are corrected.
 */
const NOT_A_LICENSE_NAME = /\b(?:see|terms|proprietary|unlicensed|reserved|custom|file)\b|\.(?:txt|md)\b/i;
const MAX_NAME_WORDS = 5;

/** The SPDX expression a frontmatter `license` value names, or null when it names none. */
export function spdxFromDeclared(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text === '' || text.length > 200) return null;
  if (isExpression(text)) return text;
  if (NOT_A_LICENSE_NAME.test(text) || text.split(/\s+/).length > MAX_NAME_WORDS) return null;
  const corrected = spdxCorrect(text, { upgrade: true });
  return corrected && isExpression(corrected) ? corrected : null;
}

interface Template {
  id: string;
  words: Set<string>;
}

/**
 * The licenses choosealicense.com describes (GitHub's Licensee matches against these): a text is first
 * matched among them, so Apache-2.0 without its appendix is Apache-2.0 and not Pixar (Apache-2.0 with
 * changes), which a plain best match over every SPDX text would pick.
 */
const COMMON_LICENSES = new Set([
  '0BSD',
  'AFL-3.0',
  'AGPL-3.0-only',
  'Apache-2.0',
  'Artistic-2.0',
  'BlueOak-1.0.0',
  'BSD-2-Clause',
  'BSD-2-Clause-Patent',
  'BSD-3-Clause',
  'BSD-3-Clause-Clear',
  'BSD-4-Clause',
  'BSL-1.0',
  'CC-BY-4.0',
  'CC-BY-SA-4.0',
  'CC0-1.0',
  'CECILL-2.1',
  'CERN-OHL-P-2.0',
  'ECL-2.0',
  'EPL-1.0',
  'EPL-2.0',
  'EUPL-1.1',
  'EUPL-1.2',
  'GFDL-1.3-only',
  'GPL-2.0-only',
  'GPL-3.0-only',
  'ISC',
  'LGPL-2.1-only',
  'LGPL-3.0-only',
  'LPPL-1.3c',
  'MIT',
  'MIT-0',
  'MPL-2.0',
  'MS-PL',
  'MS-RL',
  'MulanPSL-2.0',
  'NCSA',
  'ODbL-1.0',
  'OFL-1.1',
  'OSL-3.0',
  'PostgreSQL',
  'UPL-1.0',
  'Unlicense',
  'Vim',
  'WTFPL',
  'Zlib',
]);

/** Lower case, no punctuation, no copyright lines, no placeholders: what the texts share. */
function normalizedWords(text: string): Set<string> {
  const body = text
    .toLowerCase()
    .split('\n')
    .filter((line) => !/^\s*copyright\b|^\s*\(c\)/.test(line))
    .join(' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/[^a-z0-9]+/g, ' ');
  return new Set(body.split(' ').filter((word) => word.length > 0));
}

interface Texts {
  full: Record<string, { licenseText: string }>;
  /** Current ids only (no GPL-3.0+), sorted: GPL's -only and -or-later share one text, and -only wins. */
  ids: string[];
}

let texts: Texts | undefined;
const templateSets = new Map<'common' | 'rest', Template[]>();

/** The SPDX list's texts (5 MB of JSON), loaded on the first LICENSE file only. */
function loadTexts(): Texts {
  if (texts) return texts;
  const require = createRequire(import.meta.url);
  texts = {
    full: require('spdx-license-list/full') as Texts['full'],
    ids: (require('spdx-license-ids') as string[]).slice().sort(),
  };
  return texts;
}

/** One set's word sets, built on first use: most texts match a common license, so the rest wait. */
function templatesOf(set: 'common' | 'rest'): Template[] {
  const built = templateSets.get(set);
  if (built) return built;
  const { full, ids } = loadTexts();
  const templates = ids
    .filter((id) => COMMON_LICENSES.has(id) === (set === 'common') && (full[id]?.licenseText.length ?? 0) > 0)
    .map((id) => ({ id, words: normalizedWords(full[id]?.licenseText ?? '') }));
  templateSets.set(set, templates);
  return templates;
}

/**
 * Sørensen–Dice similarity of word sets, as GitHub's Licensee matches license files: a text matches the
 * most similar common license at or above 0.9 (so one with an extra clause, MIT vs X11, still lands on
 * the closest), else the most similar other SPDX license at or above 0.95; a bespoke text matches none.
 */
const MIN_COMMON_SIMILARITY = 0.9;
const MIN_OTHER_SIMILARITY = 0.95;

function bestMatch(words: Set<string>, candidates: Template[], threshold: number): string | null {
  let best: { id: string; score: number } | null = null;
  for (const template of candidates) {
    const sizes = words.size + template.words.size;
    // Dice can reach the threshold only when the sizes are close; skip the rest without counting.
    if ((2 * Math.min(words.size, template.words.size)) / sizes < threshold) continue;
    let shared = 0;
    for (const word of words) if (template.words.has(word)) shared += 1;
    const score = (2 * shared) / sizes;
    if (score >= threshold && (!best || score > best.score)) best = { id: template.id, score };
  }
  return best?.id ?? null;
}

/** The SPDX id a license file's text matches, or null. */
export function detectLicenseText(text: string): string | null {
  const words = normalizedWords(text);
  if (words.size === 0) return null;
  return (
    bestMatch(words, templatesOf('common'), MIN_COMMON_SIMILARITY) ??
    bestMatch(words, templatesOf('rest'), MIN_OTHER_SIMILARITY)
  );
}
