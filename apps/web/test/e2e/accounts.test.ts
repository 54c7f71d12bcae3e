import { createHash, randomBytes } from 'node:crypto';
import { SCOPE_DESCRIPTIONS, SCOPES } from '@pkgreg/contracts';
import { createTestDatabase, type TestDatabase } from '@pkgreg/db/testing';
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

// Accounts in the web UI (docs/web-accounts.md), end to end in headless Chromium against a real
// registry-api with the development sign-in: one owner's browser walks sign-in, the account menu, an
// organisation, a private scope, tokens, sessions, an invitation accepted in a second browser, an agent
// app's consent and its revocation in connected apps, the audit log, the device page and signing out. The
// steps run in order and share the two browsers.

let t: TestDatabase;
let registry: RegistryProcess;
let owner: Browser;
let other: Browser;
let base: string;
let ownerPage: Page;
let invitationLink = '';
/** The MCP edge the consent page sends browsers back to: nothing listens, the test intercepts it. */
const EDGE = 'http://edge.invalid';
const consoleErrors: string[] = [];
const PUBLIC = seedPackages()
  .filter((p) => p.status !== 'delisted' && p.scope !== 'evil')
  .slice(0, 3);

async function newPage(browser: Browser): Promise<Page> {
  const page = await browser.context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content.Security.Policy|Refused to/i.test(message.text())) {
      consoleErrors.push(message.text());
    }
  });
  page.on('pageerror', (error) => consoleErrors.push(`pageerror: ${error.message}`));
  return page;
}

async function expectAccessible(page: Page): Promise<void> {
  expect(await axeViolations(page)).toEqual([]);
}

/** Signs in through the sign-in page; `next` is where the page should come back to. */
async function signInThroughPage(page: Page, handle: string, next: string): Promise<void> {
  await page.goto(`${base}/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel('Handle').fill(handle);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${base}${next}`);
  await page.locator('[data-testid="account-button"]').waitFor();
}

