// The dashboard says what the API says: seeded states (no mailbox, one mailbox in a pool of one,
// a junked mailbox, an auto-replying one, one the health guard slowed and one it stopped, each
// kind of connection failure) shown in headless Chromium, their text and figures compared with
// the API's answers; axe-core finds nothing on any page or state at laptop and phone widths; a
// keyboard-only walk never leaves the focus on <body>, paging included; the focus ring stands out
// 3:1; a chart of one day is drawn, its figures open by keyboard and its colours have a legend.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestWorkspace } from '../helpers/test-app.js';
import { createMailbox, proveAll } from '../helpers/engine.js';
import { getMailStack, requireMailStack } from '../mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../mailstack/users.js';
import { formatDay } from '../../src/dashboard/format.js';
import { axeViolations } from './axe.js';
import {
  chooseApiKeySignIn,
  chromiumAvailable,
  ensureDashboardBuilt,
  launchBrowser,
  signInWithApiKey,
  type Browser,
  waitUntilDrawn,
} from './browser.js';
import { closedPort, silentServer } from '../helpers/ports.js';
import { startPrivateMailStack } from '../mailstack/private-stack.js';
import { stackMailPolicy } from '../mailstack/use-mail-stack.js';

const inCi = process.env.CI === 'true';
const runBrowser = chromiumAvailable() || inCi;

interface Outlook {
  summary: string;
  limitReason: string | null;
  readiness: string;
  attention: Array<{ kind: string; message: string }>;
}
interface ApiMailbox {
  id: string;
  email: string;
  outlook: Outlook;
}

const WIDTHS = [1366, 390] as const;

/** Users of a mail server of their own: one whose provider wants an app password, one it is slow to log in. */
const APP_PASSWORD_USER = { email: 'casey@yankee-mail.test', password: 'casey-account-password' };
const SLOW_USER = { email: 'dana@zulu-mail.test', password: 'dana-account-password' };

