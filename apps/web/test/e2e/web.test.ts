import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
import type { Page } from 'playwright-core';
import { createServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  type Browser,
  freePort,
  launchBrowser,
  poll,
  type RegistryProcess,
  startRegistry,
} from './harness.js';
import { CODE_REVIEW_SKILL_MD, insertPackages, seedPackages } from './seed.js';

// Issue 7, end to end: the built UI served by a real registry-api (web-static.ts) over this file's own
// database, in headless Chromium. Every assertion reads the DOM or the public API; nothing is mocked.

let t: TestDatabase;
let registry: RegistryProcess;
let browser: Browser;
let base: string;
const seeded = seedPackages();
const visibleCount = seeded.filter((p) => p.status !== 'delisted').length;
/** Console errors and CSP violations across every page of the run. */
const consoleErrors: string[] = [];

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${base}${path}`);
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return (await res.json()) as T;
}

async function downloadCount(scope: string, name: string): Promise<number> {
  return (await api<{ downloadCount: number }>(`/api/packages/@${scope}/${name}`)).downloadCount;
}

/** `hostile`: the page renders the XSS fixture, whose blocked attempts Chromium reports as CSP violations. */
async function newPage(options: { hostile?: boolean } = {}): Promise<Page> {
  const page = await browser.context.newPage();
  page.on('console', (message) => {
    if (options.hostile) return;
    if (message.type() === 'error' && /Content.Security.Policy|Refused to/i.test(message.text())) {
      consoleErrors.push(message.text());
    }
  });
  page.on('pageerror', (error) => consoleErrors.push(`pageerror: ${error.message}`));
  return page;
}

async function cardNames(page: Page): Promise<string[]> {
  await page.waitForSelector('[data-testid="package-list"] ol:not([data-stale])');
  return page.$$eval('[data-testid="package-card"] .pkg-name', (links) =>
    links.map((a) => a.textContent ?? ''),
  );
}

beforeAll(async () => {
  t = await createTestDatabase();
  await insertPackages(t.db, seeded);
  registry = await startRegistry({ databaseUrl: t.url });
  base = registry.baseUrl;
  // Lists trail inserts by the registry's rank refresh (~1 s): wait until every visible package is listed.
  await poll(
    () => api<{ total: number }>('/api/packages?pageSize=1'),
    (r) => r.total === visibleCount,
    15_000,
  );
  browser = await launchBrowser();
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
});

afterAll(async () => {
  await browser?.close();
  await registry?.stop();
  await t?.destroy();
});

describe('serving (web-static.ts)', () => {
  it('serves the SPA with a CSP that forbids inline script, and the app runs under it', async () => {
    const page = await newPage();
    const response = await page.goto(`${base}/`);
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("base-uri 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    // The built index.html carries no inline script at all.
    const inline = await page.$$eval('script:not([src])', (scripts) => scripts.length);
    expect(inline).toBe(0);
    await page.waitForSelector('[data-testid="package-card"]');
    await page.close();
  });

  it('answers a deep link to a package page with the app (SPA fallback)', async () => {
    const page = await newPage();
    const response = await page.goto(`${base}/@acme/code-review`);
    expect(response?.status()).toBe(200);
    await expect(page.locator('h1[data-page-heading]').textContent()).resolves.toBe('@acme/code-review');
    await page.close();
  });
});

describe('dev server (pnpm dev)', () => {
  it('serves the app with the CSP and proxies /api to the registry; nothing violates the CSP', async () => {
    const port = await freePort();
    const server = await createServer({
      root: fileURLToPath(new URL('../..', import.meta.url)),
      logLevel: 'warn',
      server: { port, strictPort: true, proxy: { '/api': { target: base } } },
    });
    await server.listen();
    try {
      const devBase = `http://127.0.0.1:${port}`;
      const page = await newPage();
      const response = await page.goto(`${devBase}/@acme/code-review`);
      const csp = response?.headers()['content-security-policy'] ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("base-uri 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      await page.waitForSelector('[data-testid="skill-body"]');
      await expect(page.locator('h1[data-page-heading]').textContent()).resolves.toBe('@acme/code-review');
      await page.close();
    } finally {
      await server.close();
    }
  });
});

