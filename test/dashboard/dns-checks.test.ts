// The DNS checks on a mailbox's page in headless Chromium against the real app and a real DNS
// server on loopback: a domain without DMARC shows the failing check with its fix, a mailbox the
// DNS rule paused says why, and axe-core finds nothing at laptop and phone widths.
import { generateKeyPairSync } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveBlocklistResults } from '../../src/checks/checks.repository.js';
import { applyMailboxEvent } from '../../src/mailboxes/mailbox-state.js';
import { DEFAULT_WARMUP } from '../../src/mailboxes/warmup-settings.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { insertMailbox } from '../helpers/engine-fixtures.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { axeViolations } from './axe.js';
import {
  chooseApiKeySignIn,
  chromiumAvailable,
  CHROMIUM_PATH,
  ensureDashboardBuilt,
  launchBrowser,
  type Browser,
} from './browser.js';

const inCi = process.env.CI === 'true';
const runBrowser = chromiumAvailable() || inCi;
if (!runBrowser)
  console.warn(`DNS checks page test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

describe.runIf(runBrowser)('DNS checks on the mailbox page in Chromium', () => {
  let dns: TestDnsServer;
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ensureDashboardBuilt();
    dns = await startDnsServer({
      // MX and an SPF record that authorises the mailbox's server (127.0.0.1); no DMARC record
      'nodmarc.test': [
        { type: 'MX', exchange: 'mx.nodmarc.test', priority: 10 },
        { type: 'TXT', data: 'v=spf1 ip4:127.0.0.1 -all' },
      ],
    });
    t = await createTestApp({ dnsServers: [dns.address] });
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
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await dns?.close();
  });

  async function openMailbox(id: string, email: string): Promise<void> {
    await page.goto(`${base}/mailboxes/${id}`);
    await page.getByRole('heading', { level: 1, name: email }).waitFor();
    await page.getByRole('list', { name: 'DNS checks of nodmarc.test' }).waitFor();
    await page.getByRole('heading', { name: 'Blocklists' }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('.skeleton, [aria-busy="true"]').length === 0);
  }

  async function expectNoAxeViolations(state: string): Promise<void> {
    for (const width of [1366, 390]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await axeViolations(page), `${state} at ${width} px`).toEqual([]);
    }
    await page.setViewportSize({ width: 1366, height: 900 });
  }

  it('shows a domain without DMARC failing that check, with its fix, and the checks that pass', async () => {
    const mailbox = await insertMailbox(t.database.db, t.workspace.id, {
      email: 'nia@nodmarc.test',
      warmup: { ...DEFAULT_WARMUP },
    });
    await openMailbox(mailbox.id, 'nia@nodmarc.test');
    const dmarc = page.locator('.dns-check[data-check="dmarc"]');
    expect(await dmarc.locator('.badge').textContent()).toBe('Fails');
    expect(await dmarc.locator('.dns-check-detail').textContent()).toContain('nodmarc.test publishes no DMARC record');
    expect(await dmarc.locator('.dns-check-fix').textContent()).toBe(
      'How to fix: Publish a TXT record at _dmarc.nodmarc.test: "v=DMARC1; p=none; rua=mailto:dmarc@nodmarc.test", and move to p=quarantine once reports look clean.',
    );
    for (const check of ['mx', 'spf']) {
      const item = page.locator(`.dns-check[data-check="${check}"]`);
      expect(await item.locator('.badge').textContent()).toBe('Passes');
      expect(await item.locator('.dns-check-fix').count()).toBe(0);
    }
    expect(await page.locator('.dns-check[data-check="dkim"] .badge').textContent()).toBe('Not checked');
    await expectNoAxeViolations('failing DMARC');

    // published: checked again on demand, it passes
    dns.zones['_dmarc.nodmarc.test'] = [{ type: 'TXT', data: 'v=DMARC1; p=none' }];
    await page.getByRole('button', { name: 'Check again' }).click();
    await page.locator('.dns-check[data-check="dmarc"] .badge', { hasText: 'Passes' }).waitFor();
    delete dns.zones['_dmarc.nodmarc.test'];
    expect(pageErrors).toEqual([]);
  });

  it('shows a blocklist listing with since when and where to ask for removal', async () => {
    const mailbox = await insertMailbox(t.database.db, t.workspace.id, {
      email: 'lou@nodmarc.test',
      warmup: { ...DEFAULT_WARMUP },
    });
    const since = new Date('2026-03-02T08:00:00.000Z');
    await saveBlocklistResults(
      t.database.db,
      mailbox.id,
      [
        {
          zone: 'zen.spamhaus.org',
          kind: 'ip',
          subject: '85.10.20.99',
          status: 'listed',
          detail: 'listed on zen.spamhaus.org (127.0.0.2)',
          delistUrl: 'https://check.spamhaus.org/',
        },
        {
          zone: 'bl.spamcop.net',
          kind: 'ip',
          subject: '85.10.20.99',
          status: 'clear',
          detail: 'not listed on bl.spamcop.net',
          delistUrl: 'https://www.spamcop.net/bl.shtml',
        },
      ],
      since,
    );
    await openMailbox(mailbox.id, 'lou@nodmarc.test');
    const listings = page.getByRole('list', { name: 'Blocklist listings' });
    await listings.waitFor();
    expect(await listings.locator('li').count()).toBe(1);
    const text = (await listings.textContent())!;
    expect(text).toContain('85.10.20.99');
    expect(text).toContain('Listed on zen.spamhaus.org');
    expect(text).toContain('listed on zen.spamhaus.org (127.0.0.2)');
    expect(await listings.getByRole('link', { name: 'https://check.spamhaus.org/' }).getAttribute('href')).toBe(
      'https://check.spamhaus.org/',
    );
    expect(text).toContain('Listed since 2 Mar 2026.');
    await expectNoAxeViolations('listed on a blocklist');
    expect(pageErrors).toEqual([]);
  });

  it('gives the DKIM selector in a form, refusing a wrong one in plain words, and checks the key at once', async () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const key = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    dns.zones['s1._domainkey.nodmarc.test'] = [{ type: 'TXT', data: `v=DKIM1; k=rsa; p=${key}` }];
    const mailbox = await insertMailbox(t.database.db, t.workspace.id, {
      email: 'dee@nodmarc.test',
      warmup: { ...DEFAULT_WARMUP },
    });
    try {
      await openMailbox(mailbox.id, 'dee@nodmarc.test');
      const dkim = page.locator('.dns-check[data-check="dkim"]');
      expect(await dkim.locator('.badge').textContent()).toBe('Not checked');
      // the fix sends a person to the form below, never to the API
      const fix = (await dkim.locator('.dns-check-fix').textContent())!;
      expect(fix).toContain('under "DKIM selector"');
      expect(await page.locator('.dns-checks-card').textContent()).not.toMatch(/\/api\/|PUT /);

      const field = page.getByRole('textbox', { name: 'DKIM selector' });
      const save = page.getByRole('button', { name: 'Save selector' });
      await save.click();
      await page.getByText('Enter the selector: the s= value of a DKIM-Signature').waitFor();
      expect(await field.getAttribute('aria-invalid')).toBe('true');
      await field.fill('s1._domainkey');
      await save.click();
      await page.getByText('Give only the selector, without the "._domainkey" part').waitFor();
      await field.fill('my selector');
      await save.click();
      await page.getByText('A selector has only letters, digits, dots, hyphens and underscores').waitFor();
      expect(await page.locator('.dkim-selector-form').textContent()).not.toMatch(/pattern|\^\[/);
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        expect(await axeViolations(page), `a refused selector at ${width} px`).toEqual([]);
      }
      await page.setViewportSize({ width: 1280, height: 900 });

      await field.fill('s1');
      await save.click();
      await dkim.locator('.badge', { hasText: 'Passes' }).waitFor();
      await page.getByText('The checks use the selector you gave: s1.').waitFor();
      expect(await dkim.locator('.dns-check-detail').textContent()).toContain('s1._domainkey.nodmarc.test publishes');
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        expect(await axeViolations(page), `a saved selector at ${width} px`).toEqual([]);
      }
      await page.setViewportSize({ width: 1366, height: 900 });
      expect(pageErrors).toEqual([]);
    } finally {
      delete dns.zones['s1._domainkey.nodmarc.test'];
    }
  });

  it('says why a mailbox the DNS rule paused is paused, and that it resumes by itself', async () => {
    const mailbox = await insertMailbox(t.database.db, t.workspace.id, {
      email: 'ned@nodmarc.test',
      warmup: { ...DEFAULT_WARMUP },
    });
    const reason =
      'Warmup paused: DMARC has failed for 72 hours (nodmarc.test publishes no DMARC record). Fix: Publish a TXT record at _dmarc.nodmarc.test. Warmup resumes by itself once SPF and DMARC pass.';
    await applyMailboxEvent(t.database.db, mailbox.id, { type: 'dns-failed', lastError: reason });
    await openMailbox(mailbox.id, 'ned@nodmarc.test');
    const notice = page.getByText('Warmup is paused until SPF and DMARC pass');
    await notice.waitFor();
    await page.getByText(reason).waitFor();
    expect(await page.getByTestId('outlook-summary').textContent()).toContain('resumes by itself once both pass');
    await expectNoAxeViolations('paused by the DNS rule');
    expect(pageErrors).toEqual([]);
  });
});
