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
import { DEFAULT_AGENT_LIMITS } from './model-loop/limits.js';
import type { AgentLimits, LimitName } from './model-loop/limits.js';
import { type LoopResult, runModelLoop } from './model-loop/loop.js';
import { type ChatProvider, createChatProvider } from './model-loop/providers.js';
import type { SkillSource } from './model-loop/skill-source.js';
import { type ModelConfig, refineTitles } from './model-refiner.js';
import {
  findPackagesForStep,
  memoizeFinder,
  type PackageFinder,
  type RecommendedPackage,
} from './package-finder.js';
import { buildSteps, type PlanRequest, readRequest, stepKeywords } from './plan-builder.js';

// Agent engineering.workflow (decisions.md): request → plan with ordered steps, dependencies, the
// registry's packages per step and the ltm facts it used. Reads happen before the task's completion
// transaction; the one write (the stm record of the run) happens inside it, so it lands once per run.

export interface WorkflowDeps {
  db: Db;
  finder: PackageFinder;
  model?: ModelConfig | null;
  /**
   * With a model, the registry's skills for the tool loop (docs/agent.md) and its limits; without a
   * skill source a model only rewords the rule planner's titles (the earlier refinement).
   */
  skills?: SkillSource | null;
  limits?: AgentLimits;
  /**
   * This run's delegation assertion, asked before each registry read of the tool loop; absent, the loop
   * reads anonymously (public skills only).
   */
  assertion?: (() => Promise<string>) | undefined;
  /** The run's progress, step by step (the worker writes it to the task's status message). */
  onProgress?: (message: string) => void | Promise<void>;
  /** Told once per model run how it went (the worker's token and outcome metrics). */
  onAgentRun?: (run: AgentRunSummary) => void;
}

/** How the model tool loop went; in the plan as `agentRun` (added to the result, optional). */
export interface AgentRunSummary {
  provider: 'openai' | 'anthropic';
  model: string;
  /** completed: the model's plan; partial: a limit ended the run; fallback: the model failed. */
  outcome: 'completed' | 'partial' | 'fallback';
  /** The limit that ended a partial run. */
  limit?: LimitName;
  /** Why a fallback run fell back. */
  fallbackReason?: 'timeout' | 'model_error' | 'malformed';
  steps: number;
  inputTokens: number;
  outputTokens: number;
  skillBytes: number;
  /** Failed model calls and malformed tool calls the run retried. */
  retries: number;
  /** Every skill whose SKILL.md the model read, at its exact version. */
  skillsLoaded: Array<{ package: string; version: string }>;
  /** Files beyond SKILL.md the model read, as `@scope/name@version/path`. */
  filesRead: string[];
  /** Time inside model calls and in all (ms). */
  modelMs: number;
  wallMs: number;
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
  /** Which planner made the steps: the model's tool loop, or the rules (no model, or its fallback). */
  planner?: 'model' | 'rules';
  /** The model tool loop's run, when a model is configured with the registry's skills. */
  agentRun?: AgentRunSummary;
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
  if (deps.model && deps.skills) return planWithModel(deps, deps.model, deps.skills, run, request);
  return planByRules(deps, run, request, Boolean(deps.model));
}

/** The rule planner, with the registry's packages per step; `refine` lets a model reword the titles. */
async function planByRules(
  deps: WorkflowDeps,
  run: WorkflowRun,
  request: PlanRequest,
  refine: boolean,
): Promise<WorkflowPlan> {
  const { steps: drafts, ordering } = buildSteps(request);
  const finder = memoizeFinder(deps.finder);

  const factQuery = [request.goal, ...drafts.flatMap((d) => d.keywords)].join(' ');
  const factsPromise = allowsRead(run.memory, 'ltm') ? readFacts(deps.db, run.namespace, factQuery) : [];
  const modelPromise =
    refine && deps.model
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
    planner: 'rules',
  };
}

// One SDK client per model configuration, not per run: it holds the connection pool.
const providers = new WeakMap<ModelConfig, ChatProvider>();

function providerOf(model: ModelConfig): ChatProvider {
  let provider = providers.get(model);
  if (!provider) {
    provider = createChatProvider({
      provider: model.provider ?? 'openai',
      baseUrl: model.baseUrl,
      model: model.model,
      apiKey: model.apiKey,
    });
    providers.set(model, provider);
  }
  return provider;
}

function summaryOf(result: LoopResult): AgentRunSummary {
  const { report, state } = result;
  return {
    provider: report.provider,
    model: report.model,
    outcome: result.outcome,
    ...(result.outcome === 'partial' ? { limit: result.limit } : {}),
    ...(result.outcome === 'fallback' ? { fallbackReason: result.reason } : {}),
    steps: report.steps,
    inputTokens: report.inputTokens,
    outputTokens: report.outputTokens,
    skillBytes: report.skillBytes,
    retries: report.retries,
    skillsLoaded: [...state.loaded.values()].map((s) => ({ package: s.package, version: s.version })),
    filesRead: state.filesRead,
    modelMs: report.modelMs,
    wallMs: report.wallMs,
  };
}

