import {
  type AgentInput,
  ENGINEERING_WORKFLOW_AGENT_ID,
  MEMORY_LIMITS,
  type MemoryBinding,
  type OutputItem,
} from '@pkgreg/contracts';
import type { Database, Db } from '@pkgreg/db';
import { extractSearchTerms, insertEntries, searchEntries } from '@pkgreg/memory';
import type { Transaction } from 'kysely';
import { truncateBytes } from '../text/sentences.js';
import type { Phase } from './lexicon.js';
import { type ModelConfig, refineTitles } from './model-refiner.js';
import {
  findPackagesForStep,
  memoizeFinder,
  type PackageFinder,
  type RecommendedPackage,
} from './package-finder.js';
import { buildSteps, readRequest } from './plan-builder.js';

// Agent engineering.workflow (decisions.md): request → plan with ordered steps, dependencies, the
// registry's packages per step and the ltm facts it used. Reads happen before the task's completion
// transaction; the one write (the stm record of the run) happens inside it, so it lands once per run.

export interface WorkflowDeps {
  db: Db;
  finder: PackageFinder;
  model?: ModelConfig | null;
}

export interface WorkflowRun {
  taskId: string;
  runId: string;
  namespace: string;
  input: AgentInput;
  memory?: MemoryBinding | undefined;
}

export interface FactUsed {
  entryId: string;
  content: string;
}

export interface PlanStep {
  id: string;
  title: string;
  phase: Phase;
  dependsOn: string[];
  keywords: string[];
  packages: RecommendedPackage[];
  /** Ids of the ltm facts that share terms with this step. */
  factIds: string[];
}

export interface WorkflowPlan {
  agentId: string;
  runId: string;
  inputType: AgentInput['type'];
  goal: string;
  ordering: 'explicit' | 'phase';
  steps: PlanStep[];
  constraints: string[];
  context: string | null;
  factsUsed: FactUsed[];
  /** `model` when a model endpoint reworded the titles, else `rules`. */
  refinedBy: 'model' | 'rules';
  /** False when the registry search could not be reached: the plan then names no packages. */
  registryReachable: boolean;
}

const MAX_FACTS = 5;

function allowsRead(binding: MemoryBinding | undefined, tier: 'ltm' | 'stm'): boolean {
  return binding?.readTiers.includes(tier) ?? false;
}

function allowsWrite(binding: MemoryBinding | undefined, tier: 'ltm' | 'stm'): boolean {
  return binding?.writeTiers.includes(tier) ?? false;
}

async function readFacts(db: Db, namespace: string, query: string): Promise<FactUsed[]> {
  if (extractSearchTerms(query).length === 0) return [];
  const found = await searchEntries(db, namespace, {
    query: query.slice(0, 1024),
    tiers: ['ltm'],
    topK: MAX_FACTS,
  });
  return found.results.map((r) => ({ entryId: r.entry.entryId, content: r.entry.content }));
}

export async function planWorkflow(deps: WorkflowDeps, run: WorkflowRun): Promise<WorkflowPlan> {
  const request = readRequest(run.input);
  const { steps: drafts, ordering } = buildSteps(request);
  const finder = memoizeFinder(deps.finder);

  const factQuery = [request.goal, ...drafts.flatMap((d) => d.keywords)].join(' ');
  const factsPromise = allowsRead(run.memory, 'ltm') ? readFacts(deps.db, run.namespace, factQuery) : [];
  const modelPromise = deps.model
    ? refineTitles(deps.model, { goal: request.goal, steps: drafts })
    : Promise.resolve(null);
  let registryReachable = true;
  const packages = await Promise.all(
    drafts.map((d) =>
      findPackagesForStep(finder, d).catch(() => {
        registryReachable = false;
        return [] as RecommendedPackage[];
      }),
    ),
  );
  const [facts, refined] = await Promise.all([factsPromise, modelPromise]);

  const factTerms = facts.map((f) => ({ id: f.entryId, terms: new Set(extractSearchTerms(f.content)) }));
  const steps: PlanStep[] = drafts.map((d, i) => ({
    id: d.id,
    title: refined?.refined ? (refined.titles[i] ?? d.title) : d.title,
    phase: d.phase,
    dependsOn: d.dependsOn,
    keywords: d.keywords,
    packages: packages[i] ?? [],
    factIds: factTerms
      .filter((f) => extractSearchTerms(d.title).some((t) => t.length > 2 && f.terms.has(t)))
      .map((f) => f.id),
  }));
  return {
    agentId: ENGINEERING_WORKFLOW_AGENT_ID,
    runId: run.runId,
    inputType: request.inputType,
    goal: request.goal,
    ordering,
    steps,
    constraints: request.constraints,
    context: request.context,
    factsUsed: facts,
    refinedBy: refined?.refined ? 'model' : 'rules',
    registryReachable,
  };
}

export function renderSummary(plan: WorkflowPlan): string {
  const lines = [
    `Plan for: ${plan.goal}`,
    `${plan.steps.length} steps, ordered ${plan.ordering === 'explicit' ? 'as requested' : 'by phase'}.`,
    '',
  ];
  for (const [i, step] of plan.steps.entries()) {
    lines.push(`${i + 1}. [${step.phase}] ${step.title}`);
    if (step.dependsOn.length > 0) lines.push(`   after: ${step.dependsOn.join(', ')}`);
    if (step.packages.length > 0)
      lines.push(`   packages: ${step.packages.map((p) => p.package).join(', ')}`);
  }
  if (plan.constraints.length > 0) lines.push('', `Constraints: ${plan.constraints.join('; ')}`);
  if (plan.factsUsed.length > 0) {
    lines.push('', 'Facts used:');
    for (const f of plan.factsUsed) lines.push(`- ${f.content}`);
  }
  if (!plan.registryReachable)
    lines.push('', 'The registry could not be searched; no packages are recommended.');
  return lines.join('\n');
}

export function renderOutputs(plan: WorkflowPlan): OutputItem[] {
  return [
    { type: 'text', text: renderSummary(plan) },
    { type: 'text', text: JSON.stringify(plan) },
  ];
}

/** With the stm write binding, one stm entry records the run (inside the completion transaction). */
export async function recordRun(
  trx: Transaction<Database>,
  run: WorkflowRun,
  plan: WorkflowPlan,
): Promise<string | null> {
  if (!allowsWrite(run.memory, 'stm')) return null;
  const content = truncateBytes(
    `${ENGINEERING_WORKFLOW_AGENT_ID} planned "${plan.goal}": ${plan.steps
      .map((s, i) => `${i + 1}. ${s.title}`)
      .join('; ')}.`,
    MEMORY_LIMITS.maxContentBytes,
  );
  const [entry] = await insertEntries(trx, run.namespace, 'stm', [
    {
      content,
      tags: ['engineering.workflow', 'plan'],
      metadata: {
        agentId: ENGINEERING_WORKFLOW_AGENT_ID,
        runId: run.runId,
        taskId: run.taskId,
        steps: String(plan.steps.length),
      },
    },
  ]);
  return entry?.entryId ?? null;
}