describe('search', () => {
  it('finds as you type, lists results in API rank order, and opens one', async () => {
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.fill('#search-input', 'code rev');
    await page.waitForSelector('[role="option"]');
    const shown = await page.$$eval('[role="option"] .pkg-name', (names) => names.map((n) => n.textContent));
    const expected = await api<{ results: { scope: string; name: string }[] }>('/api/search?q=code%20rev');
    expect(expected.results.length).toBeGreaterThan(0);
    expect(shown).toEqual(expected.results.map((r) => `@${r.scope}/${r.name}`));
    // The query is in the URL (replace, not push), so reload and back keep it.
    expect(new URL(page.url()).searchParams.get('q')).toBe('code rev');
    await page.click('[role="option"] >> text=@acme/code-review');
    await page.waitForURL(`${base}/@acme/code-review`);
    await expect(page.locator('h1[data-page-heading]').textContent()).resolves.toBe('@acme/code-review');
    await page.goBack();
    await page.waitForSelector('[role="option"]');
    expect(await page.inputValue('#search-input')).toBe('code rev');
    await page.close();
  });

  it('works with the keyboard only: /, type, arrows, Enter opens; Escape clears (ARIA combobox)', async () => {
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.waitForSelector('[data-testid="package-card"]');
    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('search-input');
    await page.keyboard.type('fast');
    await page.waitForSelector('[role="option"]');
    const input = page.locator('#search-input');
    await expect(input.getAttribute('role')).resolves.toBe('combobox');
    await expect(input.getAttribute('aria-expanded')).resolves.toBe('true');
    await expect(input.getAttribute('aria-controls')).resolves.toBe('search-results');
    await expect(page.locator('#search-results').getAttribute('role')).resolves.toBe('listbox');
    const options = await page.$$eval('[role="option"]', (els) => els.map((e) => e.id));
    expect(options.length).toBeGreaterThan(2);

    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await expect(input.getAttribute('aria-activedescendant')).resolves.toBe(options[1]);
    await expect(page.locator(`#${options[1]}`).getAttribute('aria-selected')).resolves.toBe('true');
    await page.keyboard.press('ArrowUp');
    await expect(input.getAttribute('aria-activedescendant')).resolves.toBe(options[0]);
    // Focus never left the input (aria-activedescendant pattern).
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('search-input');

    await page.keyboard.press('ArrowDown');
    const target = await page.locator(`#${options[1]} .pkg-name`).textContent();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === `/${target}`);
    await expect(page.locator('h1[data-page-heading]').textContent()).resolves.toBe(target);

    await page.goBack();
    await page.waitForSelector('[role="option"]');
    await page.keyboard.press('/'); // keyboard only: the shortcut brings focus back to the search box
    await page.keyboard.press('Escape');
    expect(await page.inputValue('#search-input')).toBe('');
    await expect(input.getAttribute('aria-expanded')).resolves.toBe('false');
    await page.waitForSelector('[data-testid="package-card"]');
    expect(new URL(page.url()).searchParams.has('q')).toBe(false);
    await page.close();
  });

  it("keeps every keystroke of fast typing, and shows the last query's results", async () => {
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.waitForSelector('[data-testid="package-card"]');
    await page.click('#search-input');
    await page.keyboard.type('commit writer', { delay: 0 });
    await page.waitForSelector('#search-status:has-text("4 matches")');
    expect(await page.inputValue('#search-input')).toBe('commit writer');
    const shown = await page.$$eval('[role="option"] .pkg-name', (names) => names.map((n) => n.textContent));
    const expected = await api<{ results: { scope: string; name: string }[] }>(
      '/api/search?q=commit%20writer',
    );
    expect(shown).toEqual(expected.results.map((r) => `@${r.scope}/${r.name}`));
    await page.close();
  });

  it('shows a designed empty state when nothing matches', async () => {
    const page = await newPage();
    await page.goto(`${base}/?q=zzzqqqxxx`);
    await page.waitForSelector('[data-testid="no-results"]');
    await expect(page.locator('[data-testid="no-results"] .state-title').textContent()).resolves.toContain(
      'No packages match',
    );
    expect(await page.$$('[role="option"]')).toHaveLength(0);
    await page.close();
  });
});

