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
import { EnvSchema as EdgeEnv } from '../../apps/mcp-edge/src/env.ts';
import { EnvSchema as RegistryEnv } from '../../apps/registry-api/src/env.ts';
import { EnvSchema as WorkerEnv } from '../../apps/runtime-worker/src/env.ts';
import { type ManifestDoc, validateManifests } from '../src/k8s.ts';

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
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
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
  edit('mcp-edge.yaml', '  replicas: 2', '  replicas: two');
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
    expect(found(/^mcp-edge\.yaml#0 Deployment\/mcp-edge: data\/spec\/replicas must be integer/)).toBe(true);
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
