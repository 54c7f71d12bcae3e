import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { sql } from 'kysely';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  type Browser,
  launchBrowser,
  poll,
  type RegistryProcess,
  startRegistry,
} from './harness.js';
import { insertPackages, seedPackages } from './seed.js';

// Issue 20 in the web UI: filter chips and the downloads and trending sorts on the list and the search,
// kept in the URL; the package page's 30-day downloads sparkline. The built UI served by a real
// registry-api over this file's own database, in headless Chromium; every expectation is read from the
// public API.

let t: TestDatabase;
let registry: RegistryProcess;
let browser: Browser;
let base: string;
const seeded = seedPackages().map((p, i) => ({ ...p, downloads: (i * 37) % 101 }));
const visibleCount = seeded.filter((p) => p.status !== 'delisted').length;

interface Listed {
  data: Array<{ scope: string; name: string }>;
  total: number;
}

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${base}${path}`);
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return (await res.json()) as T;
}

const labels = (listed: Listed) => listed.data.map((p) => `@${p.scope}/${p.name}`);

async function cardNames(page: Page): Promise<string[]> {
  await page.waitForSelector('[data-testid="package-list"] ol:not([data-stale])');
  return page.$$eval('[data-testid="package-card"] .pkg-name', (links) =>
    links.map((a) => a.textContent ?? ''),
  );
}

beforeAll(async () => {
  t = await createTestDatabase();
  await insertPackages(t.db, seeded);
  // code-review was downloaded on 4 of the last 30 days, most 2 days ago.
  await sql`
    insert into package_downloads_daily (package_id, day, count)
    select p.id, (now() at time zone 'UTC')::date - d.ago, d.n
    from packages p, (values (0, 3), (2, 9), (6, 1), (20, 4)) d(ago, n)
    where p.scope = 'acme' and p.name = 'code-review'`.execute(t.db);
  registry = await startRegistry({ databaseUrl: t.url });
  base = registry.baseUrl;
  // Lists trail inserts by the registry's refresh (~1 s), which rebuilds the filters' lists too.
  await poll(
    () => api<Listed>('/api/packages?pageSize=1&kind=skill'),
    (r) => r.total > 0,
    15_000,
  );
  await poll(
    () => api<Listed>('/api/packages?pageSize=1'),
    (r) => r.total === visibleCount,
    15_000,
  );
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await registry?.stop();
  await t?.destroy();
});

describe('filter chips and sorts, kept in the URL', () => {
  it('set and unset filters, sort by downloads, and back, forward and reload restore each view', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${base}/`);
    await page.waitForSelector('[data-testid="filter-chips"]');

    await page.click('[data-testid="filter-kind-workflow"]');
    await page.waitForURL(`${base}/?kind=workflow`);
    await page.waitForSelector('[data-testid="filter-kind-workflow"][aria-current="true"]');
    const workflows = await api<Listed>('/api/packages?kind=workflow');
    expect(await cardNames(page)).toEqual(labels(workflows));
    await expect(page.locator('#list-heading').textContent()).resolves.toContain(String(workflows.total));

    await page.click('[data-testid="sort-downloads"]');
    await page.waitForURL(`${base}/?sort=downloads&kind=workflow`);
    await page.waitForSelector('[data-testid="sort-downloads"][aria-current="true"]');
    const byDownloads = await api<Listed>('/api/packages?kind=workflow&sort=downloads&order=desc');
    expect(await cardNames(page)).toEqual(labels(byDownloads));

    await page.click('[data-testid="filter-agent-codex"]');
    await page.waitForURL(`${base}/?sort=downloads&kind=workflow&agent=codex`);
    await page.waitForSelector('[data-testid="no-filter-results"]');

    await page.goBack();
    await page.waitForURL(`${base}/?sort=downloads&kind=workflow`);
    await page.waitForSelector('[data-testid="package-card"]');
    expect(await cardNames(page)).toEqual(labels(byDownloads));

    // A chip that is on turns its filter off.
    await page.click('[data-testid="filter-kind-workflow"]');
    await page.waitForURL(`${base}/?sort=downloads`);
    const allByDownloads = await api<Listed>('/api/packages?sort=downloads&order=desc');
    expect(await cardNames(page)).toEqual(labels(allByDownloads));

    await page.goto(`${base}/?sort=trending&verified=true&status=active`);
    await page.reload();
    await page.waitForSelector('[data-testid="filter-verified-true"][aria-current="true"]');
    await page.waitForSelector('[data-testid="filter-status-active"][aria-current="true"]');
    const trusted = await api<Listed>('/api/packages?sort=trending&order=desc&verified=true&status=active');
    expect(await cardNames(page)).toEqual(labels(trusted));
    expect((await cardNames(page))[0]).toBe('@acme/code-review'); // the only one downloaded lately
    await page.close();
  });

  it('a filter set from a package page shows as a chip that removes it; Clear filters clears all', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${base}/@acme/code-review`);
    await page.click('.package-side a:text-is("review")');
    await page.waitForURL(`${base}/?tag=review`);
    expect(await cardNames(page)).toEqual(labels(await api<Listed>('/api/packages?tag=review')));
    await page.click('[data-testid="filter-kind-skill"]');
    await page.waitForURL(`${base}/?kind=skill&tag=review`);
    await page.click('[data-testid="filter-remove-tag"]');
    await page.waitForURL(`${base}/?kind=skill`);
    await page.click('[data-testid="filter-clear"]');
    await page.waitForURL(`${base}/`);
    await page.waitForSelector('[data-testid="package-card"]');
    expect(await page.locator('[data-testid="filter-clear"]').count()).toBe(0);
    await page.close();
  });

  it('search results pass the filters too, and the chips keep what was typed', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${base}/?kind=skill`);
    await page.fill('#search-input', 'checklists');
    await page.waitForURL(`${base}/?kind=skill&q=checklists`);
    const expected = await api<{ results: Array<{ scope: string; name: string }> }>(
      '/api/search?q=checklists&kind=skill',
    );
    await poll(
      () => page.$$eval('[role="option"] .pkg-name', (nodes) => nodes.map((n) => n.textContent ?? '')),
      (shown) => shown.length === expected.results.length,
      10_000,
    );
    expect(
      await page.$$eval('[role="option"] .pkg-name', (nodes) => nodes.map((n) => n.textContent)),
    ).toEqual(expected.results.map((p) => `@${p.scope}/${p.name}`));
    await page.click('[data-testid="filter-kind-app"]');
    await page.waitForURL(`${base}/?q=checklists&kind=app`);
    const apps = await api<{ results: Array<{ scope: string; name: string }> }>(
      '/api/search?q=checklists&kind=app',
    );
    await poll(
      () => page.$$eval('[role="option"] .pkg-name', (nodes) => nodes.map((n) => n.textContent ?? '')),
      (shown) => JSON.stringify(shown) === JSON.stringify(apps.results.map((p) => `@${p.scope}/${p.name}`)),
      10_000,
    );
    expect(
      await page.$$eval('[role="option"] .pkg-name', (nodes) => nodes.map((n) => n.textContent)),
    ).toEqual(apps.results.map((p) => `@${p.scope}/${p.name}`));
    await page.close();
  });
});