describe('package list', () => {
  it('pages and sorts with the state in the URL; back and reload restore it', async () => {
    // The URL and the controls change before the new page's cards arrive: each list is awaited.
    const page = await newPage();
    await page.goto(`${base}/`);
    const page1 = await api<{ data: { scope: string; name: string }[] }>('/api/packages?page=1&pageSize=20');
    await expect.poll(() => cardNames(page)).toEqual(page1.data.map((p) => `@${p.scope}/${p.name}`));
    await expect(page.locator('[data-testid="page-status"]').textContent()).resolves.toBe(
      `Page 1 of ${Math.ceil(visibleCount / 20)}`,
    );

    await page.click('[data-testid="page-next"]');
    await page.waitForURL(`${base}/?page=2`);
    const page2 = await api<{ data: { scope: string; name: string }[] }>('/api/packages?page=2&pageSize=20');
    await page.waitForSelector(`text=Page 2 of`);
    await expect.poll(() => cardNames(page)).toEqual(page2.data.map((p) => `@${p.scope}/${p.name}`));

    await page.click('[data-testid="sort-stars"]');
    await page.waitForURL(`${base}/?sort=stars`);
    const byStars = await api<{ data: { scope: string; name: string }[] }>(
      '/api/packages?sort=stars&order=desc',
    );
    await page.waitForSelector('[data-testid="sort-stars"][aria-current="true"]');
    await expect.poll(() => cardNames(page)).toEqual(byStars.data.map((p) => `@${p.scope}/${p.name}`));
    expect((await cardNames(page))[0]).toBe('@acme/code-review'); // the most starred visible package

    await page.click('[data-testid="order-toggle"]');
    await page.waitForURL(`${base}/?sort=stars&order=asc`);
    const starsAsc = await api<{ data: { scope: string; name: string }[] }>(
      '/api/packages?sort=stars&order=asc',
    );
    await page.waitForSelector('text=Ascending');
    await expect.poll(() => cardNames(page)).toEqual(starsAsc.data.map((p) => `@${p.scope}/${p.name}`));

    await page.goBack();
    await page.waitForURL(`${base}/?sort=stars`);
    await page.waitForSelector('text=Descending');
    await expect.poll(() => cardNames(page)).toEqual(byStars.data.map((p) => `@${p.scope}/${p.name}`));

    await page.goBack();
    await page.waitForURL(`${base}/?page=2`);
    await page.waitForSelector('text=Page 2 of');
    await expect.poll(() => cardNames(page)).toEqual(page2.data.map((p) => `@${p.scope}/${p.name}`));

    await page.reload();
    await page.waitForSelector('text=Page 2 of');
    await expect.poll(() => cardNames(page)).toEqual(page2.data.map((p) => `@${p.scope}/${p.name}`));

    await page.click('[data-testid="sort-indexed"]');
    await page.waitForURL(`${base}/?sort=indexed`);
    const byIndexed = await api<{ data: { scope: string; name: string }[] }>(
      '/api/packages?sort=indexed&order=desc',
    );
    await page.waitForSelector('[data-testid="sort-indexed"][aria-current="true"]');
    await expect.poll(() => cardNames(page)).toEqual(byIndexed.data.map((p) => `@${p.scope}/${p.name}`));
    await page.close();
  });
});

