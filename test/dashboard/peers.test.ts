// The Peers page in headless Chromium against the real app: the installation's owner, signed in with
// a session, sees this installation's key and fingerprint, adds a peer (a wrong key is named at its
// field and adds nothing), pauses, resumes and removes it after a confirmation; another workspace
// owner is told the page is not theirs. The peer is a stand-in on loopback that does not know us
// yet, so the peering stays pending. axe-core finds nothing at a laptop's and a phone's width.
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson, type TestPerson } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { axeViolationsAtWidths } from './axe.js';
import {
  chromiumAvailable,
  CHROMIUM_PATH,
  ensureDashboardBuilt,
  launchBrowser,
  openPage,
  waitUntilDrawn,
  type Browser,
} from './browser.js';

const inCi = process.env.CI === 'true';
const runBrowser = chromiumAvailable() || inCi;
if (!runBrowser) console.warn(`peers page test skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`);

const WIDTHS = [1280, 390] as const;

function peerKey(): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  return (publicKey.export({ format: 'jwk' }).x as string).replace(/=+$/, '');
}

describe.runIf(runBrowser)('the Peers page in Chromium', () => {
  let t: TestApp;
  let owner: TestPerson;
  let otherOwner: TestPerson;
  let standIn: http.Server;
  let standInUrl: string;
  let browser: Browser;
  let page: Page;
  let base: string;
  const pageErrors: string[] = [];

  async function openAs(person: TestPerson, path: string): Promise<void> {
    await browser.context.clearCookies();
    const [name, value] = person.cookie.split('=') as [string, string];
    await browser.context.addCookies([{ name, value, url: base }]);
    await page.goto(`${base}${path}`);
    await page.getByRole('heading', { level: 1, name: 'Peers' }).waitFor();
    await waitUntilDrawn(page);
  }

  beforeAll(async () => {
    ensureDashboardBuilt();
    // a peer that has not added us: it refuses our hello as an unknown key
    standIn = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(401, { 'content-type': 'application/problem+json' });
        response.end(JSON.stringify({ type: 'about:blank', status: 401, code: 'unknown_key', title: 'Unknown key' }));
      });
    });
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
    standInUrl = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
    t = await createTestApp({ oauth: { publicUrl: 'https://a.example', providers: {} }, peersOnLoopback: true });
    owner = await createPerson(t, t.workspace.id, 'owner');
    otherOwner = await createPerson(t, (await t.createWorkspace('Someone else')).id, 'owner');
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
    page = await openPage(browser, pageErrors);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await new Promise<void>((resolve) => standIn?.close(() => resolve()));
  });

  it(
    "shows the owner this installation's key, and adds, pauses, resumes and removes a peer",
    { timeout: 60_000 },
    async () => {
      await page.setViewportSize({ width: 1280, height: 900 });
      await openAs(owner, '/peers');
      const identity = (await owner.request({ method: 'GET', url: '/api/peers/identity' })).json<{
        publicKey: string;
        fingerprint: string;
      }>();
      await page.getByText(identity.publicKey).waitFor();
      await page.getByText(identity.fingerprint).waitFor();
      await page.getByText('No peer yet').waitFor();

      // a key that is no key: named at its field, nothing added
      await page.getByLabel('Its URL').fill(standInUrl);
      await page.getByLabel('Its public key').fill('not-a-key');
      await page.getByLabel('Domains that take part').fill('example.com');
      await page.getByRole('button', { name: 'Add peer' }).click();
      await expect.poll(() => page.getByLabel('Its public key').getAttribute('aria-invalid')).toBe('true');
      expect(await t.database.db.selectFrom('peers').selectAll().execute()).toEqual([]);

      await page.getByLabel('Its public key').fill(peerKey());
      await page.getByRole('button', { name: 'Add peer' }).click();
      const row = page.getByRole('row', { name: new RegExp(standInUrl.replace(/[.]/g, '\\.')) });
      await row.getByText('pending').waitFor();
      expect(await row.textContent()).toContain('example.com; 10 mailboxes, 200 a day accepted');
      expect(await row.textContent()).toContain('To it: no mail');
      expect(await axeViolationsAtWidths(page, WIDTHS), 'a pending peer').toEqual([]);

      // paused by the installation on its own: the reason is on the row
      await t.database.db
        .updateTable('peers')
        .set({ state: 'paused', paused_reason: 'it announced 5 messages for 2026-05-04, over the ceiling of 3' })
        .execute();
      await page.reload();
      await row.getByText('Paused by this installation:').waitFor();
      expect(await row.textContent()).toContain('over the ceiling of 3');
      expect(await axeViolationsAtWidths(page, WIDTHS), 'a peer paused with its reason').toEqual([]);
      await row.getByRole('button', { name: 'Resume' }).click();
      await row.getByRole('button', { name: 'Pause' }).waitFor();
      expect(await row.getByText('Paused by this installation:').count()).toBe(0);

      await row.getByRole('button', { name: 'Pause' }).click();
      await row.getByText('paused').waitFor();
      await row.getByRole('button', { name: 'Resume' }).click();
      await row.getByRole('button', { name: 'Pause' }).waitFor();
      expect((await t.database.db.selectFrom('peers').select('state').executeTakeFirstOrThrow()).state).toBe('pending');

      await row.getByRole('button', { name: 'Remove' }).click();
      await page
        .getByRole('dialog', { name: 'Remove this peer?' })
        .getByRole('button', { name: 'Remove peer' })
        .click();
      await page.getByText('No peer yet').waitFor();
      expect((await t.database.db.selectFrom('peers').select('state').executeTakeFirstOrThrow()).state).toBe('removed');
      expect(pageErrors).toEqual([]);
    },
  );

  it("tells another workspace's owner that peering is the installation owner's", { timeout: 60_000 }, async () => {
    await openAs(otherOwner, '/peers');
    await page.getByText("Only the installation's owner manages its peers").waitFor();
    expect(await page.getByRole('button', { name: 'Add peer' }).count()).toBe(0);
    expect(await axeViolationsAtWidths(page, WIDTHS), 'not the owner').toEqual([]);
  });
});
