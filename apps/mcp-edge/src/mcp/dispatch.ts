import {
  AGENT_CATALOG,
  type BackendMode,
  type RegistryGetArgs,
  type RegistrySearchArgs,
  TOOL_NAMES,
} from '@pkgreg/contracts';
import type { Caller } from '@pkgreg/runtime';
import type { Backend } from '../admission/backends.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Env } from '../env.js';
import type { ToolSpec } from '../tools/tool-catalog.js';
import type { Exchange, McpMethod } from './exchange.js';
import { initializeResult, systemInfo, toolDescriptor } from './server-info.js';
import { StaticResult, toolCallResult } from './transport.js';

// Answers an admitted request. What reads no tenant state is answered here (initialize, ping, tools/list,
// system.info, agents.list; skill:// resources and the registry tools from the catalog, the same for
// every backend); tool and task calls go to the backend's Runtime, whichever backend it is.

export type Dispatch = (ex: Exchange, method: McpMethod) => Promise<object>;

const BACKEND_MODES: readonly BackendMode[] = ['development', 'local_tunnel', 'hosted'];

export function createDispatch(env: Env, tools: readonly ToolSpec[], catalog: Catalog): Dispatch {
  const descriptors = new Map(tools.map((t) => [t.name, toolDescriptor(t)]));
  // Edge-local tool results depend only on the backend mode: serialized once at start.
  const edgeResults = new Map<string, Map<BackendMode, StaticResult>>();
  for (const t of tools.filter((x) => !x.runtime && !x.registry)) {
    edgeResults.set(
      t.name,
      new Map(BACKEND_MODES.map((mode) => [mode, new StaticResult(toolCallResult(edgeTool(t, env, mode)))])),
    );
  }

  /** tools/list: the enabled tools this caller holds the scopes for. */
  function toolsVisibleTo(scopes: ReadonlySet<string>) {
    return tools.filter((t) => t.visibleTo(scopes)).map((t) => descriptors.get(t.name));
  }

  return async function dispatch(ex, method) {
    // Admission has set these for every method it lets through.
    const caller = ex.caller as Caller;
    const backend = ex.backend as Backend;
    switch (method) {
      case 'initialize':
        return initializeResult(env, ex.protocolVersion as string);
      case 'ping':
        return {};
      case 'tools/list':
        return { tools: toolsVisibleTo(caller.scopes) };
      case 'tools/call': {
        const spec = ex.spec as ToolSpec;
        const args = ex.args as Record<string, unknown>;
        if (spec.registry) return toolCallResult(await registryTool(catalog, spec, args));
        if (!spec.runtime) return edgeResults.get(spec.name)?.get(backend.mode) as StaticResult;
        return toolCallResult(await backend.runtime().callTool(caller, spec.name, args));
      }
      case 'tasks/get':
        return backend.runtime().getTask(caller, ex.taskId as string);
      case 'tasks/result':
        return backend.runtime().getTaskResult(caller, ex.taskId as string);
      case 'resources/list':
        return catalog.listResources(ex.cursor);
      case 'resources/templates/list':
        return catalog.resourceTemplates(ex.cursor);
      case 'resources/read':
        return catalog.readResource(ex.resourceUri as string);
    }
  };
}

/** A registry tool's result (its arguments are validated by admission). */
function registryTool(catalog: Catalog, spec: ToolSpec, args: Record<string, unknown>): Promise<object> {
  if (spec.name === TOOL_NAMES.registrySearch) return catalog.search(args as RegistrySearchArgs);
  if (spec.name === TOOL_NAMES.registryGet) return catalog.get(args as RegistryGetArgs);
  throw new Error(`${spec.name} is not a registry tool`);
}

/** The result of a tool the edge answers itself in every backend (it reads no tenant state). */
function edgeTool(spec: ToolSpec, env: Env, mode: BackendMode): object {
  if (spec.name === TOOL_NAMES.agentsList) return { agents: AGENT_CATALOG };
  if (spec.name === TOOL_NAMES.systemInfo) return systemInfo(env, mode);
  throw new Error(`${spec.name} is not answered by the edge`);
}
