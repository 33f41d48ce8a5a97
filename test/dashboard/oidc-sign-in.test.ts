// "Sign in with <provider>" in headless Chromium: the sign-in page sends the browser to a real
// OpenID Connect provider on loopback (oidc-provider, standing in for the operator's), the person
// signs in there and comes back signed in; an address no account uses comes back to the sign-in
// page with the reason; an invite link's "Join with <provider>" makes the account with its role.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOidcSettings, OIDC_CALLBACK_PATH } from '../../src/oidc/oidc.config.js';
import { createPerson } from '../helpers/accounts.js';
import { closedPort } from '../helpers/ports.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { startOAuthStandIn, type OAuthStandIn } from '../oauth/oauth-stand-in.js';
import { axeViolations } from './axe.js';
import { chromiumAvailable, ensureDashboardBuilt, launchBrowser, type Browser } from './browser.js';

const runBrowser = chromiumAvailable() || process.env.CI === 'true';

describe.runIf(runBrowser)('signing in through an OpenID Connect provider in Chromium', () => {
  let standIn: OAuthStandIn;
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  const pageErrors: string[] = [];

  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });

  /** The stand-in's own sign-in and consent pages, as a person fills them in. */
  async function signInAtProvider(login: string): Promise<void> {
    await page.waitForURL((url) => url.origin === standIn.issuer);
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.origin === base);
  }

  beforeAll(async () => {
    ensureDashboardBuilt();
    // the port is chosen first: the provider must know the redirect URI before the app listens
    const port = await closedPort();
    base = `http://127.0.0.1:${port}`;
    standIn = await startOAuthStandIn({ redirectUris: [`${base}${OIDC_CALLBACK_PATH}`] });
    const oidc = loadOidcSettings({
      WARMUP_PUBLIC_URL: base,
      WARMUP_OIDC_ISSUER: standIn.issuer,
      WARMUP_OIDC_CLIENT_ID: standIn.clientId,
      WARMUP_OIDC_CLIENT_SECRET: standIn.clientSecret,
      WARMUP_OIDC_NAME: 'Acme SSO',
    });
    t = await createTestApp({ oidc });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(30_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await standIn?.close();
  });

  it('signs in a known address with the button, and tells an unknown one why not', { timeout: 90_000 }, async () => {
    // an owner exists (the installation is set up) and a member with a known address
    await createPerson(t, t.workspace.id, 'owner', 'owner@acme.test');
    await createPerson(t, t.workspace.id, 'member', 'mia@acme.test');

    await page.goto(base);
    await heading('Sign in').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('link', { name: 'Sign in with Acme SSO' }).click();
    await signInAtProvider('stranger@acme.test');
    await heading('Sign in').waitFor();
    await page.getByText('no account here uses stranger@acme.test').waitFor();
    // the reason is read once: the address bar is clean again
    expect(new URL(page.url()).search).toBe('');

    // signed out at the provider too, so it asks who signs in this time
    await page.context().clearCookies();
    await page.getByRole('link', { name: 'Sign in with Acme SSO' }).click();
    await signInAtProvider('mia@acme.test');
    await heading('Overview').waitFor();
    await page.getByText('Signed in as member person').waitFor();
    // the session is an HttpOnly cookie: nothing for scripts to read
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(pageErrors).toEqual([]);
  });

  it('joins a workspace from an invite link with "Join with Acme SSO"', { timeout: 90_000 }, async () => {
    await page.context().clearCookies();
    const { token } = await t.services.accounts.createInvite({ role: 'owner', userId: null }, t.workspace.id, {
      role: 'viewer',
    });
    await page.goto(`${base}/invite/${token}`);
    await page.getByRole('link', { name: 'Join with Acme SSO' }).click();
    await signInAtProvider('newcomer@acme.test');
    await heading('Overview').waitFor();
    await page.getByText('Signed in as newcomer').waitFor();
    const session = await page.evaluate(async () => (await fetch('/api/session')).json());
    expect(session).toMatchObject({ user: { email: 'newcomer@acme.test' }, role: 'viewer' });
    expect(pageErrors).toEqual([]);
  });
});
