import { randomUUID } from 'node:crypto';
import { useTestDatabase } from '@pkgreg/db/vitest';
import { freePort, type ModelStandIn, startModelStandIn } from '@pkgreg/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpPackageFinder, type PackageFinder, planWorkflow, type WorkflowRun } from '../src/index.js';
import { startRegistry } from './helpers.js';

// The plan's packages come from the registry's own search (package-finder.ts): the real registry-api
// process on this file's database, with a few packages in it.

const NS = `app:${'f'.repeat(64)}`;
const tdb = useTestDatabase();
let registry: Awaited<ReturnType<typeof startRegistry>>;
let model: ModelStandIn;

const PACKAGES = [
  ['dbtools', 'postgres-schema-designer', 'Design PostgreSQL database schemas and migrations', true],
  ['qa', 'integration-tests', 'Write integration tests against real services', false],
  ['qa', 'playwright-e2e', 'End-to-end browser tests with Playwright', true],
  ['deploy', 'kubernetes-helm', 'Deploy services to Kubernetes with Helm charts', true],
  ['data', 'csv-to-json', 'Convert CSV files to JSON', false],
] as const;

beforeAll(async () => {
  await tdb.db
    .insertInto('packages')
    .values(
      PACKAGES.map(([scope, name, description, verified]) => ({
        scope,
        name,
        description,
        verified,
        source_repo: `${scope}/${name}`,
        repo_owner: scope,
        skill_md_raw: `---\nname: ${name}\ndescription: ${description}\n---\n`,
        frontmatter: JSON.stringify({ name, description }),
      })),
    )
    .execute();
  [registry, model] = await Promise.all([startRegistry(tdb.url), startModelStandIn()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([registry?.stop(), model?.close()]);
});

const run = (text: string): WorkflowRun => ({
  taskId: randomUUID(),
  runId: randomUUID(),
  namespace: NS,
  input: { type: 'text', text },
});

/** The registry's finder, counting the searches it is asked for. */
function countingFinder(): PackageFinder & { queries: string[] } {
  const finder = createHttpPackageFinder(registry.url);
  const queries: string[] = [];
  return {
    queries,
    search(query) {
      queries.push(query.toLowerCase());
      return finder.search(query);
    },
  };
}

describe('packages per step, from the registry search', () => {
  it('createHttpPackageFinder answers the registry search results', async () => {
    const results = await createHttpPackageFinder(registry.url).search('kubernetes');
    expect(results.map((r) => `@${r.scope}/${r.name}`)).toEqual(['@deploy/kubernetes-helm']);
  });

  it('each step gets the packages that fit it; the registry sees each query once per run', async () => {
    const finder = countingFinder();
    const plan = await planWorkflow(
      { db: tdb.db, finder, model: null },
      run('First design the PostgreSQL schema, then write integration tests, finally deploy to Kubernetes.'),
    );
    expect(plan.registryReachable).toBe(true);
    expect(plan.steps.map((s) => s.packages[0]?.package)).toEqual([
      '@dbtools/postgres-schema-designer',
      '@qa/integration-tests',
      '@deploy/kubernetes-helm',
    ]);
    expect(plan.steps[0]?.packages[0]).toEqual({
      package: '@dbtools/postgres-schema-designer',
      description: 'Design PostgreSQL database schemas and migrations',
      kind: expect.any(String),
      verified: true,
    });
    expect(finder.queries.length).toBeGreaterThan(0);
    expect(new Set(finder.queries).size).toBe(finder.queries.length);
    // A package of no step is never recommended.
    expect(plan.steps.flatMap((s) => s.packages.map((p) => p.package))).not.toContain('@data/csv-to-json');
  });

  it('a model refines the titles only: order, phases and packages stay the planner’s', async () => {
    const text = 'First design the PostgreSQL schema, then write integration tests.';
    const rules = await planWorkflow({ db: tdb.db, finder: countingFinder(), model: null }, run(text));
    const refined = await planWorkflow(
      {
        db: tdb.db,
        finder: countingFinder(),
        model: { baseUrl: model.url, model: 'm', timeoutMs: 5_000 },
      },
      run(text),
    );
    expect(refined.refinedBy).toBe('model');
    expect(refined.steps.map((s) => s.title)).toEqual(rules.steps.map((s) => `Refined: ${s.title}`));
    const keep = (p: typeof rules) =>
      p.steps.map(({ id, phase, dependsOn, packages }) => ({ id, phase, dependsOn, packages }));
    expect(keep(refined)).toEqual(keep(rules));
  });

  it('a registry that answers an error or cannot be reached: a plan without packages', async () => {
    for (const base of [`${registry.url}/nope`, `http://127.0.0.1:${await freePort()}`]) {
      const finder = createHttpPackageFinder(base, 2_000);
      await expect(finder.search('kubernetes')).rejects.toThrow();
      const plan = await planWorkflow(
        { db: tdb.db, finder, model: null },
        run('Deploy the service to Kubernetes.'),
      );
      expect(plan.registryReachable).toBe(false);
      expect(plan.steps.length).toBeGreaterThan(0);
      expect(plan.steps.every((s) => s.packages.length === 0)).toBe(true);
    }
  });
});
