// The web dashboard, served by the app itself: the bundle and its fallback routes over HTTP, then
// the real thing in headless Chromium against the real app and the real mail stack.
//
// Without /usr/bin/chromium the browser suite is skipped with one line, except under CI
// (CI=true), where launching the browser fails the run.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { incrementDaily, recordInteraction } from '../../src/interactions/interactions.repository.js';
import { SAMPLE_VALUES } from '../../src/templates/render.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { getMailStack, requireMailStack } from '../mailstack/use-mail-stack.js';
import { MAIL_USERS } from '../mailstack/users.js';
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
if (!runBrowser)
  console.warn(`dashboard browser tests skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

describe('dashboard serving', () => {
  let t: TestApp;

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  it('serves the dashboard page at / under a CSP without inline scripts', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['cache-control']).toBe('no-cache');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).toMatch(/default-src 'self'/);
    expect(response.body).toMatch(/<script type="module" crossorigin src="\/assets\/[^"]+\.js"><\/script>/);
    expect(response.body).not.toMatch(/<script>|<script type="module">/);
    expect(response.body).not.toMatch(/https?:\/\//);
  });

  it('answers every page path a browser asks for with the dashboard, so deep links load', async () => {
    for (const url of ['/mailboxes', '/mailboxes/mbx_123', '/templates/new', '/reports?x=1', '/no-such-page']) {
      const response = await t.app.inject({
        method: 'GET',
        url,
        headers: { accept: 'text/html,application/xhtml+xml' },
      });
      expect(response.statusCode, url).toBe(200);
      expect(response.body, url).toContain('<div id="app"></div>');
    }
  });

  it('serves the bundle files with a long cache, and a missing file as a problem+json 404', async () => {
    const page = (await t.app.inject({ method: 'GET', url: '/' })).body;
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page)?.[1];
    expect(script).toBeDefined();
    const asset = await t.app.inject({ method: 'GET', url: script! });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');

    const missing = await t.app.inject({ method: 'GET', url: '/assets/nothing.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(missing.json()).toMatchObject({ code: 'not_found' });

    const traversal = await t.app.inject({ method: 'GET', url: '/..%2f..%2fpackage.json' });
    expect(traversal.statusCode).toBe(404);
  });

  it('leaves the API and its documentation alone', async () => {
    const unknownWithoutKey = await t.app.inject({
      method: 'GET',
      url: '/api/nothing-here',
      headers: { accept: 'text/html' },
    });
    expect(unknownWithoutKey.statusCode).toBe(401);
    expect(unknownWithoutKey.headers['content-type']).toMatch(/^application\/problem\+json/);

    const unknown = await t.workspace.request({
      method: 'GET',
      url: '/api/nothing-here',
      headers: { accept: 'text/html' },
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'not_found' });

    const docs = await t.app.inject({ method: 'GET', url: '/docs/', headers: { accept: 'text/html' } });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('swagger');

    const health = await t.app.inject({ method: 'GET', url: '/health' });
    expect(health.json()).toEqual({ status: 'ok' });
  });
});

describe.runIf(runBrowser && getMailStack() !== null)('dashboard in Chromium', () => {
  const stack = runBrowser && getMailStack() !== null ? requireMailStack() : undefined;
  const [olive] = MAIL_USERS.dashboard;
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  const foreignRequests: string[] = [];
  const pageErrors: string[] = [];

  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });
  const status = () => page.locator('.page-header .badge-status');
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

  async function signIn(): Promise<void> {
    await chooseApiKeySignIn(page);
    await page.getByLabel('API key').fill(t.workspace.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
  }

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser({ width: 1366, height: 900 });
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(base) && !url.startsWith('data:') && !url.startsWith('blob:')) foreignRequests.push(url);
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      // A CSP violation or a failed script shows up here; an API error answer (a 4xx the test asks for) does not count.
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) pageErrors.push(message.text());
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signs in with an API key, and says so when the key is wrong', async () => {
    await page.goto(base);
    await chooseApiKeySignIn(page);
    await heading('Sign in').waitFor();
    await page.getByLabel('API key').fill('not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That API key is not valid');
    expect(await page.getByLabel('API key').getAttribute('aria-invalid')).toBe('true');

    await signIn();
    await heading('Overview').waitFor();
    expect(await page.evaluate('sessionStorage.getItem("warmup.apiKey")')).toBe(t.workspace.apiKey);
    expect(await page.locator('.workspace-name').textContent()).toBe('test');
  });

  it(
    'adds a mailbox against the real mail stack, showing field and login errors in place',
    { timeout: 60_000 },
    async () => {
      await nav('Mailboxes').click();
      await heading('Mailboxes').waitFor();
      await page.getByText('No mailboxes yet').waitFor();
      await page.getByRole('link', { name: 'Add mailbox' }).first().click();
      await heading('Add a mailbox').waitFor();

      // A provider that needs an app password says so and links to the provider's instructions.
      await page.getByRole('radio', { name: 'Gmail' }).check({ force: true });
      await page.getByText('needs an app password').waitFor();
      expect(await page.getByRole('link', { name: /How to create an app password/ }).getAttribute('href')).toMatch(
        /^https:\/\/support\.google\.com\//,
      );
      await page.getByLabel('App password').waitFor();

      await page.getByRole('radio', { name: 'Other' }).check({ force: true });
      await page.getByLabel('IMAP host').fill(stack!.host);
      await page.getByLabel('IMAP port').fill(String(stack!.imapPort));
      await page.getByLabel('IMAP security').selectOption({ label: 'STARTTLS' });
      await page.getByLabel('SMTP host').fill(stack!.host);
      await page.getByLabel('SMTP security').selectOption({ label: 'STARTTLS' });
      await page.getByLabel('SMTP port').fill(String(stack!.submissionPort));

      // 400: the server's field error appears next to its field.
      await page.getByLabel('Email address').fill('not-an-address');
      await page.getByLabel('Password', { exact: true }).fill('wrong-password');
      await page.getByRole('button', { name: 'Connect mailbox' }).click();
      await expect.poll(() => page.getByLabel('Email address').getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('.field.has-error .field-error').textContent()).toMatch(/email/);

      // 422: the problem is the headline, with its fix; no OpenSSL text; nothing is stored.
      // SSL/TLS chosen for IMAP's STARTTLS port, right password:
      await page.getByLabel('Email address').fill(olive!.email);
      await page.getByLabel('Password', { exact: true }).fill(olive!.password);
      await page.getByLabel('IMAP security').selectOption({ label: 'SSL/TLS' });
      await page.getByRole('button', { name: 'Connect mailbox' }).click();
      const refusal = page.locator('#add-failure [role="alert"]');
      await refusal.waitFor({ timeout: 30_000 });
      const mismatch = await refusal.textContent();
      expect(mismatch).toContain('SSL/TLS does not match the port');
      expect(mismatch).toContain('turn SSL/TLS off to use STARTTLS');
      expect(mismatch).not.toMatch(/SSL routines|wrong version number|refused the login/);
      // a failed Connect leaves the focus on the form, never on the page body
      expect(await page.evaluate(() => document.activeElement?.tagName)).not.toBe('BODY');

      // a wrong password, STARTTLS again:
      await page.getByLabel('IMAP security').selectOption({ label: 'STARTTLS' });
      await page.getByLabel('Password', { exact: true }).fill('wrong-password');
      await page.getByRole('button', { name: 'Connect mailbox' }).click();
      await expect.poll(() => refusal.textContent(), { timeout: 30_000 }).toContain('Wrong password or user name');
      expect(await refusal.textContent()).toMatch(/Check the user name and password/);
      expect((await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json()).toMatchObject({
        pagination: { total: 0 },
      });

      await page.getByLabel('Password', { exact: true }).fill(olive!.password);
      await page.getByRole('button', { name: 'Connect mailbox' }).click();
      await heading(olive!.email).waitFor({ timeout: 30_000 });
      expect(page.url()).toMatch(/\/mailboxes\/[^/]+$/);
      expect(await status().textContent()).toBe('Warming up');
      const stored = (await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json() as {
        mailboxes: Array<{ email: string; imap: { port: number } }>;
      };
      expect(stored.mailboxes).toHaveLength(1);
      expect(stored.mailboxes[0]).toMatchObject({
        email: olive!.email,
        imap: { port: stack!.imapPort },
      });
    },
  );

  it('pauses and resumes the warmup (resume logs in again)', { timeout: 60_000 }, async () => {
    await page.getByRole('button', { name: 'Pause warmup' }).click();
    await expect.poll(() => status().textContent()).toBe('Paused');
    await page
      .getByRole('status')
      .filter({ hasText: `Warmup paused for ${olive!.email}` })
      .waitFor();

    await page.getByRole('button', { name: 'Resume warmup' }).click();
    await expect.poll(() => status().textContent(), { timeout: 30_000 }).toBe('Warming up');
    const [mailbox] = (
      (await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json() as {
        mailboxes: Array<{ status: string }>;
      }
    ).mailboxes;
    expect(mailbox?.status).toBe('active');
  });

  it('edits the warmup settings in a dialog, with the server field errors in it', async () => {
    await page.getByRole('button', { name: 'Warmup settings' }).click();
    const dialog = page.getByRole('dialog', { name: 'Warmup settings' });
    await dialog.waitFor();
    await dialog.getByLabel('Daily limit').fill('9999');
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => dialog.getByLabel('Daily limit').getAttribute('aria-invalid')).toBe('true');
    expect(await dialog.locator('.field-error').first().textContent()).toMatch(/500/);

    await dialog.getByLabel('Daily limit').fill('25');
    await dialog.getByRole('button', { name: 'Save settings' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('up to 25').waitFor();
  });

  it('shows the mailbox charts and its activity, filtered by type', async () => {
    const [mailbox] = (
      (await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json() as {
        mailboxes: Array<{ id: string }>;
      }
    ).mailboxes;
    await recordInteraction(t.database.db, {
      mailboxId: mailbox!.id,
      type: 'sent',
      senderMailboxId: mailbox!.id,
      counterpartMailboxId: null,
      counterpartEmail: 'quinn@quebec.test',
      subject: 'Notes from the planning call',
      messageId: '<dashboard-test-1@oscar.test>',
      threadId: null,
      occurredAt: new Date(),
    });
    await page.reload();
    await heading(olive!.email).waitFor();
    await expect.poll(() => page.locator('.chart-canvas canvas').count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator('.stat', { hasText: 'Sent today' }).locator('.stat-value').textContent()).toMatch(
      /^1 \/ /,
    );

    const activity = page.getByRole('region', { name: 'Activity' });
    await activity.getByText('Notes from the planning call').waitFor();
    await activity.getByLabel('Activity type').selectOption({ label: 'Received' });
    await activity.getByText('Nothing of this type yet').waitFor();
    await activity.getByLabel('Activity type').selectOption({ label: 'Sent' });
    await activity.getByText('Notes from the planning call').waitFor();
  });

  it('tells the owner when the mailbox receives no warmup mail because it answers automatically', async () => {
    await t.database.db.updateTable('mailboxes').set({ auto_reply_at: new Date().toISOString() }).execute();
    await page.reload();
    await heading(olive!.email).waitFor();
    const notice = page.locator('.alert', { hasText: 'Receives no warmup mail while it answers automatically' });
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/answers warmup mail automatically .* receives no warmup mail until /);
    await t.database.db.updateTable('mailboxes').set({ auto_reply_at: null }).execute();
    await page.reload();
    await heading(olive!.email).waitFor();
    expect(await notice.count()).toBe(0);
  });

  it('shows the overview figures and charts', async () => {
    // a Gmail peer took two of the mailbox's emails from a tab to Primary today, counted as the reader counts it
    const [mailbox] = (
      (await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json() as {
        mailboxes: Array<{ id: string }>;
      }
    ).mailboxes;
    const today = new Date().toISOString().slice(0, 10);
    for (let i = 0; i < 2; i++) await incrementDaily(t.database.db, mailbox!.id, today, 'promoted_to_primary');
    await nav('Overview').click();
    await heading('Overview').waitFor();
    await expect
      .poll(() => page.locator('.stat', { hasText: 'Mailboxes' }).first().locator('.stat-value').textContent())
      .toBe('1');
    const movedToPrimary = page.locator('.placement .figures div', { hasText: 'Moved to Primary (Gmail)' });
    await expect.poll(() => movedToPrimary.locator('dd').textContent()).toBe('2');
    await expect.poll(() => page.locator('.chart-canvas canvas').count()).toBe(2);
    await page.getByRole('radio', { name: '7 days' }).check({ force: true });
    await page.getByText('last 7 days').first().waitFor();
    // "Needs attention" is the API's own list, or says that nothing crosses a threshold
    const { mailboxes } = (await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json() as {
      mailboxes: Array<{ outlook: { attention: Array<{ message: string }> } }>;
    };
    const messages = mailboxes.flatMap((m) => m.outlook.attention.map((a) => a.message));
    const card = page.locator('.attention-card');
    if (messages.length === 0) await card.getByText('Your mailbox is within every threshold').waitFor();
    for (const message of messages) await expect.poll(() => card.innerText()).toContain(message);
  });

  it('creates a template with a live preview of its variables and spintax', { timeout: 60_000 }, async () => {
    await nav('Templates').click();
    await heading('Templates').waitFor();
    await page.getByRole('link', { name: 'New template' }).click();
    await heading('New template').waitFor();

    await page.getByLabel('Name', { exact: true }).fill('Planning check-in');
    await page.getByLabel('Subject', { exact: true }).fill('{Quick|Short} question about {topic}');
    await page
      .getByLabel('Body', { exact: true })
      .fill('{Hi|Hello|Hey} {recipient_first_name},\n\ndo you have the notes?');
    const preview = page.getByTestId('preview-body');
    await expect
      .poll(() => preview.textContent())
      .toMatch(new RegExp(`^(Hi|Hello|Hey) ${SAMPLE_VALUES.recipient_first_name},`));
    expect(await page.getByTestId('preview-subject').textContent()).toMatch(
      new RegExp(`^(Quick|Short) question about ${SAMPLE_VALUES.topic}$`),
    );
    const chips = page.getByRole('list', { name: 'Variables used' });
    expect(await chips.textContent()).toContain('{recipient_first_name}sample');
    expect(await chips.textContent()).toContain('{topic}sample');

    // Shuffle picks another seed: the same text, another variation.
    const subtitle = page.locator('.preview-card .card-subtitle');
    expect(await subtitle.textContent()).toBe('2 spintax groups · variation 1');
    await page.getByRole('button', { name: 'Shuffle' }).click();
    await expect.poll(() => subtitle.textContent()).not.toBe('2 spintax groups · variation 1');

    // A markup error is shown in the preview, not thrown.
    await page.getByLabel('Body', { exact: true }).fill('Hi {recipient_first_name');
    await expect
      .poll(() => page.locator('.preview-card [role="alert"]').textContent())
      .toContain('The template has a problem');
    await page
      .getByLabel('Body', { exact: true })
      .fill('{Hi|Hello|Hey} {recipient_first_name},\n\ndo you have the notes?');
    await preview.waitFor();

    await page.getByRole('button', { name: 'Create template' }).click();
    await heading('Planning check-in').waitFor();
    expect(page.url()).toMatch(/\/templates\/[^/]+$/);
    const id = decodeURIComponent(page.url().split('/').pop()!);
    const saved = (await t.workspace.request({ method: 'GET', url: `/api/templates/${id}` })).json() as {
      template: { subject: string; variables: string[] };
    };
    expect(saved.template).toMatchObject({
      subject: '{Quick|Short} question about {topic}',
      variables: ['recipient_first_name', 'topic'],
    });
  });

  it('duplicates, exports, imports and deletes templates', { timeout: 60_000 }, async () => {
    const count = async () =>
      (
        (await t.workspace.request({ method: 'GET', url: '/api/templates?limit=1' })).json() as {
          pagination: { total: number };
        }
      ).pagination.total;
    const before = await count();

    await page.getByRole('button', { name: 'Duplicate' }).click();
    await heading('Planning check-in (copy)').waitFor();
    expect(await count()).toBe(before + 1);

    await nav('Templates').click();
    await page.getByLabel('Search templates').fill('Planning check-in');
    await expect.poll(() => page.locator('.templates-table tbody tr').count()).toBe(2);

    const [exported] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export' }).click(),
    ]);
    const file = (await exported.path())!;
    const document = JSON.parse(readFileSync(file, 'utf8')) as { version: number; templates: Array<{ name: string }> };
    expect(document.version).toBe(1);
    expect(document.templates.map((item) => item.name)).toContain('Planning check-in (copy)');

    await page.getByTestId('import-file').setInputFiles(file);
    await page
      .getByRole('status')
      .filter({ hasText: `Imported ${document.templates.length} templates` })
      .waitFor();
    expect(await count()).toBe(before + 1 + document.templates.length);

    await page.getByTestId('import-file').setInputFiles({
      name: 'broken.json',
      mimeType: 'application/json',
      buffer: Buffer.from('{"templates": [{"name": ""}]}'),
    });
    await page.getByRole('alert').filter({ hasText: 'Import failed' }).waitFor();
    expect(await page.getByRole('alert').filter({ hasText: 'Import failed' }).textContent()).toContain(
      'Nothing was imported',
    );

    await page.getByRole('button', { name: 'Delete Planning check-in (copy)' }).first().click();
    await page
      .getByRole('dialog', { name: 'Delete this template?' })
      .getByRole('button', { name: 'Delete template' })
      .click();
    await page.getByRole('status').filter({ hasText: 'Planning check-in (copy) was deleted' }).waitFor();
    expect(await count()).toBe(before + document.templates.length);
  });

  it('says when a template or mailbox does not exist, and when a search finds nothing', async () => {
    await page.goto(`${base}/templates/tpl_0000000000000000000000`);
    await page.getByRole('heading', { name: 'This template does not exist' }).waitFor();
    await page.getByRole('link', { name: 'Back to templates' }).click();
    await heading('Templates').waitFor();
    await page.getByLabel('Search templates').fill('no template is called this');
    await page.getByRole('heading', { name: 'No template matches' }).waitFor();
    expect(await page.locator('.templates-table').count()).toBe(0);

    await page.goto(`${base}/mailboxes/mbx_0000000000000000000000`);
    await page.getByRole('heading', { name: 'This mailbox does not exist' }).waitFor();
    await page.getByRole('link', { name: 'Back to mailboxes' }).click();
    await heading('Mailboxes').waitFor();
    await page.getByLabel('Search mailboxes').fill('nobody@nowhere.invalid');
    await page.getByRole('heading', { name: 'No mailbox matches' }).waitFor();
  });

  it('downloads a statistics export with the bearer key', async () => {
    await nav('Reports').click();
    await heading('Reports').waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^warmup-stats-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = readFileSync((await download.path())!, 'utf8').split(/\r?\n/);
    expect(csv[0]).toBe(
      'date,mailboxId,email,sent,received,inbox,spam,rescued,opened,replied,reputation,promotedToPrimary,state',
    );
    expect(csv.some((line) => line.includes(olive!.email))).toBe(true);

    const [pdf] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download PDF' }).click(),
    ]);
    expect(
      readFileSync((await pdf.path())!)
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');

    await page.locator('.summary-table').getByText(olive!.email).waitFor();
  });

  it('returns to sign-in when the key stops working, and signs out', async () => {
    await page.evaluate('sessionStorage.setItem("warmup.apiKey", "revoked-key")');
    await nav('Mailboxes').click();
    await heading('Sign in').waitFor();
    await page.getByText('no longer accepted').waitFor();
    expect(await page.evaluate('sessionStorage.getItem("warmup.apiKey")')).toBeNull();

    // Signing in again returns to the page that was open.
    await signIn();
    await heading('Mailboxes').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await heading('Sign in').waitFor();
    expect(await page.evaluate('sessionStorage.getItem("warmup.apiKey")')).toBeNull();
    await signIn();
  });

  it('deletes a mailbox only after confirmation', async () => {
    await nav('Mailboxes').click();
    const remove = page.getByRole('button', { name: `Delete ${olive!.email}` });
    await remove.click();
    const dialog = page.getByRole('dialog', { name: 'Delete this mailbox?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json()).toMatchObject({
      pagination: { total: 1 },
    });

    await remove.click();
    await dialog.getByRole('button', { name: 'Delete mailbox' }).click();
    await page.getByText('No mailboxes yet').waitFor();
    expect((await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json()).toMatchObject({
      pagination: { total: 0 },
    });
  });

  it('fits a phone: the navigation folds into a menu', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const menu = page.getByRole('button', { name: 'Open menu' });
    await menu.waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(false);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await menu.click();
    await nav('Templates').click();
    await heading('Templates').waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(false);
    await page.setViewportSize({ width: 1366, height: 900 });
  });

  it('loaded nothing from another origin and logged no error', () => {
    expect(foreignRequests).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});

describe.runIf(runBrowser && getMailStack() !== null)('dashboard in a browser in New York', () => {
  const stack = runBrowser && getMailStack() !== null ? requireMailStack() : undefined;
  const paul = MAIL_USERS.dashboard[1];
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;

  beforeAll(async () => {
    ensureDashboardBuilt();
    t = await createTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser({ timezoneId: 'America/New_York' });
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('proposes the browser’s time zone for a new mailbox, and the mailbox keeps it', { timeout: 60_000 }, async () => {
    await page.goto(base);
    await chooseApiKeySignIn(page);
    await page.getByLabel('API key').fill(t.workspace.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Mailboxes', exact: true }).click();
    await page.getByRole('link', { name: 'Add mailbox' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Add a mailbox' }).waitFor();

    expect(await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')).toBe('America/New_York');
    expect(await page.getByLabel('Time zone').inputValue()).toBe('America/New_York');

    await page.getByRole('radio', { name: 'Other' }).check({ force: true });
    await page.getByLabel('IMAP host').fill(stack!.host);
    await page.getByLabel('IMAP port').fill(String(stack!.imapPort));
    await page.getByLabel('IMAP security').selectOption({ label: 'STARTTLS' });
    await page.getByLabel('SMTP host').fill(stack!.host);
    await page.getByLabel('SMTP security').selectOption({ label: 'STARTTLS' });
    await page.getByLabel('SMTP port').fill(String(stack!.submissionPort));
    await page.getByLabel('Email address').fill(paul.email);
    await page.getByLabel('Password', { exact: true }).fill(paul.password);
    await page.getByRole('button', { name: 'Connect mailbox' }).click();
    await page.getByRole('heading', { level: 1, name: paul.email }).waitFor({ timeout: 30_000 });

    const stored = (await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json() as {
      mailboxes: Array<{ email: string; warmup: { timezone: string } }>;
    };
    expect(stored.mailboxes).toMatchObject([{ email: paul.email, warmup: { timezone: 'America/New_York' } }]);
  });
});
