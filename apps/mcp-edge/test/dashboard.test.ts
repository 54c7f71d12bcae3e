import { readFileSync } from 'node:fs';
import { createRegistryMetrics } from '@pkgreg/registry-api/dist/metrics.js';
import { createWorkerMetrics } from '@pkgreg/runtime-worker';
import { createMetricsRegistry, type Registry } from '@pkgreg/server-kit';
import { describe, expect, it } from 'vitest';
import { createEdgeMetrics } from '../src/metrics.js';

// infra/grafana/pkgreg-dashboard.json queries metrics by name: every name it uses must exist in one of
// the apps' registries, so renaming a metric without the dashboard (or the reverse) fails here.

const DASHBOARD = new URL('../../../infra/grafana/pkgreg-dashboard.json', import.meta.url);

interface Panel {
  title?: string;
  targets?: Array<{ expr?: string }>;
  panels?: Panel[];
}

/** Every series name an app exposes: histograms as their _bucket, _count and _sum series too. */
async function seriesNames(registry: Registry): Promise<Set<string>> {
  const names = new Set<string>();
  for (const metric of await registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram') {
      for (const suffix of ['_bucket', '_count', '_sum']) names.add(`${metric.name}${suffix}`);
    }
  }
  return names;
}

/** Metric names in a PromQL expression: identifiers followed by a selector, a range or the end. */
function metricNamesIn(expr: string): string[] {
  const withoutStrings = expr.replace(/"[^"]*"/g, '""');
  const names = new Set<string>();
  for (const [, name] of withoutStrings.matchAll(/\b((?:pkgreg|process|nodejs)_[a-z0-9_]+)\b/g)) {
    if (name) names.add(name);
  }
  return [...names];
}

describe('the Grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: Panel[];
    templating: { list: Array<{ name: string; type: string; query?: unknown; definition?: string }> };
  };
  const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));

  it('has a Prometheus datasource variable that every query uses', () => {
    const ds = dashboard.templating.list.find((v) => v.type === 'datasource');
    expect(ds).toMatchObject({ name: 'datasource', query: 'prometheus' });
    for (const p of panels.filter((x) => x.targets)) {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a template.
      expect(JSON.stringify(p)).toContain('"uid":"${datasource}"');
    }
  });

  it('queries only metrics that the apps expose', async () => {
    const exposed = new Set<string>();
    const registries = [
      createEdgeMetrics(createMetricsRegistry({ processMetrics: true })).registry,
      createRegistryMetrics(createMetricsRegistry()).registry,
      createWorkerMetrics(createMetricsRegistry()).registry,
    ];
    for (const registry of registries) for (const name of await seriesNames(registry)) exposed.add(name);
    const queried = new Set(
      [...exprs, ...dashboard.templating.list.map((v) => v.definition ?? '')].flatMap(metricNamesIn),
    );
    expect(queried.size).toBeGreaterThan(20);
    const missing = [...queried].filter((name) => !exposed.has(name));
    expect(missing).toEqual([]);
  });

  it('charts every pkgreg_ metric the apps expose', async () => {
    const queried = new Set(exprs.flatMap(metricNamesIn).map((n) => n.replace(/_(bucket|count|sum)$/, '')));
    const registries = [
      createEdgeMetrics().registry,
      createRegistryMetrics().registry,
      createWorkerMetrics().registry,
    ];
    const unqueried: string[] = [];
    for (const registry of registries) {
      for (const metric of await registry.getMetricsAsJSON()) {
        if (metric.name.startsWith('pkgreg_') && !queried.has(metric.name)) unqueried.push(metric.name);
      }
    }
    expect(unqueried).toEqual([]);
  });
});
