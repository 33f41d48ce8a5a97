import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestWorkspace } from '../../test/helpers/test-app.js';
import { fixedClock } from '../clock.js';
import { newId } from '../db/ids.js';
import { incrementDaily, recordInteraction, recordReputation } from '../interactions/interactions.repository.js';
import type { InteractionType, Placement } from '../interactions/interactions.schemas.js';
import { csvField, csvLine } from './export-csv.js';
import { expectProblem } from '../../test/helpers/problem.js';
import { pdfText } from '../../test/helpers/pdf-text.js';

/* GET /api/stats/export: CSV, JSON and PDF. Today is 2026-03-15 (UTC). */

const clock = fixedClock('2026-03-15T12:00:00Z');
const HEADER =
  'date,mailboxId,email,sent,received,inbox,spam,rescued,opened,replied,reputation,promotedToPrimary,state';
const QUOTED_EMAIL = '"smith, \\"js\\""@beta.test';
let t: TestApp;
let ws: TestWorkspace;
let big: TestWorkspace;
const mb = { alice: '', quoted: '', stranger: '' };

async function insertMailbox(workspaceId: string, email: string) {
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

let messageCount = 0;
async function record(
  mailboxId: string,
  type: InteractionType,
  senderMailboxId: string,
  messageId: string,
  at: string,
  placement: Placement | null = null,
) {
  await recordInteraction(t.database.db, {
    mailboxId,
    type,
    senderMailboxId,
    counterpartMailboxId: mailboxId === senderMailboxId ? null : senderMailboxId,
    counterpartEmail: 'peer@example.test',
    subject: 'Quarterly numbers',
    messageId,
    threadId: messageId,
    placement,
    occurredAt: new Date(at),
  });
}

async function message(
  from: string,
  to: string,
  at: string,
  placement: Placement,
  actions: Array<'opened' | 'rescued' | 'replied'> = [],
) {
  const messageId = `<x${++messageCount}@test>`;
  await record(from, 'sent', from, messageId, at);
  await record(to, 'received', from, messageId, at, placement);
  for (const action of actions) await record(to, action, from, messageId, at);
}

function get(url: string, workspace: TestWorkspace = ws) {
  return workspace.request({ method: 'GET', url });
}

/** Splits CSV text into records of fields, honouring RFC 4180 quotes. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      fields.push(field);
      records.push(fields);
      fields = [];
      field = '';
      i++;
    } else field += c;
  }
  expect(field, 'the CSV ends with CRLF').toBe('');
  return records;
}

/** A placement test of `sender` made at `at`, one copy per seed with where it was found (null: still looked for). */
async function placementTest(
  workspaceId: string,
  sender: string,
  subject: string,
  at: string,
  copies: Array<{
    seed: string;
    provider: string;
    placement: string | null;
    verdict?: { spf: string; dkim: string; dmarc: string; spam_score: number };
  }>,
) {
  const id = newId('plt');
  await t.database.db
    .insertInto('placement_tests')
    .values({
      id,
      workspace_id: workspaceId,
      sender_mailbox_id: sender,
      subject,
      text_body: 'Hello',
      html_body: '<p>Hello</p>',
      status: copies.every((c) => c.placement !== null) ? 'completed' : 'waiting',
      last_error: null,
      created_at: at,
      sent_at: at,
      completed_at: null,
    })
    .execute();
  for (const copy of copies) {
    await t.database.db
      .insertInto('placement_test_copies')
      .values({
        id: newId('plc'),
        test_id: id,
        sender_mailbox_id: sender,
        seed_mailbox_id: copy.seed,
        message_id: `<${newId('m')}@test>`,
        provider: copy.provider,
        placement: copy.placement,
        folder: null,
        sent_at: at,
        found_at: copy.placement === null ? null : at,
        ...copy.verdict,
      })
      .execute();
  }
  return id;
}

function pageCount(pdf: Buffer): number {
  return (pdf.toString('latin1').match(/\/Type \/Page\b(?!s)/g) ?? []).length;
}

beforeAll(async () => {
  t = await createTestApp({ clock });
  ws = t.workspace;
  big = await t.createWorkspace('Acme Outreach');
  mb.alice = await insertMailbox(ws.id, 'alice@alpha.test');
  mb.quoted = await insertMailbox(ws.id, QUOTED_EMAIL);
  const otherWorkspace = await t.createWorkspace('other');
  mb.stranger = await insertMailbox(otherWorkspace.id, 'stranger@else.test');

  await message(mb.alice, mb.quoted, '2026-03-15T09:00:00Z', 'inbox', ['opened', 'replied']);
  // found in Gmail's Promotions tab and taken to Primary, counted the way the reader counts it
  await message(mb.alice, mb.quoted, '2026-03-15T11:00:00Z', 'promotions');
  await incrementDaily(t.database.db, mb.alice, '2026-03-15', 'promoted_to_primary');
  await message(mb.quoted, mb.alice, '2026-03-14T10:00:00Z', 'spam', ['rescued', 'opened']);
  await message(mb.alice, mb.stranger, '2026-03-01T10:00:00Z', 'inbox');
  await recordReputation(t.database.db, mb.alice, '2026-03-10', 77);

  // 60 mailboxes: the PDF's mailbox table runs over two pages after the summary page.
  for (let i = 0; i < 60; i++) await insertMailbox(big.id, `sender${String(i).padStart(2, '0')}@acme.test`);
});
afterAll(() => t?.close());

describe('csvField', () => {
  it('quotes per RFC 4180 only when needed', () => {
    expect(csvField('plain@example.test')).toBe('plain@example.test');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
    expect(csvField(null)).toBe('');
    expect(csvField(0)).toBe('0');
    expect(csvLine(['a', 1, null])).toBe('a,1,\r\n');
  });

  it('turns every text cell a spreadsheet would run as a formula into quoted text (OWASP)', () => {
    expect(csvField('=1+2@x.io')).toBe(`"'=1+2@x.io"`);
    expect(csvField('+31@x.io')).toBe(`"'+31@x.io"`);
    expect(csvField('-2@x.io')).toBe(`"'-2@x.io"`);
    expect(csvField('@SUM(A1)@x.io')).toBe(`"'@SUM(A1)@x.io"`);
    expect(csvField('\t=1@x.io')).toBe(`"'\t=1@x.io"`);
    expect(csvField('\r=1@x.io')).toBe(`"'\r=1@x.io"`);
    expect(csvField('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvField('a=b@x.io')).toBe('a=b@x.io');
    // Numbers are data, not text: a count is never prefixed.
    expect(csvField(-1)).toBe('-1');
  });
});

describe('GET /api/stats/export?format=csv', () => {
  it('streams one row per mailbox per day under the exact header, as an attachment', async () => {
    const res = await get('/api/stats/export?format=csv&startDate=2026-03-14&endDate=2026-03-15');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toBe('attachment; filename="warmup-stats-2026-03-14-2026-03-15.csv"');
    expect(res.body.split('\r\n')[0]).toBe(HEADER);
    const [header, ...rows] = parseCsv(res.body);
    expect(header!.join(',')).toBe(HEADER);
    // 2 mailboxes × 2 days, by date then email ('"' sorts before letters); empty days included. Each row
    // carries its mailbox's state now: the seed's mailboxes are not proven yet.
    expect(rows).toEqual([
      ['2026-03-14', mb.quoted, QUOTED_EMAIL, '1', '0', '0', '1', '1', '1', '0', '', '0', 'joining'],
      ['2026-03-14', mb.alice, 'alice@alpha.test', '0', '1', '0', '0', '0', '0', '0', '77', '0', 'joining'],
      ['2026-03-15', mb.quoted, QUOTED_EMAIL, '0', '2', '0', '0', '0', '0', '0', '', '0', 'joining'],
      ['2026-03-15', mb.alice, 'alice@alpha.test', '2', '0', '1', '0', '0', '1', '1', '77', '1', 'joining'],
    ]);
    // The email with a comma and quotes is one quoted field with its quotes doubled.
    expect(res.body).toContain(`,"""smith, \\""js\\""""@beta.test",`);
  });

  it('covers the default 30-day period and narrows with mailboxId', async () => {
    const all = parseCsv((await get('/api/stats/export?format=csv')).body);
    expect(all).toHaveLength(1 + 2 * 30);
    expect(all[1]![0]).toBe('2026-02-14');
    const res = await get(`/api/stats/export?format=csv&period=7d&mailboxId=${mb.alice}`);
    expect(res.headers['content-disposition']).toBe('attachment; filename="warmup-stats-2026-03-09-2026-03-15.csv"');
    const rows = parseCsv(res.body).slice(1);
    expect(rows).toHaveLength(7);
    expect(new Set(rows.map((r) => r[1]))).toEqual(new Set([mb.alice]));
    // The score recorded on the 10th, carried forward; none before it.
    expect(rows.map((r) => r[10])).toEqual(['', '77', '77', '77', '77', '77', '77']);
  });

  it('answers just the header for a workspace without mailboxes', async () => {
    const empty = await t.createWorkspace('empty');
    const res = await get('/api/stats/export?format=csv', empty);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(`${HEADER}\r\n`);
  });
});

describe('GET /api/stats/export?format=json', () => {
  it('answers {export: {startDate, endDate, rows}} with the same rows', async () => {
    const res = await get('/api/stats/export?format=json&startDate=2026-03-15&endDate=2026-03-15');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toBe('attachment; filename="warmup-stats-2026-03-15-2026-03-15.json"');
    expect(res.json()).toStrictEqual({
      export: {
        startDate: '2026-03-15',
        endDate: '2026-03-15',
        rows: [
          {
            date: '2026-03-15',
            mailboxId: mb.quoted,
            email: QUOTED_EMAIL,
            sent: 0,
            received: 2,
            inbox: 0,
            spam: 0,
            rescued: 0,
            opened: 0,
            replied: 0,
            promotedToPrimary: 0,
            reputation: null,
            state: 'joining',
          },
          {
            date: '2026-03-15',
            mailboxId: mb.alice,
            email: 'alice@alpha.test',
            sent: 2,
            received: 0,
            inbox: 1,
            spam: 0,
            rescued: 0,
            opened: 1,
            replied: 1,
            promotedToPrimary: 1,
            reputation: 77,
            state: 'joining',
          },
        ],
        // what the providers said of each domain: nothing, none is connected here (stats.export-domains.test.ts)
        domains: ['alpha.test', 'beta.test'].map((domain) =>
          expect.objectContaining({ domain, dmarcMessages: 0, gmailDay: null, held: false }),
        ),
      },
    });
  });

  it('answers an empty list for a workspace without mailboxes', async () => {
    const empty = await t.createWorkspace('empty json');
    const res = await get('/api/stats/export?format=json&period=7d', empty);
    expect(res.json()).toStrictEqual({
      export: { startDate: '2026-03-09', endDate: '2026-03-15', rows: [], domains: [] },
    });
  });
});

describe('GET /api/stats/export?format=pdf', () => {
  it('answers a PDF report as an attachment', async () => {
    const res = await get('/api/stats/export?format=pdf&period=30d');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe('attachment; filename="warmup-stats-2026-02-14-2026-03-15.pdf"');
    const pdf = res.rawPayload;
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.subarray(-6).toString('latin1')).toMatch(/%%EOF\s*$/);
    // A short mailbox table fits under the charts: one page, not a second one holding two rows.
    expect(pageCount(pdf)).toBe(1);
    const text = pdf.toString('latin1');
    expect(text).toContain('(Deliverability report 2026-02-14 to 2026-03-15)');
    // tagged for screen readers: marked, in a language, with a structure tree in reading order
    expect(text).toMatch(/\/MarkInfo/);
    expect(text).toMatch(/\/Marked true/);
    expect(text).toMatch(/\/Lang \(en\)/);
    expect(text).toMatch(/\/StructTreeRoot/);
    for (const element of ['Document', 'Sect', 'Figure', 'Table']) expect(text).toContain(`/S /${element}`);
    expect(text).toMatch(/\/Alt \(Reputation chart: from 77 to 77 out of 100 over the period\.\)/);
    expect(text).toMatch(/\/DisplayDocTitle true/);
    // the promotions, and how many of them a Gmail recipient took to Primary
    expect(await pdfText(pdf)).toContain('1 promotions, 0 other 1 moved to Primary');
  });

  it('runs the mailbox table over as many pages as it needs', async () => {
    const res = await get('/api/stats/export?format=pdf', big);
    expect(res.statusCode).toBe(200);
    expect(pageCount(res.rawPayload)).toBe(3);
    expect(res.rawPayload.toString('latin1')).toContain('(Acme Outreach)');
  });

  it('narrows to one mailbox', async () => {
    const res = await get(`/api/stats/export?format=pdf&mailboxId=${mb.alice}`);
    expect(res.statusCode).toBe(200);
    expect(pageCount(res.rawPayload)).toBe(1);
  });
});

describe('the PDF report: placement tests and blocklists', () => {
  let seeded: TestWorkspace;
  const m = { sender: '', g1: '', g2: '', o1: '' };

  beforeAll(async () => {
    seeded = await t.createWorkspace('Placement Co');
    m.sender = await insertMailbox(seeded.id, 'sam@send.test');
    m.g1 = await insertMailbox(seeded.id, 'g1@seed.test');
    m.g2 = await insertMailbox(seeded.id, 'g2@seed.test');
    m.o1 = await insertMailbox(seeded.id, 'o1@seed.test');
    await placementTest(seeded.id, m.sender, 'Spring launch', '2026-03-10T09:30:00.000Z', [
      {
        seed: m.g1,
        provider: 'gmail',
        placement: 'inbox',
        verdict: { spf: 'pass', dkim: 'pass', dmarc: 'pass', spam_score: 0.4 },
      },
      {
        seed: m.g2,
        provider: 'gmail',
        placement: 'spam',
        verdict: { spf: 'pass', dkim: 'fail', dmarc: 'fail', spam_score: 5.2 },
      },
      { seed: m.o1, provider: 'outlook', placement: 'missing' },
    ]);
    await placementTest(seeded.id, m.g1, 'Still looked for', '2026-03-15T08:00:00.000Z', [
      { seed: m.o1, provider: 'outlook', placement: null },
    ]);
    // before the period, and another workspace's: never in this report
    await placementTest(seeded.id, m.sender, 'Last year', '2025-12-01T09:00:00.000Z', [
      { seed: m.g1, provider: 'gmail', placement: 'inbox' },
    ]);
    await placementTest(ws.id, mb.alice, 'Not theirs', '2026-03-12T09:00:00.000Z', [
      { seed: mb.quoted, provider: 'gmail', placement: 'inbox' },
    ]);
    const answer = (mailboxId: string, zone: string, subject: string, status: string, since: string | null) => ({
      mailbox_id: mailboxId,
      zone,
      subject,
      kind: subject.includes('@') || /^[\d.]+$/.test(subject) ? 'ip' : 'domain',
      status,
      detail: `${status} on ${zone}`,
      delist_url: zone.endsWith('spamhaus.org') ? 'https://check.spamhaus.org/' : null,
      listed_since: since,
      checked_at: '2026-03-15T06:00:00.000Z',
    });
    await t.database.db
      .insertInto('blocklist_results')
      .values([
        answer(m.sender, 'zen.spamhaus.org', '85.10.20.99', 'listed', '2026-03-13T06:00:00.000Z'),
        answer(m.sender, 'dbl.spamhaus.org', 'send.test', 'clear', null),
        answer(m.g1, 'bl.example.test', 'seed.test', 'listed', '2026-03-14T06:00:00.000Z'),
        answer(m.g1, 'bl.down.test', '85.10.20.1', 'unreachable', null),
        answer(mb.alice, 'zen.spamhaus.org', '85.10.20.50', 'listed', '2026-03-01T06:00:00.000Z'),
      ])
      .execute();
  });

  it('lists the placement tests of the period per provider, and each current listing with since when and where to delist', async () => {
    const res = await get('/api/stats/export?format=pdf&period=30d', seeded);
    expect(res.statusCode, res.body).toBe(200);
    const text = await pdfText(res.rawPayload);
    for (const line of [
      'Placement tests',
      '"Spring launch" From sam@send.test, sent 10 Mar 2026 09:30 UTC: completed',
      'Gmail: 1 inbox, 0 promotions, 1 spam, 0 missing. Receivers: SPF pass 100%, DKIM pass 50%, DMARC pass 50%, spam score 2.8',
      // a copy never found has no verdict
      'Outlook: 0 inbox, 0 promotions, 0 spam, 1 missing "Still',
      '"Still looked for" From g1@seed.test, sent 15 Mar 2026 08:00 UTC: waiting',
      'Outlook: 0 inbox, 0 promotions, 0 spam, 0 missing, 1 pending',
    ]) {
      expect(text).toContain(line);
    }
    expect(text).not.toContain('Last year');
    expect(text).not.toContain('Not theirs');

    expect(text).toContain('Blocklists');
    expect(text).toContain('2 listings now (4 answers, last asked 15 Mar 2026 06:00 UTC; 1 not answered, so unknown):');
    expect(text).toContain(
      'The address 85.10.20.99 (mail of sam@send.test) is listed on zen.spamhaus.org since 13 Mar 2026 06:00 UTC.',
    );
    expect(text).toContain('Ask for removal at https://check.spamhaus.org/');
    expect(text).toContain(
      'The domain seed.test (mail of g1@seed.test) is listed on bl.example.test since 14 Mar 2026 06:00 UTC.',
    );
    expect(text).toContain('The list names no removal page: see its own site.');
    expect(text).not.toContain('85.10.20.50');
  });

  it('narrowed to one mailbox: only the tests it sent and its own listings', async () => {
    const res = await get(`/api/stats/export?format=pdf&period=30d&mailboxId=${m.sender}`, seeded);
    expect(res.statusCode, res.body).toBe(200);
    const text = await pdfText(res.rawPayload);
    expect(text).toContain('"Spring launch"');
    expect(text).not.toContain('Still looked for');
    expect(text).toContain('1 listing now (2 answers, last asked 15 Mar 2026 06:00 UTC):');
    expect(text).not.toContain('seed.test (mail of');
  });

  it('says so in a line when there is nothing to list', async () => {
    const text = await pdfText((await get('/api/stats/export?format=pdf', big)).rawPayload);
    expect(text).toContain('No placement test was made in this period.');
    expect(text).toContain('No blocklist has been asked yet.');
    const clear = await pdfText(
      (await get(`/api/stats/export?format=pdf&period=7d&mailboxId=${m.o1}`, seeded)).rawPayload,
    );
    expect(clear).toContain('No placement test was made in this period.');
    expect(clear).toContain('No blocklist has been asked yet.');
    await t.database.db
      .insertInto('blocklist_results')
      .values({
        mailbox_id: m.o1,
        zone: 'zen.spamhaus.org',
        subject: '85.10.20.7',
        kind: 'ip',
        status: 'clear',
        detail: 'not listed',
        delist_url: null,
        listed_since: null,
        checked_at: '2026-03-15T06:00:00.000Z',
      })
      .execute();
    const none = await pdfText(
      (await get(`/api/stats/export?format=pdf&period=7d&mailboxId=${m.o1}`, seeded)).rawPayload,
    );
    expect(none).toContain('Listed on none of the blocklists asked (1 answer, last asked 15 Mar 2026 06:00 UTC).');
  });
});

describe('export errors', () => {
  it('needs a known format', async () => {
    expectProblem(await get('/api/stats/export'), 400, 'validation_error', '/query/format');
    expectProblem(await get('/api/stats/export?format=xml'), 400, 'validation_error', '/query/format');
    expectProblem(await get('/api/stats/export?format='), 400, 'validation_error', '/query/format');
  });

  it("answers 404 for another workspace's mailbox, before any byte of the file", async () => {
    for (const format of ['csv', 'json', 'pdf']) {
      const res = await get(`/api/stats/export?format=${format}&mailboxId=${mb.stranger}`);
      expectProblem(res, 404, 'not_found');
      expect(res.headers['content-disposition']).toBeUndefined();
    }
  });

  it('checks the period like every stats route', async () => {
    expectProblem(
      await get('/api/stats/export?format=pdf&startDate=2026-03-01'),
      400,
      'validation_error',
      '/query/endDate',
    );
    expectProblem(await get('/api/stats/export?format=json&period=1y'), 400, 'validation_error', '/query/period');
  });
});
