import { AGENT_CATALOG, type BackendMode, type TaskRecord, TOOL_NAMES } from '@pkgreg/contracts';
import type { Admitted } from '../admission/admission.js';
import type { Catalog } from '../catalog/catalog.js';
import type { DelegationAssertions } from '../catalog/delegation-assertions.js';
import type { Env } from '../env.js';
import type { ToolSpec } from '../tools/tool-catalog.js';
import {
  acknowledgedTaskChange,
  createdTask,
  detailedTask,
  outcomeWithin,
  taskHandleOf,
} from './modern-tasks.js';
import { discoverResult, initializeResult, systemInfo, toolDescriptor } from './server-info.js';
import { SerializedResult, StaticResult, toolCallResult } from './transport.js';

// Answers an admitted request. What reads no tenant state is answered here (initialize, ping, tools/list,
// system.info, agents.list; skill:// resources and the registry tools from the catalog, the same for
// every backend); tool and task calls go to the backend's Runtime, whichever backend it is. The catalog
// is read as the person a delegated token acts for (with the edge's assertion), else anonymously.

export type Dispatch = (admitted: Admitted) => Promise<object>;

const BACKEND_MODES: readonly BackendMode[] = ['development', 'local_tunnel', 'hosted'];

export function createDispatch(
  env: Env,
  tools: readonly ToolSpec[],
  catalog: Catalog,
  assertions: DelegationAssertions,
): Dispatch {
  const descriptors = new Map(tools.map((t) => [t.name, toolDescriptor(t)]));
  // 2026-07-28 tools carry no `execution` (the tasks extension decides per request).
  const modernDescriptors = new Map(
    [...descriptors].map(([name, { execution: _execution, ...descriptor }]) => [name, descriptor]),
  );
  const discovered = new StaticResult(new SerializedResult(JSON.stringify(discoverResult(env))));
  const pollWindow = env.EDGE_MAX_TASK_POLL_WINDOW_SECONDS;
  const untaskedWaitMs = env.EDGE_UNTASKED_WAIT_MS;
  // Edge-local tool results depend only on the backend mode: serialized once at start.
  const edgeResults = new Map<string, Map<BackendMode, StaticResult>>();
  for (const t of tools.filter((x) => !x.runtime && !x.registry)) {
    edgeResults.set(
      t.name,
      new Map(BACKEND_MODES.map((mode) => [mode, new StaticResult(toolCallResult(edgeTool(t, env, mode)))])),
    );
  }
  const edgeResult = (spec: ToolSpec, mode: BackendMode): StaticResult => {
    const result = edgeResults.get(spec.name)?.get(mode);
    if (!result) throw new Error(`${spec.name} is not answered by the edge`);
    return result;
  };

  /** tools/list: the enabled tools this caller holds the scopes for. */
  function toolsVisibleTo(scopes: ReadonlySet<string>, modern: boolean) {
    const shown = modern ? modernDescriptors : descriptors;
    return tools.filter((t) => t.visibleTo(scopes)).map((t) => shown.get(t.name));
  }

  return async function dispatch(admitted) {
    const { caller, backend, modern } = admitted;
    switch (admitted.method) {
      case 'initialize':
        return initializeResult(env, admitted.protocolVersion);
      case 'server/discover':
        return discovered;
      case 'ping':
        return {};
      case 'tools/list':
        return { tools: toolsVisibleTo(caller.scopes, modern !== undefined) };
      case 'tools/call': {
        const { spec, args } = admitted;
        if (spec.registry) {
          const assertion = assertions.of(admitted.auth);
          return toolCallResult(await spec.registry(catalog, args, assertion && (await assertion)));
        }
        if (!spec.runtime) return edgeResult(spec, backend.mode);
        // A person's app: an invoke's job names the person, never the token, and the worker reads the
        // registry as them with an assertion of its own (docs/agent.md, "Privacy").
        const delegation = assertions.delegationOf(admitted.auth);
        const result = await backend
          .runtime()
          .callTool(delegation ? { ...caller, delegation } : caller, spec.name, args);
        const handle = modern ? taskHandleOf(result) : undefined;
        if (modern && handle) {
          // A 2026-07-28 client with the tasks extension gets the extension's task to poll; one without
          // it, the call's outcome, waited for (it could not poll a task).
          if (modern.tasks) {
            const record = await backend
              .runtime()
              .getTask(caller, handle.taskId)
              .then(
                (task) => task as TaskRecord,
                () => undefined,
              );
            return createdTask(handle, record, pollWindow);
          }
          const ended = await outcomeWithin(backend.runtime(), caller, handle.taskId, untaskedWaitMs);
          if (ended) return ended;
        }
        return toolCallResult(result);
      }
      case 'tasks/get':
        if (modern) return detailedTask(backend.runtime(), caller, admitted.taskId, pollWindow);
        return backend.runtime().getTask(caller, admitted.taskId);
      case 'tasks/result':
        return backend.runtime().getTaskResult(caller, admitted.taskId);
      case 'tasks/update':
      case 'tasks/cancel':
        return acknowledgedTaskChange(backend.runtime(), caller, admitted.taskId);
      case 'resources/list': {
        const assertion = assertions.of(admitted.auth);
        return catalog.listResources(admitted.cursor, assertion && (await assertion));
      }
      case 'resources/templates/list':
        return catalog.resourceTemplates(admitted.cursor);
      case 'resources/read': {
        // An anonymous read waits on nothing here: `of` answers undefined at once.
        const assertion = assertions.of(admitted.auth);
        return catalog.readResource(admitted.uri, assertion && (await assertion));
      }
      case 'skills/list': {
        const assertion = assertions.of(admitted.auth);
        return catalog.listSkills(admitted.cursor, {
          assertion: assertion && (await assertion),
          includeHighRisk: admitted.includeHighRisk,
        });
      }
      case 'skills/get': {
        const assertion = assertions.of(admitted.auth);
        return catalog.getSkill(admitted.uri, {
          assertion: assertion && (await assertion),
          includeHighRisk: admitted.includeHighRisk,
        });
      }
      case 'resources/directory/read': {
        const assertion = assertions.of(admitted.auth);
        return catalog.readDirectory(admitted.uri, admitted.cursor, {
          assertion: assertion && (await assertion),
        });
      }
    }
  };
}

/** The result of a tool the edge answers itself in every backend (it reads no tenant state). */
function edgeTool(spec: ToolSpec, env: Env, mode: BackendMode): object {
  if (spec.name === TOOL_NAMES.agentsList) return { agents: AGENT_CATALOG };
  if (spec.name === TOOL_NAMES.systemInfo) return systemInfo(env, mode);
  throw new Error(`${spec.name} is not answered by the edge`);
}
