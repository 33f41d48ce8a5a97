// DNS and blocklist status at a glance, in headless Chromium against the real app: the mailbox
// list's DNS column and the overview's DNS line say what GET /api/mailboxes/dns-status says (and
// the PDF report the same words), each linking to the mailbox's DNS checks, at a laptop's and a
// phone's width with no axe-core violation; and a new user with a stopped mailbox, a DNS failure
// and a pool too small sees all three on the overview without scrolling at 1280 × 800, each with
// its fix. The mailbox page's live checks ask a DNS server on loopback, never the internet.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveChecks } from '../../src/checks/checks.repository.js';
import type { DnsCheck, DnsStatusList, MailboxDnsStatus } from '../../src/checks/checks.schemas.js';
import { newId } from '../../src/db/ids.js';
import type { MailboxRow } from '../../src/db/schema.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { pdfText } from '../helpers/pdf-text.js';
import { createTestApp, type TestApp, type TestWorkspace } from '../helpers/test-app.js';
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

const inCi = process.env.CI === 'true';
const runBrowser = chromiumAvailable() || inCi;
if (!runBrowser) console.warn(`DNS status test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

const WIDTHS = [1280, 390] as const;
const SPF_FIX = 'Add your sending provider to the record (include:… or ip4:…), then end it with -all or ~all.';
const STOPPED_FIX =
  'Warmup stopped: 45% of its warmup emails landed in spam over the last 7 days (9 of 20). Check SPF, DKIM and DMARC for d.test, then resume the mailbox.';

/** A new user's workspace: one mailbox failing SPF, one held by a pool too small, one stopped. */
const SEEDS: Array<{ email: string; row: Partial<MailboxRow>; checks?: DnsCheck['status'][] }> = [
  {
    email: 'steady@a.test',
    row: { ramp_target: 5, daily_target: 5, plan_capacity: 5 },
    checks: ['pass', 'fail', 'pass', 'skipped'],
  },
  {
    email: 'held@b.test',
    row: { ramp_target: 18, daily_target: 6, plan_capacity: 6, plan_lift: 4, plan_limited_by: 'pool_too_small' },
    checks: ['pass', 'pass', 'pass', 'pass'],
  },
  {
    email: 'halted@d.test',
    row: { status: 'error', last_error: STOPPED_FIX, stopped_at: '2026-11-20T09:30:00.000Z' },
  },
];
const CHECKS = ['mx', 'spf', 'dmarc', 'dkim'] as const;

describe.runIf(runBrowser)('DNS status in the mailbox list and on the overview in Chromium', () => {
  let dns: TestDnsServer;
  let t: TestApp;
  let ws: TestWorkspace;
  let browser: Browser;
  let page: Page;
  let base: string;
  let statuses: MailboxDnsStatus[];
  const pageErrors: string[] = [];
  const statusOf = (email: string) => statuses.find((s) => s.email === email)!;

  beforeAll(async () => {
    ensureDashboardBuilt();
    dns = await startDnsServer({});
    t = await createTestApp({ dnsServers: [dns.address] });
    ws = await t.createWorkspace('New user');
    const now = new Date().toISOString();
    for (const seed of SEEDS) {
      const id = newId('mb');
      await t.database.db
        .insertInto('mailboxes')
        .values({
          id,
          workspace_id: ws.id,
          email: seed.email,
          email_normalized: seed.email,
          name: null,
          provider: 'custom',
          connection_type: 'imap',
          status: 'active',
          imap: JSON.stringify({ host: '127.0.0.1', port: 993, secure: true, username: seed.email }),
          smtp: JSON.stringify({ host: '127.0.0.1', port: 465, secure: true, username: seed.email }),
          password_encrypted: 'x',
          warmup: '{}',
          warmup_day: 3,
          daily_target: 0,
          proven_at: now,
          last_plan_day: now.slice(0, 10),
          created_at: now,
          updated_at: now,
          ...seed.row,
        })
        .execute();
      if (!seed.checks) continue;
      const checks = seed.checks.map((status, i) => ({
        check: CHECKS[i]!,
        status,
        detail: `${CHECKS[i]} ${status}`,
        fix: status === 'fail' ? SPF_FIX : status === 'skipped' ? 'Give the selector.' : null,
      }));
      await saveChecks(t.database.db, id, checks, new Date());
    }
    const response = await ws.request({ method: 'GET', url: '/api/mailboxes/dns-status' });
    expect(response.statusCode, response.body).toBe(200);
    statuses = (response.json() as DnsStatusList).mailboxes;

    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser({ width: 1280, height: 800 });
    page = await openPage(browser, pageErrors);
    await signInWithApiKey(page, base, ws.apiKey);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await dns?.close();
  });

  async function open(path: string, width: number): Promise<void> {
    await page.setViewportSize({ width, height: 800 });
    await page.goto(`${base}${path}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await waitUntilDrawn(page);
  }

  it('the API words each mailbox: SPF failing with its fix, DNS ok, not checked yet', () => {
    expect(statuses.map((s) => [s.email, s.tone, s.label, s.fix])).toEqual([
      ['halted@d.test', 'unknown', 'Not checked yet', null],
      ['held@b.test', 'ok', 'DNS ok', null],
      ['steady@a.test', 'error', 'SPF failing', SPF_FIX],
    ]);
  });

  it('the PDF report heads each mailbox’s DNS checks with the same words', async () => {
    const pdf = (await ws.request({ method: 'GET', url: '/api/stats/export?format=pdf&period=7d' })).rawPayload;
    const text = (await pdfText(pdf)).replace(/\s+/g, ' ');
    expect(text).toContain('steady@a.test: SPF failing');
    expect(text).toContain('held@b.test: DNS ok');
  });

  for (const width of WIDTHS) {
    it(`the mailbox list has a DNS column of toned badges linking to each mailbox's checks at ${width} px`, async () => {
      await open('/mailboxes', width);
      for (const status of statuses) {
        const row = page.locator('tr', { hasText: status.email });
        const link = row.getByRole('link', { name: `DNS of ${status.email}: ${status.label}` });
        await link.waitFor();
        expect(await link.innerText()).toBe(status.label);
        expect(await link.getAttribute('href')).toBe(`/mailboxes/${status.mailboxId}#dns`);
        expect(await link.locator('.badge').getAttribute('class')).toContain(
          { error: 'badge-red', ok: 'badge-green', warn: 'badge-amber', unknown: 'badge-neutral' }[status.tone],
        );
        expect(await link.isVisible(), `${status.email} at ${width} px`).toBe(true);
      }
      // the column costs no other: every column, the actions last, fits without scrolling the table
      const table = page.locator('.table-wrap');
      expect(await table.evaluate((wrap) => wrap.scrollWidth - wrap.clientWidth), `table at ${width} px`).toBe(0);
      // on a phone the rows stack, the column under its own label, and nothing runs off the side
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      expect(await axeViolations(page), `mailbox list at ${width} px`).toEqual([]);
    });

    it(`the overview's DNS line names the failure, its domain and its fix at ${width} px`, async () => {
      await open('/', width);
      const line = page.getByTestId('dns-line');
      expect(await line.innerText()).toBe(
        `DNS: 1 of 3 mailboxes fails a DNS or blocklist check — SPF failing on a.test: ${SPF_FIX} See the checks of steady@a.test`,
      );
      expect(await line.getByRole('link').getAttribute('href')).toBe(
        `/mailboxes/${statusOf('steady@a.test').mailboxId}#dns`,
      );
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      expect(await axeViolations(page), `overview at ${width} px`).toEqual([]);
    });
  }

  it('at 1280 × 800 the stopped mailbox, the DNS failure and the pool too small are all on screen, each with its fix', async () => {
    await open('/', 1280);
    await page.getByRole('list').locator('.attention-item').first().waitFor();
    expect(await page.evaluate('window.scrollY')).toBe(0);
    const items = [
      {
        name: 'stopped mailbox',
        locator: page.getByTestId('stopped-line'),
        fix: `Stopped: halted@d.test — ${STOPPED_FIX}`,
      },
      { name: 'DNS failure', locator: page.getByTestId('dns-line'), fix: SPF_FIX },
      {
        name: 'pool too small',
        locator: page.getByTestId('pool-line'),
        fix: 'connect mailboxes on 4 more domains, or lower the daily limit to',
      },
    ];
    for (const item of items) {
      expect(await item.locator.innerText(), item.name).toContain(item.fix);
      const box = await item.locator.boundingBox();
      expect(box, item.name).not.toBeNull();
      expect(box!.y, item.name).toBeGreaterThanOrEqual(0);
      expect(box!.y + box!.height, `${item.name} ends within the 800 px window`).toBeLessThanOrEqual(800);
    }
  });

  it("the DNS line's link opens the mailbox with its DNS checks in view", async () => {
    await open('/', 1280);
    await page.getByTestId('dns-line').getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: 'steady@a.test' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#dns');
    const card = page.locator('#dns');
    await card.getByRole('heading', { name: 'DNS checks' }).waitFor();
    await expect.poll(async () => (await card.boundingBox())?.y ?? -1).toBeGreaterThanOrEqual(0);
    await expect.poll(async () => (await card.boundingBox())?.y ?? 9999).toBeLessThan(800);
    expect(pageErrors).toEqual([]);
  });
});
