#!/usr/bin/env node
// Screenshots of the home, search results and package pages at desktop (1280 px) and phone (375 px) widths,
// written to docs/screenshots/. Same real stack as the browser tests: the UI built by Vite, served by a
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
  registry = await startRegistry({ databaseUrl: t.url });
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
} finally {
  await registry?.stop();
  await t.destroy();
  rmSync(repos, { recursive: true, force: true });
}
