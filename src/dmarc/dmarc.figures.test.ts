// What the kept reports add up to, per domain, day and source, on each database: reports built from
// a template report (RFC 7489 appendix C's shape), kept through the same insert the job uses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { createMailbox } from '../../test/helpers/engine.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { insertReport, insertSetAside } from './dmarc.repository.js';
import { parseReportAttachment, type AggregateReport } from './report-parser.js';

interface Row {
  ip: string;
  count: number;
  disposition: string;
  dkim: string;
  spf: string;
}

function report(org: string, id: string, domain: string, day: string, rows: Row[]): AggregateReport {
  const begin = Date.parse(`${day}T00:00:00Z`) / 1000;
  const xml = `<feedback><report_metadata><org_name>${org}</org_name><report_id>${id}</report_id>
    <date_range><begin>${begin}</begin><end>${begin + 86_399}</end></date_range></report_metadata>
    <policy_published><domain>${domain}</domain><p>quarantine</p></policy_published>
    ${rows
      .map(
        (r) => `<record><row><source_ip>${r.ip}</source_ip><count>${r.count}</count><policy_evaluated>
          <disposition>${r.disposition}</disposition><dkim>${r.dkim}</dkim><spf>${r.spf}</spf></policy_evaluated></row>
          <identifiers><header_from>${domain}</header_from></identifiers></record>`,
      )
      .join('')}</feedback>`;
  const parsed = parseReportAttachment(Buffer.from(xml));
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.report;
}

