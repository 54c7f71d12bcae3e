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

let templates: Template[] | undefined;

/** The SPDX list's texts (5 MB of JSON), loaded on the first LICENSE file only. */
function loadTemplates(): Template[] {
  if (templates) return templates;
  const require = createRequire(import.meta.url);
  const full = require('spdx-license-list/full') as Record<string, { licenseText: string }>;
  // Current ids only (no GPL-3.0+). GPL's -only and -or-later share one text: sorted first, -only wins
  // the tie, as GitHub reports such a file.
  const current = (require('spdx-license-ids') as string[]).slice().sort();
  templates = current
    .filter((id) => (full[id]?.licenseText.length ?? 0) > 0)
    .map((id) => ({ id, words: normalizedWords(full[id]?.licenseText ?? '') }));
  return templates;
}

/**
 * Sørensen–Dice similarity of word sets, as GitHub's Licensee matches license files; a text matches the
 * most similar template at or above this threshold, so a license with an extra clause (MIT vs X11)
 * still lands on the closest one and a bespoke text matches none.
 */
const MIN_SIMILARITY = 0.9;

/** The SPDX id a license file's text matches, or null. */
export function detectLicenseText(text: string): string | null {
  const words = normalizedWords(text);
  if (words.size === 0) return null;
  let best: { id: string; score: number } | null = null;
  for (const template of loadTemplates()) {
    const sizes = words.size + template.words.size;
    // Dice can reach the threshold only when the sizes are close; skip the rest without counting.
    if ((2 * Math.min(words.size, template.words.size)) / sizes < MIN_SIMILARITY) continue;
    let shared = 0;
    for (const word of words) if (template.words.has(word)) shared += 1;
    const score = (2 * shared) / sizes;
    if (score >= MIN_SIMILARITY && (!best || score > best.score)) best = { id: template.id, score };
  }
  return best?.id ?? null;
}
