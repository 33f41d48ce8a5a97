// A viewer in headless Chromium against the real app: every page says once that it is view only
// and shows no button the API would refuse; the template editor shows the template as text, with
// nothing to type into; an address made for a change ("/mailboxes/new") says the role cannot do it
// rather than "this mailbox does not exist". A member on the same addresses gets the forms.
// axe-core finds nothing on any of these states at a laptop's and a phone's width.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { axeViolations } from './axe.js';
import {
  chromiumAvailable,
  CHROMIUM_PATH,
  ensureDashboardBuilt,
  launchBrowser,
  openPage,
  signInWithApiKey,
  waitUntilDrawn,
  type Browser,
} from './browser.js';
import { seedDemoData } from './seed.js';

const inCi = process.env.CI === 'true';
const runBrowser = chromiumAvailable() || inCi;
if (!runBrowser) console.warn(`viewer pages test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

const WIDTHS = [1280, 390] as const;

describe.runIf(runBrowser)('the dashboard for a viewer in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let viewerKey: string;
  let memberKey: string;
  let mailboxId: string;
  let templateId: string;
  const pageErrors: string[] = [];

  async function keyFor(role: 'viewer' | 'member'): Promise<string> {
    const created = await t.workspace.request({ method: 'POST', url: '/api/keys', payload: { name: role, role } });
    expect(created.statusCode, created.body).toBe(201);
    return created.json<{ apiKey: string }>().apiKey;
  }

  let signedInWith: string | undefined;

  /** Opens `path` signed in with `key` (signing in once per key), at `width`, once the page drew its data. */
  async function open(key: string, path: string, width: number): Promise<void> {
    if (signedInWith !== key) {
      await page.setViewportSize({ width: 1280, height: 900 });
      await signInWithApiKey(page, base, key);
      signedInWith = key;
    }
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${base}${path}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await waitUntilDrawn(page);
  }

  async function expectNoAxeViolations(): Promise<void> {
    expect(await axeViolations(page), page.url()).toEqual([]);
  }

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp();
    await seedDemoData(t.database.db, t.workspace);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    viewerKey = await keyFor('viewer');
    memberKey = await keyFor('member');
    const mailboxes = await t.workspace.request({ method: 'GET', url: '/api/mailboxes?limit=1' });
    mailboxId = mailboxes.json<{ mailboxes: Array<{ id: string }> }>().mailboxes[0]!.id;
    const templates = await t.workspace.request({ method: 'GET', url: '/api/templates?limit=1' });
    templateId = templates.json<{ templates: Array<{ id: string }> }>().templates[0]!.id;
    browser = await launchBrowser();
    page = await openPage(browser, pageErrors);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  for (const width of WIDTHS) {
    it(`says "view only" once and hides every change on the overview, mailboxes and a mailbox (${width} px)`, async () => {
      for (const path of ['/', '/mailboxes', `/mailboxes/${mailboxId}`, '/templates', '/placement-tests']) {
        await open(viewerKey, path, width);
        const notice = page.getByTestId('view-only-notice');
        await expect(notice.textContent()).resolves.toMatch(
          /^View only.*Your role in this workspace is viewer.*changes are for members, admins and owners/,
        );
        await expect(page.getByTestId('view-only-notice').count()).resolves.toBe(1);
        for (const name of [/Add mailbox/, /Import/, /Pause warmup/, /Delete/, /New template/, /Run a test/])
          await expect(page.getByRole('button', { name }).or(page.getByRole('link', { name })).count()).resolves.toBe(
            0,
          );
        await expectNoAxeViolations();
      }
    }, 180_000);

    it(`shows a template as text with nothing to type into (${width} px)`, async () => {
      await open(viewerKey, `/templates/${templateId}`, width);
      await expect(page.locator('.page-subtitle').textContent()).resolves.toBe('View only');
      await expect(page.locator('main input, main textarea, main select').count()).resolves.toBe(0);
      await expect(page.getByRole('button', { name: /Save|Duplicate|Delete/ }).count()).resolves.toBe(0);
      const stored = await t.workspace.request({ method: 'GET', url: `/api/templates/${templateId}` });
      const template = stored.json<{ template: { subject: string } }>().template;
      await expect(page.locator('.template-read').textContent()).resolves.toContain(template.subject);
      // The preview still renders: reading a template includes seeing it as a recipient would.
      await page.getByTestId('preview-subject').waitFor();
      await expectNoAxeViolations();
    }, 60_000);

    it(`answers an address made for a change with what the role cannot do (${width} px)`, async () => {
      const refusals: Array<[string, string]> = [
        ['/mailboxes/new', 'Viewers cannot add mailboxes'],
        ['/mailboxes/import', 'Viewers cannot import mailboxes'],
        ['/templates/new', 'Viewers cannot add templates'],
        ['/webhooks', 'Viewers cannot manage webhooks'],
        ['/team', 'Viewers cannot manage the team'],
      ];
      for (const [path, refusal] of refusals) {
        await open(viewerKey, path, width);
        await page.getByRole('heading', { level: 2, name: refusal }).waitFor();
        await expect(page.getByText('does not exist').count()).resolves.toBe(0);
        await expectNoAxeViolations();
      }
      await expect(page.locator('.not-allowed').textContent()).resolves.toContain(
        'Only admins and owners can manage the team here',
      );
    }, 180_000);
  }

  it('gives a member the forms a viewer is refused, without the notice', async () => {
    await open(memberKey, '/mailboxes/new', 1280);
    await page.getByRole('heading', { level: 1, name: 'Add a mailbox' }).waitFor();
    await expect(page.getByTestId('view-only-notice').count()).resolves.toBe(0);
    await expect(page.getByText('cannot add mailboxes').count()).resolves.toBe(0);
    await open(memberKey, `/templates/${templateId}`, 1280);
    await expect(page.getByLabel('Subject').count()).resolves.toBe(1);
    // A member is not an admin: the team is refused in the same words.
    await open(memberKey, '/team', 1280);
    await page.getByRole('heading', { level: 2, name: 'Members cannot manage the team' }).waitFor();
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