describe('DMARC figures per domain, day and source', () => {
  let testApp: TestApp;
  const at = '2024-04-05T12:00:00.000Z';

  beforeAll(async () => {
    testApp = await createTestApp({ clock: fixedClock(at) });
    const db = testApp.database.db;
    const ws = testApp.workspace.id;
    const first = report('a.example', '1', 'example.com', '2024-04-01', [
      { ip: '192.0.2.1', count: 10, disposition: 'none', dkim: 'pass', spf: 'fail' },
      { ip: '192.0.2.2', count: 5, disposition: 'quarantine', dkim: 'fail', spf: 'fail' },
      { ip: '192.0.2.4', count: 4, disposition: 'none', dkim: 'fail', spf: 'pass' },
    ]);
    expect(await insertReport(db, ws, first, at)).toBe('stored');
    // the same report read again, and the same id from another organisation (a report of its own)
    expect(await insertReport(db, ws, first, at)).toBe('duplicate');
    expect(
      await insertReport(
        db,
        ws,
        report('b.example', '1', 'example.com', '2024-04-02', [
          { ip: '192.0.2.1', count: 3, disposition: 'none', dkim: 'pass', spf: 'pass' },
          { ip: '2001:db8::3', count: 2, disposition: 'reject', dkim: 'fail', spf: 'fail' },
        ]),
        at,
      ),
    ).toBe('stored');
    // outside the 30 days
    const old = report('a.example', '2', 'other.example', '2024-01-01', [
      { ip: '192.0.2.9', count: 1, disposition: 'none', dkim: 'pass', spf: 'pass' },
    ]);
    expect(await insertReport(db, ws, old, at)).toBe('stored');
    const mailboxId = await createMailbox(testApp.workspace, 'rua@example.com');
    for (const code of ['damaged', 'oversized', 'damaged']) {
      await insertSetAside(db, {
        workspaceId: ws,
        mailboxId,
        subject: 's',
        code,
        reason: `${code} reason`,
        now: at,
      });
    }
  });

  afterAll(async () => {
    await testApp?.close();
  });

  it('adds up each domain of the last 30 days, and the messages set aside by reason', async () => {
    const response = await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/domains' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      from: '2024-03-07',
      to: '2024-04-05',
      domains: [
        {
          domain: 'example.com',
          messages: 24,
          dmarcPass: 17,
          spfAlignedPass: 7,
          dkimAlignedPass: 13,
          dispositions: { none: 17, quarantine: 5, reject: 2 },
          alignedShare: 17 / 24,
          sources: 4,
          reports: 2,
          lastReportAt: at,
        },
      ],
      setAside: {
        count: 3,
        reasons: [
          { code: 'damaged', count: 2, latest: 'damaged reason' },
          { code: 'oversized', count: 1, latest: 'oversized reason' },
        ],
      },
    });
  });

  it('gives one domain per day and per source, the most messages first', async () => {
    const response = await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/domains/example.com' });
    expect(response.json()).toEqual({
      domain: 'example.com',
      from: '2024-03-07',
      to: '2024-04-05',
      days: [
        {
          day: '2024-04-01',
          messages: 19,
          dmarcPass: 14,
          spfAlignedPass: 4,
          dkimAlignedPass: 10,
          dispositions: { none: 14, quarantine: 5, reject: 0 },
          reports: 1,
        },
        {
          day: '2024-04-02',
          messages: 5,
          dmarcPass: 3,
          spfAlignedPass: 3,
          dkimAlignedPass: 3,
          dispositions: { none: 3, quarantine: 0, reject: 2 },
          reports: 1,
        },
      ],
      sources: [
        {
          ip: '192.0.2.1',
          name: null,
          messages: 13,
          dmarcPass: 13,
          spfAlignedPass: 3,
          dkimAlignedPass: 13,
          dispositions: { none: 13, quarantine: 0, reject: 0 },
        },
        {
          ip: '192.0.2.2',
          name: null,
          messages: 5,
          dmarcPass: 0,
          spfAlignedPass: 0,
          dkimAlignedPass: 0,
          dispositions: { none: 0, quarantine: 5, reject: 0 },
        },
        {
          ip: '192.0.2.4',
          name: null,
          messages: 4,
          dmarcPass: 4,
          spfAlignedPass: 4,
          dkimAlignedPass: 0,
          dispositions: { none: 4, quarantine: 0, reject: 0 },
        },
        {
          ip: '2001:db8::3',
          name: null,
          messages: 2,
          dmarcPass: 0,
          spfAlignedPass: 0,
          dkimAlignedPass: 0,
          dispositions: { none: 0, quarantine: 0, reject: 2 },
        },
      ],
    });
  });

  it('shows another workspace nothing of these', async () => {
    const other = await testApp.createWorkspace('Someone else');
    expect((await other.request({ method: 'GET', url: '/api/dmarc/domains' })).json()).toMatchObject({
      domains: [],
      setAside: { count: 0, reasons: [] },
    });
    expect((await other.request({ method: 'GET', url: '/api/dmarc/domains/example.com' })).json()).toMatchObject({
      days: [],
      sources: [],
    });
  });

  it('stops reading reports when the source is removed, and keeps the figures already read', async () => {
    const mailboxId = await createMailbox(testApp.workspace, 'reports@example.com');
    const named = await testApp.workspace.request({
      method: 'PUT',
      url: '/api/dmarc/source',
      payload: { mailboxId, folder: 'DMARC' },
    });
    expect(named.statusCode, named.body).toBe(200);
    const other = await testApp.createWorkspace('Another one');
    const otherMailbox = await createMailbox(other, 'reports@other.example');
    await other.request({
      method: 'PUT',
      url: '/api/dmarc/source',
      payload: { mailboxId: otherMailbox, folder: 'INBOX' },
    });
    const before = (await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/domains' })).json();

    const removed = await testApp.workspace.request({ method: 'DELETE', url: '/api/dmarc/source' });
    expect(removed.statusCode, removed.body).toBe(204);
    expect((await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/source' })).json()).toEqual({
      source: null,
    });
    expect((await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/domains' })).json()).toEqual(before);
    expect((await other.request({ method: 'GET', url: '/api/dmarc/source' })).json().source).toMatchObject({
      mailboxId: otherMailbox,
    });

    const again = await testApp.workspace.request({ method: 'DELETE', url: '/api/dmarc/source' });
    expect(again.statusCode).toBe(404);
    expect(again.headers['content-type']).toContain('application/problem+json');
    expect(again.json()).toMatchObject({ code: 'not_found', detail: 'no DMARC report source is named' });
  });
});
