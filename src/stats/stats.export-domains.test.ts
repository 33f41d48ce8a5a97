// The exports carry what the providers said of each domain: DMARC reports, Gmail Postmaster Tools,
// Microsoft SNDS and the hold they put on it, in JSON, as CSV (`table=domains`) and in the PDF; one
// workspace's and no other's, and never a feed's key. Today is 2026-03-15 (UTC).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailbox } from '../../test/helpers/engine.js';
import { pdfText } from '../../test/helpers/pdf-text.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { createTestApp, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import { fixedClock } from '../clock.js';
import { insertReport } from '../dmarc/dmarc.repository.js';
import { parseReportAttachment } from '../dmarc/report-parser.js';
import { saveHold } from '../engine/provider-signals.repository.js';
import { savePostmasterDay, saveSndsDays } from '../feeds/feeds.repository.js';
import type { SndsRow } from '../feeds/snds-csv.js';

const AT = '2026-03-15T12:00:00.000Z';
const KEY_CIPHERTEXT = 'v1:snds-key-ciphertext';
const REASON = "Gmail's spam rate for example.com was 0.40 % on 13 March (at or above 0.3 %)";
let t: TestApp;
let other: TestWorkspace;

function dmarcReport(
  id: string,
  domain: string,
  day: string,
  rows: Array<[ip: string, count: number, aligned: boolean]>,
) {
  const begin = Date.parse(`${day}T00:00:00Z`) / 1000;
  const parsed = parseReportAttachment(
    Buffer.from(`<feedback><report_metadata><org_name>google.com</org_name><report_id>${id}</report_id>
      <date_range><begin>${begin}</begin><end>${begin + 86_399}</end></date_range></report_metadata>
      <policy_published><domain>${domain}</domain><p>none</p></policy_published>
      ${rows
        .map(
          ([ip, count, aligned]) => `<record><row><source_ip>${ip}</source_ip><count>${count}</count><policy_evaluated>
            <disposition>none</disposition><dkim>${aligned ? 'pass' : 'fail'}</dkim><spf>fail</spf></policy_evaluated></row>
            <identifiers><header_from>${domain}</header_from></identifiers></record>`,
        )
        .join('')}</feedback>`),
  );
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.report;
}

const snds = (ip: string, day: string, filterResult: SndsRow['filterResult']): SndsRow => ({
  ip,
  day,
  filterResult,
  complaintRate: '< 0.1%',
  complaintRateMax: 0.001,
  trapHits: 0,
  rcptCommands: 10,
  dataCommands: 10,
  messageRecipients: 10,
});

const get = (url: string, workspace: TestWorkspace = t.workspace) => workspace.request({ method: 'GET', url });

beforeAll(async () => {
  t = await createTestApp({ clock: fixedClock(AT) });
  const db = t.database.db;
  const ws = t.workspace.id;
  await createMailbox(t.workspace, 'ada@example.com');
  await createMailbox(t.workspace, 'bob@quiet.example');
  await insertReport(
    db,
    ws,
    dmarcReport('r1', 'example.com', '2026-03-12', [
      ['192.0.2.1', 10, true],
      ['198.51.100.7', 5, false],
    ]),
    AT,
  );
  // before the period: not counted
  await insertReport(db, ws, dmarcReport('r0', 'example.com', '2026-02-01', [['192.0.2.1', 99, false]]), AT);
  await savePostmasterDay(db, {
    workspaceId: ws,
    domain: 'example.com',
    day: '2026-03-12',
    spamRate: 0.001,
    compliance: 'COMPLIANT',
    at: AT,
  });
  await savePostmasterDay(db, {
    workspaceId: ws,
    domain: 'example.com',
    day: '2026-03-13',
    spamRate: 0.004,
    compliance: 'NEEDS_WORK',
    at: AT,
  });
  await saveSndsDays(db, ws, [snds('192.0.2.1', '2026-03-12', 'green'), snds('192.0.2.1', '2026-03-13', 'red')], AT);
  await saveHold(db, {
    workspaceId: ws,
    domain: 'example.com',
    signal: 'gmail_spam_rate',
    day: '2026-03-13',
    reason: REASON,
    at: AT,
  });
  await db
    .insertInto('feed_connections')
    .values({
      workspace_id: ws,
      feed: 'snds',
      secret_encrypted: KEY_CIPHERTEXT,
      domains: null,
      checked_at: AT,
      last_error: null,
      fetched_day: '2026-03-15',
      updated_at: AT,
    })
    .execute();

  other = await t.createWorkspace('Other');
  await createMailbox(other, 'eve@elsewhere.example');
  await insertReport(
    db,
    other.id,
    dmarcReport('o1', 'elsewhere.example', '2026-03-12', [['203.0.113.9', 7, false]]),
    AT,
  );
});

