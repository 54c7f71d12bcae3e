#!/usr/bin/env node
// Screenshots of the home, search results and package pages at desktop (1280 px) and phone (375 px) widths,
// and of the account pages (sign-in, tokens, an organisation, package settings) at desktop width, written
// to docs/screenshots/. Same real stack as the browser tests: the UI built by Vite, served by a
// registry-api child process over a throwaway database seeded with the test packages, Debian's Chromium.
//   pnpm --filter @pkgreg/web screenshots    (needs PostgreSQL, Redis and a built registry-api)
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from '@pkgreg/db/testing';
import { build } from 'vite';
// Node strips the types of these three on import; they import nothing relative for that reason.
import { launchBrowser, poll, REPO_ROOT, startRegistry } from '../test/e2e/harness.ts';
import { indexCodeReview } from '../test/e2e/indexed.ts';
import { CODE_REVIEW_SKILL_MD, insertPackages, seedPackages } from '../test/e2e/seed.ts';

const webRoot = fileURLToPath(new URL('..', import.meta.url));
const outDir = path.join(REPO_ROOT, 'docs/screenshots');
mkdirSync(outDir, { recursive: true });

const VIEWPORTS = [
  { label: 'desktop', width: 1280, height: 900, deviceScaleFactor: 1, mobile: false },
  { label: 'phone', width: 375, height: 812, deviceScaleFactor: 2, mobile: true },
];
const MAX_BYTES = 1024 * 1024;

await build({ root: webRoot, logLevel: 'warn' });
const t = await createTestDatabase();
const repos = mkdtempSync(path.join(tmpdir(), 'pkgreg-screenshots-'));
let registry;
try {
  // The hostile fixture and the delisted one add nothing to a picture. The featured package comes from a
  // real repository through the indexer, so its page has versions, files and an archive.
  const seeded = seedPackages().filter((p) => p.scope !== 'evil' && p.status !== 'delisted');
  const featured = seeded.find((p) => p.name === 'code-review');
  const packages = seeded.filter((p) => p !== featured);
  await insertPackages(t.db, packages);
  await indexCodeReview(t.db, repos, CODE_REVIEW_SKILL_MD);
  // What the indexer cannot know (stars, curation, history), as a live registry would have it.
  await t.db
    .updateTable('packages')
    .set({
      download_count: 48_213,
      repo_stars: featured.stars,
      verified: true,
      featured: true,
      category: featured.category,
      tags: featured.tags,
      compatibility: featured.compatibility,
    })
    .where('scope', '=', 'acme')
    .where('name', '=', 'code-review')
    .execute();
  registry = await startRegistry({ databaseUrl: t.url, env: { DEV_SIGN_IN: 'true' } });
  const base = registry.baseUrl;
  await poll(
    async () => (await (await fetch(`${base}/api/packages?pageSize=1`)).json()).total,
    (total) => total === packages.length + 1,
    15_000,
  );

  for (const viewport of VIEWPORTS) {
    const browser = await launchBrowser(viewport);
    try {
      const page = await browser.context.newPage();
      const shot = async (name) => {
        const file = path.join(outDir, `${name}-${viewport.label}.png`);
        await page.screenshot({ path: file, animations: 'disabled', caret: 'hide' });
        const size = statSync(file).size;
        if (size >= MAX_BYTES) throw new Error(`${file} is ${size} bytes, over 1 MiB`);
        console.log(`${path.relative(REPO_ROOT, file)}  ${(size / 1024).toFixed(0)} KiB`);
      };

      await page.goto(`${base}/`);
      await page.waitForSelector('[data-testid="package-card"]');
      await page.evaluate(() => document.fonts.ready);
      await shot('home');

      await page.click('#search-input');
      await page.keyboard.type('writer');
      await page.waitForSelector('[role="option"]');
      await page.keyboard.press('ArrowDown');
      await page.waitForTimeout(100);
      await shot('search');

      await page.goto(`${base}/@acme/code-review`);
      await page.waitForSelector('[data-testid="skill-body"]');
      await page.waitForSelector('[data-testid="file-tree"]');
      await page.evaluate(
        () => document.activeElement instanceof HTMLElement && document.activeElement.blur(),
      );
      await shot('package');
    } finally {
      await browser.close();
    }
  }
  await accountShots(base);
} finally {
  await registry?.stop();
  await t.destroy();
  rmSync(repos, { recursive: true, force: true });
}

