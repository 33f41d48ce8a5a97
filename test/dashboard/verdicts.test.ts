// What receivers saw, in headless Chromium against the real app: a mailbox's page shows one line
// per receiving provider in the receivers' own words and the failing DKIM with its fix; the
// Reports page shows the inbox map per receiving provider, from the same numbers as the API.
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
if (!runBrowser) console.warn(`verdicts page test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

describe.runIf(runBrowser)('receiver verdicts and the provider map in Chromium', () => {
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
    const mailboxes = await db.selectFrom('mailboxes').select(['id', 'email', 'provider']).execute();
    maya = mailboxes.find((m) => m.email === 'maya@northwind-trading.com')!.id;
    const outlook = mailboxes.find((m) => m.provider === 'outlook')!;
    const custom = mailboxes.find((m) => m.provider === 'custom')!;
    const at = new Date(t.clock.now().getTime() - 3_600_000).toISOString();
    // five of maya's emails as their receivers judged them: Outlook saw a broken DKIM signature
    const receivers = [outlook, outlook, outlook, custom, custom];
    for (const [i, receiver] of receivers.entries()) {
      const id = `msg_verdict_${i}`;
      await db
        .insertInto('warmup_messages')
        .values({
          id,
          message_id: `<verdict-${i}@northwind-trading.com>`,
          thread_id: `<verdict-${i}@northwind-trading.com>`,
          sender_mailbox_id: maya,
          recipient_mailbox_id: receiver.id,
          kind: 'initial',
          turn: 1,
          plan_day: at.slice(0, 10),
          due_at: at,
          status: 'sent',
          sent_at: at,
          found_at: at,
          placement: 'inbox',
          created_at: at,
        })
        .execute();
      const atOutlook = receiver.provider === 'outlook';
      await db
        .insertInto('receiver_verdicts')
        .values({
          warmup_message_id: id,
          sender_mailbox_id: maya,
          recipient_mailbox_id: receiver.id,
          receiver_provider: receiver.provider,
          identified_by: atOutlook ? 'original-message-id' : 'message-id',
          placement: i === 2 ? 'spam' : 'inbox',
          authserv_id: atOutlook ? '' : 'acme-supply.com',
          spf: 'pass',
          dkim: atOutlook ? 'fail' : 'pass',
          dmarc: 'pass',
          arc: null,
          scl: atOutlook ? 1 : null,
          bcl: atOutlook ? 0 : null,
          spam_score: atOutlook ? null : 0.4,
          found_at: at,
        })
        .execute();
    }
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

  it('shows each receiving provider’s verdict on a mailbox’s mail, and the failing DKIM with its fix', async () => {
    await page.goto(`${base}/mailboxes/${maya}`);
    const card = page.getByRole('region', { name: 'What receivers saw' });
    await card.getByTestId('verdict-line').first().waitFor();
    const lines = await card.getByTestId('verdict-line').allTextContents();
    expect(lines).toEqual([
      'Outlook: SPF pass, DKIM fail, DMARC pass, 66.7 % inbox (3 emails, SCL 1, BCL 0)',
      'Other servers: SPF pass, DKIM pass, DMARC pass, 100 % inbox (2 emails, spam score 0.4)',
    ]);
    const problems = await card.getByTestId('verdict-problem').allTextContents();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('3 emails failed DKIM at Outlook');
    expect(problems[0]).toContain('northwind-trading.com');
    expect(pageErrors).toEqual([]);
  });

  it('shows the inbox map per receiving provider on the Reports page, as the API counts it', async () => {
    const api = await t.workspace.request({ method: 'GET', url: '/api/stats/placement?period=30d' });
    const byProvider = (api.json() as { placement: { byProvider: Array<{ provider: string; total: number }> } })
      .placement.byProvider;
    expect(byProvider.length).toBeGreaterThan(2);
    await page.goto(`${base}/reports`);
    const card = page.getByRole('region', { name: 'Placement by receiving provider' });
    await card.getByTestId('provider-row').first().waitFor();
    const rows = await card.getByTestId('provider-row').allInnerTexts();
    expect(rows).toHaveLength(byProvider.length);
    for (const [i, p] of byProvider.entries()) expect(rows[i]).toContain(String(p.total));
    expect(rows.join('\n')).toContain('Gmail');
    expect(pageErrors).toEqual([]);
  });
});