describe('downloads sparkline on the package page', () => {
  it('draws the 30 days the API gives, names and describes itself, and writes the 7- and 30-day sums', async () => {
    const detail = await api<{
      downloadsLast7Days: number;
      downloadsLast30Days: number;
      dailyDownloads: { from: string; counts: number[] };
    }>('/api/packages/@acme/code-review');
    expect(detail.downloadsLast7Days).toBe(13);
    expect(detail.downloadsLast30Days).toBe(17);
    const page = await browser.context.newPage();
    await page.goto(`${base}/@acme/code-review`);
    const svg = page.locator('[data-testid="downloads-sparkline"] svg[role="img"]');
    await svg.waitFor();
    await expect(page.locator('[data-testid="downloads-7d"]').textContent()).resolves.toBe('13');
    await expect(page.locator('[data-testid="downloads-30d"]').textContent()).resolves.toBe('17');
    const points = await svg.locator('path.sparkline-line').getAttribute('d');
    expect(points?.split(' L ')).toHaveLength(30);
    const description = await page.locator('#sparkline-desc').textContent();
    expect(description).toMatch(/^17 downloads from .+, most on .+ \(9\)\.$/);
    await page.close();
  });
});

describe('accessibility and phone width', () => {
  it('finds no axe violations on a filtered list, a filtered search and the package page, light and dark', async () => {
    const page = await browser.context.newPage();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${base}/?kind=skill&tag=review&sort=trending`);
      await page.waitForSelector('[data-testid="package-card"]');
      expect(await axeViolations(page), `${scheme} list`).toEqual([]);
      await page.goto(`${base}/?kind=skill&q=review`);
      await page.waitForSelector('[role="option"]');
      expect(await axeViolations(page), `${scheme} search`).toEqual([]);
      await page.goto(`${base}/@acme/code-review`);
      await page.waitForSelector('[data-testid="downloads-sparkline"]');
      expect(await axeViolations(page), `${scheme} package`).toEqual([]);
    }
    await page.close();
  });

  it('never scrolls sideways at 375 px with the chips', async () => {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 375, height: 812 });
    await page.goto(`${base}/?kind=skill&tag=review&owner=acme`);
    await page.waitForSelector('[data-testid="filter-chips"]');
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
    await page.goto(`${base}/@acme/code-review`);
    await page.waitForSelector('[data-testid="downloads-sparkline"]');
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth),
    ).toBeLessThanOrEqual(0);
    await page.close();
  });
});
