// `npm run screenshots`: seeds demo data into a throw-away database, serves the real app and saves
// the main dashboard pages at laptop (1366×900) and phone (390×844) widths in docs/screenshots/.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import type { Page } from 'playwright-core';
import { saveChecks } from '../../src/checks/checks.repository.js';
import type { DnsCheck } from '../../src/checks/checks.schemas.js';
import type { Database } from '../../src/db/schema.js';
import { createTestApp } from '../helpers/test-app.js';
import { chromiumAvailable, CHROMIUM_PATH, launchBrowser, chooseApiKeySignIn } from './browser.js';
import { seedDemoData } from './seed.js';

const OUT_DIR = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

const VIEWPORTS = [
  { name: 'desktop', width: 1366, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/** Waits until the page has drawn its data: no skeletons left and every chart rendered. */
async function settled(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.waitForFunction(
    () =>
      document.querySelectorAll('.skeleton').length === 0 &&
      Array.from(document.querySelectorAll('.chart-canvas')).every((c) => c.querySelector('canvas')),
  );
  await page.waitForTimeout(250);
}

/** The daily DNS checks as they would be stored: every domain passes but one, which has no DMARC record. */
async function seedDailyChecks(db: Kysely<Database>, workspaceId: string) {
  const mailboxes = await db
    .selectFrom('mailboxes')
    .select(['id', 'email'])
    .where('workspace_id', '=', workspaceId)
    .execute();
  for (const mailbox of mailboxes) {
    const domain = mailbox.email.slice(mailbox.email.indexOf('@') + 1);
    const noDmarc = domain === 'brightpath.io';
    const checks: DnsCheck[] = (['mx', 'spf', 'dmarc', 'dkim'] as const).map((check) =>
      check === 'dmarc' && noDmarc
        ? {
            check,
            status: 'fail',
            detail: `${domain} publishes no DMARC record; Gmail and Yahoo require one from bulk senders`,
            fix: `Publish a TXT record at _dmarc.${domain}: "v=DMARC1; p=none; rua=mailto:dmarc@${domain}", and move to p=quarantine once reports look clean.`,
          }
        : { check, status: 'pass', detail: `${check} of ${domain} passes`, fix: null },
    );
    await saveChecks(db, mailbox.id, checks, new Date());
  }
}

async function main(): Promise<void> {
  if (!chromiumAvailable()) {
    console.error(`screenshots need Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);
    process.exit(1);
  }
  mkdirSync(OUT_DIR, { recursive: true });
  const t = await createTestApp();
  const browser = await launchBrowser();
  try {
    const workspace = await t.createWorkspace('Northwind Trading');
    await seedDemoData(t.database.db, workspace);
    await seedDailyChecks(t.database.db, workspace.id);
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const mailboxes = (await workspace.request({ method: 'GET', url: '/api/mailboxes?q=maya' })).json() as {
      mailboxes: Array<{ id: string }>;
    };
    const templates = (
      await workspace.request({ method: 'GET', url: '/api/templates?type=initial&language=en&limit=1' })
    ).json() as { templates: Array<{ id: string }> };
    const mailboxId = mailboxes.mailboxes[0]?.id;
    const templateId = templates.templates[0]?.id;
    if (!mailboxId || !templateId) throw new Error('seeding left no mailbox or template to show');

    const pages = [
      { name: 'overview', path: '/' },
      { name: 'mailboxes', path: '/mailboxes' },
      { name: 'mailbox-detail', path: `/mailboxes/${mailboxId}` },
      { name: 'add-mailbox', path: '/mailboxes/new' },
      { name: 'template-editor', path: `/templates/${templateId}` },
      { name: 'reports', path: '/reports' },
    ];

    for (const viewport of VIEWPORTS) {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width: viewport.width, height: viewport.height });
      await page.goto(address);
      await chooseApiKeySignIn(page);
      await page.getByLabel('API key').fill(workspace.apiKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      for (const target of pages) {
        await page.goto(`${address}${target.path}`);
        await settled(page);
        if (target.name === 'template-editor') await page.getByTestId('preview-body').waitFor();
        if (target.name === 'mailbox-detail') {
          // the seeded plan is what the page says next, as a real installation would show it
          const summary = await page.getByTestId('outlook-summary').innerText();
          if (!summary.startsWith('Next send at ')) throw new Error(`the mailbox page says "${summary}"`);
        }
        const file = `${OUT_DIR}${target.name}-${viewport.name}.png`;
        await page.screenshot({ path: file, fullPage: true });
        console.log(`saved ${file.slice(OUT_DIR.length - 'docs/screenshots/'.length)}`);
      }
      await page.close();
    }
  } finally {
    await browser.close();
    await t.close();
  }
}

await main();
