import type { RunDeps } from '@pkgreg/agents';
import { deriveDelegatedNamespace } from '@pkgreg/contracts';
import type { Db } from '@pkgreg/db';
import { createDelegationAssertions, type Logger, readActiveDelegationKey } from '@pkgreg/server-kit';

// An agent run reads the registry as the person its job names (docs/agent.md, "Privacy"). The edge puts
// the person and the app in the job only for a token its own delegation assertions honour; the worker
// signs an assertion of its own for them, with the edge's active delegation key read from the shared
// database (never the key of the edge's access tokens), and the registry's usual check (the edge's
// delegation key, the person's delegation still live, the account not suspended) decides what the run may
// read. Job data never holds the assertion: it is signed here, per run.

export interface DelegatedReadSettings {
  /** The edge's issuer, `<PKGREG_PUBLIC_BASE_URL>/mcp`. */
  issuer: string;
  /** The registry's public URL: the assertions' audience. */
  audience: string;
}

export function createDelegatedReads(
  db: Db,
  settings: DelegatedReadSettings,
  logger: Logger,
): NonNullable<RunDeps['assertionsFor']> {
  return (delegation, task) => {
    // The edge derives a person's app's namespace from (issuer, app, person), and only the edge writes the
    // task row: a job naming someone its task does not belong to is not read as them, whoever queued it.
    const namespace = deriveDelegatedNamespace(settings.issuer, delegation.clientId, delegation.subject);
    if (namespace !== task.namespace) {
      logger.warn(
        { taskId: task.taskId },
        "agent.invoke names a person its task's namespace is not theirs under this worker's issuer " +
          "(is PKGREG_PUBLIC_BASE_URL the edge's?); the run reads the registry anonymously",
      );
      return undefined;
    }
    // One per run: its own Map keeps the one assertion it needs, gone with the run.
    const assertions = createDelegationAssertions({
      signingKey: () => readActiveDelegationKey(db),
      issuer: settings.issuer,
      audience: settings.audience,
      kept: new Map(),
    });
    let told = false;
    return () =>
      assertions.for(delegation).catch((error: unknown) => {
        // A deployment fault (no delegation key yet, the database away): the run's registry reads fail
        // and the model hears so; the operator hears why, once per run.
        if (!told) logger.error({ taskId: task.taskId, err: error }, 'could not sign a delegation assertion');
        told = true;
        throw error;
      });
  };
}
