// One definition of a mailbox's state: a mailbox in each state, seeded on a real database the way
// the engine leaves it, and the API, the CSV export, the PDF report's text, the overview's counts
// and the dashboard's mailbox list (headless Chromium) all say the same state for each of them.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestWorkspace } from '../helpers/test-app.js';
import { newId } from '../../src/db/ids.js';
import type { MailboxRow } from '../../src/db/schema.js';
import type { Mailbox } from '../../src/mailboxes/mailboxes.schemas.js';
import type { DashboardStats } from '../../src/stats/stats.schemas.js';
import { pdfText } from '../helpers/pdf-text.js';
import { chromiumAvailable, ensureDashboardBuilt, launchBrowser, signInWithApiKey, type Browser } from './browser.js';

const inCi = process.env.CI === 'true';
const runBrowser = chromiumAvailable() || inCi;

const STOPPED_AT = '2026-11-20T09:30:00.000Z';

/** Each state, as the row the engine and the state owner leave (short addresses: the PDF fits them whole). */
const SEEDS: Array<{ email: string; expected: Mailbox['outlook']['state']['kind'][]; row: Partial<MailboxRow> }> = [
  {
    email: 'steady@a.test',
    // on track, or waiting when its window is closed as the test runs: both warm up as the ramp wants
    expected: ['on_track', 'waiting'],
    row: { ramp_target: 5, daily_target: 5, plan_capacity: 5 },
  },
  {
    email: 'held@b.test',
    expected: ['held_by_pool'],
    row: { ramp_target: 18, daily_target: 6, plan_capacity: 6, plan_lift: 4, plan_limited_by: 'pool_too_small' },
  },
  { email: 'junked@c.test', expected: ['held_by_spam'], row: { volume_factor: 0.5, ramp_target: 4, daily_target: 2 } },
  {
    email: 'halted@d.test',
    expected: ['stopped'],
    row: { status: 'error', last_error: 'Warmup stopped: 31 of 31 found in spam.', stopped_at: STOPPED_AT },
  },
  { email: 'resting@e.test', expected: ['paused'], row: { status: 'paused' } },
  { email: 'newbie@f.test', expected: ['joining'], row: { proven_at: null } },
];