afterAll(async () => {
  await t?.close();
});

const EXAMPLE = {
  domain: 'example.com',
  dmarcMessages: 15,
  dmarcAlignedShare: 10 / 15,
  unalignedSources: 1,
  gmailSpamRate: 0.004,
  gmailDay: '2026-03-13',
  gmailCompliance: 'NEEDS_WORK',
  sndsRedDays: 1,
  sndsYellowDays: 0,
  sndsGreenDays: 1,
  held: true,
  holdReason: REASON,
};
const QUIET = {
  domain: 'quiet.example',
  dmarcMessages: 0,
  dmarcAlignedShare: null,
  unalignedSources: 0,
  gmailSpamRate: null,
  gmailDay: null,
  gmailCompliance: null,
  sndsRedDays: 0,
  sndsYellowDays: 0,
  sndsGreenDays: 0,
  held: false,
  holdReason: null,
};

describe('the providers in the exports', () => {
  it('JSON: each domain of the workspace with the period’s DMARC figures, the latest Gmail day, SNDS days by colour and the hold', async () => {
    const res = await get('/api/stats/export?format=json&period=7d');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().export.domains).toEqual([EXAMPLE, QUIET]);
    expect(res.body).not.toContain(KEY_CIPHERTEXT);
    expect(res.body).not.toContain('elsewhere.example');
  });

  it('CSV with table=domains: one line per domain, under its own header and file name; another workspace sees only its own', async () => {
    const res = await get('/api/stats/export?format=csv&period=7d&table=domains');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="warmup-domains-2026-03-09-2026-03-15.csv"');
    expect(res.body).toBe(
      'domain,dmarcMessages,dmarcAlignedShare,unalignedSources,gmailSpamRate,gmailDay,gmailCompliance,sndsRedDays,sndsYellowDays,sndsGreenDays,held,holdReason\r\n' +
        `example.com,15,${10 / 15},1,0.004,2026-03-13,NEEDS_WORK,1,0,1,true,${REASON}\r\n` +
        'quiet.example,0,,0,,,,0,0,0,false,\r\n',
    );
    const theirs = await get('/api/stats/export?format=csv&period=7d&table=domains', other);
    expect(theirs.body.split('\r\n').slice(1)).toEqual(['elsewhere.example,7,0,1,,,,0,0,0,false,', '']);
    // the mailboxes' table stays the default
    expect((await get('/api/stats/export?format=csv&period=7d')).body.split('\r\n')[0]).toMatch(/^date,mailboxId,/);
  });

  it('narrowed to one mailbox: only its domain', async () => {
    const { mailboxes } = (await get('/api/mailboxes')).json() as { mailboxes: Array<{ id: string; email: string }> };
    const bob = mailboxes.find((m) => m.email === 'bob@quiet.example')!;
    const res = await get(`/api/stats/export?format=json&period=7d&mailboxId=${bob.id}`);
    expect(res.json().export.domains).toEqual([QUIET]);
  });

  it('PDF: a section says what the providers say of each domain that they spoke of', async () => {
    const res = await get('/api/stats/export?format=pdf&period=7d');
    expect(res.statusCode).toBe(200);
    const text = (await pdfText(res.rawPayload)).replace(/\s+/g, ' ');
    expect(text).toContain('What the providers say');
    expect(text).toContain('example.com: held');
    expect(text).toContain(REASON);
    expect(text).toContain('DMARC: 15 messages, 66.7% aligned; 1 source sends unaligned');
    expect(text).toContain('Gmail: spam rate 0.40 % on 13 Mar 2026, compliance: NEEDS_WORK');
    expect(text).toContain('Microsoft SNDS: 1 red day, 0 yellow, 1 green');
    expect(text).not.toContain('quiet.example: held');
    expect(text).not.toContain('elsewhere.example');
  });

  it('refuses a table it does not know, naming the field', async () => {
    expectProblem(await get('/api/stats/export?format=csv&table=senders'), 400, 'validation_error', '/query/table');
  });
});