describe('package page', () => {
  it('shows every detail field, the install command, the frontmatter table and the rendered SKILL.md', async () => {
    const page = await newPage();
    await page.goto(`${base}/@acme/code-review`);
    await page.waitForSelector('[data-testid="skill-body"]');
    const text = (await page.locator('[data-testid="package-page"]').textContent()) ?? '';
    for (const expected of [
      'skill',
      'development',
      'review',
      'claude-code',
      'v2.1.0',
      'MIT',
      'Bash(git diff:*)',
      '1,834',
      'acme/skills/skills/code-review',
      'Verified publisher',
      'Featured',
    ]) {
      expect(text).toContain(expected);
    }
    await expect(page.locator('[data-testid="install-command"]').textContent()).resolves.toContain(
      'pkgreg install @acme/code-review',
    );
    const source = await page.locator('[data-testid="source-link"]').getAttribute('href');
    expect(source).toBe('/api/packages/@acme/code-review/source');

    // Frontmatter: a table from the detail's object, and cut from the rendered body.
    const keys = await page.$$eval('[data-testid="frontmatter"] th', (ths) =>
      ths.map((th) => th.textContent),
    );
    expect(keys).toEqual(['name', 'description', 'license', 'allowed-tools', 'metadata']);
    const body = page.locator('[data-testid="skill-body"]');
    await expect(body.locator('h1').textContent()).resolves.toBe('Code review');
    expect(await body.textContent()).not.toContain('allowed-tools');
    expect(await body.locator('table').count()).toBe(1);
    expect(await body.locator('pre code').textContent()).toContain('git diff --staged --stat');
    // A relative link resolves into the source folder on the code host; external links open safely.
    const relative = body.locator('a', { hasText: 'checklist' });
    await expect(relative.getAttribute('href')).resolves.toBe(
      'https://github.com/acme/skills/blob/main/skills/code-review/references/checklist.md',
    );
    await expect(relative.getAttribute('rel')).resolves.toBe('noopener noreferrer');
    await expect(relative.getAttribute('target')).resolves.toBe('_blank');
    await page.close();
  });

  it('shows a deprecation notice on a deprecated package', async () => {
    const page = await newPage();
    await page.goto(`${base}/@acme/legacy-lint`);
    await page.waitForSelector('[data-testid="deprecation-notice"]');
    await expect(page.locator('[data-testid="deprecation-notice"]').textContent()).resolves.toContain(
      'This package is deprecated',
    );
    await expect(page.locator('[data-testid="status"]').textContent()).resolves.toBe('deprecated');
    await page.close();
  });
});

describe('download tracking (registry-api.md: once per page visit)', () => {
  it('copy then download counts one download; a reload and a return visit count again', async () => {
    const page = await newPage();
    const tracks: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/track')) tracks.push(request.url());
    });
    const before = await downloadCount('acme', 'code-review');
    await page.goto(`${base}/@acme/code-review`);
    await page.waitForSelector('[data-testid="copy-skill"]');

    await page.click('[data-testid="copy-skill"]');
    await page.waitForSelector('[data-testid="copy-skill"][data-state="copied"]');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(CODE_REVIEW_SKILL_MD);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('[data-testid="download-skill"]'),
    ]);
    expect(download.suggestedFilename()).toBe('SKILL.md');
    expect(readFileSync(await download.path(), 'utf8')).toBe(CODE_REVIEW_SKILL_MD);
    await page.click('[data-testid="copy-skill"]');
    await page.click('[data-testid="download-skill"]');

    // The API folds track deltas into downloadCount about every 500 ms: poll, then make sure it stays.
    expect(
      await poll(
        () => downloadCount('acme', 'code-review'),
        (n) => n >= before + 1,
      ),
    ).toBe(before + 1);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await downloadCount('acme', 'code-review')).toBe(before + 1);
    expect(tracks).toHaveLength(1);

    // A reload is a new visit.
    await page.reload();
    await page.waitForSelector('[data-testid="download-skill"]');
    await page.click('[data-testid="download-skill"]');
    await page.click('[data-testid="copy-skill"]');
    expect(
      await poll(
        () => downloadCount('acme', 'code-review'),
        (n) => n >= before + 2,
      ),
    ).toBe(before + 2);
    expect(tracks).toHaveLength(2);

    // Leaving and navigating back to the page is a new visit too.
    await page.click('.brand');
    await page.waitForURL(`${base}/`);
    await page.goBack();
    await page.waitForSelector('[data-testid="copy-skill"]');
    await page.click('[data-testid="copy-skill"]');
    await page.click('[data-testid="copy-skill"]');
    expect(
      await poll(
        () => downloadCount('acme', 'code-review'),
        (n) => n >= before + 3,
      ),
    ).toBe(before + 3);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await downloadCount('acme', 'code-review')).toBe(before + 3);
    expect(tracks).toHaveLength(3);
    // The page shows the count it loaded with on this visit.
    await expect(page.locator('[data-testid="download-count"]').textContent()).resolves.toBe(
      String(before + 2),
    );
    await page.close();
  });

  it('a failing track never blocks the copy or the download', async () => {
    const page = await newPage();
    await page.route('**/track', (route) => route.abort('connectionrefused'));
    await page.goto(`${base}/@acme/legacy-lint`);
    await page.waitForSelector('[data-testid="copy-skill"]');
    await page.click('[data-testid="copy-skill"]');
    await page.waitForSelector('[data-testid="copy-skill"][data-state="copied"]');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('[data-testid="download-skill"]'),
    ]);
    expect(readFileSync(await download.path(), 'utf8')).toContain('legacy-lint');
    await page.close();
  });
});

