import type { AgentInput } from '@pkgreg/contracts';
import { normalizeSpace, splitSentences, wordTokens } from '../text/sentences.js';
import {
  ACTION_VERBS,
  GENERIC_WORDS,
  PHASE_KEYWORDS,
  PHASE_RANK,
  PHASES,
  type Phase,
  STOPWORDS,
} from './lexicon.js';

// The model-free planner (decisions.md, Agent engineering.workflow): request → ordered steps with a
// phase each and dependencies. Pure functions: no I/O, so every rule is testable on its own.

type Marker = 'first' | 'then' | 'last' | null;

interface Candidate {
  text: string;
  marker: Marker;
  /** A phase the caller stated (json input); wins over keyword rules. */
  phase?: Phase;
}

export interface PlanRequest {
  inputType: AgentInput['type'];
  goal: string;
  candidates: Candidate[];
  /** `explicit`: the request fixed the order (numbered list, first/then/finally); else ordered by phase. */
  ordering: 'explicit' | 'phase';
  constraints: string[];
  context: string | null;
}

export interface DraftStep {
  id: string;
  title: string;
  phase: Phase;
  dependsOn: string[];
  keywords: string[];
}

const MAX_TITLE = 160;
const MAX_STEPS = 20;

const LIST_ITEM = /^(?:[-*•+]|(\d{1,3})[.)]|\(?[a-h][.)]|step\s+\d+\s*[:.)-])\s+(.+)$/i;
const LEADING_MARKER =
  /^(?:(first(?:ly)?|to (?:start|begin)(?: with)?|start (?:by|with)|begin (?:by|with)|initially)|(second(?:ly)?|third(?:ly)?|next|then|after (?:that|this)|afterwards|subsequently|once (?:that|this|it) is done|when (?:that|this) is done|and then)|(finally|lastly|last|at the end|in the end|to finish|to wrap up))\b[,:]?\s*/i;
const GOAL_STATEMENT =
  /^(?:(?:we|i)(?:'re|'m| are| am)?\s+(?:want|need|would like|plan|are planning|going|building|trying|working|have)\b|(?:our|the|my)\s+(?:goal|objective|aim|project|task|team)\b|(?:goal|objective|project|context|background)\s*:)/i;
