// The overview's headline figures and the wording fixes, in headless Chromium against the real app
// with weeks of seeded history: each figure shows its value and its change against the period
// before, in the server's numbers; the period picker stays one row at 1280 px; a zero is not
// green and no change is said in words; a mailbox's error wraps on a phone instead of being cut.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DashboardStats } from '../../src/stats/stats.schemas.js';
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
if (!runBrowser)
  console.warn(`overview headline test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

describe.runIf(runBrowser)('overview headline figures and wording in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  const pageErrors: string[] = [];

  async function open(path: string, width: number): Promise<void> {
    await page.setViewportSize({ width, height: 800 });
    await page.goto(`${base}${path}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await waitUntilDrawn(page);
  }

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp();
    await seedDemoData(t.database.db, t.workspace);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser({ width: 1280, height: 800 });
    page = await openPage(browser, pageErrors);
    await signInWithApiKey(page, base, t.workspace.apiKey);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  for (const width of [1280, 390]) {
    it(`shows each headline figure with its change against the period before (${width} px)`, async () => {
      await open('/', width);
      const { headline } = (await t.workspace.request({ method: 'GET', url: '/api/stats/dashboard?period=30d' })).json<{
        stats: DashboardStats;
      }>().stats;
      expect(headline).toBeDefined();
      const sent = page.getByTestId('headline-Sent');
      await sent.waitFor();
      await expect(sent.locator('.headline-figure-value').textContent()).resolves.toBe(
        headline!.current.sent.toLocaleString('en-US'),
      );
      for (const [label, change, riseIsGood] of [
        ['Inbox rate', headline!.change.inboxRate, true],
        ['Spam rate', headline!.change.spamRate, false],
        ['Sent', headline!.change.sent, true],
        ['Reputation', headline!.change.reputation, true],
      ] as const) {
        const delta = page.getByTestId(`headline-${label}`).locator('.delta');
        const text = (await delta.textContent())!;
        const classes = (await delta.getAttribute('class'))!;
        if (change === null) expect(text).toBe('nothing to compare with');
        else if (change === 0) expect(text).toBe('no change');
        else {
          expect(text).toContain(change > 0 ? '↑' : '↓');
          expect(text).toContain(String(Math.abs(change)));
          expect(classes).toContain(change > 0 === riseIsGood ? 'delta-good' : 'delta-bad');
        }
        expect(text).not.toContain('±0');
      }
      expect(await axeViolations(page)).toEqual([]);
    }, 120_000);
  }

  it('keeps the period picker in one row at 1280 px', async () => {
    await open('/', 1280);
    const tops = await page
      .getByRole('radiogroup', { name: 'Period' })
      .or(page.locator('.page-actions .segmented'))
      .first()
      .locator('label')
      .evaluateAll((labels) => labels.map((label) => Math.round(label.getBoundingClientRect().top)));
    expect(tops.length).toBe(3);
    expect(new Set(tops).size).toBe(1);
  }, 60_000);

  it('says "No change" for an unchanged reputation and does not colour a zero inbox green', async () => {
    // A day long before the history: nothing was sent, nothing changed.
    await open('/reports', 1280);
    await page.getByRole('textbox', { name: 'Day' }).fill('2020-01-01');
    const summary = page.getByRole('region', { name: "The day's figures" });
    await summary.getByText('No change').waitFor();
    expect(await summary.textContent()).not.toContain('±0');
    const inbox = summary.locator('.stat').filter({ hasText: 'Inbox' }).locator('.stat-value');
    await expect(inbox.textContent()).resolves.toBe('0');
    await expect(inbox.getAttribute('class')).resolves.not.toContain('tone-good');
    expect(await axeViolations(page)).toEqual([]);
  }, 60_000);

  it("wraps a stopped mailbox's error on a phone instead of cutting it", async () => {
    await open('/mailboxes', 390);
    const error = page.locator('.row-error').first();
    await error.waitFor();
    const { scrollWidth, clientWidth, text } = await error.evaluate((node) => ({
      scrollWidth: node.scrollWidth,
      clientWidth: node.clientWidth,
      text: node.textContent,
    }));
    expect(text).toContain('check the app password');
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
