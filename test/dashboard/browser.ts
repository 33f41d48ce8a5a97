// Headless Chromium for the dashboard tests and screenshots: the distribution's own browser
// (Debian's `chromium` package), driven by playwright-core, in a fresh profile each time.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH);
}

export interface Browser {
  context: BrowserContext;
  downloadsDir: string;
  close(): Promise<void>;
}

export async function launchBrowser(
  options: { width?: number; height?: number; /** IANA zone of the browser; default UTC */ timezoneId?: string } = {},
): Promise<Browser> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'warmup-chromium-'));
  const downloadsDir = mkdtempSync(path.join(os.tmpdir(), 'warmup-downloads-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: options.width ?? 1366, height: options.height ?? 900 },
    acceptDownloads: true,
    downloadsPath: downloadsDir,
    locale: 'en-GB',
    timezoneId: options.timezoneId ?? 'UTC',
  });
  return {
    context,
    downloadsDir,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
      rmSync(downloadsDir, { recursive: true, force: true });
    },
  };
}

/** Builds the dashboard bundle if it is missing or stale (what `npm test` does before the run). */
export function ensureDashboardBuilt(): void {
  const script = fileURLToPath(new URL('../../src/dashboard/ensure-built.mjs', import.meta.url));
  const result = spawnSync(process.execPath, [script], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`dashboard build failed:\n${result.stdout}\n${result.stderr}`);
}

/**
 * Opens the API key form of the page before sign-in (the setup page on an installation without
 * accounts, else the sign-in page), unless it is showing already.
 */
export async function chooseApiKeySignIn(page: Page): Promise<void> {
  const field = page.getByLabel('API key');
  const toggle = page.getByRole('button', { name: 'Use an API key instead' });
  await field.or(toggle).first().waitFor();
  if (!(await field.isVisible())) await toggle.click();
}

/** Signs in at `address` with an API key, starting from a fresh session, and waits for the main navigation. */
export async function signInWithApiKey(page: Page, address: string, apiKey: string): Promise<void> {
  await page.goto(address);
  await page.evaluate(() => sessionStorage.clear());
  await page.goto(address);
  await chooseApiKeySignIn(page);
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** Waits until the page drew its data: no skeleton or busy region left, every chart drawn. */
export async function waitUntilDrawn(page: Page): Promise<void> {
  await page.waitForFunction(
    () =>
      document.querySelectorAll('.skeleton, [aria-busy="true"]').length === 0 &&
      Array.from(document.querySelectorAll('.chart-canvas')).every((c) => c.querySelector('canvas')),
  );
}

/** A new page of the browser with the tests' default timeout; the page's script errors are pushed to `errors`. */
export async function openPage(browser: Browser, errors: string[]): Promise<Page> {
  const page = await browser.context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (error) => errors.push(error.message));
  return page;
}
