import { createDb, type Db, migrateToLatest } from '@pkgreg/db';
import { createLocalRuntime, type LocalRuntime, type RuntimeSettings } from '@pkgreg/runtime';
import { openQueueJobs } from '@pkgreg/tasks';

// decisions.md, Backends: a hosted tenant is a local runtime on its own Postgres schema (`tenant_<tenant>`)
// and queue prefix. It is provisioned by the first call that needs it, not at start (most bound tenants
// may never call) and not by admission (a refused request must not open a pool or run a migration).

export interface TenantProvisionerOptions {
  /** The edge's own database: tenant schemas are migrated through it. */
  db: Db;
  databaseUrl: string;
  /** Where tenants' BullMQ queues live. */
  redisUrl: string;
  /** The development backend's queue prefix; a tenant's is `{queuePrefix}:tenant:<tenant>`. */
  queuePrefix: string;
  settings: RuntimeSettings;
}

export interface TenantProvisioner {
  /** The tenant's runtime; its calls wait for the tenant's schema to be migrated. */
  runtimeFor(tenant: string): LocalRuntime;
  /** Closes every provisioned runtime and its pool. */
  close(): Promise<void>;
}

export function createTenantProvisioner(options: TenantProvisionerOptions): TenantProvisioner {
  const provisioned = new Map<string, { runtime: LocalRuntime; db: Db }>();
  // Tenant migrations run one at a time: concurrent ones race on shared objects (extensions, types).
  let migrating: Promise<unknown> = Promise.resolve();

  function provision(tenant: string): LocalRuntime {
    const schema = `tenant_${tenant}`;
    const db = createDb(options.databaseUrl, { schema, applicationName: `pkgreg-edge-${tenant}` });
    const ready = migrating.then(() => migrateToLatest(options.db, { schema })).then(() => undefined);
    migrating = ready.catch(() => undefined);
    // A failed migration is retried by the next call rather than cached forever.
    ready.catch(() => {
      provisioned.delete(tenant);
      void db.destroy();
    });
    const queuePrefix = `${options.queuePrefix}:tenant:${tenant}`;
    const jobs = () => openQueueJobs({ connection: options.redisUrl, prefix: queuePrefix });
    const runtime = afterMigration(ready, createLocalRuntime({ ...options.settings, db, jobs }));
    provisioned.set(tenant, { runtime, db });
    return runtime;
  }

  return {
    runtimeFor(tenant) {
      return provisioned.get(tenant)?.runtime ?? provision(tenant);
    },
    async close() {
      await Promise.allSettled(
        [...provisioned.values()].map(({ runtime, db }) =>
          Promise.allSettled([runtime.close(), db.destroy()]),
        ),
      );
    },
  };
}

/** The tenant's runtime whose calls first wait for its schema (and fail with its migration). */
function afterMigration(ready: Promise<void>, runtime: LocalRuntime): LocalRuntime {
  return {
    async callTool(caller, name, args) {
      await ready;
      return runtime.callTool(caller, name, args);
    },
    async getTask(caller, taskId) {
      await ready;
      return runtime.getTask(caller, taskId);
    },
    async getTaskResult(caller, taskId) {
      await ready;
      return runtime.getTaskResult(caller, taskId);
    },
    close: () => runtime.close(),
  };
}
