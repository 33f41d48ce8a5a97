// The Domains pages in headless Chromium against the real app, with DMARC reports kept through the
// job's own insert (Outlook.com's published sample and one built in RFC 7489 appendix C's shape):
// the list tones a domain below 98 % aligned and says what was set aside; the domain page shows
// days and sources and names the unaligned source as a risk with its fix; an owner names the report
// mailbox, a viewer sees no form; a workspace never sees another's domains; a workspace without
// reports says how to start; a domain the providers' feeds hold shows why on its page and on its
// mailbox's. axe-core finds nothing at a laptop's and a phone's width.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import { insertReport, insertSetAside } from '../../src/dmarc/dmarc.repository.js';
import { parseReportAttachment, type AggregateReport } from '../../src/dmarc/report-parser.js';
import { createMailbox } from '../helpers/engine.js';
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
if (!runBrowser) console.warn(`domains pages test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

const WIDTHS = [1280, 390] as const;
// a few days after the Outlook.com sample's day (2024-03-30), so it lies in the 30-day window
const AT = '2024-04-05T12:00:00.000Z';

function parsed(xml: string | Buffer): AggregateReport {
  const result = parseReportAttachment(Buffer.from(xml));
  if (!result.ok) throw new Error(result.reason);
  return result.report;
}

/** A one-day report of `domain` with a row per source: [ip, count, dkim, spf]. */
function report(org: string, domain: string, day: string, rows: Array<[string, number, string, string]>) {
  const begin = Date.parse(`${day}T00:00:00Z`) / 1000;
  return parsed(`<feedback><report_metadata><org_name>${org}</org_name><report_id>${org}-${day}</report_id>
    <date_range><begin>${begin}</begin><end>${begin + 86_399}</end></date_range></report_metadata>
    <policy_published><domain>${domain}</domain><p>none</p></policy_published>
    ${rows
      .map(
        ([ip, count, dkim, spf]) => `<record><row><source_ip>${ip}</source_ip><count>${count}</count>
          <policy_evaluated><disposition>none</disposition><dkim>${dkim}</dkim><spf>${spf}</spf></policy_evaluated>
          </row><identifiers><header_from>${domain}</header_from></identifiers></record>`,
      )
      .join('')}</feedback>`);
}

describe.runIf(runBrowser)('the Domains pages in Chromium', () => {
  let t: TestApp;
  let other: TestWorkspace;
  let empty: TestWorkspace;
  let viewerKey: string;
  let mailboxId: string;
  let browser: Browser;
  let page: Page;
  let base: string;
  const pageErrors: string[] = [];

  async function open(key: string, path: string): Promise<void> {
    await page.setViewportSize({ width: 1280, height: 900 });
    await signInWithApiKey(page, base, key);
    await page.goto(`${base}${path}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await waitUntilDrawn(page);
  }

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp({ clock: fixedClock(AT) });
    other = await t.createWorkspace('Other workspace');
    empty = await t.createWorkspace('Empty workspace');
    const db = t.database.db;
    mailboxId = await createMailbox(t.workspace, 'dmarc@example.com');
    const outlook = readFileSync(
      new URL('../fixtures/dmarc/protection.outlook.com!example.com!1711756800!1711843200.xml', import.meta.url),
    );
    expect(await insertReport(db, t.workspace.id, parsed(outlook), AT)).toBe('stored');
    const google = report('google.com', 'example.com', '2024-04-02', [
      ['192.0.2.1', 500, 'pass', 'pass'],
      ['192.0.2.7', 12, 'fail', 'fail'],
    ]);
    expect(await insertReport(db, t.workspace.id, google, AT)).toBe('stored');
    await db
      .updateTable('dmarc_records')
      .set({ source_name: 'mail.example.com' })
      .where('source_ip', '=', '192.0.2.1')
      .execute();
    await insertSetAside(db, {
      workspaceId: t.workspace.id,
      mailboxId,
      subject: 'Report Domain: example.com',
      code: 'doctype',
      reason: 'the XML declares a document type',
      now: AT,
    });
    const foreign = report('yahoo.com', 'other.example', '2024-04-03', [['198.51.100.9', 40, 'fail', 'fail']]);
    expect(await insertReport(db, other.id, foreign, AT)).toBe('stored');
    const created = await t.workspace.request({
      method: 'POST',
      url: '/api/keys',
      payload: { name: 'viewer', role: 'viewer' },
    });
    expect(created.statusCode, created.body).toBe(201);
    viewerKey = created.json<{ apiKey: string }>().apiKey;
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
    page = await openPage(browser, pageErrors);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    'lists the domains toned, names the report mailbox, and shows a domain with its risk',
    { timeout: 120_000 },
    async () => {
      await open(t.workspace.apiKey, '/');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Domains', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Domains' }).waitFor();
      await waitUntilDrawn(page);
      const row = page.getByRole('row', { name: /example\.com/ });
      // 500 of 513 passed aligned: below 98 %, a warning
      expect(await row.getByRole('cell').allTextContents()).toEqual(['513', '97.4 %', '3', '2', expect.any(String)]);
      expect(await row.locator('.badge-amber').count()).toBe(1);
      expect(await page.getByRole('row', { name: /other\.example/ }).count()).toBe(0);
      const setAside = page.getByRole('region', { name: 'Reports set aside' });
      expect(await setAside.textContent()).toContain('doctype (1): the XML declares a document type');
      expect(await axeViolationsAtWidths(page, WIDTHS), 'domains').toEqual([]);

      await page.getByLabel('Report mailbox').selectOption({ label: 'dmarc@example.com' });
      await page.getByLabel('Folder').fill('DMARC');
      await page.getByRole('button', { name: 'Save report mailbox' }).click();
      await page.getByText('Reports are read from dmarc@example.com, folder DMARC').waitFor();
      const stored = await t.database.db.selectFrom('dmarc_sources').selectAll().executeTakeFirstOrThrow();
      expect(stored).toMatchObject({ workspace_id: t.workspace.id, folder: 'DMARC' });
      // the confirmation fades in: axe judges its contrast once it is fully drawn
      await page.getByRole('status').getByText('Report mailbox saved').waitFor();
      await page.waitForFunction(() => document.getAnimations().length === 0);
      expect(await axeViolationsAtWidths(page, WIDTHS), 'source named').toEqual([]);

      await row.getByRole('link', { name: 'example.com' }).click();
      await page.getByRole('heading', { level: 1, name: 'example.com' }).waitFor();
      await waitUntilDrawn(page);
      const risks = page.getByRole('listitem').filter({ hasText: 'sends as example.com' });
      expect(await risks.allTextContents()).toEqual([
        'A server at 192.0.2.7 sends as example.com without passing SPF or DKIM aligned (12 of 12 messages): if it is yours, add it to SPF or sign with DKIM; if not, it is someone sending in your name — move your DMARC policy to quarantine once your own servers align.',
        'A server at 192.0.2.20 sends as example.com without passing SPF or DKIM aligned (1 of 1 message): if it is yours, add it to SPF or sign with DKIM; if not, it is someone sending in your name — move your DMARC policy to quarantine once your own servers align.',
      ]);
      const days = page.getByRole('region', { name: 'Per day: example.com' });
      expect(
        await days
          .getByRole('row', { name: /2 Apr 2024/ })
          .getByRole('cell')
          .allTextContents(),
      ).toEqual(['512', '97.6 %', '1']);
      const sources = page.getByRole('region', { name: 'Sources: example.com' });
      expect(
        await sources
          .getByRole('row', { name: /192\.0\.2\.1\b/ })
          .getByRole('cell')
          .allTextContents(),
      ).toEqual(['mail.example.com', '500', '500', '500', '100 %', 'none 500']);
      expect(await axeViolationsAtWidths(page, WIDTHS), 'domain').toEqual([]);
      expect(pageErrors).toEqual([]);
    },
  );

  it(
    "shows the providers' verdicts beside the DMARC figures, with the reason the domain is held",
    { timeout: 60_000 },
    async () => {
      const db = t.database.db;
      const reason =
        "Microsoft SNDS rates 192.0.2.1, an address example.com's mail left from, red on 2024-04-04: warmup holds this domain's volume until SNDS no longer rates it red.";
      await db
        .insertInto('feed_connections')
        .values([
          {
            workspace_id: t.workspace.id,
            feed: 'snds',
            secret_encrypted: 'v1:x',
            domains: null,
            checked_at: AT,
            last_error: null,
            fetched_day: '2024-04-05',
            updated_at: AT,
          },
          {
            workspace_id: t.workspace.id,
            feed: 'postmaster',
            secret_encrypted: 'v1:x',
            domains: '["example.com"]',
            checked_at: AT,
            last_error: 'the provider answered 403',
            fetched_day: null,
            updated_at: AT,
          },
        ])
        .execute();
      await db
        .insertInto('snds_days')
        .values({
          workspace_id: t.workspace.id,
          ip: '192.0.2.1',
          day: '2024-04-04',
          filter_result: 'red',
          complaint_rate: '0.4%',
          complaint_rate_max: 0.004,
          trap_hits: 3,
          rcpt_commands: 510,
          data_commands: 505,
          message_recipients: 500,
          fetched_at: AT,
        })
        .execute();
      await db
        .insertInto('provider_holds')
        .values({
          workspace_id: t.workspace.id,
          domain: 'example.com',
          signal: 'snds_red',
          day: '2024-04-04',
          reason,
          since: AT,
          updated_at: AT,
        })
        .execute();
      try {
        await open(t.workspace.apiKey, '/domains/example.com');
        await page.getByText(reason).waitFor();
        const snds = page.getByRole('region', { name: 'SNDS: example.com' });
        expect(
          await snds
            .getByRole('row', { name: /192\.0\.2\.1/ })
            .getByRole('cell')
            .allTextContents(),
        ).toEqual(['192.0.2.1', 'red', '0.4%', '3', '500']);
        await page.getByText('Gmail Postmaster Tools: the provider answered 403').waitFor();
        // the DMARC figures are still there
        await page.getByRole('region', { name: 'Per day: example.com' }).waitFor();
        expect(await axeViolationsAtWidths(page, WIDTHS), 'verdicts').toEqual([]);
        // the domain's mailbox says the same on its own page, where its owner looks first
        await open(t.workspace.apiKey, `/mailboxes/${encodeURIComponent(mailboxId)}`);
        await page.getByText(reason).waitFor();
        expect(await axeViolationsAtWidths(page, WIDTHS), 'mailbox held').toEqual([]);
        expect(pageErrors).toEqual([]);
      } finally {
        for (const table of ['provider_holds', 'snds_days', 'feed_connections'] as const)
          await db.deleteFrom(table).where('workspace_id', '=', t.workspace.id).execute();
      }
    },
  );

  it('shows a viewer the figures and the report mailbox without a form', { timeout: 60_000 }, async () => {
    await open(viewerKey, '/domains');
    await page.getByRole('row', { name: /example\.com/ }).waitFor();
    await page.getByText('Reports are read from dmarc@example.com').waitFor();
    // the shell's view-only notice, once; nothing to type into or choose
    expect(await page.getByTestId('view-only-notice').count()).toBe(1);
    expect(await page.locator('main input, main select').count()).toBe(0);
    expect(await page.getByLabel('Report mailbox').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Save report mailbox' }).count()).toBe(0);
    expect(await axeViolationsAtWidths(page, WIDTHS), 'viewer').toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("never shows a workspace another's domains", { timeout: 60_000 }, async () => {
    await open(other.apiKey, '/domains');
    await page.getByRole('row', { name: /other\.example/ }).waitFor();
    expect(await page.getByRole('row', { name: /example\.com/ }).count()).toBe(0);
    await page.goto(`${base}/domains/example.com`);
    await page.getByText('No reports for this domain in the last 30 days').waitFor();
    expect(await page.getByText('192.0.2.7').count()).toBe(0);
    expect(await axeViolationsAtWidths(page, WIDTHS), 'foreign domain').toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it('says how to start in a workspace without reports', { timeout: 60_000 }, async () => {
    await open(empty.apiKey, '/domains');
    const start = page.getByText(/Name below the mailbox and folder your reports arrive in/);
    await start.waitFor();
    expect(await start.textContent()).toContain("Read your domain's DMARC reports");
    await page.getByText('Connect the mailbox the reports arrive in first').waitFor();
    expect(await axeViolationsAtWidths(page, WIDTHS), 'empty').toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