describe.runIf(runBrowser && getMailStack() !== null)('the dashboard tells the truth', () => {
  const [, paul, quinn] = MAIL_USERS.dashboard;
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let empty: TestWorkspace;
  let solo: TestWorkspace;
  let troubled: TestWorkspace;
  let soloId: string;
  let junkedId: string;
  /** The day junkedId's one score was written: after midnight UTC the chart carries it into the next day. */
  let scoredDay: string;
  let guardedId: string;
  let awayId: string;
  let halvedId: string;
  let keyboard: TestWorkspace;

  const signInAt = (address: string, apiKey: string) => signInWithApiKey(page, address, apiKey);

  async function signIn(workspace: TestWorkspace): Promise<void> {
    await signInAt(base, workspace.apiKey);
  }

  const settled = () => waitUntilDrawn(page);

  async function mailboxOf(workspace: TestWorkspace, id: string): Promise<ApiMailbox> {
    return (await workspace.request({ method: 'GET', url: `/api/mailboxes/${id}` })).json().mailbox as ApiMailbox;
  }

  async function expectNoAxeViolations(state: string): Promise<void> {
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await settled();
      expect(await axeViolations(page), `${state} at ${width} px`).toEqual([]);
    }
    await page.setViewportSize({ width: 1366, height: 900 });
  }

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    empty = await t.createWorkspace('Empty');
    solo = await t.createWorkspace('Solo');
    troubled = await t.createWorkspace('Troubled');
    const db = t.database.db;

    // one mailbox in a pool of one: its last plan got none of its ramp of 2
    soloId = await createMailbox(solo, 'solo@alpha.test');
    // a junked mailbox (6 of its 10 emails found in spam this week, one bounce) and one the guard stopped
    junkedId = await createMailbox(troubled, 'junked@bravo.test');
    guardedId = await createMailbox(troubled, 'guarded@charlie.test');
    // one whose owner answers automatically, one whose volume the health guard halved
    awayId = await createMailbox(troubled, 'away@delta.test');
    halvedId = await createMailbox(troubled, 'halved@echo.test');
    await proveAll(db);
    await db
      .updateTable('mailboxes')
      .set({ auto_reply_at: new Date().toISOString() })
      .where('id', '=', awayId)
      .execute();
    await db.updateTable('mailboxes').set({ volume_factor: 0.5 }).where('id', '=', halvedId).execute();
    const today = new Date().toISOString().slice(0, 10);
    scoredDay = today;
    await db
      .updateTable('mailboxes')
      .set({ ramp_target: 2, plan_limited_by: 'pool_too_small', daily_target: 0, last_plan_day: today })
      .where('id', '=', soloId)
      .execute();
    await db
      .insertInto('daily_stats')
      .values({
        mailbox_id: junkedId,
        workspace_id: troubled.id,
        day: today,
        sent: 10,
        inbox: 4,
        spam: 6,
        bounced: 1,
        reputation: 58,
      })
      .execute();
    await db
      .updateTable('mailboxes')
      .set({
        status: 'error',
        last_error:
          "Warmup stopped: 45% of this mailbox's warmup emails landed in spam over the last 7 days (9 of 20). Check SPF, DKIM and DMARC for charlie.test and whether the domain is on a blocklist, then resume the mailbox.",
      })
      .where('id', '=', guardedId)
      .execute();

    browser = await launchBrowser({ width: 1366, height: 900 });
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('an empty installation: the onboarding checklist, no zeros, no "all healthy"', async () => {
    await signIn(empty);
    await page.getByRole('region', { name: 'Get started' }).waitFor();
    const text = await page.locator('main').innerText();
    expect(text).not.toMatch(/Avg reputation|All mailboxes are healthy|within every threshold/);
    await expectNoAxeViolations('overview, no mailbox');
  });

  it('one mailbox in a pool of one: the list, its page and "Needs attention" give the API reason', async () => {
    await signIn(solo);
    const api = await mailboxOf(solo, soloId);
    expect(api.outlook.limitReason).toBe(
      'The pool carries 0 of the 2 emails a day its ramp wants: connect mailboxes on more domains.',
    );
    const attention = page.locator('.attention-card');
    await expect.poll(() => attention.innerText()).toContain(api.outlook.limitReason!);
    await expectNoAxeViolations('overview, pool of one');

    await page.goto(`${base}/mailboxes`);
    await expect.poll(() => page.locator('.outlook-line').first().innerText()).toBe(api.outlook.limitReason);
    expect(await page.locator('.pagination-info').innerText()).toBe('1–1 of 1 mailbox');
    await expectNoAxeViolations('mailboxes, pool of one');

    await page.goto(`${base}/mailboxes/${soloId}`);
    await expect.poll(() => page.getByTestId('outlook-summary').innerText()).toBe(api.outlook.summary);
    expect(api.outlook.summary).toMatch(/^Next sends from .* UTC, when its send window opens\.$/);
    expect(await page.locator('.outlook-limit').innerText()).toBe(api.outlook.limitReason);
    expect(await page.getByTestId('outlook-readiness').innerText()).toBe(api.outlook.readiness);
    await expectNoAxeViolations('mailbox detail, pool of one');
  });

  it('junked, away, slowed and stopped mailboxes: each threshold the API names', { timeout: 90_000 }, async () => {
    await signIn(troubled);
    const junked = await mailboxOf(troubled, junkedId);
    const guarded = await mailboxOf(troubled, guardedId);
    const away = await mailboxOf(troubled, awayId);
    const halved = await mailboxOf(troubled, halvedId);
    expect(junked.outlook.attention.map((a) => a.kind)).toEqual(['spam_rate', 'bounces']);
    expect(guarded.outlook.attention.map((a) => a.kind)).toEqual(['stopped_by_guard']);
    expect(away.outlook.attention.map((a) => a.kind)).toEqual(['auto_reply']);
    expect(halved.outlook.attention.map((a) => a.kind)).toEqual(['slowed_by_guard']);

    const attention = page.locator('.attention-card');
    await expect.poll(() => attention.locator('li').count()).toBe(5);
    const shown = await attention.innerText();
    for (const item of [
      ...junked.outlook.attention,
      ...guarded.outlook.attention,
      ...away.outlook.attention,
      ...halved.outlook.attention,
    ])
      expect(shown).toContain(item.message);
    expect(shown).not.toMatch(/healthy|within every threshold/);

    // the overview's spam rate is the API's, and it is not called healthy
    const analytics = (await troubled.request({ method: 'GET', url: '/api/stats/analytics?period=7d' })).json()
      .analytics;
    await page.getByRole('radio', { name: '7 days' }).check({ force: true });
    await expect.poll(() => page.locator('.placement .figures').innerText()).toContain(`${analytics.rates.spamRate}%`);
    await expectNoAxeViolations('overview, junked and stopped');

    await page.goto(`${base}/mailboxes/${junkedId}`);
    await page.getByTestId('outlook-summary').waitFor();
    const detail = await page.locator('.outlook').innerText();
    for (const item of junked.outlook.attention) expect(detail).toContain(item.message);
    // a reputation of 58 on a new mailbox is "building up", not a warning colour (the figures load
    // on their own, after the outlook: waited for, as a loaded machine may draw them later)
    await expect.poll(() => page.locator('.stat-value.tone-building').count()).toBeGreaterThan(0);
    await expectNoAxeViolations('mailbox detail, junked');

    await page.goto(`${base}/mailboxes/${guardedId}`);
    await page
      .getByText(/^Warmup (is )?stopped/)
      .first()
      .waitFor();
    expect(await page.locator('main').innerText()).toContain(guarded.outlook.attention[0]!.message);
    await expectNoAxeViolations('mailbox detail, stopped by the guard');

    for (const [mailbox, state] of [
      [away, 'answering automatically'],
      [halved, 'slowed by the guard'],
    ] as const) {
      await page.goto(`${base}/mailboxes/${mailbox.id}`);
      await expect.poll(() => page.getByTestId('outlook-summary').innerText()).toBe(mailbox.outlook.summary);
      expect(await page.locator('.outlook').innerText()).toContain(mailbox.outlook.attention[0]!.message);
      await expectNoAxeViolations(`mailbox detail, ${state}`);
    }
  });

  it('axe finds nothing on the other pages and states, at 1366 and 390 px', { timeout: 90_000 }, async () => {
    await signIn(troubled);
    for (const [path, ready] of [
      ['/templates', 'Templates'],
      ['/templates/new', 'New template'],
      ['/reports', 'Reports'],
      ['/mailboxes/new', 'Add a mailbox'],
      ['/no-such-page', 'This page does not exist'],
    ] as const) {
      await page.goto(`${base}${path}`);
      await page.getByRole('heading', { level: 1, name: ready }).waitFor();
      await expectNoAxeViolations(path);
    }
    // the Reports period selector reflows at 320 px: nothing wider than the screen
    await page.goto(`${base}/reports`);
    await page.setViewportSize({ width: 320, height: 800 });
    await settled();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320);
    await page.setViewportSize({ width: 1366, height: 900 });

    // a failed Connect, shown in place
    await page.goto(`${base}/mailboxes/new`);
    await page.getByRole('radio', { name: 'Other' }).check({ force: true });
    const stack = requireMailStack();
    await page.getByLabel('Email address').fill(paul!.email);
    await page.getByLabel('Password', { exact: true }).fill('wrong-password');
    await page.getByLabel('IMAP host').fill(stack.host);
    await page.getByLabel('IMAP port').fill(String(stack.imapPort));
    await page.getByLabel('IMAP security').selectOption({ label: 'STARTTLS' });
    await page.getByLabel('SMTP host').fill(stack.host);
    await page.getByLabel('SMTP port').fill(String(stack.submissionPort));
    await page.getByLabel('SMTP security').selectOption({ label: 'STARTTLS' });
    await page.getByRole('button', { name: 'Connect mailbox' }).click();
    await page.locator('#add-failure [role="alert"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('#add-failure').innerText()).toContain('Wrong password or user name');
    await expectNoAxeViolations('add mailbox, login refused');

    // the setup page of an installation without accounts, then its API key sign-in
    await page.evaluate(() => sessionStorage.clear());
    await page.goto(base);
    await page.getByRole('heading', { level: 1, name: 'Set up Warmup' }).waitFor();
    await expectNoAxeViolations('first-run setup');
    await chooseApiKeySignIn(page);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await expectNoAxeViolations('sign in');
  });

  it(
    'keyboard only: add a mailbox, pause it, open it, edit a template, the focus never on <body>',
    { timeout: 120_000 },
    async () => {
      const stack = requireMailStack();
      keyboard = await t.createWorkspace('Keyboard');
      const focusLog: string[] = [];
      const focused = () =>
        page.evaluate(() => {
          const e = document.activeElement;
          if (!e || e === document.body) return 'BODY';
          return `${e.tagName}:${e.getAttribute('aria-label') ?? e.textContent?.trim().slice(0, 40) ?? ''}`;
        });
      const expectFocusKept = async (step: string) => {
        const now = await focused();
        focusLog.push(`${step} → ${now}`);
        expect(now, focusLog.join('\n')).not.toBe('BODY');
      };
      /** Tabs forward until the focused element matches, checking the focus at every step. */
      const tabTo = async (matches: (label: string) => boolean, step: string) => {
        for (let i = 0; i < 80; i++) {
          await page.keyboard.press('Tab');
          const now = await focused();
          expect(now, `${step}: Tab reached <body>\n${focusLog.join('\n')}`).not.toBe('BODY');
          if (matches(now)) return;
        }
        throw new Error(`${step}: never reached by Tab\n${focusLog.join('\n')}`);
      };

      await page.goto(base);
      await page.evaluate(() => sessionStorage.clear());
      await page.goto(base);
      await chooseApiKeySignIn(page);
      await page.getByLabel('API key').focus();
      await page.keyboard.type(keyboard.apiKey);
      await page.keyboard.press('Enter');
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await expectFocusKept('signed in');

      // add a mailbox
      await page.goto(`${base}/mailboxes/new`);
      await page.getByRole('heading', { level: 1, name: 'Add a mailbox' }).waitFor();
      await page.getByRole('radio', { name: 'Other' }).focus();
      await page.keyboard.press('Space');
      for (const [label, value] of [
        ['Email address', quinn!.email],
        ['Password', quinn!.password],
        ['IMAP host', stack.host],
        ['IMAP port', String(stack.imapPort)],
        ['SMTP host', stack.host],
        ['SMTP port', String(stack.submissionPort)],
      ] as const) {
        await page.getByLabel(label, { exact: true }).focus();
        await page.keyboard.press('ControlOrMeta+A');
        await page.keyboard.type(value);
      }
      for (const label of ['IMAP security', 'SMTP security']) {
        await page.getByLabel(label).focus();
        await page.getByLabel(label).selectOption({ label: 'STARTTLS' });
      }
      await tabTo((l) => l.includes('Connect mailbox'), 'Connect mailbox');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: quinn!.email }).waitFor({ timeout: 30_000 });
      await expectFocusKept('mailbox added');

      // pause it from its page: the focus stays on the button that changed
      await tabTo((l) => l.includes('Pause warmup'), 'Pause warmup');
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'Resume warmup' }).waitFor();
      await expectFocusKept('paused');
      expect(await focused()).toContain('Resume warmup');

      // open the settings dialog and close it with Escape: the focus returns to its opener
      await tabTo((l) => l.includes('Warmup settings'), 'Warmup settings');
      await page.keyboard.press('Enter');
      await page.getByRole('dialog').waitFor();
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      await expect.poll(focused).toContain('Warmup settings');

      // open its detail from the list
      await page.goto(`${base}/mailboxes`);
      await page.getByRole('heading', { level: 1, name: 'Mailboxes' }).waitFor();
      await tabTo((l) => l.includes(quinn!.email), 'mailbox link');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: quinn!.email }).waitFor();
      await expectFocusKept('detail opened');

      // edit a template
      await page.goto(`${base}/templates`);
      await page.getByRole('heading', { level: 1, name: 'Templates' }).waitFor();
      await settled();
      const firstTemplate = (await page.locator('main table a').first().innerText()).trim();
      await tabTo((l) => l.startsWith('A:') && l.includes(firstTemplate.slice(0, 30)), 'a template');
      await page.keyboard.press('Enter');
      await page.getByLabel('Subject').waitFor();
      await expectFocusKept('editor opened');
      await page.getByLabel('Subject').focus();
      await page.keyboard.press('End');
      await page.keyboard.type(' (edited)');
      await tabTo((l) => l.includes('Save'), 'Save');
      await page.keyboard.press('Enter');
      await page.getByText('All changes saved').waitFor();
      await expectFocusKept('template saved');
    },
  );

  it('edits the servers of a mailbox, asking for the password again before a new host or port', async () => {
    const stack = requireMailStack();
    const { mailboxes } = (await keyboard.request({ method: 'GET', url: '/api/mailboxes' })).json() as {
      mailboxes: Array<{ id: string; smtp: { port: number; secure: boolean } }>;
    };
    const mailbox = mailboxes[0]!;
    await page.goto(`${base}/mailboxes/${mailbox.id}`);
    await page.getByRole('button', { name: 'Warmup settings' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Mail servers').click();
    await expectNoAxeViolations('settings dialog with the mail servers');
    await dialog.getByLabel('SMTP security').selectOption({ label: 'SSL/TLS' });
    await dialog.getByLabel('SMTP port').fill(String(stack.submissionsPort));
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => dialog.getByLabel(/^Password/).getAttribute('aria-invalid')).toBe('true');
    // nothing was sent: the stored settings are unchanged
    const unchanged = (await keyboard.request({ method: 'GET', url: `/api/mailboxes/${mailbox.id}` })).json().mailbox;
    expect(unchanged.smtp).toMatchObject({ port: mailbox.smtp.port, secure: false });

    await dialog.getByLabel(/^Password/).fill(quinn!.password);
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    await dialog.waitFor({ state: 'detached', timeout: 30_000 });
    const moved = (await keyboard.request({ method: 'GET', url: `/api/mailboxes/${mailbox.id}` })).json().mailbox;
    expect(moved.smtp).toMatchObject({ port: stack.submissionsPort, secure: true });
    await expect.poll(() => page.locator('main').innerText()).toContain(`${stack.host}:${stack.submissionsPort}`);
  });

  it("templates open on the browser's language; the editor shows every body error, each once", async () => {
    await signIn(troubled);
    await page.goto(`${base}/templates`);
    await page.getByRole('heading', { level: 1, name: 'Templates' }).waitFor();
    await settled();
    expect(await page.getByLabel('Language').inputValue()).toBe('en'); // the browser runs in en-GB
    const languages = await page.locator('td[data-label="Language"]').allInnerTexts();
    expect(languages.length).toBeGreaterThan(0);
    expect(new Set(languages)).toEqual(new Set(['English']));

    await page.goto(`${base}/templates/new`);
    await page.getByLabel('Name', { exact: true }).fill('Broken');
    await page.getByLabel('Subject', { exact: true }).fill('Hello');
    await page.getByLabel('Body', { exact: true }).fill('Hi {nope}, and {also_unknown}');
    const problem = page.locator('.preview-card [role="alert"]');
    await expect.poll(() => problem.innerText()).toContain('also_unknown');
    const shown = await problem.innerText();
    expect(shown.match(/unknown variable "nope"/g)).toHaveLength(1);
    expect(shown.match(/unknown variable "also_unknown"/g)).toHaveLength(1);
    await page.getByRole('button', { name: 'Create template' }).click();
    const bodyError = page.locator('.field.has-error .field-error');
    await expect.poll(() => bodyError.innerText()).toMatch(/"nope"[\s\S]*"also_unknown"/);
    await expectNoAxeViolations('template editor with body errors');
  });

  it('paging by keyboard: the focus stays on Next or Previous when it reaches the last or first page', async () => {
    await signIn(troubled);
    await page.goto(`${base}/templates`);
    await page.getByRole('heading', { level: 1, name: 'Templates' }).waitFor();
    await settled();
    const info = page.locator('.pagination-info');
    const total = Number(/of (\d+)/.exec(await info.innerText())![1]);
    expect(total, 'two pages of templates').toBeGreaterThan(20);
    const pages = page.getByRole('navigation', { name: 'templates pages' });
    const activeLabel = () => page.evaluate(() => document.activeElement?.textContent?.trim() ?? 'BODY');

    await pages.getByRole('button', { name: 'Next' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => info.innerText()).toBe(`21–${total} of ${total} templates`);
    await settled();
    expect(await activeLabel()).toBe('Next');
    expect(await pages.getByRole('button', { name: 'Next' }).getAttribute('aria-disabled')).toBe('true');
    await page.keyboard.press('Enter'); // the last page: Next does nothing
    await page.keyboard.press('Shift+Tab');
    expect(await activeLabel()).toBe('Previous');
    await page.keyboard.press('Enter');
    await expect.poll(() => info.innerText()).toBe(`1–20 of ${total} templates`);
    await settled();
    expect(await activeLabel()).toBe('Previous');
    expect(await pages.getByRole('button', { name: 'Previous' }).getAttribute('aria-disabled')).toBe('true');
    await expectNoAxeViolations('templates, first page');
  });

  it('a chart of a single day draws it, its figures open by keyboard, its colours have a legend', async () => {
    await signIn(troubled);
    await page.goto(`${base}/mailboxes/${junkedId}`);
    await page.getByTestId('outlook-summary').waitFor();
    await settled();
    const reputation = page.locator('.card', { has: page.getByRole('heading', { name: 'Reputation', exact: true }) });
    // the one scored day is a dot in the series colour (#3b5bdb), not an empty frame
    const dotPixels = await reputation.locator('.chart-canvas canvas').evaluate((canvas: HTMLCanvasElement) => {
      const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      let count = 0;
      for (let i = 0; i < data.length; i += 4)
        if (Math.abs(data[i]! - 0x3b) < 12 && Math.abs(data[i + 1]! - 0x5b) < 12 && Math.abs(data[i + 2]! - 0xdb) < 12)
          count++;
      return count;
    });
    expect(dotPixels).toBeGreaterThan(10);
    await expect.poll(() => reputation.locator('.reputation-legend').innerText()).toContain('50–79 building up');

    // the hover card's figures, by keyboard: Tab to "Show the figures", open it, read the day
    const summary = reputation.getByText('Show the figures');
    await page.locator('.outlook').click({ position: { x: 1, y: 1 } }); // a place before the charts
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press('Tab');
      if (await summary.evaluate((element) => element === document.activeElement)) break;
    }
    expect(await summary.evaluate((element) => element === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    const table = reputation.locator('.chart-data table');
    await table.waitFor();
    const scored = await table
      .locator('tbody tr')
      .filter({ hasText: formatDay(scoredDay) })
      .allInnerTexts();
    expect(scored).toHaveLength(1);
    expect(scored[0]).toContain('58');
    await expectNoAxeViolations('mailbox detail, figures of a chart open');

    // the list's coloured scores carry the same legend
    await page.goto(`${base}/mailboxes`);
    await expect.poll(() => page.locator('.reputation-legend').innerText()).toContain('under 50 at risk');
  });

  it('the focus ring stands out at least 3:1 against what surrounds it', async () => {
    await signIn(troubled);
    await page.goto(`${base}/mailboxes`);
    await page.getByRole('heading', { level: 1, name: 'Mailboxes' }).waitFor();
    await settled();
    const ratios: string[] = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      const measured = await page.evaluate(async () => {
        const element = document.activeElement as HTMLElement | null;
        if (!element || element === document.body) return null;
        // the ring as it ends up, not halfway through its transition
        await Promise.all(element.getAnimations().map((animation) => animation.finished));
        const rgb = (color: string) => (color.match(/[\d.]+/g) ?? []).map(Number);
        const luminance = ([r, g, b]: number[]) =>
          [r!, g!, b!]
            .map((v) => v / 255)
            .map((v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
            .reduce((sum, v, k) => sum + v * [0.2126, 0.7152, 0.0722][k]!, 0);
        const style = getComputedStyle(element);
        // the ring: an outline, or (text fields) a box-shadow
        const ring =
          style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0
            ? { color: style.outlineColor, width: parseFloat(style.outlineWidth) }
            : { color: /rgba?\([^)]*\)/.exec(style.boxShadow)?.[0] ?? '', width: 2 };
        // what it is drawn on: the first ancestor with a background of its own
        let behind = 'rgb(255, 255, 255)';
        for (let e: HTMLElement | null = element.parentElement; e; e = e.parentElement) {
          const background = getComputedStyle(e).backgroundColor;
          const [, , , alpha = 1] = rgb(background);
          if (alpha > 0) {
            behind = background;
            break;
          }
        }
        const [lighter, darker] = [luminance(rgb(ring.color)), luminance(rgb(behind))].sort((a, b) => b - a);
        return {
          what: `${element.tagName}:${element.textContent?.trim().slice(0, 30)}`,
          ring: ring.color,
          alpha: rgb(ring.color)[3] ?? 1,
          width: ring.width,
          ratio: (lighter! + 0.05) / (darker! + 0.05),
        };
      });
      if (!measured) continue;
      ratios.push(`${measured.what}: ${measured.ratio.toFixed(2)} (${measured.ring}, ${measured.width}px)`);
      expect(measured.alpha, ratios.join('\n')).toBe(1);
      expect(measured.width, ratios.join('\n')).toBeGreaterThanOrEqual(2);
      expect(measured.ratio, ratios.join('\n')).toBeGreaterThanOrEqual(3);
    }
    expect(ratios.length).toBeGreaterThan(5);
  });

  /**
   * Asks the API to add a mailbox with these servers, then does the same through the form of the
   * dashboard at `address`: the form's headline and fixes are the API's failures, word for word.
   */
  async function expectFormSaysWhatApiSays(
    address: string,
    workspace: TestWorkspace,
    user: { email: string; password: string },
    imap: { host: string; port: number; secure: boolean },
    smtp: { host: string; port: number; secure: boolean },
    problems: Array<[side: 'imap' | 'smtp', problem: string]>,
  ): Promise<void> {
    const body = { email: user.email, password: user.password, provider: 'custom', connectionType: 'imap', imap, smtp };
    const answer = await workspace.request({ method: 'POST', url: '/api/mailboxes', payload: body });
    expect(answer.statusCode, answer.body).toBe(422);
    const failures = answer.json().failures as Array<{ side: string; problem: string; title: string; fix: string }>;
    expect(failures.map((f) => [f.side, f.problem])).toEqual(problems);

    await page.goto(`${address}/mailboxes/new`);
    await page.getByRole('radio', { name: 'Other' }).check({ force: true });
    await page.getByLabel('Email address').fill(user.email);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    for (const [label, server] of [
      ['IMAP', imap],
      ['SMTP', smtp],
    ] as const) {
      await page.getByLabel(`${label} host`).fill(server.host);
      // the security first: choosing it moves an untouched port to its usual one
      await page.getByLabel(`${label} security`).selectOption({ label: server.secure ? 'SSL/TLS' : 'STARTTLS' });
      await page.getByLabel(`${label} port`).fill(String(server.port));
    }
    // by keyboard: after the failure the focus is still on the button that was pressed
    await page.getByRole('button', { name: 'Connect mailbox' }).focus();
    await page.keyboard.press('Enter');
    const alert = page.locator('#add-failure [role="alert"]');
    await alert.waitFor({ timeout: 30_000 });
    expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Connect mailbox');
    const shown = await alert.innerText();
    const headline =
      failures.length > 1
        ? failures[0]!.title.replace(/^(IMAP|SMTP) server /, 'IMAP and SMTP servers ')
        : failures[0]!.title;
    expect(shown.split('\n')[0]).toBe(headline);
    for (const failure of failures) expect(shown).toContain(failure.fix);
    expect(shown).not.toMatch(
      /refused the login|SSL routines|wrong version number|self-signed certificate|DEPTH_ZERO|ETIMEDOUT|ECONNREFUSED/,
    );
    await expectNoAxeViolations(`add mailbox, ${problems.map(([, problem]) => problem).join(' and ')}`);
  }

  it('each connection problem is the headline with its fix, as the API says it', { timeout: 180_000 }, async () => {
    const stack = requireMailStack();
    const closed = await closedPort();
    const at = (port: number, secure: boolean) => ({ host: stack.host, port, secure });

    // with the stack's certificate trusted: a wrong password, SSL/TLS on the STARTTLS ports
    await signIn(troubled);
    await expectFormSaysWhatApiSays(
      base,
      troubled,
      { email: paul!.email, password: 'wrong-password' },
      at(stack.imapPort, false),
      at(stack.submissionPort, false),
      [
        ['imap', 'wrong_password'],
        ['smtp', 'wrong_password'],
      ],
    );
    await expectFormSaysWhatApiSays(base, troubled, paul!, at(stack.imapPort, true), at(stack.submissionPort, true), [
      ['imap', 'tls_mode_mismatch'],
      ['smtp', 'tls_mode_mismatch'],
    ]);
    // an operator who allowed the stack's host but did not trust its self-signed certificate
    const untrusting = await createTestApp({ mailPolicy: { allowedHosts: [stack.host], plaintextHosts: [] } });
    try {
      const address = await untrusting.app.listen({ port: 0, host: '127.0.0.1' });
      await signInAt(address, untrusting.workspace.apiKey);
      await expectFormSaysWhatApiSays(
        address,
        untrusting.workspace,
        paul!,
        at(stack.imapPort, false),
        at(stack.submissionPort, false),
        [
          ['imap', 'untrusted_certificate'],
          ['smtp', 'untrusted_certificate'],
        ],
      );
      await expectFormSaysWhatApiSays(address, untrusting.workspace, paul!, at(closed, false), at(closed, false), [
        ['imap', 'host_unreachable'],
        ['smtp', 'host_unreachable'],
      ]);
    } finally {
      await untrusting.close();
    }

    // a provider of its own: its IMAP refuses casey's account password with the answer Yahoo
    // gives (WebLoginRequired), and greets dana but then waits on a back end that never answers
    // (the login check's wait runs out, shortened here to 2 s); SMTP takes both
    const provider = await startPrivateMailStack('truth-provider', [APP_PASSWORD_USER, SLOW_USER]);
    const backEnd = await silentServer();
    const strict = await createTestApp({ mailPolicy: stackMailPolicy(provider), verifyTimeoutMs: 2_000 });
    try {
      const users = join(provider.dir, 'etc/users');
      writeFileSync(
        users,
        readFileSync(users, 'utf8')
          .replace(/^(casey@.*)::$/m, '$1::nologin reason=WebLoginRequired')
          .replace(/^(dana@.*)::$/m, `$1::proxy host=127.0.0.1 port=${backEnd.port}`),
      );
      const address = await strict.app.listen({ port: 0, host: '127.0.0.1' });
      await signInAt(address, strict.workspace.apiKey);
      const servers = [
        { host: provider.host, port: provider.imapPort, secure: false },
        { host: provider.host, port: provider.submissionPort, secure: false },
      ] as const;
      await expectFormSaysWhatApiSays(address, strict.workspace, APP_PASSWORD_USER, ...servers, [
        ['imap', 'app_password_required'],
      ]);
      await expectFormSaysWhatApiSays(address, strict.workspace, SLOW_USER, ...servers, [['imap', 'timeout']]);
    } finally {
      await strict.close();
      await backEnd.close();
      await provider.stop();
    }
  });
});
