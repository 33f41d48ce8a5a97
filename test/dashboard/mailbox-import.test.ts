// The dashboard's CSV import page in headless Chromium, against the real app and mail stack.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { getMailStack, requireMailStack } from '../mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../mailstack/users.js';
import { chromiumAvailable, ensureDashboardBuilt, launchBrowser, type Browser, chooseApiKeySignIn } from './browser.js';

const runBrowser = chromiumAvailable() || process.env.CI === 'true';
const WRONG_PASSWORD = 'Wr0ng-Dashboard-Import-4471';

describe.runIf(runBrowser && getMailStack() !== null)('mailbox import page in Chromium', () => {
  const [dora, dirk] = MAIL_USERS.dashboardImport;
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  const pageErrors: string[] = [];

  function csv(): string {
    const stack = requireMailStack();
    const server = `${stack.host},${stack.imapPort},false,${stack.host},${stack.submissionPort},false`;
    return [
      'email,password,name,imap_host,imap_port,imap_secure,smtp_host,smtp_port,smtp_secure',
      `${dora.email},${dora.password},Dora,${server}`,
      `${dirk.email},${WRONG_PASSWORD},Dirk,${server}`,
    ].join('\n');
  }

  async function importFile(): Promise<void> {
    await page.getByLabel('CSV file').setInputFiles({
      name: 'mailboxes.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(csv()),
    });
    await page.getByRole('button', { name: 'Import' }).click();
  }

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    'imports a file from the add-mailbox page, row by row, and a second time creates nothing',
    { timeout: 90_000 },
    async () => {
      await page.goto(`${base}/mailboxes/new`);
      await chooseApiKeySignIn(page);
      await page.getByLabel('API key').fill(t.workspace.apiKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Add a mailbox' }).waitFor();
      await page.getByRole('link', { name: 'Import many from CSV' }).click();
      await page.getByRole('heading', { level: 1, name: 'Import mailboxes' }).waitFor();

      await importFile();
      await page.getByText('1 created, 0 already there, 1 failed').waitFor();
      const table = page.getByRole('table', { name: 'Import results' });
      const rows = table.locator('tbody tr');
      expect(await rows.count()).toBe(2);
      expect(await rows.nth(0).textContent()).toContain(dora.email);
      expect(await rows.nth(0).textContent()).toContain('Created');
      expect(await rows.nth(1).textContent()).toContain('Failed');
      expect(await rows.nth(1).textContent()).toMatch(/login refused/i);
      expect(await page.getByRole('progressbar', { name: 'Rows checked' }).getAttribute('aria-valuenow')).toBe('2');

      // the created mailbox links to its page; no password is anywhere on the page
      const html = await page.content();
      expect(html).not.toContain(dora.password);
      expect(html).not.toContain(WRONG_PASSWORD);

      await importFile();
      await page.getByText('0 created, 1 already there, 1 failed').waitFor();
      expect(await rows.nth(0).textContent()).toContain('Already there');

      const listed = (await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json().mailboxes;
      expect(listed.map((m: { email: string }) => m.email)).toEqual([dora.email]);
      expect(pageErrors).toEqual([]);
    },
  );
});
