// The Alerts page in headless Chromium against the real app: an admin chooses the emailed events
// and adds a Slack channel, whose test message arrives at a loopback receiver in Slack's format; a
// viewer sees the same choices read-only; an installation without an SMTP server says why email
// alerts are unavailable. axe-core finds nothing at a laptop's and a phone's width in each state.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSecretKey } from '../../src/secrets/secrets.js';
import { deliverDueWebhooks, DEFAULT_WEBHOOK_SETTINGS } from '../../src/webhooks/webhook-delivery.js';
import { createPerson } from '../helpers/accounts.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from '../helpers/test-app.js';
import { axeViolationsAtWidths } from './axe.js';
import {
  chromiumAvailable,
  CHROMIUM_PATH,
  ensureDashboardBuilt,
  launchBrowser,
  signInWithApiKey,
  type Browser,
} from './browser.js';

const inCi = process.env.CI === 'true';
const runBrowser = chromiumAvailable() || inCi;
if (!runBrowser) console.warn(`alerts page test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

const LOOPBACK_POLICY = { allowedHosts: ['127.0.0.1'], plaintextHosts: [] };
const WIDTHS = [1280, 390] as const;

describe.runIf(runBrowser)('alerts page in Chromium', () => {
  let t: TestApp;
  let bare: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let bareBase: string;
  let receiver: http.Server;
  const received: Array<{ path: string; body: Record<string, unknown> }> = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp({ mailPolicy: LOOPBACK_POLICY, alertMailConfigured: true });
    bare = await createTestApp({ mailPolicy: LOOPBACK_POLICY });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    bareBase = await bare.app.listen({ port: 0, host: '127.0.0.1' });
    await createPerson(t, t.workspace.id, 'owner');
    receiver = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ path: request.url ?? '', body: JSON.parse(body) as Record<string, unknown> });
        response.writeHead(200).end('ok');
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
    await bare?.close();
  });

  async function openAlerts(address: string, apiKey: string): Promise<void> {
    await signInWithApiKey(page, address, apiKey);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerts', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Alerts' }).waitFor();
    await page.getByRole('heading', { name: 'Slack and Teams' }).waitFor();
  }

  it('lets an admin choose emailed events and add a Slack channel, whose test arrives in Slack’s format', async () => {
    await openAlerts(base, t.workspace.apiKey);
    expect(await axeViolationsAtWidths(page, WIDTHS)).toEqual([]);
    const email = page.getByRole('region', { name: 'Email alerts' });
    await email.getByLabel('A DNS check failed').check();
    await email.getByRole('button', { name: 'Save email alerts' }).click();
    await page.getByText('Email alerts saved').waitFor();
    const stored = await t.database.db
      .selectFrom('webhook_endpoints')
      .select('events')
      .where('kind', '=', 'email')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(stored.events)).toEqual(['check.failed']);

    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/services/T1/B2/secretPart`;
    const add = page.getByRole('region', { name: 'Add a Slack or Teams channel' });
    await add.getByLabel('Chat').selectOption('slack');
    await add.getByLabel('Incoming webhook URL').fill(url);
    await add.getByRole('button', { name: 'Add channel' }).click();
    const masked = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/…Part`;
    const card = page.getByRole('region', { name: `Slack: ${masked}` });
    await card.waitFor();
    expect(await page.content()).not.toContain('secretPart');
    await card.getByRole('button', { name: 'Send test message' }).click();
    await page.getByText('Test message queued').waitFor();
    await deliverDueWebhooks({
      db: t.database.db,
      dialect: t.database.dialect,
      clock: t.clock,
      logger: pino({ level: 'silent' }),
      secretKey: loadSecretKey({ secretKey: TEST_SECRET_KEY, dataDir: t.database.dataDir }),
      policy: LOOPBACK_POLICY,
      workerId: 'alerts-page',
      settings: DEFAULT_WEBHOOK_SETTINGS,
    });
    expect(received).toHaveLength(1);
    expect(received[0]!.path).toBe('/services/T1/B2/secretPart');
    expect(received[0]!.body).toMatchObject({
      text: 'Test alert from Warmup',
      blocks: [{ type: 'header' }, { type: 'section' }],
    });
    expect(await axeViolationsAtWidths(page, WIDTHS)).toEqual([]);
  }, 120_000);

  it('shows a viewer the same alerts read-only', async () => {
    const viewer = await t.services.workspaces.createApiKey(t.workspace.id, 'viewer key', 'viewer');
    await openAlerts(base, viewer.apiKey);
    await page.getByText('View only').waitFor();
    const email = page.getByRole('region', { name: 'Email alerts' });
    expect(await email.getByRole('listitem').allTextContents()).toEqual(['A DNS check failed']);
    expect(await page.getByRole('button', { name: 'Save email alerts' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Add channel' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Send test message' }).count()).toBe(0);
    await page.getByRole('region', { name: /^Slack: / }).waitFor();
    expect(await axeViolationsAtWidths(page, WIDTHS)).toEqual([]);
  }, 120_000);

  it('says why email alerts are unavailable when no SMTP server is configured', async () => {
    await openAlerts(bareBase, bare.workspace.apiKey);
    await page.getByText('Email alerts are unavailable').waitFor();
    expect(await page.getByRole('region', { name: 'Email alerts' }).textContent()).toContain('SMTP server');
    expect(await page.getByRole('button', { name: 'Save email alerts' }).count()).toBe(0);
    expect(await axeViolationsAtWidths(page, WIDTHS)).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
