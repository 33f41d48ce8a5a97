// "Connect with Microsoft" in headless Chromium: the dashboard sends the browser to a real
// authorization server on loopback (standing in for Microsoft), the user signs in and consents
// there, and comes back to an active mailbox; a mailbox whose access was revoked is reconnected
// from its page the same way. A consent started with an API key comes back to a confirmation page
// that a signed-in member of the workspace must accept. The mail stack checks every token login at
// that server.
import net from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/clock.js';
import { decryptSecret, loadSecretKey } from '../../src/secrets/secrets.js';
import { verifySmtp } from '../../src/mail/smtp.js';
import { loadOAuthSettings } from '../../src/oauth/oauth.config.js';
import { createPerson, TEST_PASSWORD, type TestPerson } from '../helpers/accounts.js';
import { createTestApp, TEST_SECRET_KEY, type TestApp } from '../helpers/test-app.js';
import { startPrivateMailStack, type PrivateMailStack } from '../mailstack/private-stack.js';
import { getMailStack, stackMailPolicy } from '../mailstack/use-mail-stack.js';
import { startOAuthStandIn, type OAuthStandIn } from '../oauth/oauth-stand-in.js';
import { chromiumAvailable, ensureDashboardBuilt, launchBrowser, type Browser } from './browser.js';