/**
 * The model's tool loop; a run a limit ended, or whose model failed, still answers with the rule
 * planner's steps, marked as such in `agentRun`.
 */
async function planWithModel(
  deps: WorkflowDeps,
  model: ModelConfig,
  skills: SkillSource,
  run: WorkflowRun,
  request: PlanRequest,
): Promise<WorkflowPlan> {
  const result = await runModelLoop(
    {
      provider: providerOf(model),
      callTimeoutMs: model.timeoutMs,
      limits: deps.limits ?? DEFAULT_AGENT_LIMITS,
      onProgress: deps.onProgress,
      tools: {
        skills,
        // As the caller's person when the worker signs for them, else as anyone (docs/agent.md, "Privacy").
        assertion: deps.assertion,
        maxSkillBytes: (deps.limits ?? DEFAULT_AGENT_LIMITS).maxSkillBytes,
        readMemory: allowsRead(run.memory, 'ltm')
          ? (query) => readFacts(deps.db, run.namespace, query)
          : undefined,
      },
    },
    {
      goal: request.goal,
      constraints: request.constraints,
      context: request.context,
      input:
        run.input.type === 'text'
          ? run.input.text
          : run.input.type === 'json'
            ? run.input.json
            : run.input.packet,
    },
  );
  const agentRun = summaryOf(result);
  deps.onAgentRun?.(agentRun);
  if (result.outcome !== 'completed') {
    const fallback = await planByRules(deps, run, request, false);
    return { ...fallback, agentRun };
  }

  // Ids become s1..sN in the model's order; a dependency only on an earlier step (the plan stays a DAG);
  // skills and facts only as this run read them, so a plan cannot name what the caller may not see.
  const ids = new Map(result.plan.steps.map((s, i) => [s.id, `s${i + 1}`]));
  const steps: PlanStep[] = result.plan.steps.map((s, i) => {
    const id = `s${i + 1}`;
    const packages: RecommendedPackage[] = [];
    for (const ref of s.skills) {
      const loaded = result.state.loaded.get(ref.package);
      if (!loaded || loaded.version !== ref.version || packages.some((p) => p.package === ref.package))
        continue;
      packages.push({
        package: loaded.package,
        description: loaded.description,
        kind: loaded.kind,
        verified: loaded.verified,
        version: loaded.version,
      });
    }
    return {
      id,
      title: s.title.replace(/\s+/g, ' '),
      phase: s.phase,
      dependsOn: [
        ...new Set(
          s.dependsOn.map((d) => ids.get(d)).filter((d): d is string => !!d && Number(d.slice(1)) < i + 1),
        ),
      ],
      keywords: stepKeywords(s.title),
      packages,
      factIds: [...new Set(s.factIds.filter((f) => result.state.facts.has(f)))],
    };
  });
  const cited = new Set(steps.flatMap((s) => s.factIds));
  return {
    agentId: ENGINEERING_WORKFLOW_AGENT_ID,
    runId: run.runId,
    inputType: request.inputType,
    goal: request.goal,
    ordering: 'explicit',
    steps,
    constraints: request.constraints,
    context: request.context,
    factsUsed: [...result.state.facts.values()].filter((f) => cited.has(f.entryId)),
    refinedBy: 'model',
    // As the rule planner says it: reads failed and none answered, so no skill could be recommended.
    registryReachable:
      !result.state.readFailed || result.state.searched.size > 0 || result.state.loaded.size > 0,
    planner: 'model',
    agentRun,
  };
}

const LIMIT_WORDS: Record<LimitName, string> = {
  steps: 'step limit',
  inputTokens: 'input token limit',
  outputTokens: 'output token limit',
  wallTime: 'wall time limit',
};

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
      lines.push(
        `   packages: ${step.packages.map((p) => (p.version ? `${p.package}@${p.version}` : p.package)).join(', ')}`,
      );
  }
  if (plan.constraints.length > 0) lines.push('', `Constraints: ${plan.constraints.join('; ')}`);
  if (plan.factsUsed.length > 0) {
    lines.push('', 'Facts used:');
    for (const f of plan.factsUsed) lines.push(`- ${f.content}`);
  }
  if (!plan.registryReachable)
    lines.push('', 'The registry could not be searched; no packages are recommended.');
  const run = plan.agentRun;
  if (run) {
    const usage = `${run.steps} model calls, ${run.inputTokens} tokens in, ${run.outputTokens} out`;
    if (run.outcome === 'completed') lines.push('', `Planned by the model (${run.model}): ${usage}.`);
    else if (run.outcome === 'partial')
      lines.push(
        '',
        `Partial result: the model run stopped at its ${LIMIT_WORDS[run.limit ?? 'steps']} (${usage}); ` +
          "the steps above are the rule planner's.",
      );
    else
      lines.push(
        '',
        `The model could not plan this (${run.fallbackReason ?? 'model_error'}); the steps above are the rule planner's.`,
      );
    if (run.skillsLoaded.length > 0 && run.outcome !== 'completed')
      lines.push(`Skills read: ${run.skillsLoaded.map((s) => `${s.package}@${s.version}`).join(', ')}`);
  }
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