describe('untrusted SKILL.md', () => {
  it('renders <script>, onerror= and javascript: links inert', async () => {
    const page = await newPage({ hostile: true });
    const dialogs: string[] = [];
    page.on('dialog', async (dialog) => {
      dialogs.push(dialog.message());
      await dialog.dismiss();
    });
    await page.goto(`${base}/@evil/xss-demo`);
    await page.waitForSelector('[data-testid="skill-body"]');
    const body = page.locator('[data-testid="skill-body"]');
    await expect(body.locator('h1').textContent()).resolves.toBe('Totally harmless');
    // Hover and click what used to carry handlers, then give anything deferred a chance to fire.
    await page.hover('text=hover me');
    await page.click('text=hover me');
    await page.click('text=raw javascript link');
    await page.click('text=markdown javascript link');
    await page.waitForTimeout(500);

    expect(dialogs).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(page.url()).toBe(`${base}/@evil/xss-demo`);
    const inert = await body.evaluate((root) => {
      const all = [...root.querySelectorAll('*')];
      return {
        scripts: root.querySelectorAll('script').length,
        handlers: all.flatMap((el) =>
          [...el.attributes].filter((a) => /^on/i.test(a.name)).map((a) => a.name),
        ),
        hrefs: all
          .flatMap((el) => [el.getAttribute('href'), el.getAttribute('xlink:href'), el.getAttribute('src')])
          .filter((v): v is string => v !== null),
        dangerous: root.querySelectorAll('iframe, object, embed, form, style, base, meta, button, textarea')
          .length,
        styled: root.querySelectorAll('[style]').length,
        external: [...root.querySelectorAll('a[href^="https://example.com"]')].map((a) => [
          a.getAttribute('target'),
          a.getAttribute('rel'),
        ]),
      };
    });
    expect(inert.scripts).toBe(0);
    expect(inert.handlers).toEqual([]);
    expect(inert.hrefs.filter((h) => /^\s*(javascript|vbscript|data:text\/html)/i.test(h))).toEqual([]);
    expect(inert.dangerous).toBe(0);
    expect(inert.styled).toBe(0);
    expect(inert.external).toEqual([['_blank', 'noopener noreferrer']]);
    // No <base> escaped into the document, and the page is still visible (no injected CSS).
    expect(await page.evaluate(() => document.querySelectorAll('base').length)).toBe(0);
    expect(await page.locator('h1[data-page-heading]').isVisible()).toBe(true);
    await page.close();
  });
});

describe('not found', () => {
  it('shows a designed 404 for an unknown package, a bad name and an unknown page', async () => {
    const page = await newPage();
    await page.goto(`${base}/@acme/does-not-exist`);
    await page.waitForSelector('[data-testid="not-found-state"]');
    await expect(page.locator('[data-testid="not-found-state"] .state-title').textContent()).resolves.toBe(
      'Package not found',
    );
    expect(await page.textContent('[data-testid="not-found-state"]')).toContain('@acme/does-not-exist');

    // decisions.md: delisted packages are absent from detail (404).
    await page.goto(`${base}/@acme/gone-skill`);
    await page.waitForSelector('[data-testid="not-found-state"]');
    await expect(page.locator('[data-testid="not-found-state"] .state-title').textContent()).resolves.toBe(
      'Package not found',
    );

    await page.goto(`${base}/@Bad--Scope/x`);
    await page.waitForSelector('[data-testid="not-found-state"]');
    await expect(page.locator('[data-testid="not-found-state"] .state-title').textContent()).resolves.toBe(
      'Not a package name',
    );

    await page.goto(`${base}/no/such/page`);
    await page.waitForSelector('[data-testid="not-found-state"]');
    await expect(page.locator('[data-testid="not-found-state"] .state-title').textContent()).resolves.toBe(
      'Page not found',
    );
    await page.click('text=Browse all packages');
    await page.waitForSelector('[data-testid="package-card"]');
    await page.close();
  });
});

