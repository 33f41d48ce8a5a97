// People in the dashboard, in headless Chromium against the real app: the first-run setup, an
// invite accepted by a new viewer (who sees no edit buttons, and whose writes the API refuses),
// sign-out, sign-in with email and password, and switching workspaces. axe-core checks each new page.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { createPerson } from '../helpers/accounts.js';
import { axeViolations } from './axe.js';
import { chromiumAvailable, CHROMIUM_PATH, ensureDashboardBuilt, launchBrowser, type Browser } from './browser.js';

const inCi = process.env.CI === 'true';
const runBrowser = chromiumAvailable() || inCi;
if (!runBrowser)
  console.warn(`accounts browser test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

const OWNER = { name: 'Olive Owner', email: 'olive@example.com', password: 'owner password 123' };
const VIEWER = { name: 'Vera Viewer', email: 'vera@example.com', password: 'viewer password 123' };

describe.runIf(runBrowser)('accounts in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let inviteLink: string;
  const pageErrors: string[] = [];

  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });
  const nav = () => page.getByRole('navigation', { name: 'Main' });

  /** What the API answers this page's session when it tries to create a template. */
  async function tryToCreateTemplate(): Promise<number> {
    return page.evaluate(async () => {
      const session = await (await fetch('/api/session')).json();
      const response = await fetch('/api/templates', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
        body: JSON.stringify({ name: 'Sneaky', type: 'initial', language: 'en', subject: 'Hi', body: 'Hello' }),
      });
      return response.status;
    });
  }

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('opens the first-run setup on a fresh installation and creates the owner', async () => {
    await page.goto(base);
    await heading('Set up Warmup').waitFor();
    expect(await axeViolations(page)).toEqual([]);

    await page.getByLabel('Your name').fill(OWNER.name);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill('short');
    await page.getByLabel('Workspace name').fill('Acme');
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await expect.poll(() => page.locator('.field-error').first().textContent()).toContain('10');

    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await heading('Overview').waitFor();
    expect(await page.locator('.workspace-name').textContent()).toBe('Acme');
    await page.getByText(`Signed in as ${OWNER.name}`).waitFor();
    // No API key anywhere in the browser: the session is an HttpOnly cookie.
    expect(await page.evaluate('sessionStorage.getItem("warmup.apiKey")')).toBeNull();
    expect(await page.evaluate('document.cookie')).toBe('');
    expect((await t.app.inject({ method: 'GET', url: '/api/setup' })).json()).toEqual({
      setupRequired: false,
      setupTokenRequired: false,
    });
  });

  it('lets the owner invite a viewer from the Team page', async () => {
    await nav().getByRole('link', { name: 'Team', exact: true }).click();
    await heading('Team').waitFor();
    await page.locator('.muted', { hasText: OWNER.email }).waitFor();
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByLabel('Email (optional)').fill(VIEWER.email);
    await page.getByRole('button', { name: 'Create invite link' }).click();
    const link = page.getByLabel('Invite link (shown once)');
    await link.waitFor();
    inviteLink = await link.inputValue();
    expect(inviteLink).toMatch(new RegExp(`^${base}/invite/[A-Za-z0-9_-]{40,}$`));
    await page.getByText(`Viewer for ${VIEWER.email}, made by ${OWNER.name}`).waitFor();

    // API keys for scripts are made here too, each with its role, and shown once.
    await page.getByLabel('Key name').fill('Reports script');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const shown = page.getByLabel('New API key (shown once)');
    await shown.waitFor();
    const apiKey = await shown.inputValue();
    expect(apiKey).toMatch(/^wk_/);
    await page.getByRole('button', { name: 'Revoke key Reports script' }).waitFor();
    await page.getByText(`Viewer, made by ${OWNER.name}`).waitFor();
    const asKey = (method: 'GET' | 'POST', url: string) =>
      t.app.inject({ method, url, headers: { authorization: `Bearer ${apiKey}` } });
    expect((await asKey('GET', '/api/stats/dashboard')).statusCode).toBe(200);
    expect((await asKey('POST', '/api/templates')).statusCode).toBe(403);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await heading('Sign in').waitFor();
    await page.getByLabel('Email').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    expect((await page.evaluate(() => fetch('/api/session').then((r) => r.status))) as number).toBe(401);
  });

  it('accepts the invite as a new viewer, who sees no edit buttons and whose writes are refused', async () => {
    await page.goto(inviteLink);
    await heading('Join Acme').waitFor();
    await page.getByText('You are invited as a viewer').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel('Your name').fill(VIEWER.name);
    // the invite names its person: another address is refused at the Email field
    await page.getByLabel('Email').fill(`someone.else.${VIEWER.email}`);
    await page.getByLabel('Password').fill(VIEWER.password);
    await page.getByRole('button', { name: 'Create account and join' }).click();
    await page.getByText(`this invite is for ${VIEWER.email}`).first().waitFor();
    await page.getByLabel('Email').fill(VIEWER.email);
    await page.getByRole('button', { name: 'Create account and join' }).click();
    await heading('Overview').waitFor();
    expect(new URL(page.url()).pathname).toBe('/');

    const links = await nav().getByRole('link').allTextContents();
    expect(links).toEqual(expect.arrayContaining(['Overview', 'Mailboxes', 'Templates', 'Reports']));
    expect(links).not.toContain('Webhooks');
    expect(links).not.toContain('Team');
    expect(await page.getByRole('link', { name: 'Add mailbox' }).count()).toBe(0);

    await nav().getByRole('link', { name: 'Templates', exact: true }).click();
    await heading('Templates').waitFor();
    await page.locator('.row-title').first().waitFor();
    expect(await page.getByRole('link', { name: 'New template' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Delete / }).count()).toBe(0);
    await page.locator('.row-title').first().click();
    await page.getByRole('heading', { name: 'Preview' }).waitFor();
    expect(await page.getByRole('button', { name: 'Save changes' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);

    expect(await tryToCreateTemplate()).toBe(403);

    // The link worked once.
    await page.goto(inviteLink);
    await heading('This invite cannot be used').waitFor();
  });

  it('signs in with email and password, and says so when the password is wrong', async () => {
    await page.goto(base);
    await nav().waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await heading('Sign in').waitFor();
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('not right');

    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Overview').waitFor();
    expect(await nav().getByRole('link').allTextContents()).toEqual(expect.arrayContaining(['Webhooks', 'Team']));
    expect(await tryToCreateTemplate()).toBe(201);
  });

  it('switches between the workspaces of a person', async () => {
    const owner = await t.database.db
      .selectFrom('users')
      .select('id')
      .where('email_normalized', '=', OWNER.email)
      .executeTakeFirstOrThrow();
    const second = await t.createWorkspace('Second shop');
    await t.database.db
      .insertInto('memberships')
      .values({ user_id: owner.id, workspace_id: second.id, role: 'member', created_at: new Date().toISOString() })
      .execute();

    await page.reload();
    const switcher = page.getByLabel('Workspace', { exact: true });
    await switcher.waitFor();
    expect(await switcher.locator('option').allTextContents()).toEqual(['Acme', 'Second shop']);
    await switcher.selectOption({ label: 'Second shop' });
    await expect.poll(() => nav().getByRole('link').allTextContents()).not.toContain('Team');
    expect(await switcher.inputValue()).toBe(second.id);
    const session = await page.evaluate(() => fetch('/api/session').then((r) => r.json()));
    expect(session).toMatchObject({ workspace: { id: second.id, name: 'Second shop' }, role: 'member' });

    await switcher.selectOption({ label: 'Acme' });
    await expect.poll(() => nav().getByRole('link').allTextContents()).toContain('Team');
  });

  it('says what removing a member revokes, and keeps a key re-issued from the confirmation', async () => {
    const session = await page.evaluate(() => fetch('/api/session').then((r) => r.json()));
    const leaver = await createPerson(t, session.workspace.id, 'admin', 'leo@example.com');
    const keyOf = async (name: string) => {
      const made = await leaver.request({ method: 'POST', url: '/api/keys', payload: { name, role: 'member' } });
      return made.json().apiKey as string;
    };
    const crmKey = await keyOf('CRM sync');
    const oldKey = await keyOf('Old script');
    await leaver.request({ method: 'POST', url: '/api/workspace/invites', payload: { role: 'admin' } });
    const status = (key: string) =>
      t.app
        .inject({ method: 'GET', url: '/api/workspace', headers: { authorization: `Bearer ${key}` } })
        .then((r) => r.statusCode);

    await nav().getByRole('link', { name: 'Team', exact: true }).click();
    await heading('Team').waitFor();
    await page.getByText('Member, made by admin person').first().waitFor();
    await page.getByRole('button', { name: 'Remove leo@example.com' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('These stop working too').waitFor();
    await dialog.getByText('Invite as admin').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Keep key CRM sync by re-issuing it' }).click();
    const kept = dialog.getByLabel('New key for CRM sync (shown once)');
    await kept.waitFor();
    const newKey = await kept.inputValue();
    expect(newKey).toMatch(/^wk_/);
    await dialog.getByRole('button', { name: 'Remove' }).click();
    await page.getByText('admin person was removed').waitFor();

    expect(await status(newKey)).toBe(200);
    expect(await status(crmKey)).toBe(401);
    expect(await status(oldKey)).toBe(401);
  });

  it('changes the password on the account page, then signs out everywhere', async () => {
    await page.getByRole('link', { name: `Signed in as ${OWNER.name}` }).click();
    await heading('Your account').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByLabel('Current password').fill('not the password');
    await page.getByLabel('New password').fill('a new owner password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => page.locator('.field-error').first().textContent()).toContain('not right');
    await page.getByLabel('Current password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed').waitFor();

    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await heading('Sign in').waitFor();
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill('a new owner password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Overview').waitFor();
    expect(pageErrors).toEqual([]);
  });
});
