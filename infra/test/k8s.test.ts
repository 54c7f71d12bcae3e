import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUEUES } from '@pkgreg/contracts';
import { TEST_REDIS_URL, testKeyPrefix } from '@pkgreg/db/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { EnvSchema as EdgeEnv } from '../../apps/mcp-edge/src/env.ts';
import { EnvSchema as RegistryEnv } from '../../apps/registry-api/src/env.ts';
import { EnvSchema as WorkerEnv } from '../../apps/runtime-worker/src/env.ts';
import { type ManifestDoc, serviceAddress, validateManifests } from '../src/k8s.ts';

// infra/k8s as CI sees it: valid against the Kubernetes and KEDA schemas, every env name one its app
// reads, the KEDA triggers on the keys BullMQ really writes, and a broken copy refused.

const k8s = fileURLToPath(new URL('../k8s', import.meta.url));
const cli = fileURLToPath(new URL('../src/validate-k8s.ts', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'pkgreg-k8s-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const { docs, issues } = await validateManifests(k8s);
// biome-ignore lint/suspicious/noExplicitAny: manifests read by field name once validated
const find = (kind: string, name: string): ManifestDoc['object'] & Record<string, any> => {
  const doc = docs.find((d) => d.object.kind === kind && d.object.metadata?.name === name);
  if (!doc) throw new Error(`no ${kind}/${name} in infra/k8s`);
  return doc.object;
};

/** The variable names an app's env.ts reads (its zod object's keys, under any refinement or transform). */
function envNames(schema: unknown): Set<string> {
  const s = schema as { shape?: object; in?: { shape?: object } };
  const shape = s.shape ?? s.in?.shape;
  if (!shape) throw new Error('env schema without a shape');
  return new Set(Object.keys(shape));
}

it('validates every manifest against the schemas, with no unknown field or dangling reference', () => {
  expect(issues).toEqual([]);
  const kinds = docs.map((d) => `${d.object.kind}/${d.object.metadata?.name}`);
  for (const expected of [
    'Deployment/registry-api',
    'Deployment/mcp-edge',
    'Deployment/runtime-worker',
    'Job/pkgreg-migrate',
    'StatefulSet/redis',
    'HorizontalPodAutoscaler/registry-api',
    'HorizontalPodAutoscaler/mcp-edge',
    'ScaledObject/runtime-worker',
    'PodDisruptionBudget/registry-api',
    'PodDisruptionBudget/mcp-edge',
    'PodDisruptionBudget/runtime-worker',
  ])
    expect(kinds).toContain(expected);
});

it('gives each app only env names its env.ts reads, and the probes, ports and commands it serves', () => {
  const apps: Record<string, { env: Set<string>; args: string[] }> = {
    'registry-api': { env: envNames(RegistryEnv), args: ['node', 'apps/registry-api/dist/index.js'] },
    'mcp-edge': { env: envNames(EdgeEnv), args: ['node', 'apps/mcp-edge/dist/index.js'] },
    'runtime-worker': { env: envNames(WorkerEnv), args: ['node', 'apps/runtime-worker/dist/index.js'] },
  };
  for (const [name, app] of Object.entries(apps)) {
    const pod = find('Deployment', name).spec.template.spec;
    const [container] = pod.containers;
    expect(container.args).toEqual(app.args);
    const names = [
      ...container.env.map((e: { name: string }) => e.name),
      ...container.envFrom.flatMap((s: { configMapRef: { name: string } }) =>
        Object.keys(find('ConfigMap', s.configMapRef.name).data),
      ),
    ];
    expect(
      names.filter((n) => !app.env.has(n)),
      `${name}: names its env.ts does not read`,
    ).toEqual([]);
    // Dependencies are checked once before the first traffic; afterwards an outage is answered by the
    // apps themselves (503 + Retry-After), which needs the pods to stay in their Service.
    expect(container.startupProbe.httpGet.path).toBe('/readyz');
    expect(container.readinessProbe.httpGet.path).toBe('/healthz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(Object.keys(container.resources.requests).sort()).toEqual(['cpu', 'memory']);
    expect(container.resources.limits.memory).toBeDefined();
  }
  const migrate = find('Job', 'pkgreg-migrate').spec.template.spec.containers[0];
  expect(migrate.args).toEqual(['node', 'packages/db/dist/migrate-cli.js']);
  expect(migrate.env.map((e: { name: string }) => e.name)).toEqual(['DATABASE_URL']);
});

/** The environment a Deployment's container gets: its ConfigMaps, literal values and the example Secret. */
function deployedEnv(name: string): Record<string, string> {
  const [container] = find('Deployment', name).spec.template.spec.containers;
  const secret = find('Secret', 'pkgreg-secrets').stringData as Record<string, string>;
  const env: Record<string, string> = {};
  for (const source of container.envFrom)
    Object.assign(env, find('ConfigMap', source.configMapRef.name).data);
  for (const variable of container.env as { name: string; value?: string; valueFrom?: Obj }[]) {
    const key = variable.valueFrom?.secretKeyRef?.key;
    const value = variable.value ?? (key === undefined ? undefined : secret[key]);
    if (value !== undefined) env[variable.name] = value;
  }
  return env;
}
// biome-ignore lint/suspicious/noExplicitAny: manifests read by field name once validated
type Obj = Record<string, any>;

it('gives each app an environment its env.ts accepts, production checks included', () => {
  for (const [name, schema] of [
    ['registry-api', RegistryEnv],
    ['mcp-edge', EdgeEnv],
    ['runtime-worker', WorkerEnv],
  ] as const) {
    const parsed = schema.safeParse(deployedEnv(name));
    expect(parsed.error?.issues ?? [], name).toEqual([]);
    expect(parsed.data?.NODE_ENV, name).toBe('production');
  }
});

it('lets the autoscalers own the replica counts', () => {
  const targets = docs
    .filter((d) => d.object.kind === 'HorizontalPodAutoscaler' || d.object.kind === 'ScaledObject')
    .map((d) => (d.object.spec as Obj).scaleTargetRef.name as string);
  expect(targets.sort()).toEqual(['mcp-edge', 'registry-api', 'runtime-worker']);
  for (const name of targets) expect(find('Deployment', name).spec.replicas, name).toBeUndefined();
});

it('keeps serving until the endpoint is gone, and drains within the pod grace', () => {
  for (const name of ['registry-api', 'mcp-edge', 'runtime-worker']) {
    const pod = find('Deployment', name).spec.template.spec;
    const env = deployedEnv(name);
    const shutdownGraceMs = Number(env.SHUTDOWN_GRACE_MS ?? Number.NaN);
    let preStopSeconds = 0;
    let drainMs: number;
    if (name === 'runtime-worker') {
      // The worker serves no Service: it waits SHUTDOWN_GRACE_MS for jobs, then onShutdown's 5 s bound.
      expect(pod.containers[0].lifecycle).toBeUndefined();
      drainMs = WorkerEnv.parse(env).SHUTDOWN_GRACE_MS + 5_000;
    } else {
      const command = pod.containers[0].lifecycle?.preStop?.exec?.command as string[] | undefined;
      expect(command?.[0], `${name} preStop`).toBe('sleep');
      preStopSeconds = Number(command?.[1]);
      expect(preStopSeconds).toBeGreaterThanOrEqual(5);
      // In-flight requests (a sync invoke on the edge up to its threshold) get their SHUTDOWN_GRACE_MS
      // when the app has one, and never less than 30 s here.
      const syncMs = name === 'mcp-edge' ? EdgeEnv.parse(env).EDGE_SYNC_THRESHOLD_MS + 5_000 : 0;
      drainMs = Math.max(Number.isNaN(shutdownGraceMs) ? 0 : shutdownGraceMs, syncMs, 30_000);
    }
    expect(pod.terminationGracePeriodSeconds, name).toBeGreaterThan(preStopSeconds + drainMs / 1000);
  }
});

describe('KEDA reaches the Redis and the keys the apps write', () => {
  const kustomization = parse(readFileSync(join(k8s, 'kustomization.yaml'), 'utf8')) as {
    namespace?: string;
  };

  it('names the Redis Service with the kustomization namespace in full', () => {
    expect(kustomization.namespace).toBe('pkgreg');
    const triggers = find('ScaledObject', 'runtime-worker').spec.triggers as {
      metadata: { address: string };
    }[];
    expect(triggers.length).toBeGreaterThan(0);
    for (const trigger of triggers) {
      const target = serviceAddress(trigger.metadata.address);
      expect(target, trigger.metadata.address).toEqual({
        service: 'redis',
        namespace: kustomization.namespace,
      });
    }
    expect(find('Service', 'redis')).toBeDefined();
    expect(docs.filter((d) => !d.file.endsWith('.example.yaml')).every((d) => d.namespace === 'pkgreg')).toBe(
      true,
    );
  });

  it('uses one queue prefix in the registry, the edge and the worker', () => {
    const prefixes = [
      find('ConfigMap', 'registry-api-config').data.QUEUE_PREFIX,
      find('ConfigMap', 'mcp-edge-config').data.EDGE_QUEUE_PREFIX,
      find('ConfigMap', 'runtime-worker-config').data.QUEUE_PREFIX,
    ];
    expect(prefixes[0]).toEqual(expect.any(String));
    expect(new Set(prefixes)).toEqual(new Set([prefixes[0]]));
  });
});

it('runs Redis without eviction and with an append-only file', () => {
  const conf = find('ConfigMap', 'redis-config').data['redis.conf'] as string;
  expect(conf).toMatch(/^maxmemory-policy noeviction$/m);
  expect(conf).toMatch(/^appendonly yes$/m);
  expect(conf).toMatch(/^maxmemory \S+$/m);
});

describe('the ScaledObject reads the lists BullMQ keeps', () => {
  const redis = new Redis(TEST_REDIS_URL);
  const prefix = testKeyPrefix('k8s');
  const queues: Queue[] = [];
  afterAll(async () => {
    for (const queue of queues) {
      await queue.obliterate({ force: true });
      await queue.close();
    }
    redis.disconnect();
  });

  it('counts a waiting job of each queue under the worker ConfigMap QUEUE_PREFIX', async () => {
    const deployed = find('ConfigMap', 'runtime-worker-config').data.QUEUE_PREFIX as string;
    const triggers = find('ScaledObject', 'runtime-worker').spec.triggers as {
      type: string;
      metadata: { listName: string };
    }[];
    expect(triggers.every((t) => t.type === 'redis')).toBe(true);
    const lists = triggers.map((t) => t.metadata.listName);
    expect(lists.sort()).toEqual(
      [
        `${deployed}:${QUEUES.indexing}:wait`,
        `${deployed}:${QUEUES.runtime}:active`,
        `${deployed}:${QUEUES.runtime}:wait`,
      ].sort(),
    );
    // The same names under this file's prefix, against a real queue: each waiting job is one list entry.
    for (const name of [QUEUES.runtime, QUEUES.indexing]) {
      const queue = new Queue(name, { connection: { url: TEST_REDIS_URL }, prefix });
      queues.push(queue);
      await queue.add('probe', {});
      await queue.add('probe', {});
      const waitList = lists.find((l) => l === `${deployed}:${name}:wait`) as string;
      expect(await redis.llen(`${prefix}${waitList.slice(deployed.length)}`)).toBe(2);
    }
  });
});

describe('a broken manifest', () => {
  const broken = join(scratch, 'k8s');
  cpSync(k8s, broken, { recursive: true });
  const edit = (file: string, from: string, to: string) => {
    const path = join(broken, file);
    const text = readFileSync(path, 'utf8');
    if (!text.includes(from)) throw new Error(`${file} has no ${from}`);
    writeFileSync(path, text.replace(from, to));
  };
  edit('registry-api.yaml', '          readinessProbe:', '          readinesProbe:');
  edit('mcp-edge.yaml', '  minReplicas: 2', '  minReplicas: two');
  edit('registry-api.yaml', '  revisionHistoryLimit: 5', '  replicas: 2\n  revisionHistoryLimit: 5');
  // The first trigger short, the second in another namespace.
  edit('runtime-worker.yaml', 'address: redis.pkgreg.svc.cluster.local:6379', 'address: redis:6379');
  edit(
    'runtime-worker.yaml',
    'address: redis.pkgreg.svc.cluster.local:6379',
    'address: redis.default.svc.cluster.local:6379',
  );
  edit('runtime-worker.yaml', '  minReplicaCount: 1', '  minReplicaCount: 1\n  minReplicas: 1');
  edit('runtime-worker.yaml', 'port: health', 'port: healthz');
  edit('redis.yaml', 'apiVersion: apps/v1', 'apiVersion: apps/v2');
  writeFileSync(join(broken, 'extra.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n');

  it('is refused, each fault named with its file and object', async () => {
    const result = await validateManifests(broken);
    const found = (pattern: RegExp) => result.issues.some((issue) => pattern.test(issue));
    expect(found(/^registry-api\.yaml#0 Deployment\/registry-api: .*'"readinesProbe"' does not exist/)).toBe(
      true,
    );
    expect(
      found(/^mcp-edge\.yaml#3 HorizontalPodAutoscaler\/mcp-edge: data\/spec\/minReplicas must be integer/),
    ).toBe(true);
    expect(
      found(/^registry-api\.yaml#0 Deployment\/registry-api: sets replicas, but .*HorizontalPodAutoscaler/),
    ).toBe(true);
    expect(found(/ScaledObject\/runtime-worker: trigger runtime-waiting address redis:6379 must name/)).toBe(
      true,
    );
    expect(
      found(/trigger runtime-running address \S+ names namespace default, not the kustomization's pkgreg/),
    ).toBe(true);
    expect(
      found(/^runtime-worker\.yaml#\d ScaledObject\/runtime-worker: .*'"minReplicas"' does not exist/),
    ).toBe(true);
    expect(found(/runtime-worker container runtime-worker: startupProbe names port healthz/)).toBe(true);
    expect(found(/^redis\.yaml#1 StatefulSet\/redis: unknown apiVersion apps\/v2/)).toBe(true);
    expect(found(/^extra\.yaml: not listed in any kustomization\.yaml/)).toBe(true);
  });

  it('makes the command exit 1 (what CI runs)', () => {
    const run = spawnSync(process.execPath, [cli, broken], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/issue\(s\) in /);
    expect(resolve(broken)).not.toBe(resolve(k8s));
  });
});
