import { ACTION_VERBS, STOPWORDS } from '../engineering-workflow/lexicon.js';
import { normalizeSpace, splitSentences, wordTokens } from '../text/sentences.js';

// Pure text rules of compaction (mcp-edge.md: summarize, extract_facts). No I/O.

export interface WindowEntry {
  entryId: string;
  content: string;
}

function contentWords(sentence: string): string[] {
  return wordTokens(sentence)
    .filter((w) => w.length > 2 && !STOPWORDS.has(w) && !/^\d+$/.test(w))
    .map((w) => (w.length > 4 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

/**
 * Extractive summary: greedily picks the sentences that add the most not-yet-covered weight of the
 * window's content words (weight = how many sentences use the word), then returns them in their
 * original order. At most a third of the sentences (and `maxSentences`); stops early once no sentence
 * adds anything.
 */
export function summarizeWindow(entries: WindowEntry[], maxSentences = 10): string[] {
  const sentences: { text: string; words: Set<string>; index: number }[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    for (const text of splitSentences(entry.content)) {
      const key = text.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      sentences.push({ text, words: new Set(contentWords(text)), index: sentences.length });
    }
  }
  if (sentences.length === 0) return [];
  const frequency = new Map<string, number>();
  for (const s of sentences) for (const w of s.words) frequency.set(w, (frequency.get(w) ?? 0) + 1);
  // The window's content is what it keeps coming back to: a word said once is not part of it (unless
  // nothing repeats at all, as in a window of unrelated notes).
  const repeats = [...frequency.values()].some((n) => n > 1);
  const weight = new Map([...frequency].map(([w, n]) => [w, repeats ? (n > 1 ? n : 0) : n]));
  const target = Math.min(maxSentences, Math.max(1, Math.ceil(sentences.length / 3)));
  const covered = new Set<string>();
  const picked: typeof sentences = [];
  const remaining = [...sentences];
  while (picked.length < target && remaining.length > 0) {
    let bestIndex = -1;
    let bestGain = 0;
    remaining.forEach((s, i) => {
      let gain = 0;
      for (const w of s.words) if (!covered.has(w)) gain += weight.get(w) ?? 0;
      // Words shared across sentences matter most; a long sentence must earn its length.
      const score = gain / Math.sqrt(Math.max(s.words.size, 1));
      if (score > bestGain) {
        bestGain = score;
        bestIndex = i;
      }
    });
    if (bestIndex < 0) break;
    const [best] = remaining.splice(bestIndex, 1);
    if (!best) break;
    picked.push(best);
    for (const w of best.words) covered.add(w);
  }
  return picked.sort((a, b) => a.index - b.index).map((s) => (/[.!?]$/.test(s.text) ? s.text : `${s.text}.`));
}

const KEY_VALUE = /^\s*([A-Za-z][A-Za-z0-9 _./-]{0,48}?)\s*[:=]\s+(\S.*)$/;
const FINITE_VERBS = new Set([
  'is',
  'are',
  'was',
  'were',
  'has',
  'have',
  'uses',
  'use',
  'prefers',
  'prefer',
  'runs',
  'lives',
  'works',
  'needs',
  'must',
  'should',
  'will',
  'supports',
  'requires',
  'depends',
  'contains',
  'owns',
  'deploys',
  'stores',
  'builds',
  'wants',
  'likes',
  'targets',
  'means',
  'called',
  'named',
  'belongs',
  'holds',
  'handles',
  'relies',
  'expects',
  'ships',
  'serves',
  'costs',
  'takes',
  'lasts',
  'happens',
]);
const HEDGES = /\b(maybe|perhaps|might|probably|possibly|not sure|i think|i guess|wondering|todo|tbd)\b/i;

const DETERMINERS = new Set([
  'the',
  'our',
  'my',
  'this',
  'that',
  'each',
  'every',
  'all',
  'its',
  'their',
  'your',
]);

/** "The on-call rotation changes every Monday": determiner, a noun or two, then a verb in -s. */
function looksLikeSubjectVerb(words: string[]): boolean {
  if (!DETERMINERS.has(words[0] ?? '')) return false;
  for (let i = 2; i <= Math.min(4, words.length - 1); i += 1) {
    const w = words[i] ?? '';
    if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') && !STOPWORDS.has(w)) return true;
  }
  return false;
}

function fingerprint(text: string): string {
  return normalizeSpace(text.toLowerCase()).replace(/[.!]+$/, '');
}

function asFact(sentence: string): string | null {
  const s = normalizeSpace(sentence);
  if (s.endsWith('?') || s.endsWith('!') || HEDGES.test(s)) return null;
  const words = wordTokens(s);
  if (words.length < 3 || words.length > 40) return null;
  const first = words[0] ?? '';
  // Imperatives ("Deploy it tomorrow") are instructions, not facts.
  if (ACTION_VERBS.has(first) || first === 'please' || first === "let's" || first === 'lets') return null;
  if (!words.some((w) => FINITE_VERBS.has(w)) && !/\w's\b/.test(s) && !looksLikeSubjectVerb(words))
    return null;
  const body = s.replace(/[.;:,]+$/, '');
  return `${body.charAt(0).toUpperCase()}${body.slice(1)}.`;
}

function asKeyValue(line: string): string | null {
  const m = line.match(KEY_VALUE);
  if (!m) return null;
  const key = normalizeSpace(m[1] ?? '').toLowerCase();
  const value = normalizeSpace(m[2] ?? '').replace(/[.;,]+$/, '');
  // "https://…" and times like "10:30" are not key/value pairs.
  if (!key || !value || value.startsWith('//') || /^\d+$/.test(key) || key.split(' ').length > 5) return null;
  return `${key}: ${value}`;
}

export interface ExtractedFact {
  content: string;
  sourceEntryId: string;
}

/**
 * Durable facts of a window: `key: value` lines and declarative sentences (not questions, not
 * imperatives, not hedged), normalised and deduplicated within the window.
 */
export function extractFacts(entries: WindowEntry[], maxFacts = 100): ExtractedFact[] {
  const facts: ExtractedFact[] = [];
  const seen = new Set<string>();
  const add = (content: string, sourceEntryId: string) => {
    const key = fingerprint(content);
    if (seen.has(key) || facts.length >= maxFacts) return;
    seen.add(key);
    facts.push({ content, sourceEntryId });
  };
  for (const entry of entries) {
    for (const line of entry.content.split(/\r?\n/)) {
      const kv = asKeyValue(line);
      if (kv) {
        add(kv, entry.entryId);
        continue;
      }
      for (const sentence of splitSentences(line)) {
        const fact = asFact(sentence);
        if (fact) add(fact, entry.entryId);
      }
    }
  }
  return facts;
}