const LEAD_IN =
  /^(?:(?:please|kindly)\s+)?(?:(?:we|i|you)\s+(?:really\s+)?(?:need|want|would like|have|must|should|will|can)\s+(?:to\s+)?|let'?s\s+|(?:the\s+)?(?:next\s+)?(?:goal|task|plan|idea|step)\s+is\s+to\s+|(?:make sure|ensure)\s+(?:that\s+)?(?:we\s+)?|it\s+should\s+)/i;

function markerOf(match: RegExpMatchArray | null): Marker {
  if (!match) return null;
  if (match[1]) return 'first';
  if (match[2]) return 'then';
  return 'last';
}

const SUBORDINATE_LEAD = /^(before|after|once|when|as soon as)\s+[^,]{1,80},\s*/i;
const VERB_ALTERNATION = [...ACTION_VERBS].join('|');
// Separators inside a sentence: explicit order words, and " and <verb>" / ", <verb>" between actions.
const ORDER_SPLIT =
  /\s*[,;]?\s+(?:and\s+)?(then|after that|afterwards|finally|lastly)\b[,]?\s+|\s*[,;]\s*(?:and\s+)?(next)\b[,]?\s+/gi;
const VERB_SPLIT = new RegExp(`\\s*(?:,\\s*(?:and\\s+)?|\\s+and\\s+)(?=(?:${VERB_ALTERNATION})\\b)`, 'gi');

/** One sentence → its clauses, each with the order word that introduced it. */
export function splitClauses(sentence: string): Candidate[] {
  const out: Candidate[] = [];
  let rest = sentence.trim();
  const lead = rest.match(LEADING_MARKER);
  if (lead) rest = rest.slice(lead[0].length);
  // "Before deploying, run the audit" / "Once that works, add caching": the opening clause is a
  // condition on the step, not a step; "after/once/when" also says the step comes later.
  const condition = rest.match(SUBORDINATE_LEAD);
  if (condition) rest = rest.slice(condition[0].length);
  const conditionMarker: Marker = condition && !/^before/i.test(condition[1] ?? '') ? 'then' : null;

  const pieces: { text: string; marker: Marker }[] = [];
  let last = 0;
  let pending: Marker = markerOf(lead) ?? conditionMarker;
  for (const m of rest.matchAll(ORDER_SPLIT)) {
    pieces.push({ text: rest.slice(last, m.index), marker: pending });
    const word = (m[1] ?? m[2] ?? '').toLowerCase();
    pending = word === 'finally' || word === 'lastly' ? 'last' : 'then';
    last = (m.index ?? 0) + m[0].length;
  }
  pieces.push({ text: rest.slice(last), marker: pending });

  for (const piece of pieces) {
    const parts = piece.text.split(VERB_SPLIT);
    parts.forEach((part, i) => {
      out.push({ text: part, marker: i === 0 ? piece.marker : null });
    });
  }
  return out.map((c) => ({ ...c, text: cleanTitle(c.text) })).filter((c) => isActionable(c.text));
}

/** Strips lead-ins ("we need to", "let's") and trailing punctuation; capitalises. */
export function cleanTitle(text: string): string {
  let t = normalizeSpace(text).replace(/^[-*•+\s]+/, '');
  for (let i = 0; i < 3; i += 1) {
    const before = t;
    t = t.replace(LEADING_MARKER, '').replace(LEAD_IN, '').trim();
    if (t === before) break;
  }
  t = t.replace(/[\s.;:!,]+$/, '');
  if (t.length > MAX_TITLE) t = `${t.slice(0, MAX_TITLE - 1).trimEnd()}…`;
  return t.charAt(0).toUpperCase() + t.slice(1);
}

function isActionable(text: string): boolean {
  return tokens(text).some((w) => !STOPWORDS.has(w) && !GENERIC_WORDS.has(w) && w.length > 1);
}

const tokens = wordTokens;

const SUFFIXES = ['', 's', 'es', 'ed', 'd', 'ing', 'ment', 'ments', 'ion', 'ions', 'ation', 'er', 'ers'];

function matchesKeyword(word: string, keyword: string): boolean {
  if (word === keyword) return true;
  if (keyword.length < 4 || !word.startsWith(keyword.replace(/e$/, ''))) return false;
  const stem = keyword.replace(/e$/, '');
  return SUFFIXES.some((s) => word === stem + s || word === keyword + s);
}

/** The phase whose keywords weigh most in `text`; the leading verb counts double. Ties: earlier phase. */
export function classifyPhase(text: string): Phase {
  const lower = ` ${text.toLowerCase()} `;
  const words = tokens(text);
  let best: Phase = 'implement';
  let bestScore = 0;
  for (const phase of PHASES) {
    let score = 0;
    for (const [keyword, weight] of Object.entries(PHASE_KEYWORDS[phase])) {
      if (keyword.includes(' ')) {
        if (lower.includes(` ${keyword} `) || lower.includes(` ${keyword}`)) score += weight;
        continue;
      }
      words.forEach((w, i) => {
        if (matchesKeyword(w, keyword)) score += i === 0 ? weight * 2 : weight;
      });
    }
    if (score > bestScore) {
      best = phase;
      bestScore = score;
    }
  }
  return best;
}

/** Words worth searching the registry for: no stopwords, generic verbs last, at most four. */
export function stepKeywords(title: string): string[] {
  const seen = new Set<string>();
  const nouns: string[] = [];
  const verbs: string[] = [];
  for (const w of tokens(title)) {
    if (w.length < 2 || /^\d+$/.test(w) || STOPWORDS.has(w) || GENERIC_WORDS.has(w) || seen.has(w)) continue;
    seen.add(w);
    (ACTION_VERBS.has(w) ? verbs : nouns).push(w);
  }
  return [...nouns, ...verbs].slice(0, 4);
}

function parseTextBody(text: string): { goal: string | null; candidates: Candidate[]; numbered: boolean } {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const items = lines.map((l) => l.match(LIST_ITEM));
  const listCount = items.filter(Boolean).length;
  if (listCount >= 2) {
    const firstItem = items.findIndex(Boolean);
    const intro = lines.slice(0, firstItem).join(' ');
    const numbered = items.some((m) => m?.[1] !== undefined || /^step\s+\d/i.test(m?.[0] ?? ''));
    const candidates: Candidate[] = [];
    lines.slice(firstItem).forEach((line, i) => {
      const item = items[firstItem + i];
      const body = item ? (item[2] ?? '') : line;
      for (const sentence of splitSentences(body)) candidates.push(...splitClauses(sentence));
    });
    return { goal: intro ? normalizeSpace(intro.replace(/:$/, '')) : null, candidates, numbered };
  }
  const sentences = splitSentences(text);
  const first = sentences[0] ?? '';
  const rest = sentences.slice(1).flatMap(splitClauses);
  // "We want to build X. First …, then …": the opening sentence is the goal, not a step.
  if (rest.length >= 2 && (GOAL_STATEMENT.test(first) || first.endsWith(':'))) {
    return { goal: normalizeSpace(first.replace(/[:.]$/, '')), candidates: rest, numbered: false };
  }
  return { goal: null, candidates: sentences.flatMap(splitClauses), numbered: false };
}

function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return value.trim() ? [value.trim()] : [];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  return [];
}