describe('every page and export says the same state for each mailbox', () => {
  let t: TestApp;
  let ws: TestWorkspace;
  let api: Mailbox[];

  beforeAll(async () => {
    t = await createTestApp();
    ws = await t.createWorkspace('States');
    const now = new Date().toISOString();
    for (const seed of SEEDS) {
      await t.database.db
        .insertInto('mailboxes')
        .values({
          id: newId('mb'),
          workspace_id: ws.id,
          email: seed.email,
          email_normalized: seed.email,
          name: null,
          provider: 'custom',
          connection_type: 'imap',
          status: 'active',
          imap: JSON.stringify({ host: 'imap.example.test', port: 993, secure: true, username: seed.email }),
          smtp: JSON.stringify({ host: 'smtp.example.test', port: 465, secure: true, username: seed.email }),
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
    }
    const listed = await ws.request({ method: 'GET', url: '/api/mailboxes?limit=100' });
    expect(listed.statusCode, listed.body).toBe(200);
    api = listed.json().mailboxes as Mailbox[];
  });

  afterAll(async () => {
    await t?.close();
  });

  const stateOf = (email: string) => api.find((m) => m.email === email)!.outlook.state;

  it('the API gives each mailbox its state, with since-when, why and the capacity where they apply', () => {
    for (const seed of SEEDS) expect(seed.expected, seed.email).toContain(stateOf(seed.email).kind);
    expect(stateOf('halted@d.test')).toMatchObject({
      since: STOPPED_AT,
      reason: 'Warmup stopped: 31 of 31 found in spam.',
    });
    expect(stateOf('held@b.test').pool).toEqual({ carries: 6, wants: 18, moreDomains: 4 });
  });

  it('the CSV export says the same state on every row of the mailbox', async () => {
    const csv = (await ws.request({ method: 'GET', url: '/api/stats/export?format=csv&period=7d' })).body;
    const [header, ...lines] = csv.trim().split('\r\n');
    const columns = header!.split(',');
    const at = (line: string, column: string) => line.split(',')[columns.indexOf(column)];
    expect(lines.length).toBe(SEEDS.length * 7);
    for (const line of lines) expect(at(line, 'state'), line).toBe(stateOf(at(line, 'email')!).kind);
  });

  it('the PDF report prints the same state beside each mailbox', async () => {
    const pdf = (await ws.request({ method: 'GET', url: '/api/stats/export?format=pdf&period=7d' })).rawPayload;
    const text = await pdfText(pdf);
    for (const seed of SEEDS) expect(text).toContain(`${seed.email} ${stateOf(seed.email).label}`);
    // and, under the table, what needs doing: the stopped one since when and why, the held one's fix
    const needs = text.slice(text.indexOf('What needs doing')).replace(/\s+/g, ' ');
    expect(needs).toContain(`halted@d.test: ${stateOf('halted@d.test').label} since 20 Nov 2026 09:30 UTC`);
    expect(needs).toContain('Warmup stopped: 31 of 31 found in spam.');
    expect(needs).toContain(stateOf('held@b.test').reason);
  });

  it('the overview counts by the same states: held and stopped mailboxes are not "warming up"', async () => {
    const { stats } = (await ws.request({ method: 'GET', url: '/api/stats/dashboard' })).json() as {
      stats: DashboardStats;
    };
    const counted = Object.fromEntries(Object.entries(stats.states).filter(([, n]) => n > 0));
    const expected: Record<string, number> = {};
    for (const mailbox of api) expected[mailbox.outlook.state.kind] = (expected[mailbox.outlook.state.kind] ?? 0) + 1;
    expect(counted).toEqual(expected);
    expect(stats.activeMailboxes).toBe(4);
    expect(stats.warmingMailboxes).toBe(1);
    // the pool line from the stored capacity model: the median member carries 4, ramps want 4–18
    expect(stats.pool).toMatchObject({ members: 3, held: 1, moreDomains: 4, wants: { min: 4, max: 18 } });
    expect(stats.pool!.text).toMatch(
      /^Your pool carries about \d+ emails a day per mailbox; your ramps want 4–18: connect mailboxes on 4 more domains/,
    );
  });

  describe.runIf(runBrowser)('in the dashboard (Chromium)', () => {
    let browser: Browser;
    let page: Page;
    let base: string;

    beforeAll(async () => {
      ensureDashboardBuilt();
      base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      browser = await launchBrowser();
      page = await browser.context.newPage();
      page.setDefaultTimeout(15_000);
      await signInWithApiKey(page, base, ws.apiKey);
    });

    afterAll(async () => {
      await browser?.close();
    });

    it('the mailbox list shows the same state for each mailbox, and the stopped one since when', async () => {
      await page.goto(`${base}/mailboxes`);
      for (const seed of SEEDS) {
        const row = page.locator('tr', { hasText: seed.email });
        const badge = row.locator('.badge-status');
        await expect
          .poll(() => badge.getAttribute('data-state'), { message: seed.email })
          .toBe(stateOf(seed.email).kind);
        expect(await badge.innerText()).toBe(stateOf(seed.email).label);
      }
      const stopped = page.locator('tr', { hasText: 'halted@d.test' });
      expect(await stopped.locator('.row-error').innerText()).toMatch(/^Since .*: Warmup stopped: 31 of 31/);
      expect(await stopped.innerText()).toContain('before it stopped');
    });

    it('the overview shows the pool line and counts only on-track mailboxes as warming up', async () => {
      await page.goto(base);
      await expect.poll(() => page.getByTestId('pool-line').innerText()).toMatch(/^Your pool carries about/);
      const warming = page.locator('.stat', { hasText: 'Warming up' });
      expect(await warming.locator('.stat-value').innerText()).toBe('1');
      // beside a mailbox held back by spam the average reputation is not green
      const reputation = page.locator('.stat', { hasText: 'Avg reputation' });
      expect(await reputation.locator('.stat-value').getAttribute('class')).not.toContain('tone-good');
    });

    it('a stopped mailbox says when and why it stopped and greys its old figures', async () => {
      await page.goto(`${base}/mailboxes/${api.find((m) => m.email === 'halted@d.test')!.id}`);
      await page.getByTestId('stale-note').waitFor();
      expect(await page.locator('main').innerText()).toContain('Warmup stopped: 31 of 31 found in spam.');
      expect(await page.getByText(/^Warmup stopped .* ago/).count()).toBe(1);
      expect(await page.locator('.is-stale .stat-value.tone-good').count()).toBe(0);
    });
  });
});
