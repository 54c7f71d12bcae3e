import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import { indexSource } from '@pkgreg/indexer';
import { commitFiles, createRepo, skillMd } from '@pkgreg/indexer/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  type Browser,
  launchBrowser,
  type RegistryProcess,
  startRegistry,
} from './harness.js';

// docs/versions.md, Dependencies, on the package page: what the version on screen needs (each a link,
// the latest's marked when it does not resolve) and the packages that need it, a page at a time. Skills
// from real git repositories through the real indexer, served by a real registry-api, in headless
// Chromium; every expectation is read from the public API.

let t: TestDatabase;
let registry: RegistryProcess;
let browser: Browser;
let root: string;

const skill = (name: string, extra: string[] = [], dependencies?: string) =>
  skillMd([
    `name: ${name}`,
    `description: The ${name} skill.`,
    ...extra,
    ...(dependencies === undefined ? [] : ['metadata:', `  dependencies: "${dependencies}"`]),
  ]);

/** Twelve packages (and report) need @graph/base: more than one page of dependants (ten). */
const USERS = Array.from({ length: 12 }, (_, i) => `user-${String(i + 1).padStart(2, '0')}`);

beforeAll(async () => {
  t = await createTestDatabase();
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'pkgreg-web-deps-')));
  const lib = createRepo(root, 'graph', 'lib', {
    'base/SKILL.md': skill('base', ['version: 1.0.0']),
    'report/SKILL.md': skill('report', ['version: 1.0.0'], '@graph/base@^1, @graph/missing'),
  });
  await indexSource({ db: t.db }, { kind: 'git', locator: lib, owner: 'graph' });
  // report 2.0.0 needs base ^2, which no version satisfies.
  commitFiles(lib, { 'report/SKILL.md': skill('report', ['version: 2.0.0'], '@graph/base@^2') });
  await indexSource({ db: t.db }, { kind: 'git', locator: lib, owner: 'graph' });
  const users = createRepo(
    root,
    'graph',
    'users',
    Object.fromEntries(USERS.map((name) => [`${name}/SKILL.md`, skill(name, [], '@graph/base')])),
  );
  await indexSource({ db: t.db }, { kind: 'git', locator: users, owner: 'graph' });
  registry = await startRegistry({ databaseUrl: t.url });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await registry?.stop();
  await t?.destroy();
  if (root) rmSync(root, { recursive: true, force: true });
});

async function api<T>(url: string): Promise<T> {
  const res = await fetch(`${registry.baseUrl}${url}`);
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return (await res.json()) as T;
}

async function open(url: string): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(`${registry.baseUrl}${url}`);
  await page.waitForSelector('[data-testid="package-page"]');
  await page.waitForSelector('[data-testid="file-tree"]');
  await page.waitForSelector('[data-testid="dependencies"]');
  return page;
}

const texts = (page: Page, selector: string) =>
  page.$$eval(selector, (nodes) => nodes.map((n) => (n.textContent ?? '').replace(/\s+/g, ' ').trim()));

describe('dependencies on the package page', () => {
  it('lists the latest version’s dependencies with their range, marking one that does not resolve', async () => {
    const detail = await api<{ dependencies: Array<{ name: string; range: string; resolves: boolean }> }>(
      '/api/packages/@graph/report',
    );
    expect(detail.dependencies).toEqual([{ name: '@graph/base', range: '^2', resolves: false }]);
    const page = await open('/@graph/report');
    expect(await texts(page, '[data-testid="dependency"]')).toEqual(['@graph/base ^2 not available']);
    const link = page.locator('[data-testid="dependency"] a');
    expect(await link.getAttribute('href')).toBe('/@graph/base');
    expect(await axeViolations(page)).toEqual([]);

    // An older version shows its own dependencies (no live resolution for them).
    await page.goto(`${registry.baseUrl}/@graph/report?version=1.0.0`);
    await page.waitForSelector('[data-testid="dependencies"] .card-title-note');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="dependency"]').length === 2);
    expect(await texts(page, '[data-testid="dependency"]')).toEqual([
      '@graph/base ^1',
      '@graph/missing latest',
    ]);
    expect(await page.locator('[data-testid="dependency-unresolved"]').count()).toBe(0);
    await page.close();
  });

  it('links the dependants a page at a time, and a dependency’s link opens its page', async () => {
    const listed = await api<{ total: number; data: Array<{ scope: string; name: string }> }>(
      '/api/packages/@graph/base/dependants?pageSize=100',
    );
    expect(listed.total).toBe(13);
    const page = await open('/@graph/base');
    expect(await page.locator('#dependants-heading').textContent()).toBe('Used by 13');
    await page.waitForSelector('[data-testid="dependant"]');
    expect(await page.locator('[data-testid="dependant"] a').allTextContents()).toEqual(
      listed.data.slice(0, 10).map((p) => `@${p.scope}/${p.name}`),
    );
    expect(await page.locator('[data-testid="dependencies"]').textContent()).toContain('None');
    expect(await axeViolations(page)).toEqual([]);
    await page.locator('[data-testid="dependants-more"]').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="dependant"]').length === 13);
    expect(await page.locator('[data-testid="dependant"] a').allTextContents()).toEqual(
      listed.data.map((p) => `@${p.scope}/${p.name}`),
    );
    expect(await page.locator('[data-testid="dependants-more"]').count()).toBe(0);

    await page.locator('[data-testid="dependant"] a', { hasText: '@graph/user-01' }).click();
    await page.waitForURL(/\/@graph\/user-01$/);
    await page.waitForSelector('[data-testid="dependency"]');
    expect(await texts(page, '[data-testid="dependency"]')).toEqual(['@graph/base latest']);
    await page.locator('[data-testid="dependency"] a').click();
    await page.waitForURL(/\/@graph\/base$/);
    await page.close();
  });

  it('never scrolls sideways at phone width (375 px)', async () => {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 375, height: 812 });
    for (const url of ['/@graph/base', '/@graph/report', '/@graph/report?version=1.0.0']) {
      await page.goto(`${registry.baseUrl}${url}`);
      await page.waitForSelector('[data-testid="dependencies"]');
      await page.waitForSelector('[data-testid="file-tree"]');
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, url).toBeLessThanOrEqual(0);
    }
    await page.close();
  });
});