/** The account pages, signed in by the development sign-in; the token's secret is replaced by a fake. */
async function accountShots(base) {
  const browser = await launchBrowser(VIEWPORTS[0]);
  try {
    const page = await browser.context.newPage();
    const shot = async (name, options = {}) => {
      await page.evaluate(() => document.activeElement instanceof HTMLElement && document.activeElement.blur());
      const file = path.join(outDir, `${name}-desktop.png`);
      await page.screenshot({ path: file, animations: 'disabled', caret: 'hide', ...options });
      const size = statSync(file).size;
      if (size >= MAX_BYTES) throw new Error(`${file} is ${size} bytes, over 1 MiB`);
      console.log(`${path.relative(REPO_ROOT, file)}  ${(size / 1024).toFixed(0)} KiB`);
    };
    /** A same-origin JSON call with the page's session cookie (what the UI itself sends). */
    const call = (method, url, body) =>
      page.evaluate(
        async ({ method, url, body }) => {
          const res = await fetch(url, {
            method,
            headers: { 'Content-Type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
          return res.json();
        },
        { method, url, body },
      );

    await page.goto(`${base}/sign-in`);
    await page.waitForSelector('#dev-handle');
    await shot('sign-in');

    await call('POST', '/api/auth/dev/sign-in', { handle: 'ada' });
    const org = await call('POST', '/api/auth/organization/create', { name: 'Acme Platform', slug: 'acme-platform' });
    await call('PUT', '/api/scopes/acme-platform/settings', { organizationId: org.id });
    await call('PUT', '/api/scopes/acme-platform/settings', { visibility: 'private' });
    await insertPackages(t.db, [
      { scope: 'acme-platform', name: 'deploy-runbook', description: 'How Acme ships: the deploy runbook.' },
    ]);
    await call('POST', '/api/auth/organization/invite-member', {
      organizationId: org.id,
      email: 'grace@dev.pkgreg.invalid',
      role: 'publisher',
    });
    await call('POST', '/api/packages/@acme-platform/deploy-runbook/trusted-publishers', {
      issuer: 'https://token.actions.githubusercontent.com',
      repository: 'acme-platform/runbooks',
      workflow: 'publish.yml',
      environment: 'release',
    });
    await call('POST', '/api/tokens', { name: 'laptop', permission: 'read', expiresInDays: 90 });

    await page.goto(`${base}/settings/tokens`);
    await page.waitForSelector('[data-testid="token-row"]');
    await page.fill('#token-name', 'CI deploy');
    await page.check('input[value="publish"]');
    await page.fill('#token-scopes', '@acme-platform');
    await page.click('button[type="submit"]');
    await page.waitForSelector('[data-testid="new-token-secret"]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="token-row"]').length === 2);
    // Never a real secret in a picture: a fake of the same shape.
    await page.evaluate(() => {
      for (const el of document.querySelectorAll('[data-testid="new-token-secret"]')) {
        el.textContent = 'pkgreg_EXAMPLEnotArealTOKENexample00000';
      }
    });
    await shot('tokens', { fullPage: true });

    await page.goto(`${base}/orgs/acme-platform`);
    await page.waitForSelector('[data-testid="audit-event"]');
    await page.waitForSelector('[data-testid="org-scope"]');
    await shot('org', { fullPage: true });

    await page.goto(`${base}/packages/@acme-platform/deploy-runbook/settings`);
    await page.waitForSelector('[data-testid="trusted-publisher"]');
    await shot('package-settings', { fullPage: true });
  } finally {
    await browser.close();
  }
}
