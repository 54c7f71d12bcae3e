import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_REDIS_URL } from '@pkgreg/db/testing';
import {
  startRegistry as startRegistryProcess,
  type RegistryProcess as TestRegistryProcess,
} from '@pkgreg/testing';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

// Real pieces only: the built registry-api as a child process (serving the built UI through web-static.ts)
// against this file's own database, driven by Debian's Chromium through playwright-core.

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const REGISTRY_ENTRY = path.join(REPO_ROOT, 'apps/registry-api/dist/index.js');
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The flags that work on this machine (closed network: no background networking). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export { freePort } from '@pkgreg/testing';

export type RegistryProcess = TestRegistryProcess & { baseUrl: string };

export async function startRegistry(options: {
  databaseUrl: string;
  port?: number;
  /** Added to the registry's environment (DEV_SIGN_IN for the account pages). */
  env?: Record<string, string>;
}): Promise<RegistryProcess> {
  if (!existsSync(REGISTRY_ENTRY)) {
    throw new Error(`${REGISTRY_ENTRY} is missing: run pnpm turbo run build --filter=@pkgreg/web...`);
  }
  const registry = await startRegistryProcess({
    entry: REGISTRY_ENTRY,
    cwd: path.join(REPO_ROOT, 'apps/registry-api'),
    databaseUrl: options.databaseUrl,
    redisUrl: TEST_REDIS_URL,
    ...(options.port ? { port: options.port } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  return { ...registry, baseUrl: registry.url };
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Chromium with a fresh, empty profile directory (removed on close). */
export async function launchBrowser(
  options: { width?: number; height?: number; deviceScaleFactor?: number; mobile?: boolean } = {},
): Promise<Browser> {
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'pkgreg-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    acceptDownloads: true,
    viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
    deviceScaleFactor: options.deviceScaleFactor ?? 1,
    isMobile: options.mobile ?? false,
    hasTouch: options.mobile ?? false,
    reducedMotion: 'reduce',
    colorScheme: 'light',
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Polls `read` until `accept` holds or the deadline passes; returns the last value read. */
export async function poll<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!accept(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 150));
    value = await read();
  }
  return value;
}

let axeSource: string | null = null;

/** axe-core's WCAG 2.1 A/AA and best-practice violations on the page, one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Runtime.evaluate is not subject to the page's CSP, so axe needs no inline <script>.
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    type AxeResults = { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] };
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<AxeResults> } })
      .axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations.map(
      (v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    );
  });
}