const runBrowser = chromiumAvailable() || process.env.CI === 'true';
const USER = { email: 'mona@oauth-page.test', password: 'mona-pass-123' };
const SECOND = { email: 'milo@oauth-page.test', password: 'milo-pass-123' };

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.runIf(runBrowser && getMailStack() !== null)('connecting a mailbox with OAuth in Chromium', () => {
  const clock = fixedClock('2026-11-26T10:00:00.000Z');
  let standIn: OAuthStandIn;
  let stack: PrivateMailStack;
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let member: TestPerson;
  const pageErrors: string[] = [];

  async function signIn(on: Page, person: TestPerson): Promise<void> {
    await on.getByLabel('Email').fill(person.email);
    await on.getByLabel('Password').fill(TEST_PASSWORD);
    await on.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  async function consentOnStandIn(login = USER.email, landing = '/mailboxes/mbx_'): Promise<void> {
    // the stand-in's own sign-in page, then its consent page
    await page.waitForURL((url) => url.origin === standIn.issuer);
    await page.getByRole('button', { name: /^(Sign-in|Continue)$/ }).waitFor();
    // signed in there already (a reconnect): only the consent page
    if (await page.locator('input[name="login"]').isVisible()) {
      await page.locator('input[name="login"]').fill(login);
      await page.locator('input[name="password"]').fill('any password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
    }
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.origin === base && url.pathname.startsWith(landing));
  }

  beforeAll(async () => {
    ensureDashboardBuilt();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    standIn = await startOAuthStandIn({ redirectUris: [`${base}/oauth/callback`] });
    stack = await startPrivateMailStack('oauth-page', [USER, SECOND], {
      oauth2: { introspectionUrl: standIn.introspectionUrlWithCredentials },
    });
    const oauth = loadOAuthSettings({
      WARMUP_PUBLIC_URL: base,
      WARMUP_OAUTH_MICROSOFT_CLIENT_ID: standIn.clientId,
      WARMUP_OAUTH_MICROSOFT_CLIENT_SECRET: standIn.clientSecret,
      WARMUP_OAUTH_MICROSOFT_ISSUER: standIn.issuer,
      WARMUP_OAUTH_MICROSOFT_IMAP_HOST: stack.host,
      WARMUP_OAUTH_MICROSOFT_IMAP_PORT: String(stack.imapPort),
      WARMUP_OAUTH_MICROSOFT_IMAP_SECURE: 'false',
      WARMUP_OAUTH_MICROSOFT_SMTP_HOST: stack.host,
      WARMUP_OAUTH_MICROSOFT_SMTP_PORT: String(stack.submissionPort),
      WARMUP_OAUTH_MICROSOFT_SMTP_SECURE: 'false',
    });
    t = await createTestApp({ clock, oauth, mailPolicy: stackMailPolicy(stack) });
    await t.app.listen({ port, host: '127.0.0.1' });
    // the installation is set up: the dashboard asks for a sign-in
    await createPerson(t, t.workspace.id, 'owner');
    member = await createPerson(t, t.workspace.id, 'member');
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await stack?.stop();
    await standIn?.close();
  });

  it('Connect with Microsoft → consent on the provider → the mailbox is active', { timeout: 90_000 }, async () => {
    await page.goto(`${base}/mailboxes/new`);
    await signIn(page, member);
    await page.getByRole('heading', { level: 1, name: 'Add a mailbox' }).waitFor();
    await page.getByRole('button', { name: 'Connect with Microsoft' }).click();
    await consentOnStandIn();
    await page.getByRole('heading', { level: 1, name: USER.email }).waitFor();
    await page.locator('.page-header .badge-status', { hasText: /^(Warming up|Joining the pool)$/ }).waitFor();

    const { mailboxes } = (await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json();
    expect(mailboxes).toHaveLength(1);
    expect(mailboxes[0]).toMatchObject({ email: USER.email, connectionType: 'oauth2', status: 'active' });
    expect(pageErrors).toEqual([]);
  });

  it(
    'a mailbox whose access was revoked shows Reconnect, which signs in again and keeps it',
    { timeout: 90_000 },
    async () => {
      const { mailboxes } = (await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json();
      const id = mailboxes[0].id as string;
      const row = await t.database.db
        .selectFrom('mailboxes')
        .select(['refresh_token_encrypted', 'access_token_expires_at'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const key = loadSecretKey({ secretKey: TEST_SECRET_KEY, dataDir: '/nonexistent' });
      await standIn.revoke(decryptSecret(key, row.refresh_token_encrypted!, `${id}:oauth-refresh`));
      clock.set(new Date(Date.parse(row.access_token_expires_at!) + 60_000));
      const { smtp } = await t.services.mailboxes.getCredentials(id);
      await expect(verifySmtp(smtp, { timeoutMs: 10_000 })).rejects.toMatchObject({ code: 'OAUTH_REVOKED' });

      await page.goto(`${base}/mailboxes/${id}`);
      await page.locator('.page-header .badge-status', { hasText: 'Stopped' }).waitFor();
      await page
        .getByText(/Reconnect the mailbox/)
        .first()
        .waitFor();
      await page.getByRole('button', { name: 'Reconnect' }).first().click();
      await consentOnStandIn();
      expect(new URL(page.url()).pathname).toBe(`/mailboxes/${id}`);
      await page.locator('.page-header .badge-status', { hasText: /^(Warming up|Joining the pool)$/ }).waitFor();
      expect(pageErrors).toEqual([]);
    },
  );

  it(
    'a consent started with an API key connects only after a signed-in member confirms it',
    { timeout: 90_000 },
    async () => {
      const { workspace } = (await t.workspace.request({ method: 'GET', url: '/api/workspace' })).json();
      const started = await t.workspace.request({ method: 'POST', url: '/api/oauth/microsoft/authorize' });
      expect(started.statusCode, started.body).toBe(200);
      // a browser with no session of this workspace opens the consent link and consents
      await page.context().clearCookies();
      await page.goto(started.json().authorization.authorizationUrl as string);
      await consentOnStandIn(SECOND.email, '/oauth/confirm');
      const count = async () =>
        (await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json().mailboxes.length as number;
      expect(await count()).toBe(1);
      // the page asks for a sign-in, then names the address and the workspace
      await signIn(page, member);
      await page.getByRole('heading', { name: `Connect ${SECOND.email} to workspace ${workspace.name}?` }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/oauth/confirm');
      expect(await count()).toBe(1);
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.getByRole('heading', { level: 1, name: SECOND.email }).waitFor();
      const { mailboxes } = (await t.workspace.request({ method: 'GET', url: '/api/mailboxes' })).json();
      expect(mailboxes.map((m: { email: string }) => m.email).sort()).toEqual([SECOND.email, USER.email].sort());
      expect(pageErrors).toEqual([]);
    },
  );
});