describe('registry down', () => {
  it('shows a registry-down state with a retry that recovers once the registry is back', async () => {
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.waitForSelector('[data-testid="package-card"]');
    const port = registry.port;
    await registry.stop();

    // Client-side navigation and search now fail: designed states, not blank pages.
    await page.click('[data-testid="page-next"]');
    await page.waitForSelector('[data-testid="registry-down"]');
    await expect(page.locator('[data-testid="registry-down"] .state-title').textContent()).resolves.toBe(
      'The registry is not responding',
    );
    await page.fill('#search-input', 'code');
    await page.waitForSelector('[data-testid="search"] [data-testid="registry-down"]');
    await page.fill('#search-input', '');

    registry = await startRegistry({ databaseUrl: t.url, port });
    await page.goto(`${base}/?page=2`);
    await page.waitForSelector('[data-testid="package-card"]');
    await page.close();
  });

  it('the package page shows the registry-down state and recovers on retry', async () => {
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.waitForSelector('[data-testid="package-card"]');
    const port = registry.port;
    await registry.stop();
    await page.click('text=@acme/code-review');
    await page.waitForSelector('[data-testid="registry-down"]');
    registry = await startRegistry({ databaseUrl: t.url, port });
    await page.click('[data-testid="registry-down"] >> text=Try again');
    await page.waitForSelector('[data-testid="package-page"]');
    await expect(page.locator('h1[data-page-heading]').textContent()).resolves.toBe('@acme/code-review');
    await page.close();
  });
});

describe('accessibility (axe-core, WCAG 2.1 A/AA and best practices)', () => {
  it('finds no violations on the home, search results, package, deprecated and 404 pages', async () => {
    const page = await newPage();
    await page.goto(`${base}/`);
    await page.waitForSelector('[data-testid="package-card"]');
    expect(await axeViolations(page), 'home').toEqual([]);
    await page.fill('#search-input', 'writer');
    await page.waitForSelector('[role="option"]');
    await page.keyboard.press('ArrowDown');
    expect(await axeViolations(page), 'search').toEqual([]);
    for (const path of ['/@acme/code-review', '/@acme/legacy-lint', '/@acme/nope']) {
      await page.goto(`${base}${path}`);
      await page.waitForSelector('[data-testid="skill-body"], [data-testid="not-found-state"]');
      expect(await axeViolations(page), path).toEqual([]);
    }
    await page.close();
  });

  it('finds no violations in dark mode either (contrast of the dark palette)', async () => {
    const page = await newPage();
    await page.emulateMedia({ colorScheme: 'dark' });
    for (const path of ['/?sort=stars', '/@acme/code-review', '/@acme/legacy-lint']) {
      await page.goto(`${base}${path}`);
      await page.waitForSelector('[data-testid="package-card"], [data-testid="skill-body"]');
      expect(await axeViolations(page), `dark ${path}`).toEqual([]);
    }
    await page.close();
  });
});

describe('phone width (375 px)', () => {
  it('never scrolls sideways on the home, search and package pages', async () => {
    const page = await newPage({ hostile: true }); // visits the XSS fixture too
    await page.setViewportSize({ width: 375, height: 812 });
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await page.goto(`${base}/`);
    await page.waitForSelector('[data-testid="package-card"]');
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.fill('#search-input', 'writer');
    await page.waitForSelector('[role="option"]');
    expect(await overflow()).toBeLessThanOrEqual(0);
    for (const path of ['/@acme/code-review', '/@evil/xss-demo', '/@acme/legacy-lint', '/@acme/nope']) {
      await page.goto(`${base}${path}`);
      await page.waitForSelector('[data-testid="skill-body"], [data-testid="not-found-state"]');
      expect(await overflow(), path).toBeLessThanOrEqual(0);
    }
    await page.close();
  });
});

describe('console', () => {
  it('raised no CSP violation or page error on any page of this run', () => {
    expect(consoleErrors).toEqual([]);
  });
});
