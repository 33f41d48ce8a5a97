// The overview's onboarding checklist in headless Chromium against the real app: on a new workspace
// four open steps, each a link to where it is done; ticked as the server's state changes; a viewer
// sees it without the dismiss button; an admin's dismissal puts it away for everyone, for good, and
// an empty workspace then shows its "connect your first mailbox" state. axe-core finds nothing at
// 1280 and 390 px in any of these states.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMailbox } from '../helpers/engine-fixtures.js';
import { createTestApp, type TestApp, type TestWorkspace } from '../helpers/test-app.js';
import { axeViolationsAtWidths } from './axe.js';
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

const inCi = process.env.CI === 'true';
const runBrowser = chromiumAvailable() || inCi;
if (!runBrowser) console.warn(`onboarding test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

const WIDTHS = [1280, 390] as const;
const STEP_LINKS = [
  ['Connect mailboxes on two or more domains', '/mailboxes/new'],
  ['Fix DNS and blocklist problems', '/mailboxes'],
  ['Invite your team', '/team'],
  ['Set up an alert', '/alerts'],
] as const;

describe.runIf(runBrowser)('the onboarding checklist in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let viewerKey: string;
  let empty: TestWorkspace;
  const pageErrors: string[] = [];
  let signedInWith: string | undefined;

  async function open(key: string, width = 1280): Promise<void> {
    if (signedInWith !== key) {
      await page.setViewportSize({ width: 1280, height: 800 });
      await signInWithApiKey(page, base, key);
      signedInWith = key;
    }
    await page.setViewportSize({ width, height: 800 });
    await page.goto(`${base}/`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await waitUntilDrawn(page);
  }

  const checklist = () => page.getByRole('region', { name: 'Get started' });

  /** The steps as a person reads them: the link's words, with "Done: " or "To do: " first. */
  async function stepTexts(): Promise<string[]> {
    return checklist().getByRole('listitem').getByRole('link').allTextContents();
  }

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const created = await t.workspace.request({
      method: 'POST',
      url: '/api/keys',
      payload: { name: 'viewer', role: 'viewer' },
    });
    expect(created.statusCode, created.body).toBe(201);
    viewerKey = created.json<{ apiKey: string }>().apiKey;
    empty = await t.createWorkspace('empty');
    browser = await launchBrowser({ width: 1280, height: 800 });
    page = await openPage(browser, pageErrors);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows four open steps on a new workspace, each a link to where it is done, instead of the empty state', async () => {
    for (const width of WIDTHS) {
      await open(t.workspace.apiKey, width);
      await checklist().waitFor();
      expect(await stepTexts()).toEqual(STEP_LINKS.map(([title]) => `To do: ${title}`));
      for (const [title, to] of STEP_LINKS) {
        await expect(checklist().getByRole('link', { name: title }).getAttribute('href')).resolves.toBe(to);
      }
      await expect(checklist().innerText()).resolves.toContain('0 of 4 done');
      await expect(checklist().getByRole('button', { name: 'Dismiss checklist' }).isVisible()).resolves.toBe(true);
      expect(await page.getByRole('heading', { name: 'Connect your first mailbox' }).count()).toBe(0);
      // on a phone the steps stack: nothing wider than the screen
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
    }
    expect(await axeViolationsAtWidths(page, WIDTHS)).toEqual([]);
  }, 120_000);

  it('ticks the steps from the server state and follows a step to its page', async () => {
    for (const email of ['anna@one.example', 'ben@two.example']) {
      const mailbox = await insertMailbox(t.database.db, t.workspace.id, { email });
      await t.database.db
        .insertInto('mailbox_checks')
        .values(
          ['mx', 'spf', 'dmarc', 'dkim'].map((check) => ({
            mailbox_id: mailbox.id,
            check,
            status: 'pass',
            detail: 'passes',
            fix: null,
            checked_at: t.clock.now().toISOString(),
            failing_since: null,
          })),
        )
        .execute();
    }
    const invite = await t.workspace.request({
      method: 'POST',
      url: '/api/workspace/invites',
      payload: { role: 'member' },
    });
    expect(invite.statusCode, invite.body).toBe(201);
    for (const width of WIDTHS) {
      await open(t.workspace.apiKey, width);
      await checklist().waitFor();
      expect(await stepTexts()).toEqual([
        'Done: Connect mailboxes on two or more domains',
        'Done: Fix DNS and blocklist problems',
        'Done: Invite your team',
        'To do: Set up an alert',
      ]);
      const text = await checklist().innerText();
      expect(text).toContain('3 of 4 done');
      expect(text).toContain('2 mailboxes on 2 domains');
      expect(text).toContain('1 invite waiting to be accepted');
    }
    expect(await axeViolationsAtWidths(page, WIDTHS)).toEqual([]);
    await checklist().getByRole('link', { name: 'Set up an alert' }).click();
    await page.waitForURL(`${base}/alerts`);
    await page.getByRole('heading', { level: 1 }).waitFor();
  }, 120_000);

  it('shows a viewer the checklist without the dismiss button', async () => {
    for (const width of WIDTHS) {
      await open(viewerKey, width);
      await checklist().waitFor();
      expect(await stepTexts()).toHaveLength(4);
      expect(await page.getByRole('button', { name: 'Dismiss checklist' }).count()).toBe(0);
    }
    expect(await axeViolationsAtWidths(page, WIDTHS)).toEqual([]);
  }, 120_000);

  it('puts the checklist away for everyone once an admin dismisses it, and keeps it away', async () => {
    await open(t.workspace.apiKey);
    await checklist().getByRole('button', { name: 'Dismiss checklist' }).click();
    await page.getByText('Checklist dismissed for everyone in this workspace').waitFor();
    await checklist().waitFor({ state: 'detached' });
    const { settings } = (await t.workspace.request({ method: 'GET', url: '/api/workspace/settings' })).json<{
      settings: { onboardingDismissed: boolean };
    }>();
    expect(settings.onboardingDismissed).toBe(true);
    for (const key of [t.workspace.apiKey, viewerKey]) {
      for (const width of WIDTHS) {
        await open(key, width);
        await page.getByRole('region', { name: 'Reputation' }).waitFor();
        expect(await checklist().count()).toBe(0);
      }
      expect(await axeViolationsAtWidths(page, WIDTHS)).toEqual([]);
    }
  }, 120_000);

  it('shows an empty workspace whose checklist was dismissed its "connect your first mailbox" state', async () => {
    const dismissed = await empty.request({
      method: 'PATCH',
      url: '/api/workspace/settings',
      payload: { onboardingDismissed: true },
    });
    expect(dismissed.statusCode, dismissed.body).toBe(200);
    for (const width of WIDTHS) {
      await open(empty.apiKey, width);
      await page.getByRole('heading', { name: 'Connect your first mailbox' }).waitFor();
      expect(await checklist().count()).toBe(0);
    }
    expect(await axeViolationsAtWidths(page, WIDTHS)).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
