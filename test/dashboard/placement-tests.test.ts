// The Placement tests page in headless Chromium against the real app: run a test of one's own copy
// (queued, its seeds per provider shown), see a second one refused because the sender's day has no
// room left (the API's reason on the page), and axe-core finds nothing at laptop and phone widths.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../src/calendar.js';
import { fixedClock } from '../../src/clock.js';
import { createMailbox, proveAll } from '../helpers/engine.js';
import { insertPlan } from '../helpers/engine-fixtures.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { axeViolationsAtWidths } from './axe.js';
import {
  chooseApiKeySignIn,
  chromiumAvailable,
  CHROMIUM_PATH,
  ensureDashboardBuilt,
  launchBrowser,
  openPage,
  type Browser,
} from './browser.js';

const inCi = process.env.CI === 'true';
const runBrowser = chromiumAvailable() || inCi;
if (!runBrowser)
  console.warn(`placement tests page test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

const AT = new Date('2025-03-04T08:00:00.000Z');

describe.runIf(runBrowser)('placement tests page in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp({ clock: fixedClock(AT) });
    const db = t.database.db;
    const senderId = await createMailbox(t.workspace, 'sam@shop.test');
    const seedId = await createMailbox(t.workspace, 'gina@seed.test');
    // both connected and proven, as pool members are
    await db.updateTable('mailboxes').set({ status: 'active' }).execute();
    await proveAll(db);
    await db.updateTable('mailboxes').set({ provider: 'gmail' }).where('id', '=', seedId).execute();
    const sender = await db.selectFrom('mailboxes').selectAll().where('id', '=', senderId).executeTakeFirstOrThrow();
    // the sender's day has room for one send
    await insertPlan(db, sender, utcDay(AT), 1);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
    page = await openPage(browser, pageErrors);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    'runs a test, shows its seeds per provider, and says why a second one is refused',
    { timeout: 90_000 },
    async () => {
      await page.goto(base);
      await chooseApiKeySignIn(page);
      await page.getByLabel('API key').fill(t.workspace.apiKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Placement tests', exact: true })
        .click();
      await page.getByRole('heading', { level: 1, name: 'Placement tests' }).waitFor();
      await page.getByText('No placement tests yet').waitFor();
      expect(await axeViolationsAtWidths(page), 'empty').toEqual([]);

      await page.getByLabel('Sender').selectOption({ label: 'sam@shop.test' });
      await page.getByLabel('Subject').fill('Our spring collection');
      await page.getByLabel('Body').fill('Hello,\n\nour spring collection is here.');
      await page.getByRole('button', { name: 'Run placement test' }).click();
      const card = page.getByRole('region', { name: 'Our spring collection', exact: true });
      await card.waitFor();
      expect(await card.textContent()).toContain('queued');
      const row = card.getByRole('row', { name: /gmail/ });
      // one copy to the gmail seed, not looked for yet (no engine runs here): pending 1, no verdict
      expect(await row.getByRole('cell').nth(5).textContent()).toBe('1');
      expect(await row.getByRole('cell').nth(6).textContent()).toBe('–');
      const stored = await t.database.db.selectFrom('placement_tests').selectAll().executeTakeFirstOrThrow();
      expect(stored).toMatchObject({ subject: 'Our spring collection', status: 'queued' });
      expect(stored.text_body).toBe('Hello,\n\nour spring collection is here.');
      expect(await axeViolationsAtWidths(page), 'one test').toEqual([]);

      // the engine found the copy in the seed's inbox and read its receiver's verdict (as on the mail stack)
      await t.database.db
        .updateTable('placement_test_copies')
        .set({
          placement: 'inbox',
          sent_at: AT.toISOString(),
          found_at: AT.toISOString(),
          authserv_id: 'seed.test',
          spf: 'pass',
          dkim: 'fail',
          dmarc: 'fail',
          spam_score: 0.4,
        })
        .execute();
      await page.getByRole('button', { name: 'Refresh' }).click();
      await card.getByRole('cell', { name: '0.4' }).waitFor();
      const cells = await row.getByRole('cell').allTextContents();
      expect(cells).toEqual(['1', '0', '0', '0', '0', '0', '100%', '0%', '0%', '0.4']);
      await card.getByText('Each seed and what its receiver said').click();
      expect(await card.getByRole('listitem').textContent()).toBe(
        'gina@seed.test (gmail): inbox — SPF pass, DKIM fail, DMARC fail, spam score 0.4',
      );
      expect(await axeViolationsAtWidths(page), 'verdicts').toEqual([]);

      await page.getByLabel('Subject').fill('One more');
      await page.getByLabel('Body').fill('Again.');
      await page.getByRole('button', { name: 'Run placement test' }).click();
      const refusal = page.getByRole('alert').filter({ hasText: 'The test was not started' });
      await refusal.waitFor();
      expect(await refusal.textContent()).toContain('room for 0 more send(s)');
      expect(await axeViolationsAtWidths(page), 'refused').toEqual([]);
      expect(pageErrors).toEqual([]);
    },
  );
});