/** Fetch from the page's own origin with its cookies (what the UI does). */
function pageFetch(page: Page, path: string, init: { method?: string; body?: unknown } = {}) {
  return page.evaluate(
    async ({ path, init }) => {
      const res = await fetch(path, {
        method: init.method ?? 'GET',
        headers: { 'Content-Type': 'application/json' },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      return { status: res.status, body: await res.json().catch(() => null) };
    },
    { path, init },
  );
}

beforeAll(async () => {
  t = await createTestDatabase();
  await insertPackages(t.db, PUBLIC);
  registry = await startRegistry({
    databaseUrl: t.url,
    env: { DEV_SIGN_IN: 'true', DETAIL_CACHE_TTL_MS: '0', EDGE_PUBLIC_BASE_URL: EDGE },
  });
  base = registry.baseUrl;
  owner = await launchBrowser();
  other = await launchBrowser();
  await owner.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  ownerPage = await newPage(owner);
});

afterAll(async () => {
  await owner?.close();
  await other?.close();
  await registry?.stop();
  await t?.destroy();
});

describe('accounts in the web UI', () => {
  it('a settings page asks a signed-out visitor to sign in, and the sign-in page comes back to it', async () => {
    const page = ownerPage;
    await page.goto(`${base}/settings/tokens`);
    await page.locator('[data-testid="sign-in-required"]').waitFor();
    await expect(page.locator('[data-testid="sign-in-link"]').textContent()).resolves.toBe('Sign in');
    await page.locator('[data-testid="sign-in-required"] a').click();
    await page.waitForURL(/\/sign-in\?next=%2Fsettings%2Ftokens$/);
    await page.getByLabel('Handle').waitFor();
    await expectAccessible(page);
    // A handle the rule refuses is announced and keeps the visitor on the page.
    await page.getByLabel('Handle').fill('Not Valid');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    expect(
      await page.getByLabel('Handle').evaluate((input) => (input as HTMLInputElement).validity.valid),
    ).toBe(false);
    await page.getByLabel('Handle').fill('ada');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${base}/settings/tokens`);
    await expect(page.locator('[data-testid="account-button"]').textContent()).resolves.toContain('ada');
  });

  it('?next= only ever returns to a path of this site', async () => {
    const page = await newPage(owner);
    for (const next of ['https://evil.example/', '//evil.example/x', '/\\evil.example']) {
      await page.goto(`${base}/sign-in?next=${encodeURIComponent(next)}`);
      // Signed in already: the page offers to continue, to the safe target.
      const href = await page.locator('.notice a').getAttribute('href');
      expect({ next, href }).toEqual({ next, href: '/' });
    }
    await page.close();
  });

  it('the account menu opens with the settings links and closes on Escape', async () => {
    const page = ownerPage;
    await page.click('[data-testid="account-button"]');
    const panel = page.locator('#account-menu-panel');
    await panel.waitFor();
    expect(await page.getAttribute('[data-testid="account-button"]', 'aria-expanded')).toBe('true');
    await expect(panel.textContent()).resolves.toContain('ada@dev.pkgreg.invalid');
    expect(await panel.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href')))).toEqual(
      ['/settings/tokens', '/settings/sessions', '/settings/connected-apps', '/settings/orgs'],
    );
    await expectAccessible(page);
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
  });

  it('creates an organisation, claims a scope into it and makes it private', async () => {
    const page = ownerPage;
    await page.goto(`${base}/settings/orgs`);
    await page.locator('[data-testid="no-orgs"]').waitFor();
    await page.getByLabel('Name').fill('Team Alpha');
    expect(await page.getByLabel('Slug').inputValue()).toBe('team-alpha');
    await page.getByRole('button', { name: 'Create organisation' }).click();
    await page.waitForURL(`${base}/orgs/team-alpha`);
    await expect(page.locator('h1[data-page-heading]').textContent()).resolves.toBe('Team Alpha');
    await expect(page.locator('[data-testid="member"]').count()).resolves.toBe(1);

    await page.getByLabel('Claim a scope').fill('@team-alpha');
    await page.getByRole('button', { name: 'Claim', exact: true }).click();
    const scopeRow = page.locator('[data-testid="org-scope"][data-scope="team-alpha"]');
    await scopeRow.waitFor();
    await expect(scopeRow.textContent()).resolves.toContain('Public');
    // A scope another organisation (or nobody reachable) holds is refused, and the refusal is announced.
    await page.getByLabel('Claim a scope').fill(`@${PUBLIC[0]?.scope}`);
    await page.getByRole('button', { name: 'Claim', exact: true }).click();
    await expect(
      page.locator('[data-testid="claim-scope"] [role="alert"]').filter({ hasText: /\S/ }).textContent(),
    ).resolves.toMatch(/not found|admin/i);

    await scopeRow.getByRole('button', { name: 'Make @team-alpha private' }).click();
    await scopeRow.locator('.badge-private').waitFor();
    const settings = await pageFetch(page, '/api/scopes/team-alpha/settings');
    expect(settings.body).toMatchObject({ scope: 'team-alpha', visibility: 'private' });
  });

  it('a package of the private scope carries the Private badge for the member', async () => {
    await insertPackages(t.db, [
      { scope: 'team-alpha', name: 'runbook', description: 'The on-call runbook.', hosted: true },
    ]);
    const row = await t.db
      .selectFrom('packages')
      .select('private')
      .where('scope', '=', 'team-alpha')
      .executeTakeFirstOrThrow();
    expect(row.private).toBe(true);
    const page = ownerPage;
    await page.goto(`${base}/@team-alpha/runbook`);
    await page.locator('h1[data-page-heading]').waitFor();
    await page.locator('.package-header [data-testid="private-badge"]').waitFor();
    // Uploaded, so no repository to name: "Hosted by pkgreg", and no Source line.
    await page.locator('.fact dd', { hasText: 'Hosted by pkgreg' }).waitFor();
    await expect(page.locator('.fact dt', { hasText: /^Source$/ }).count()).resolves.toBe(0);
    await expect(page.locator('[data-testid="package-settings-link"]').getAttribute('href')).resolves.toBe(
      '/packages/@team-alpha/runbook/settings',
    );
    // The list shows it with its badge once the registry's list order has caught up (~1 s).
    const card = page.locator('[data-testid="package-card"]', { hasText: 'runbook' });
    await poll(
      async () => {
        await page.goto(`${base}/?sort=name`);
        await page.locator('[data-testid="package-card"]').first().waitFor();
        return card.count();
      },
      (n) => n === 1,
      15_000,
    );
    await expect(card.locator('[data-testid="private-badge"]').textContent()).resolves.toBe('Private');
    // Public packages carry none.
    await expect(
      page
        .locator('[data-testid="package-card"]', { hasText: PUBLIC[0]?.name ?? '' })
        .locator('.badge-private')
        .count(),
    ).resolves.toBe(0);
  });

  it('a signed-out browser does not see the private package (needs the private-reads read paths)', async () => {
    const page = await newPage(other);
    const detail = await page.goto(`${base}/api/packages/@team-alpha/runbook`);
    expect(detail?.status()).toBe(404);
    await page.goto(`${base}/?sort=name`);
    await page.locator('[data-testid="package-card"]').first().waitFor();
    expect(await page.locator('[data-testid="package-card"]', { hasText: 'runbook' }).count()).toBe(0);
    await page.goto(`${base}/@team-alpha/runbook`);
    await page.locator('[data-testid="not-found"], [data-testid="error-state"]').first().waitFor();
    await page.close();
  });

  it('creates a token shown once, which works until it is revoked', async () => {
    const page = ownerPage;
    await page.goto(`${base}/settings/tokens`);
    await page.locator('[data-testid="no-tokens"]').waitFor();
    await page.getByLabel('Name').fill('ci deploy');
    await page.getByLabel('Publish: also upload versions').check();
    await page.getByLabel('Organisation Team Alpha').check();
    await page.getByLabel('Scopes').fill('@team-alpha');
    await page.getByLabel('Expires after (days)').fill('7');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.locator('[data-testid="new-token-secret"]').textContent()) ?? '';
    expect(secret).toMatch(/^pkgreg_[0-9A-Za-z]{36}$/);
    await expect(page.locator('[data-testid="new-token"] .notice').textContent()).resolves.toMatch(
      /only time/,
    );
    await expectAccessible(page);
    await page.click('[data-testid="copy-token"]');
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(secret);

    const row = page.locator('[data-testid="token-row"]', { hasText: 'ci deploy' });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('publish');
    await expect(row.textContent()).resolves.toContain(secret.slice(0, 11));
    const me = await fetch(`${base}/api/me`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(me.status).toBe(200);
    // The secret is never shown again: not in the list, not after a reload.
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);

    await row.locator('[data-testid="revoke-token"]').click();
    await row.locator('[data-testid="confirm-revoke"]').click();
    const revoked = await poll(
      () => row.textContent(),
      (text) => /revoked/.test(text ?? ''),
    );
    expect(revoked).toMatch(/revoked/);
    const after = await fetch(`${base}/api/me`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(after.status).toBe(401);
  });

  it('lists sessions, marks this one, and signs another out', async () => {
    // A second session of the same account (another browser, elsewhere).
    const signIn = await fetch(`${base}/api/auth/dev/sign-in`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Origin: base,
        'User-Agent': 'Mozilla/5.0 (Windows NT 10.0) Firefox/140.0',
      },
      body: JSON.stringify({ handle: 'ada' }),
    });
    expect(signIn.status).toBe(200);
    const page = ownerPage;
    await page.goto(`${base}/settings/sessions`);
    const sessions = page.locator('[data-testid="session"]');
    await poll(
      () => sessions.count(),
      (n) => n === 2,
    );
    await expect(
      page.locator('[data-testid="session"][data-current="true"]').textContent(),
    ).resolves.toContain('This browser');
    await expectAccessible(page);
    const elsewhere = page.locator('[data-testid="session"][data-current="false"]');
    await expect(elsewhere.textContent()).resolves.toContain('Firefox on Windows');
    await elsewhere.getByRole('button').click();
    await poll(
      () => sessions.count(),
      (n) => n === 1,
    );
    await expect(page.locator('[data-testid="form-success"]').last().textContent()).resolves.toMatch(
      /Signed out/,
    );
  });

  it('an invitation link is accepted in a second browser, which then sees the private package', async () => {
    const page = ownerPage;
    await page.goto(`${base}/orgs/team-alpha`);
    await page.getByLabel('Email').fill('bob@dev.pkgreg.invalid');
    await page.locator('#invite-role').selectOption('publisher');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    invitationLink = (await page.locator('[data-testid="invitation-link"] code').textContent()) ?? '';
    expect(invitationLink).toMatch(new RegExp(`^${base}/invitations/[0-9a-f-]{36}$`));
    await page.locator('[data-testid="pending-invitation"]', { hasText: 'bob@dev.pkgreg.invalid' }).waitFor();
    await expectAccessible(page);

    const bob = await newPage(other);
    await bob.goto(invitationLink);
    await bob.locator('[data-testid="sign-in-required"]').waitFor();
    await signInThroughPage(bob, 'bob', new URL(invitationLink).pathname);
    await bob.locator('[data-testid="invitation-page"]').waitFor();
    await expect(bob.locator('[data-testid="invitation-page"]').textContent()).resolves.toContain(
      'publisher',
    );
    await expectAccessible(bob);
    await bob.click('[data-testid="accept"]');
    await bob.waitForURL(`${base}/orgs/team-alpha`);
    await bob.locator('[data-testid="member"][data-email="bob@dev.pkgreg.invalid"]').waitFor();
    // The organisation's skills install from one address below its page (docs/discovery.md): the
    // registry answers there, and to an outsider a private organisation is as missing as any.
    const address = `${base}/orgs/team-alpha`;
    await expect(bob.locator('[data-testid="org-install-command"]').allTextContents()).resolves.toEqual([
      `$ npx skills add ${address}`,
      `$ pkgreg install ${address} --skill <name>`,
    ]);
    const outsider = await fetch(`${address}/.well-known/agent-skills/index.json`);
    expect({ status: outsider.status, body: await outsider.json() }).toEqual({
      status: 404,
      body: { error: 'Organisation not found' },
    });
    // A publisher sees no invitation form, role selects or audit log.
    expect(await bob.locator('[data-testid="invite"], [data-testid="audit-log"], select').count()).toBe(0);
    await bob.goto(`${base}/@team-alpha/runbook`);
    await bob.locator('.package-header [data-testid="private-badge"]').waitFor();
    // Settings are for admins: no link for a publisher.
    expect(await bob.locator('[data-testid="package-settings-link"]').count()).toBe(0);
    await bob.close();
  });

  it("an agent app's consent comes back after sign-in, Allow reaches the edge, and connected apps revokes it", async () => {
    // What the edge does: a consent request, and the browser sent to the registry with its id.
    const id = randomBytes(32).toString('base64url');
    await t.db
      .insertInto('edge_consent_requests')
      .values({
        id_hash: createHash('sha256').update(id).digest('hex'),
        interaction_uid: 'uid-e2e',
        client_id: 'https://agent.example/client.json',
        client_kind: 'metadata_document',
        client_name: 'Agent Example',
        redirect_host: 'agent.example',
        resource: `${EDGE}/mcp`,
        scopes: [SCOPES.registryRead],
        binding_hash: 'binding',
        expires_at: new Date(Date.now() + 600_000),
      })
      .execute();
    await other.context.clearCookies();
    const page = await newPage(other);
    const consent = `${base}/api/mcp/consent/${id}`;
    await page.goto(consent);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('Handle').fill('bob');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // The web UI's sign-in goes back to the registry's page (a full load, not a route of the UI).
    await page.waitForURL(consent);
    await page.getByText('Signed in as bob@dev.pkgreg.invalid.').waitFor();
    await expectAccessible(page);
    // Allow's 303 goes to the edge (played by the test), and the browser follows it: the page's CSP
    // does not stop a form's redirect.
    await page.route(`${EDGE}/**`, (route) => route.fulfill({ status: 200, body: 'edge' }));
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(/^http:\/\/edge\.invalid\/mcp\/interaction\/uid-e2e\/return\?c=[\w-]{43}$/);

    await page.goto(`${base}/settings/connected-apps`);
    const row = page.locator('[data-testid="connected-app"]', { hasText: 'Agent Example' });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain(SCOPE_DESCRIPTIONS[SCOPES.registryRead]);
    await expect(row.textContent()).resolves.toContain('https://agent.example/client.json');
    await expectAccessible(page);
    await row.locator('[data-testid="revoke-app"]').click();
    await row.locator('[data-testid="confirm-revoke-app"]').click();
    await page.locator('[data-testid="no-connected-apps"]').waitFor();
    const delegation = await t.db
      .selectFrom('edge_delegations')
      .select('revoked_at')
      .where('client_id', '=', 'https://agent.example/client.json')
      .executeTakeFirstOrThrow();
    expect(delegation.revoked_at).toBeInstanceOf(Date);
    await page.close();
  });

  it('owners change roles, and the audit log shows what happened', async () => {
    const page = ownerPage;
    await page.goto(`${base}/orgs/team-alpha`);
    const bobRow = page.locator('[data-testid="member"][data-email="bob@dev.pkgreg.invalid"]');
    await bobRow.waitFor();
    await bobRow.getByLabel('Role of bob').selectOption('reader');
    await expect(
      page.locator('[data-testid="form-success"]').filter({ hasText: /\S/ }).first().textContent(),
    ).resolves.toBe('bob is now reader.');
    const actions = async () =>
      page
        .locator('[data-testid="audit-event"]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
    const seen = await poll(actions, (list) => list.includes('member.role'));
    for (const action of [
      'organization.create',
      'scope.move',
      'scope.visibility',
      'invitation.create',
      'member.join',
      'member.role',
    ]) {
      expect(seen).toContain(action);
    }
    await expectAccessible(page);
  });

  it('package settings: visibility, and trusted publishers added and removed', async () => {
    const page = ownerPage;
    await page.goto(`${base}/packages/@team-alpha/runbook/settings`);
    await page.locator('[data-testid="package-settings"]').waitFor();
    await expect(page.locator('h1 [data-testid="private-badge"]').count()).resolves.toBe(1);
    await page.getByLabel('Repository').fill('team-alpha/runbook');
    await page.getByLabel('Workflow (optional)').fill('publish.yml');
    await page.getByRole('button', { name: 'Add trusted publisher' }).click();
    const publisher = page.locator('[data-testid="trusted-publisher"]', { hasText: 'team-alpha/runbook' });
    await publisher.waitFor();
    await expect(publisher.textContent()).resolves.toContain('publish.yml');
    await expect(page.locator('[data-testid="owner-commands"]').textContent()).resolves.toContain(
      'pkgreg deprecate @team-alpha/runbook',
    );
    await expectAccessible(page);
    await publisher.getByRole('button', { name: /Remove/ }).click();
    await publisher.waitFor({ state: 'detached' });
    const settings = await pageFetch(page, '/api/packages/@team-alpha/runbook/settings');
    expect(settings.body).toMatchObject({ private: true, trustedPublishers: [] });
  });

  it('the device page approves a code the CLI asked for, and the CLI gets its session', async () => {
    const codeRes = await fetch(`${base}/api/auth/device/code`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_id: 'pkgreg-cli' }),
    });
    expect(codeRes.status).toBe(200);
    const code = (await codeRes.json()) as {
      device_code: string;
      user_code: string;
      verification_uri: string;
    };
    expect(new URL(code.verification_uri).pathname).toBe('/device');
    const page = ownerPage;
    await page.goto(`${base}/device?user_code=${encodeURIComponent(code.user_code)}`);
    expect(await page.getByLabel('Code').inputValue()).toBe(code.user_code);
    await expectAccessible(page);
    await page.click('[data-testid="approve"]');
    await expect(
      page.locator('[data-testid="form-success"]').filter({ hasText: /\S/ }).textContent(),
    ).resolves.toMatch(/Approved/);
    const token = await fetch(`${base}/api/auth/device/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: code.device_code,
        client_id: 'pkgreg-cli',
      }),
    });
    expect(token.status).toBe(200);
    const { access_token } = (await token.json()) as { access_token: string };
    // The CLI's session is ada's (better-auth's own session endpoint, which takes it as a bearer).
    const session = await fetch(`${base}/api/auth/get-session`, {
      headers: { Authorization: `Bearer ${access_token}` },
    });
    expect(((await session.json()) as { user: { name: string } }).user.name).toBe('ada');
    // A code is approved once: the page says so when it is entered again.
    await page.goto(`${base}/device?user_code=${encodeURIComponent(code.user_code)}`);
    await page.click('[data-testid="approve"]');
    await expect(
      page.locator('[data-testid="form-error"]').filter({ hasText: /\S/ }).textContent(),
    ).resolves.toMatch(/already|invalid|expired|processed/i);
  });

  it('signs out from the account menu', async () => {
    const page = ownerPage;
    await page.goto(`${base}/`);
    await page.click('[data-testid="account-button"]');
    await page.click('[data-testid="sign-out"]');
    await page.locator('[data-testid="sign-in-link"]').waitFor();
    expect((await pageFetch(page, '/api/me')).status).toBe(401);
    await page.goto(`${base}/settings/sessions`);
    await page.locator('[data-testid="sign-in-required"]').waitFor();
  });

  it('nothing broke the CSP or threw on any page', () => {
    expect(consoleErrors).toEqual([]);
  });
});
