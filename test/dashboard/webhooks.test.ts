// The Webhooks page in headless Chromium against the real app: add an endpoint (its secret shown
// once), send a test event, and see it delivered in the log; the local receiver checks the
// signature with the secret the page showed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSecretKey } from '../../src/secrets/secrets.js';
import { deliverDueWebhooks, DEFAULT_WEBHOOK_SETTINGS } from '../../src/webhooks/webhook-delivery.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from '../helpers/test-app.js';
import {
  chromiumAvailable,
  CHROMIUM_PATH,
  ensureDashboardBuilt,
  launchBrowser,
  type Browser,
  chooseApiKeySignIn,
} from './browser.js';

const inCi = process.env.CI === 'true';
const runBrowser = chromiumAvailable() || inCi;
if (!runBrowser) console.warn(`webhooks page test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

const LOOPBACK_POLICY = { allowedHosts: ['127.0.0.1'], plaintextHosts: [] };

describe.runIf(runBrowser)('webhooks page in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let receiver: http.Server;
  const received: Array<{ body: string; headers: Record<string, string> }> = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp({ mailPolicy: LOOPBACK_POLICY });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    receiver = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ body, headers: request.headers as Record<string, string> });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
    await t?.close();
  });

  it('adds an endpoint, shows its secret once, test-sends and shows the delivery', async () => {
    await page.goto(base);
    await chooseApiKeySignIn(page);
    await page.getByLabel('API key').fill(t.workspace.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByText('No endpoints yet').waitFor();

    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByLabel("Yesterday's summary, once a day").check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.locator('code.secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    const card = page.getByRole('region', { name: url });
    await card.waitFor();
    expect(await card.textContent()).toContain('mailbox.error, mailbox.recovered, daily.summary');

    await card.getByRole('button', { name: 'Send test event' }).click();
    await card.getByText('not tried yet').waitFor();
    await deliverDueWebhooks({
      db: t.database.db,
      dialect: t.database.dialect,
      clock: t.clock,
      logger: pino({ level: 'silent' }),
      secretKey: loadSecretKey({ secretKey: TEST_SECRET_KEY, dataDir: t.database.dataDir }),
      policy: LOOPBACK_POLICY,
      workerId: 'page-test',
      settings: DEFAULT_WEBHOOK_SETTINGS,
    });
    await card.getByRole('button', { name: 'Refresh log' }).click();
    await card.getByText('delivered').first().waitFor();
    const testSends = received.filter((r) => JSON.parse(r.body).type === 'webhook.test');
    expect(testSends).toHaveLength(1);
    expect(() => new Webhook(secret).verify(testSends[0]!.body, testSends[0]!.headers)).not.toThrow();

    // the secret is not shown again
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await card.waitFor();
    expect(await page.locator('code.secret').count()).toBe(0);

    await card.getByRole('button', { name: `Delete ${url}` }).click();
    await page.getByText('No endpoints yet').waitFor();
    expect(pageErrors).toEqual([]);
  });
});
