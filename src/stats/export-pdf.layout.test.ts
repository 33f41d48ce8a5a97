// The PDF report as a reader gets it: no text drawn over other text on any page, a tag structure
// a screen reader can walk (every marked-content sequence closed in the stream that opened it,
// a structure tree), and nothing poppler warns about. Today is 2026-03-15 (UTC).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import { markedContent, crowdedWords, pdfWordBoxes } from '../../test/helpers/pdf-structure.js';
import { fixedClock } from '../clock.js';
import { newId } from '../db/ids.js';
import { saveHold } from '../engine/provider-signals.repository.js';
import { savePostmasterDay } from '../feeds/feeds.repository.js';
import { recordReputation } from '../interactions/interactions.repository.js';

const clock = fixedClock('2026-03-15T12:00:00Z');
let t: TestApp;
let small: TestWorkspace;
let large: TestWorkspace;

async function insertMailbox(workspaceId: string, email: string): Promise<string> {
  const id = newId('mb');
  const now = clock.now().toISOString();
  await t.database.db
    .insertInto('mailboxes')
    .values({
      id,
      workspace_id: workspaceId,
      email,
      email_normalized: email.toLowerCase(),
      name: null,
      provider: 'gmail',
      connection_type: 'imap',
      status: 'active',
      imap: '{}',
      smtp: '{}',
      password_encrypted: 'x',
      warmup: '{}',
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

/** MX, SPF and DMARC failing for the mailbox's domain, as the daily checks store them. */
async function failingChecks(mailboxId: string): Promise<void> {
  await t.database.db
    .insertInto('mailbox_checks')
    .values(
      (['mx', 'spf', 'dmarc', 'dkim'] as const).map((check) => ({
        mailbox_id: mailboxId,
        check,
        status: 'fail',
        detail: `No ${check.toUpperCase()} record found for the domain; receivers may treat the mail as forged.`,
        fix: `Add a ${check.toUpperCase()} record at your DNS provider: the how-to guide lists the value for each provider.`,
        checked_at: '2026-03-15T06:00:00.000Z',
        failing_since: '2026-03-10T06:00:00.000Z',
      })),
    )
    .execute();
}

async function reportOf(workspace: TestWorkspace): Promise<Buffer> {
  const res = await t.app.inject({
    method: 'GET',
    url: '/api/stats/export?format=pdf&period=30d',
    headers: { authorization: `Bearer ${workspace.apiKey}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.rawPayload;
}

beforeAll(async () => {
  t = await createTestApp({ clock });
  small = await t.createWorkspace('Small Co');
  const only = await insertMailbox(small.id, 'owner@small.test');
  await recordReputation(t.database.db, only, '2026-03-12', 81);
  await failingChecks(only);
  // 60 mailboxes on failing domains: the table and the DNS section run over several pages
  large = await t.createWorkspace('Acme Outreach');
  for (let i = 0; i < 60; i++) {
    const id = await insertMailbox(large.id, `sender${String(i).padStart(2, '0')}@acme${i % 7}.test`);
    await recordReputation(t.database.db, id, '2026-03-12', 60 + (i % 40));
    if (i % 3 === 0) await failingChecks(id);
    // every tenth stopped: the report lists them under its table, with why, over the pages it needs
    if (i % 10 === 0)
      await t.database.db
        .updateTable('mailboxes')
        .set({ status: 'error', last_error: 'SMTP login refused: check the password, then resume the mailbox.' })
        .where('id', '=', id)
        .execute();
  }
  // the providers said something of each of its seven domains: their section flows over a page break too
  for (let d = 0; d < 7; d++) {
    const domain = `acme${d}.test`;
    await saveHold(t.database.db, {
      workspaceId: large.id,
      domain,
      signal: 'gmail_spam_rate',
      day: '2026-03-14',
      reason: `Gmail's spam rate for ${domain} was 0.45 % on 14 March (at or above 0.3 %): its warmup holds its volume until a day under it.`,
      at: '2026-03-15T06:00:00.000Z',
    });
    await savePostmasterDay(t.database.db, {
      workspaceId: large.id,
      domain,
      day: '2026-03-14',
      spamRate: 0.0045,
      compliance: 'NEEDS_WORK',
      at: '2026-03-15T06:00:00.000Z',
    });
  }
});
afterAll(() => t?.close());

describe.each([
  ['one mailbox', () => small],
  ['sixty mailboxes over several pages', () => large],
])('the PDF report of %s', (_name, workspace) => {
  it('has no text drawn over other text on any page, and pdftotext warns of nothing', async () => {
    const { words, warnings } = await pdfWordBoxes(await reportOf(workspace()));
    expect(words.length).toBeGreaterThan(50);
    // the large report's last parts are drawn too: its stopped mailboxes, listed under the table
    if (workspace() === large) expect(words.some((word) => word.text === 'needs')).toBe(true);
    if (workspace() === large) expect(words.some((word) => word.text === 'NEEDS_WORK')).toBe(true);
    expect(warnings).toBe('');
    const overlaps = crowdedWords(words).map(
      ([a, b]) =>
        `page ${a.page}: "${a.text}" (${a.xMin},${a.yMin}–${a.xMax},${a.yMax}) over "${b.text}" (${b.xMin},${b.yMin}–${b.xMax},${b.yMax})`,
    );
    expect(overlaps).toEqual([]);
  });

  it('closes every tag in the content stream that opened it, under a structure tree', async () => {
    const report = markedContent(await reportOf(workspace()));
    expect(report.hasStructTree).toBe(true);
    expect(report.marked).toBe(true);
    expect(report.structElements).toBeGreaterThan(5);
    expect(report.streams.length).toBeGreaterThan(0);
    for (const [page, stream] of report.streams.entries()) {
      expect({ page, ...stream }).toEqual({ page, opened: stream.closed, closed: stream.closed, underflow: false });
      expect(stream.opened).toBeGreaterThan(0);
    }
  });
});

describe('the checks of the test helpers', () => {
  it('see two words drawn over each other or crowded together, not words side by side or a line apart', () => {
    const word = (text: string, xMin: number, yMin: number) => ({
      page: 1,
      text,
      xMin,
      yMin,
      xMax: xMin + 30,
      yMax: yMin + 8,
    });
    expect(crowdedWords([word('a', 0, 0), word('b', 31, 0), word('c', 0, 10)])).toEqual([]);
    expect(crowdedWords([word('a', 0, 0), word('b', 5, 4)])).toHaveLength(1);
    // the wrapped subtitle the report once had: the next line began 0.3 points under it
    expect(crowdedWords([word('sent.', 0, 0), word('No', 0, 8.3)])).toHaveLength(1);
  });
});
