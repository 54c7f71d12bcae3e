import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PackageDetail, VersionDetail, VersionListResponse } from '@pkgreg/contracts';
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
import {
  BIG_TEXT,
  EXTRACT_V1,
  EXTRACT_V2,
  FORMS_MD,
  indexManyFilesSkill,
  indexPdfSkill,
  PAGE_HTML,
  PNG_BYTES,
} from './indexed.js';
import { insertPackages } from './seed.js';

// Issue 17, end to end: a version picker, the folder's file tree with a viewer, and "Download .tgz", over
// a package the real indexer made from a real git repository (two versions; executable, binary, linked,
// empty, large and hostile files), served by a real registry-api, in headless Chromium.

let t: TestDatabase;
let registry: RegistryProcess;
let browser: Browser;
let base: string;
let root: string;
let v1: VersionDetail;
let v2: VersionDetail;
/** Console errors and CSP violations across every page of the run. */
const consoleErrors: string[] = [];

const PDF = '/@tools/pdf';

async function api<T>(url: string): Promise<T> {
  const res = await fetch(`${base}${url}`);
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return (await res.json()) as T;
}

/**
 * `hostile`: the page renders references/forms.md, whose `onerror=` Chromium reports as a blocked inline
 * handler while DOMPurify parses it (in its inert document; the rendered DOM carries none, as the
 * Markdown test checks). Only that report is let through.
 */
async function newPage(options: { hostile?: boolean } = {}): Promise<Page> {
  const page = await browser.context.newPage();
  page.on('console', (message) => {
    const text = message.text();
    if (options.hostile && /^Executing inline event handler violates/.test(text)) return;
    if (message.type() === 'error' && /Content.Security.Policy|Refused to/i.test(text)) {
      consoleErrors.push(text);
    }
  });
  page.on('pageerror', (error) => consoleErrors.push(`pageerror: ${error.message}`));
  page.on('dialog', async (dialog) => {
    consoleErrors.push(`dialog: ${dialog.message()}`);
    await dialog.dismiss();
  });
  return page;
}

async function installCommand(page: Page): Promise<string> {
  const text = (await page.locator('[data-testid="install-command"]').textContent()) ?? '';
  return text.replace(/^\$\s*/, '');
}

async function treePaths(page: Page): Promise<string[]> {
  await page.waitForSelector('[data-testid="file-tree"]');
  return page.$$eval('.tree-link', (links) => links.map((a) => a.getAttribute('data-path') ?? ''));
}

async function fileText(page: Page): Promise<string> {
  await page.waitForSelector('[data-testid="file-text"]');
  return (await page.locator('[data-testid="file-text"]').textContent()) ?? '';
}

beforeAll(async () => {
  t = await createTestDatabase();
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'pkgreg-web-versions-')));
  await indexPdfSkill(t.db, root);
  await indexManyFilesSkill(t.db, root);
  // Indexed before the registry kept versions: detail, but no version.
  await insertPackages(t.db, [
    { scope: 'tools', name: 'legacy', description: 'Indexed before versions existed.', version: '0.3.0' },
  ]);
  registry = await startRegistry({ databaseUrl: t.url });
  base = registry.baseUrl;
  v1 = await api<VersionDetail>(`/api/packages${PDF}/versions/1.0.0`);
  v2 = await api<VersionDetail>(`/api/packages${PDF}/versions/1.1.0`);
  browser = await launchBrowser();
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
});

