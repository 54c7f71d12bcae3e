import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadEnv as loadEdgeEnv } from '../../apps/mcp-edge/src/env.ts';
import { loadEnv as loadRegistryEnv } from '../../apps/registry-api/src/env.ts';
import { loadEnv as loadWorkerEnv } from '../../apps/runtime-worker/src/env.ts';

// infra/compose.yaml as `docker compose up` reads it (anchors and `<<` merged): each app's env.ts must
// accept its environment, or the container exits at start.

const file = fileURLToPath(new URL('../compose.yaml', import.meta.url));
interface Service {
  command?: string[];
  environment?: Record<string, unknown>;
}
const compose = parse(readFileSync(file, 'utf8'), { merge: true }) as { services: Record<string, Service> };

/** Compose accepts strings and numbers as values (a bare `true` is refused), and passes them as text. */
function environment(name: string): Record<string, string> {
  const service = compose.services[name];
  if (!service?.environment) throw new Error(`compose.yaml: service ${name} has no environment`);
  return Object.fromEntries(
    Object.entries(service.environment).map(([key, value]) => {
      if (typeof value !== 'string' && typeof value !== 'number')
        throw new Error(`compose.yaml: ${name}.${key} must be a string or a number`);
      return [key, String(value)];
    }),
  );
}

it('starts every app: each env.ts accepts its environment under NODE_ENV=production', () => {
  const apps = {
    'registry-api': loadRegistryEnv,
    'mcp-edge': loadEdgeEnv,
    'runtime-worker': loadWorkerEnv,
  } as const;
  for (const [name, load] of Object.entries(apps)) {
    expect(compose.services[name]?.command).toEqual(['node', `apps/${name}/dist/index.js`]);
    const env = environment(name);
    expect(env.NODE_ENV, name).toBe('production');
    expect(() => load(env), name).not.toThrow();
  }
});

it('lets the edge answer on the localhost URL it publishes', () => {
  const env = loadEdgeEnv(environment('mcp-edge'));
  expect(new URL(env.PKGREG_PUBLIC_BASE_URL).hostname).toBe('localhost');
  expect(env.EDGE_ALLOW_LOCALHOST).toBe(true);
});

it('gives the registry and the workers one queue prefix and the registry a webhook key', () => {
  const registry = loadRegistryEnv(environment('registry-api'));
  const worker = loadWorkerEnv(environment('runtime-worker'));
  const edge = loadEdgeEnv(environment('mcp-edge'));
  expect(registry.QUEUE_PREFIX).toBe(worker.QUEUE_PREFIX);
  expect(edge.EDGE_QUEUE_PREFIX).toBe(worker.QUEUE_PREFIX);
  expect(registry.WEBHOOK_SECRET_KEY).toMatch(/replace/);
});
