// axe-core in the page under test: injected through the DevTools protocol (the dashboard's CSP
// allows no inline script, rightly), run over the whole document, violations as readable lines.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeResult {
  violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }>;
}

/** Every axe violation on the page as it is now, one line each ("rule: help — selectors"). */
export async function axeViolations(page: Page): Promise<string[]> {
  const loaded = await page.evaluate(() => typeof (window as { axe?: unknown }).axe !== 'undefined');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(() =>
    (window as unknown as { axe: { run: (context: Document) => Promise<AxeResult> } }).axe.run(document),
  );
  return result.violations.map(
    (v) => `${v.id} (${v.impact ?? 'n/a'}): ${v.help} — ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`,
  );
}

/** No axe violation at a laptop's and a phone's width; the page is left at the laptop's. */
export async function axeViolationsAtWidths(page: Page, widths: readonly number[] = [1366, 390]): Promise<string[]> {
  const found: string[] = [];
  for (const width of widths) {
    await page.setViewportSize({ width, height: 900 });
    found.push(...(await axeViolations(page)).map((line) => `${width} px: ${line}`));
  }
  await page.setViewportSize({ width: widths[0] ?? 1366, height: 900 });
  return found;
}
