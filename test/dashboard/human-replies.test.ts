// People's replies on a mailbox's page, in headless Chromium against the real app: who wrote, when
// and what they said is shown first, with why warmup stopped that conversation, and what a
// stranger wrote is shown as text: markup in it never becomes an element or runs.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import {
  chooseApiKeySignIn,
  chromiumAvailable,
  CHROMIUM_PATH,
  ensureDashboardBuilt,
  launchBrowser,
  type Browser,
} from './browser.js';
import { seedDemoData } from './seed.js';

const inCi = process.env.CI === 'true';
const runBrowser = chromiumAvailable() || inCi;
if (!runBrowser) console.warn(`people's replies page test skipped: no Chromium at ${CHROMIUM_PATH}`);

const HOSTILE_TEXT = 'Who are you?\n<img src=x onerror="window.__replyRan=1"><script>window.__replyRan=2</script>';
const HOSTILE_SUBJECT = 'Re: <b onmouseover="window.__replyRan=3">the workshop</b>';

describe.runIf(runBrowser)("people's replies on the mailbox page in Chromium", () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  const pageErrors: string[] = [];
  let maya = '';

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp();
    const db = t.database.db;
    await seedDemoData(db, t.workspace, t.clock.now());
    const mailboxes = await db.selectFrom('mailboxes').select(['id', 'email', 'workspace_id']).execute();
    const mayaRow = mailboxes.find((m) => m.email === 'maya@northwind-trading.com')!;
    maya = mayaRow.id;
    const at = new Date(t.clock.now().getTime() - 3_600_000).toISOString();
    await db
      .insertInto('human_replies')
      .values({
        id: 'rpl_hostile',
        workspace_id: mayaRow.workspace_id,
        mailbox_id: maya,
        reply_key: '<hostile@elsewhere.test>',
        answers_message_id: '<warmup-1@northwind-trading.com>',
        thread_id: '<warmup-1@northwind-trading.com>',
        pool_mailbox_id: null,
        from_name: 'Mallory <script>',
        from_email: 'mallory@elsewhere.test',
        subject: HOSTILE_SUBJECT,
        written_at: at,
        excerpt: HOSTILE_TEXT,
        folder: 'Warmup',
        found_at: at,
      })
      .execute();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(base);
    await chooseApiKeySignIn(page);
    await page.getByLabel('API key').fill(t.workspace.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows who wrote, when and what, as text, and that warmup stopped that conversation', async () => {
    await page.goto(`${base}/mailboxes/${maya}`);
    const reply = page.getByTestId('human-reply');
    await reply.waitFor();
    const text = await reply.innerText();
    expect(text).toContain('Mallory <script>');
    expect(text).toContain('mallory@elsewhere.test');
    expect(text).toContain(HOSTILE_SUBJECT);
    expect(text).toContain('<img src=x onerror="window.__replyRan=1"><script>window.__replyRan=2</script>');
    expect(text).toContain('Unread in the Warmup folder');
    expect(await page.getByText('wrote nothing more in that conversation').count()).toBe(1);
    // the markup stayed text: no element of it exists, nothing of it ran
    expect(await reply.locator('img, script, b').count()).toBe(0);
    await reply.getByText('the workshop').first().hover();
    expect(await page.evaluate(() => (window as unknown as { __replyRan?: number }).__replyRan)).toBeUndefined();
    expect(pageErrors).toEqual([]);
  });
});