function firstString(obj: Record<string, unknown>, keys: string[]): string | null {
  for (const k of keys) {
    const v = obj[k];
    if (typeof v === 'string' && v.trim()) return v.trim();
  }
  return null;
}

function isPhase(value: unknown): value is Phase {
  return typeof value === 'string' && (PHASES as readonly string[]).includes(value);
}

function stepFromJson(item: unknown): Candidate[] {
  if (typeof item === 'string') {
    const text = cleanTitle(item);
    return isActionable(text) ? [{ text, marker: null }] : [];
  }
  if (item && typeof item === 'object') {
    const obj = item as Record<string, unknown>;
    const title = firstString(obj, ['title', 'name', 'step', 'task', 'summary', 'description', 'action']);
    if (!title) return [];
    const phase = isPhase(obj.phase) ? obj.phase : undefined;
    return [{ text: cleanTitle(title), marker: null, ...(phase ? { phase } : {}) }];
  }
  return [];
}

function allStrings(value: unknown, depth = 0): string[] {
  if (depth > 4) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap((v) => allStrings(v, depth + 1));
  if (value && typeof value === 'object')
    return Object.values(value).flatMap((v) => allStrings(v, depth + 1));
  return [];
}

/** Input of any of the three modes → the planner's request. */
export function readRequest(input: AgentInput): PlanRequest {
  if (input.type === 'text') return fromText('text', input.text, [], null);
  if (input.type === 'packet') {
    const { goal, constraints = [], context } = input.packet;
    const fromGoal = fromText('packet', goal, constraints, context ?? null);
    if (fromGoal.candidates.length <= 1 && context) {
      const fromContext = parseTextBody(context);
      if (fromContext.candidates.length >= 2) {
        return {
          ...fromGoal,
          candidates: fromContext.candidates,
          ordering: fromContext.numbered || hasOrderMarkers(fromContext.candidates) ? 'explicit' : 'phase',
        };
      }
    }
    return fromGoal;
  }
  const json = input.json;
  if (typeof json === 'string') return { ...fromText('json', json, [], null) };
  if (Array.isArray(json)) {
    const candidates = json.flatMap(stepFromJson);
    return {
      inputType: 'json',
      goal: candidates[0]?.text ?? 'Engineering plan',
      candidates,
      ordering: 'explicit',
      constraints: [],
      context: null,
    };
  }
  if (json && typeof json === 'object') {
    const obj = json as Record<string, unknown>;
    const goal = firstString(obj, [
      'goal',
      'objective',
      'request',
      'title',
      'summary',
      'description',
      'task',
    ]);
    const constraints = stringsOf(obj.constraints ?? obj.requirements ?? []);
    const context = firstString(obj, ['context', 'background', 'notes']);
    const list = obj.steps ?? obj.tasks ?? obj.plan ?? obj.todo ?? obj.items;
    if (Array.isArray(list) && list.length > 0) {
      const candidates = list.flatMap(stepFromJson);
      if (candidates.length > 0) {
        return {
          inputType: 'json',
          goal: goal ?? candidates[0]?.text ?? 'Engineering plan',
          candidates,
          // A JSON array is an ordered list by definition.
          ordering: 'explicit',
          constraints,
          context,
        };
      }
    }
    const text = goal ?? allStrings(json).join('. ');
    return fromText('json', text || 'Engineering plan', constraints, context);
  }
  return fromText('json', allStrings(json).join('. ') || 'Engineering plan', [], null);
}

function hasOrderMarkers(candidates: Candidate[]): boolean {
  return candidates.some((c) => c.marker !== null);
}

