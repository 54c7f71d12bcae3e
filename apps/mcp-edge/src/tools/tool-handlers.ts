import {
  AGENT_CATALOG,
  type AgentsInvokeArgs,
  findAgent,
  forbiddenBindingTiers,
  type MemoryCompactArgs,
  type MemoryDeleteArgs,
  type MemoryGetArgs,
  type MemoryPutArgs,
  type MemorySearchArgs,
  memoryScope,
  RejectError,
  type SystemInfoResult,
  TOOL_NAMES,
} from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import {
  assertNotQuarantined,
  deleteEntry,
  type EntryReader,
  getEntry,
  putEntry,
  searchEntries,
  withIdempotency,
} from '@pkgreg/memory';
import { type SubmitDeps, submitCompact, submitInvoke } from '@pkgreg/tasks';
import { readableTiers } from './tool-catalog.js';

// What each public tool does once admitted. Memory and task logic live in @pkgreg/memory and
// @pkgreg/tasks; agent runs execute in the runtime worker (the edge only enqueues and waits).

/** The runtime a call executes against: the development database, a hosted tenant's, or the local one. */
export interface RuntimeContext {
  db: Db;
  /** memory.get lookups of this runtime, sharing one query per event-loop turn. */
  entries: EntryReader;
  /** Queue and task events of this runtime, created on first use. */
  submitDeps(): Promise<SubmitDeps>;
}

/** Who is calling, already admitted. */
export interface Caller {
  namespace: string;
  clientId: string;
  scopes: ReadonlySet<string>;
}

function requireScope(caller: Caller, scope: string): void {
  if (!caller.scopes.has(scope)) {
    throw new RejectError('scope_insufficient', `missing scope ${scope}`, { requiredScopes: [scope] });
  }
}

/** Agent checks that need no storage (run before quotas are counted). */
export function checkInvokeBinding(args: AgentsInvokeArgs): void {
  const agent = findAgent(args.agentId);
  if (!agent) throw new RejectError('agent_not_available', `agent ${args.agentId} is not available`);
  if (args.memory) {
    const forbidden = forbiddenBindingTiers(agent, args.memory);
    if (forbidden.length) {
      throw new RejectError('memory_binding_forbidden', `binding not allowed: ${forbidden.join(', ')}`, {
        forbidden,
      });
    }
  }
}

/** Runs a runtime-backed tool (memory, compact, invoke). Edge-local tools are in `edgeToolResult`. */
export async function runRuntimeTool(
  name: string,
  args: unknown,
  caller: Caller,
  runtime: RuntimeContext,
): Promise<object> {
  const { db } = runtime;
  const ns = caller.namespace;
  const idempotent = <R extends object>(key: string | undefined, run: () => Promise<R>) =>
    withIdempotency(db, { namespace: ns, toolName: name, key, args }, run);

  switch (name) {
    case TOOL_NAMES.memoryPut: {
      const a = args as MemoryPutArgs;
      return idempotent(a.idempotencyKey, () => putEntry(db, ns, a));
    }
    case TOOL_NAMES.memoryGet: {
      const a = args as MemoryGetArgs;
      const result = await getEntry(db, ns, a, { reader: runtime.entries });
      requireScope(caller, memoryScope(result.entry.tier, 'read'));
      return result;
    }
    case TOOL_NAMES.memorySearch: {
      const a = args as MemorySearchArgs;
      return searchEntries(db, ns, { ...a, tiers: a.tiers ?? readableTiers(caller.scopes) });
    }
    case TOOL_NAMES.memoryDelete: {
      const a = args as MemoryDeleteArgs;
      return idempotent(a.idempotencyKey, async () => {
        // The delete scope is tier-specific: learn the entry's tier before touching it.
        const { entry } = await getEntry(db, ns, { entryId: a.entryId });
        requireScope(caller, memoryScope(entry.tier, 'delete'));
        return deleteEntry(db, ns, a);
      });
    }
    case TOOL_NAMES.memoryCompact: {
      const a = args as MemoryCompactArgs;
      return idempotent(a.idempotencyKey, async () => {
        await assertNotQuarantined(db, ns);
        return submitCompact(await runtime.submitDeps(), {
          namespace: ns,
          clientId: caller.clientId,
          args: a,
        });
      });
    }
    case TOOL_NAMES.agentsInvoke: {
      const a = args as AgentsInvokeArgs;
      return idempotent(a.idempotencyKey, async () => {
        if (a.memory?.writeTiers.length) await assertNotQuarantined(db, ns);
        return submitInvoke(await runtime.submitDeps(), {
          namespace: ns,
          clientId: caller.clientId,
          args: a,
        });
      });
    }
    default:
      throw new RejectError('method_not_found', `unknown tool ${name}`);
  }
}

/** Tools answered by the edge itself in every backend (they read no tenant state). */
export function edgeToolResult(name: string, systemInfo: SystemInfoResult): object {
  if (name === TOOL_NAMES.agentsList) return { agents: AGENT_CATALOG };
  if (name === TOOL_NAMES.systemInfo) return systemInfo;
  throw new RejectError('method_not_found', `unknown tool ${name}`);
}
