import type { AgentDelegation } from '@pkgreg/contracts';

// Where an admitted call runs. The edge's dispatch hands every tool and task call to its backend's Runtime
// and never asks which kind it is: the development backend and each hosted tenant have a local runtime on
// their own storage (local-runtime.ts; the edge's tenant-provisioner.ts), a tunnel session one that
// forwards the call to the caller's own machine (the edge's tunnel/tunnel-runtime.ts), where the local
// runtime (apps/local-runtime) runs it on a local runtime of its own.

/** Who is calling, already admitted. */
export interface Caller {
  namespace: string;
  clientId: string;
  scopes: ReadonlySet<string>;
  /** The account a person's app acts for (a delegated token); absent for machine clients. */
  person?: string;
  /**
   * Set by the edge when it reads the registry as this caller's person (its delegation assertions'
   * condition): an invoke's job carries it so the runtime worker reads as them too. Never forwarded
   * through a tunnel (a local machine holds no edge key); an identity, never a credential.
   */
  delegation?: AgentDelegation;
}

export interface Runtime {
  /** Runs a runtime tool (memory, compact, invoke) with the arguments admission validated. */
  callTool(caller: Caller, name: string, args: Record<string, unknown>): Promise<object>;
  /** tasks/get: the caller's own task record (task_not_found for anyone else's). */
  getTask(caller: Caller, taskId: string): Promise<object>;
  /** tasks/result: the caller's own task's result (task_not_ready until it ends). */
  getTaskResult(caller: Caller, taskId: string): Promise<object>;
}