function fromText(
  inputType: AgentInput['type'],
  text: string,
  constraints: string[],
  context: string | null,
): PlanRequest {
  const parsed = parseTextBody(text);
  const goal = parsed.goal ?? normalizeSpace(splitSentences(text)[0] ?? text).replace(/[.;:!]$/, '');
  return {
    inputType,
    goal: goal.length > 300 ? `${goal.slice(0, 299)}…` : goal,
    candidates: parsed.candidates,
    ordering: parsed.numbered || hasOrderMarkers(parsed.candidates) ? 'explicit' : 'phase',
    constraints: constraints.map(normalizeSpace).filter(Boolean),
    context: context ? normalizeSpace(context) : null,
  };
}

/** A lone step is expanded into the phases around it, so a one-line request still gets a plan. */
function expandSingle(candidate: Candidate): { title: string; phase: Phase }[] {
  const phase = candidate.phase ?? classifyPhase(candidate.text);
  const base = candidate.text;
  const lower = base.charAt(0).toLowerCase() + base.slice(1);
  const steps: { title: string; phase: Phase }[] = [];
  const rank = PHASE_RANK[phase];
  if (rank > PHASE_RANK.design && rank <= PHASE_RANK.implement) {
    steps.push({ title: `Design the approach to ${lower}`, phase: 'design' });
  }
  if (rank >= PHASE_RANK.release) steps.push({ title: `Verify readiness to ${lower}`, phase: 'test' });
  steps.push({ title: base, phase });
  if (rank < PHASE_RANK.test) steps.push({ title: `Test and verify: ${lower}`, phase: 'test' });
  return steps;
}

/** Ordered steps with dependencies, and the ordering rule that produced them. */
export function buildSteps(request: PlanRequest): { steps: DraftStep[]; ordering: PlanRequest['ordering'] } {
  const seen = new Set<string>();
  const unique = request.candidates.filter((c) => {
    const key = c.text.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  let drafts: { title: string; phase: Phase; marker: Marker }[];
  let ordering = request.ordering;
  if (unique.length === 0) {
    drafts = expandSingle({ text: cleanTitle(request.goal), marker: null }).map((s) => ({
      ...s,
      marker: null,
    }));
    ordering = 'explicit';
  } else if (unique.length === 1 && unique[0]) {
    drafts = expandSingle(unique[0]).map((s) => ({ ...s, marker: null }));
    ordering = 'explicit';
  } else {
    drafts = unique.map((c) => ({
      title: c.text,
      phase: c.phase ?? classifyPhase(c.text),
      marker: c.marker,
    }));
  }
  drafts = drafts.slice(0, MAX_STEPS);

  if (ordering === 'explicit') {
    // "first" leads and "finally" closes; everything else keeps the order the request gave.
    const firsts = drafts.filter((d) => d.marker === 'first');
    const lasts = drafts.filter((d) => d.marker === 'last');
    const middle = drafts.filter((d) => d.marker !== 'first' && d.marker !== 'last');
    const ordered = [...firsts, ...middle, ...lasts];
    const steps = ordered.map((d, i) => ({
      id: `s${i + 1}`,
      title: d.title,
      phase: d.phase,
      dependsOn: i === 0 ? [] : [`s${i}`],
      keywords: stepKeywords(d.title),
    }));
    return { steps, ordering };
  }

  // No stated order: order by phase (stable), and let each step wait for the closest earlier phase;
  // steps of one phase share their dependencies and can run side by side.
  const ordered = drafts
    .map((d, i) => ({ d, i }))
    .sort((a, b) => PHASE_RANK[a.d.phase] - PHASE_RANK[b.d.phase] || a.i - b.i)
    .map(({ d }) => d);
  const steps: DraftStep[] = ordered.map((d, i) => ({
    id: `s${i + 1}`,
    title: d.title,
    phase: d.phase,
    dependsOn: [],
    keywords: stepKeywords(d.title),
  }));
  for (const step of steps) {
    const earlier = steps.filter((s) => PHASE_RANK[s.phase] < PHASE_RANK[step.phase]);
    const nearest = Math.max(-1, ...earlier.map((s) => PHASE_RANK[s.phase]));
    step.dependsOn = earlier.filter((s) => PHASE_RANK[s.phase] === nearest).map((s) => s.id);
  }
  return { steps, ordering };
}