afterAll(async () => {
  await browser?.close();
  await registry?.stop();
  await t?.destroy();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('version picker', () => {
  it('shows the latest version by default: its files, archive, warnings and an unpinned install', async () => {
    const page = await newPage();
    await page.goto(`${base}${PDF}`);
    const listed = await api<VersionListResponse>(`/api/packages${PDF}/versions`);
    expect(listed.data.map((v) => v.version)).toEqual(['1.1.0', '1.0.0']);

    await page.waitForSelector('#version-select');
    const options = await page.$$eval('#version-select option', (els) =>
      els.map((o) => [(o as HTMLOptionElement).value, o.textContent ?? '']),
    );
    expect(options.map(([value]) => value)).toEqual(['1.1.0', '1.0.0']);
    expect(options[0]?.[1]).toContain('(latest)');
    expect(options[1]?.[1]).not.toContain('(latest)');
    expect(await page.inputValue('#version-select')).toBe('1.1.0');
    expect(await installCommand(page)).toBe('pkgreg install @tools/pdf');

    // Every file of the manifest is in the tree, folders first; modes and links are marked.
    expect((await treePaths(page)).toSorted()).toEqual(v2.files.map((f) => f.path).toSorted());
    expect(await treePaths(page)).toContain('scripts/merge.sh');
    const row = (p: string) => page.locator('.tree-file', { has: page.locator(`[data-path="${p}"]`) });
    await expect(row('scripts/extract.sh').textContent()).resolves.toContain('executable');
    await expect(row('scripts/fill_form.py').textContent()).resolves.not.toContain('executable');
    await expect(row('guide.md').textContent()).resolves.toContain('→ references/forms.md');
    await expect(page.locator('[data-testid="files-summary"]').textContent()).resolves.toMatch(
      new RegExp(`^${v2.fileCount} files · `),
    );

    // The warnings of detail, each one listed.
    const detail = await api<PackageDetail>(`/api/packages${PDF}`);
    expect(detail.warnings.some((w) => w.includes('1024'))).toBe(true);
    const shownWarnings = await page.$$eval('[data-testid="warnings"] li', (lis) =>
      lis.map((li) => li.textContent),
    );
    expect(shownWarnings).toEqual(detail.warnings);

    // The archive of the shown version, byte for byte what its integrity names.
    const tgz = page.locator('[data-testid="download-tgz"]');
    await expect(tgz.getAttribute('href')).resolves.toBe(
      '/api/packages/@tools/pdf/versions/1.1.0/archive.tgz',
    );
    const [download] = await Promise.all([page.waitForEvent('download'), tgz.click()]);
    expect(download.suggestedFilename()).toBe('tools-pdf-1.1.0.tgz');
    const bytes = readFileSync(await download.path());
    expect(`sha512-${createHash('sha512').update(bytes).digest('base64')}`).toBe(v2.integrity);
    await expect(page.locator('[data-testid="version-facts"]').textContent()).resolves.toContain(
      v2.integrity.slice(0, 19),
    );
    // Unsigned until the registry's signer signs it (docs/provenance.md); then the key is named.
    await expect(page.locator('[data-testid="unsigned"]').textContent()).resolves.toBe('not yet');
    await sql`insert into registry_signing_keys (keyid, algorithm, public_key)
      values ('SHA256:webtestkeywebtestkeywebtestkeywebtestkey00=', 'ed25519', 'not-a-real-key')`.execute(
      t.db,
    );
    await sql`insert into version_signatures (version_id, keyid, signature)
      select v.id, 'SHA256:webtestkeywebtestkeywebtestkeywebtestkey00=', 'c2ln' from package_versions v
      join packages p on p.id = v.package_id where p.scope = 'tools' and p.name = 'pdf' and v.version = '1.1.0'`.execute(
      t.db,
    );
    await page.reload();
    await expect(page.locator('[data-testid="signed"]').textContent()).resolves.toContain(
      'SHA256:webtestkeywe',
    );
    // Its provenance attestation, when the registry made one: where it was built from, with links.
    const statement = {
      predicate: {
        buildDefinition: {
          externalParameters: {
            repository: 'https://github.com/tools/skills',
            commit: 'abcdef0123456789abcdef0123456789abcdef01',
            run: 'https://github.com/tools/skills/actions/runs/42',
          },
        },
      },
    };
    const envelope = {
      payloadType: 'application/vnd.in-toto+json',
      payload: Buffer.from(JSON.stringify(statement)).toString('base64'),
      signatures: [{ keyid: 'SHA256:webtestkeywebtestkeywebtestkeywebtestkey00=', sig: 'c2ln' }],
    };
    await sql`insert into version_attestations (version_id, keyid, envelope)
      select v.id, 'SHA256:webtestkeywebtestkeywebtestkeywebtestkey00=', ${JSON.stringify(envelope)}::jsonb
      from package_versions v join packages p on p.id = v.package_id
      where p.scope = 'tools' and p.name = 'pdf' and v.version = '1.1.0'`.execute(t.db);
    await page.reload();
    const built = page.locator('[data-testid="built-from"]');
    await expect(built.textContent()).resolves.toBe('github.com/tools/skills at abcdef012345 by a CI run');
    await expect(built.locator('a').nth(1).getAttribute('href')).resolves.toBe(
      'https://github.com/tools/skills/commit/abcdef0123456789abcdef0123456789abcdef01',
    );
    await page.close();
  });

  it('picking a version puts it in the URL and shows that version; back, reload and latest agree', async () => {
    const page = await newPage();
    await page.goto(`${base}${PDF}`);
    await page.waitForSelector('[data-testid="file-tree"]');
    await page.selectOption('#version-select', '1.0.0');
    await page.waitForURL(`${base}${PDF}?version=1.0.0`);

    const showsV1 = async () => {
      await page.waitForSelector('[data-testid="skill-body"]:has-text("Version 1.0.0 of the skill.")');
      expect(await installCommand(page)).toBe('pkgreg install @tools/pdf@1.0.0');
      expect(await page.inputValue('#version-select')).toBe('1.0.0');
      await page.waitForSelector('.tree-link[data-path="scripts/extract.sh"]');
      expect((await treePaths(page)).toSorted()).toEqual(v1.files.map((f) => f.path).toSorted());
      expect(await treePaths(page)).not.toContain('scripts/merge.sh');
      await expect(page.locator('[data-testid="download-tgz"]').getAttribute('href')).resolves.toBe(
        '/api/packages/@tools/pdf/versions/1.0.0/archive.tgz',
      );
      await expect(page.locator('#skill-heading').textContent()).resolves.toBe('SKILL.md · v1.0.0');
      await expect(page.locator('[data-testid="frontmatter-yaml"]').textContent()).resolves.toContain(
        'version: 1.0.0',
      );
      // 1.0.0 broke no rule: the latest version's warnings are not its own.
      expect(await page.locator('[data-testid="warnings"]').count()).toBe(0);
    };
    await showsV1();

    // Copy SKILL.md copies the shown version's.
    const v1SkillMd = await (await fetch(`${base}/api/packages${PDF}/versions/1.0.0/files/SKILL.md`)).text();
    await page.click('[data-testid="copy-skill"]');
    await page.waitForSelector('[data-testid="copy-skill"][data-state="copied"]');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(v1SkillMd);

    await page.reload();
    await showsV1();

    await page.goBack();
    await page.waitForURL(`${base}${PDF}`);
    await page.waitForSelector('[data-testid="skill-body"]:has-text("Version 1.1.0 of the skill.")');
    expect(await installCommand(page)).toBe('pkgreg install @tools/pdf');
    await page.waitForSelector('.tree-link[data-path="scripts/merge.sh"]');
    expect(await page.inputValue('#version-select')).toBe('1.1.0');

    // A link pinned to the latest version stays pinned; picking "latest" from the list unpins it.
    await page.goto(`${base}${PDF}?version=1.1.0`);
    await page.waitForSelector('[data-testid="file-tree"]');
    expect(await installCommand(page)).toBe('pkgreg install @tools/pdf@1.1.0');
    await page.selectOption('#version-select', '1.0.0');
    await page.waitForURL(`${base}${PDF}?version=1.0.0`);
    await page.selectOption('#version-select', '1.1.0');
    await page.waitForURL(`${base}${PDF}`);
    expect(await installCommand(page)).toBe('pkgreg install @tools/pdf');
    await page.close();
  });

  it('a version that does not exist says so and leads back to the latest', async () => {
    const page = await newPage();
    await page.goto(`${base}${PDF}?version=9.9.9`);
    await page.waitForSelector('[data-testid="version-not-found"]');
    await expect(page.locator('[data-testid="version-not-found"] .state-title').textContent()).resolves.toBe(
      'Version 9.9.9 not found',
    );
    expect(await page.locator('[data-testid="install-command"]').count()).toBe(0);
    expect(await page.locator('[data-testid="download-tgz"]').count()).toBe(0);
    await page.click('text=Show the latest version');
    await page.waitForURL(`${base}${PDF}`);
    await page.waitForSelector('[data-testid="file-tree"]');
    expect(await installCommand(page)).toBe('pkgreg install @tools/pdf');
    await page.close();
  });

  it('a package indexed before versions existed has no picker, files or archive, and still installs', async () => {
    const page = await newPage();
    await page.goto(`${base}/@tools/legacy`);
    await page.waitForSelector('[data-testid="no-versions"]');
    expect(await page.locator('#version-select').count()).toBe(0);
    expect(await page.locator('[data-testid="download-tgz"]').count()).toBe(0);
    expect(await installCommand(page)).toBe('pkgreg install @tools/legacy');
    await page.click('[data-testid="copy-skill"]');
    await page.waitForSelector('[data-testid="copy-skill"][data-state="copied"]');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain('# legacy');
    await page.close();
  });
});

describe('file viewer', () => {
  it('opens a file into the URL with its exact text; the keyboard, reload, back and close agree', async () => {
    const page = await newPage();
    await page.goto(`${base}${PDF}`);
    await page.click('.tree-link[data-path="scripts/extract.sh"]');
    await page.waitForURL(`${base}${PDF}?file=scripts/extract.sh`);
    expect(await fileText(page)).toBe(EXTRACT_V2);
    await expect(page.locator('#viewer-heading').textContent()).resolves.toBe('scripts/extract.sh');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('viewer-heading');
    await expect(page.locator('[data-testid="file-viewer"] .viewer-meta').textContent()).resolves.toContain(
      'executable',
    );
    await expect(page.locator('.tree-link[aria-current="page"]').getAttribute('data-path')).resolves.toBe(
      'scripts/extract.sh',
    );

    await page.reload();
    expect(await fileText(page)).toBe(EXTRACT_V2);

    // The keyboard opens another file; focus follows it.
    await page.focus('.tree-link[data-path="scripts/fill_form.py"]');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}${PDF}?file=scripts/fill_form.py`);
    await page.waitForSelector('#viewer-heading:has-text("scripts/fill_form.py")');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('viewer-heading');

    await page.goBack();
    await page.waitForURL(`${base}${PDF}?file=scripts/extract.sh`);
    await page.waitForSelector('#viewer-heading:has-text("scripts/extract.sh")');

    // Closing returns focus to the file's entry in the tree.
    await page.click('[data-testid="close-file"]');
    await page.waitForURL(`${base}${PDF}`);
    expect(await page.locator('[data-testid="file-viewer"]').count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-path'))).toBe(
      'scripts/extract.sh',
    );

    // A version and a file in one link: that version's bytes.
    await page.goto(`${base}${PDF}?version=1.0.0&file=scripts/extract.sh`);
    expect(await fileText(page)).toBe(EXTRACT_V1);
    // Switching versions keeps the file open.
    await page.selectOption('#version-select', '1.1.0');
    await page.waitForURL(`${base}${PDF}?file=scripts/extract.sh`);
    await page.waitForSelector(`[data-testid="file-text"]:has-text("-layout")`);
    expect(await fileText(page)).toBe(EXTRACT_V2);
    await page.close();
  });

  it('offers binaries as downloads: by name without fetching them, and by the text check', async () => {
    const page = await newPage();
    const fetched: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/files/')) fetched.push(new URL(request.url()).pathname);
    });
    await page.goto(`${base}${PDF}?file=assets/logo.png`);
    await page.waitForSelector('[data-testid="file-binary"]');
    expect(await page.locator('[data-testid="file-text"]').count()).toBe(0);
    expect(fetched.filter((p) => p.endsWith('/assets/logo.png'))).toEqual([]);
    const link = page.locator('[data-testid="file-binary"] a');
    await expect(link.getAttribute('download')).resolves.toBe('logo.png');
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(readFileSync(await download.path()).equals(PNG_BYTES)).toBe(true);

    // No telling extension: fetched, then found binary (NUL bytes).
    await page.click('.tree-link[data-path="assets/model.weights"]');
    await page.waitForSelector('[data-testid="file-binary"]:has-text("Download model.weights")');
    expect(fetched.some((p) => p.endsWith('/assets/model.weights'))).toBe(true);

    // No extension at all, served as application/octet-stream: text by the check.
    await page.click('.tree-link[data-path="LICENSE"]');
    await page.waitForSelector('[data-testid="file-text"]:has-text("MIT License")');
    expect(await fileText(page)).toBe('MIT License\n\nCopyright (c) 2026 Tools\n');
    await page.close();
  });

  it('shows the first 256 KiB of a large text file and links the raw file for the rest', async () => {
    const page = await newPage();
    await page.goto(`${base}${PDF}?file=data/big.txt`);
    await page.waitForSelector('[data-testid="file-truncated"]');
    const text = await fileText(page);
    expect(text).toBe(BIG_TEXT.slice(0, 256 * 1024));
    expect(BIG_TEXT.length).toBeGreaterThan(256 * 1024);
    const note = page.locator('[data-testid="file-truncated"]');
    await expect(note.textContent()).resolves.toContain('first 256 KiB of 312.5 KiB');
    await expect(note.locator('a').getAttribute('href')).resolves.toBe(
      '/api/packages/@tools/pdf/versions/1.1.0/files/data/big.txt',
    );
    await page.close();
  });

  it('renders Markdown sanitized with in-page relative links; HTML stays text and never runs', async () => {
    const page = await newPage({ hostile: true });
    await page.goto(`${base}${PDF}?file=references/forms.md`);
    await page.waitForSelector('[data-testid="file-markdown"] h1');
    const body = page.locator('[data-testid="file-markdown"]');
    await expect(body.locator('h1').textContent()).resolves.toBe('Filling forms');
    expect(await body.locator('script, [onerror]').count()).toBe(0);
    expect(await body.locator('table').count()).toBe(1);
    await expect(body.locator('a', { hasText: 'upstream guide' }).getAttribute('target')).resolves.toBe(
      '_blank',
    );
    const relative = body.locator('a', { hasText: 'fill_form.py' });
    await expect(relative.getAttribute('href')).resolves.toBe('/@tools/pdf?file=scripts/fill_form.py');

    await page.click('[data-testid="show-source"]');
    expect(await fileText(page)).toBe(FORMS_MD);

    await page.click('[data-testid="file-viewer"] >> text=Preview');
    await relative.click();
    await page.waitForURL(`${base}${PDF}?file=scripts/fill_form.py`);
    await page.waitForSelector('[data-testid="file-text"]:has-text("def main")');

    await page.goto(`${base}${PDF}?file=page.html`);
    expect(await fileText(page)).toBe(PAGE_HTML);
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(await page.locator('h1', { hasText: 'Not rendered' }).count()).toBe(0);

    // SKILL.md's own relative links open files of the version in the page too.
    const skillLink = page.locator('[data-testid="skill-body"] a', { hasText: 'the forms guide' });
    await expect(skillLink.getAttribute('href')).resolves.toBe('/@tools/pdf?file=references/forms.md');
    await page.close();
  });

  it('follows a symbolic link, and says so for an empty file and one the version lacks', async () => {
    const page = await newPage({ hostile: true });
    await page.goto(`${base}${PDF}?file=guide.md`);
    await page.waitForSelector('[data-testid="file-link"]');
    await expect(page.locator('[data-testid="file-link"]').textContent()).resolves.toContain(
      'A symbolic link to references/forms.md',
    );
    await page.click('[data-testid="file-link"] a');
    await page.waitForURL(`${base}${PDF}?file=references/forms.md`);
    await page.waitForSelector('[data-testid="file-markdown"] h1');

    await page.goto(`${base}${PDF}?file=empty.txt`);
    await page.waitForSelector('[data-testid="file-empty"]');

    await page.goto(`${base}${PDF}?version=1.0.0&file=scripts/merge.sh`);
    await page.waitForSelector('[data-testid="file-missing"]');
    await expect(page.locator('[data-testid="file-missing"]').textContent()).resolves.toBe(
      'Version 1.0.0 has no file scripts/merge.sh.',
    );
    await page.close();
  });
});

describe('a big folder', () => {
  it('starts with folders collapsed except those holding the open file', async () => {
    const page = await newPage();
    await page.goto(`${base}/@tools/many?file=data/part-3/file-07.txt`);
    expect(await fileText(page)).toBe('part 3, file-07.txt\n');
    const open = await page.$$eval('.tree details[open] > summary .tree-name', (names) =>
      names.map((n) => n.textContent),
    );
    expect(open).toEqual(['data', 'part-3']);
    expect(await page.isVisible('.tree-link[data-path="data/part-3/file-07.txt"]')).toBe(true);
    expect(await page.isVisible('.tree-link[data-path="data/part-1/file-01.txt"]')).toBe(false);
    await page.click('.tree summary:has-text("part-1")');
    await page.click('.tree-link[data-path="data/part-1/file-01.txt"]');
    await page.waitForURL(`${base}/@tools/many?file=data/part-1/file-01.txt`);
    expect(await fileText(page)).toBe('part 1, file-01.txt\n');
    await page.close();
  });
});

describe('download tracking: Download .tgz, once per visit with copy and download', () => {
  it('counts one download for a visit, whatever versions and files it looks at; a reload counts again', async () => {
    const page = await newPage();
    const tracks: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/track')) tracks.push(request.url());
    });
    const count = async () => (await api<PackageDetail>(`/api/packages${PDF}`)).downloadCount;
    const before = await count();
    await page.goto(`${base}${PDF}`);
    await Promise.all([page.waitForEvent('download'), page.click('[data-testid="download-tgz"]')]);
    expect(await poll(count, (n) => n >= before + 1)).toBe(before + 1);

    // Another version and a file, within the same visit: no second count.
    await page.selectOption('#version-select', '1.0.0');
    await page.waitForURL(`${base}${PDF}?version=1.0.0`);
    await page.click('.tree-link[data-path="LICENSE"]');
    await page.waitForSelector('[data-testid="file-text"]');
    await Promise.all([page.waitForEvent('download'), page.click('[data-testid="download-tgz"]')]);
    await page.click('[data-testid="copy-skill"]');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await count()).toBe(before + 1);
    expect(tracks).toHaveLength(1);

    await page.reload();
    await Promise.all([page.waitForEvent('download'), page.click('[data-testid="download-tgz"]')]);
    expect(await poll(count, (n) => n >= before + 2)).toBe(before + 2);
    expect(tracks).toHaveLength(2);
    await page.close();
  });
});

describe('accessibility and phones', () => {
  const VIEWS = [
    PDF,
    `${PDF}?file=scripts/extract.sh`,
    `${PDF}?file=references/forms.md`,
    `${PDF}?file=assets/logo.png`,
    `${PDF}?file=data/big.txt`,
    `${PDF}?file=guide.md`,
    `${PDF}?version=1.0.0`,
    `${PDF}?version=9.9.9`,
    '/@tools/legacy',
  ];
  const READY = '[data-testid="file-tree"], [data-testid="version-not-found"], [data-testid="no-versions"]';
  const settled = async (page: Page, view: string) => {
    await page.goto(`${base}${view}`);
    await page.waitForSelector(READY);
    if (view.includes('file=')) {
      await page.waitForSelector(
        '[data-testid="file-text"], [data-testid="file-markdown"], [data-testid="file-binary"], [data-testid="file-link"]',
      );
    }
  };

  it('axe finds no violations with the picker, the tree and every kind of viewer, light and dark', async () => {
    const page = await newPage({ hostile: true });
    for (const view of VIEWS) {
      await settled(page, view);
      expect(await axeViolations(page), view).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'dark' });
    for (const view of [PDF, `${PDF}?file=data/big.txt`, `${PDF}?file=references/forms.md`]) {
      await settled(page, view);
      expect(await axeViolations(page), `dark ${view}`).toEqual([]);
    }
    await page.close();
  });

  it('never scrolls sideways at 375 px, with long lines, long descriptions and the picker', async () => {
    const page = await newPage({ hostile: true });
    await page.setViewportSize({ width: 375, height: 812 });
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    for (const view of VIEWS) {
      await settled(page, view);
      expect(await overflow(), view).toBeLessThanOrEqual(0);
    }
    await page.close();
  });
});

describe('console', () => {
  it('raised no CSP violation, page error or dialog on any page of this run', () => {
    expect(consoleErrors).toEqual([]);
  });
});
