import { readFileSync } from 'node:fs';
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { mayBeReport, parseReportAttachment, type ParsedAttachment } from './report-parser.js';

const FIXTURES = new URL('../../test/fixtures/dmarc/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(encodeURIComponent(name).replaceAll('%21', '!'), FIXTURES));

interface ZipMember {
  name: string;
  data: Buffer;
  /** Deflate (default) or store. */
  stored?: boolean;
  /** A lie in the central directory: the declared inflated size. */
  declaredSize?: number;
}

/** A zip file as any archiver writes one: local headers, data, central directory, end record. */
function buildZip(members: ZipMember[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const m of members) {
    const packed = m.stored ? m.data : deflateRawSync(m.data);
    const name = Buffer.from(m.name);
    const size = m.declaredSize ?? m.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(m.stored ? 0 : 8, 8);
    local.writeUInt32LE(crc32(m.data), 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(m.stored ? 0 : 8, 10);
    central.writeUInt32LE(crc32(m.data), 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, packed);
    centrals.push(central, name);
    offset += 30 + name.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const SMALL_REPORT = `<?xml version="1.0"?>
<feedback>
  <report_metadata><org_name>Example &amp; Co</org_name><report_id>r-1</report_id>
    <date_range><begin>1700000000</begin><end>1700086399</end></date_range></report_metadata>
  <policy_published><domain>Example.com</domain><p>quarantine</p><pct>100</pct></policy_published>
  <record><row><source_ip>192.0.2.1</source_ip><count>7</count>
    <policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>fail</spf></policy_evaluated></row>
    <identifiers><header_from>example.com</header_from></identifiers>
    <auth_results><dkim><domain>example.com</domain><result>pass</result></dkim>
      <spf><domain>mail.example.net</domain><result>pass</result></spf></auth_results></record>
</feedback>`;

/** Parses and says how long it took: every refusal must come fast, whatever the input claims. */
function timed(bytes: Buffer): { parsed: ParsedAttachment; ms: number } {
  const started = performance.now();
  const parsed = parseReportAttachment(bytes);
  return { parsed, ms: performance.now() - started };
}

function expectRefused(bytes: Buffer, code: string, withinMs = 1_000): void {
  const { parsed, ms } = timed(bytes);
  expect(parsed).toMatchObject({ ok: false, code });
  expect(ms).toBeLessThan(withinMs);
}

describe('hostile attachments are refused, fast and in bounded memory', () => {
  it('a gzip bomb (a few KiB inflating to 1 GiB of zeros) stops at the 20 MiB cap', () => {
    // 1 GiB of zeros deflates to about 1 MiB; gzip a 64 MiB block 16 times over, as one stream
    const block = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    const bomb = Buffer.concat(Array.from({ length: 16 }, () => block));
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    expectRefused(bomb, 'oversized');
  });

  it('a zip bomb that declares its size honestly is refused before inflating', () => {
    const zip = buildZip([{ name: 'report.xml', data: Buffer.alloc(40 * 1024 * 1024) }]);
    expectRefused(zip, 'oversized', 200);
  });

  it('a zip bomb that lies about its size stops at the declared size', () => {
    const zip = buildZip([{ name: 'report.xml', data: Buffer.alloc(40 * 1024 * 1024), declaredSize: 1_000 }]);
    expectRefused(zip, 'oversized');
  });

  it('a zip of many files, or of another archive, or a gzip of a gzip, is refused', () => {
    const many = buildZip(
      Array.from({ length: 50 }, (_, k) => ({ name: `r${k}.xml`, data: Buffer.from(SMALL_REPORT) })),
    );
    expectRefused(many, 'too_many_entries');
    const inner = buildZip([{ name: 'report.xml', data: Buffer.from(SMALL_REPORT) }]);
    expectRefused(buildZip([{ name: 'report.zip', data: inner }]), 'nested_archive');
    expectRefused(buildZip([{ name: 'report.xml', data: inner }]), 'nested_archive');
    expectRefused(gzipSync(gzipSync(Buffer.from(SMALL_REPORT))), 'nested_archive');
  });

  it('truncated archives are damaged, not half-read', () => {
    const gz = gzipSync(Buffer.from(SMALL_REPORT));
    expectRefused(gz.subarray(0, gz.length - 12), 'damaged');
    const zip = buildZip([{ name: 'report.xml', data: Buffer.from(SMALL_REPORT) }]);
    expectRefused(zip.subarray(0, zip.length - 30), 'damaged');
    expectRefused(zip.subarray(0, 40), 'damaged');
  });

  it('an attachment over 10 MiB is not read at all', () => {
    expectRefused(Buffer.alloc(11 * 1024 * 1024, 0x20), 'oversized');
  });

  it('billion laughs: any DOCTYPE, and so any entity declaration, is refused', () => {
    const laughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_, k) => `<!ENTITY lol${k + 1} "${`&lol${k || ''};`.repeat(10)}">`).join('')}]>
<feedback><report_metadata><org_name>&lol9;</org_name></report_metadata></feedback>`;
    expectRefused(Buffer.from(laughs), 'doctype', 50);
    expectRefused(gzipSync(Buffer.from(laughs)), 'doctype', 50);
    // an entity never declared is not expanded either
    expectRefused(Buffer.from(SMALL_REPORT.replace('&amp;', '&lol;')), 'entity', 50);
  });

  it('deep nesting is refused at a small depth', () => {
    const deep = `<feedback>${'<a>'.repeat(500_000)}${'</a>'.repeat(500_000)}</feedback>`;
    expectRefused(Buffer.from(deep), 'malformed', 200);
  });

  it('a huge attribute (or tag) is refused without scanning the rest', () => {
    const huge = `<feedback a="${'x'.repeat(8 * 1024 * 1024)}"><report_metadata/></feedback>`;
    expectRefused(Buffer.from(huge), 'oversized', 200);
    expectRefused(gzipSync(Buffer.from(huge)), 'oversized');
  });

  it('a huge value is refused; a long run of text nobody keeps is only passed over', () => {
    const value = SMALL_REPORT.replace('r-1', 'r'.repeat(2_000));
    expectRefused(Buffer.from(value), 'oversized', 50);
    const padding = SMALL_REPORT.replace('<record>', `<extra>${' x'.repeat(4 * 1024 * 1024)}</extra><record>`);
    const { parsed, ms } = timed(Buffer.from(padding));
    expect(parsed.ok).toBe(true);
    expect(ms).toBeLessThan(1_000);
  });

  it('more records than the cap is refused', () => {
    const record = SMALL_REPORT.slice(SMALL_REPORT.indexOf('<record>'), SMALL_REPORT.indexOf('</feedback>'));
    const many = SMALL_REPORT.replace('</feedback>', `${record.repeat(60_000)}</feedback>`);
    expectRefused(gzipSync(Buffer.from(many)), 'oversized', 2_000);
  });

  it('what is not a report is set aside as not a report', () => {
    expectRefused(Buffer.from('<html><body>hello</body></html>'), 'not_a_report');
    expectRefused(Buffer.from('just some text'), 'not_a_report');
    expectRefused(Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj'), 'not_a_report');
    expectRefused(Buffer.from(SMALL_REPORT.replace('<report_id>r-1</report_id>', '')), 'not_a_report');
    expectRefused(Buffer.from(SMALL_REPORT.replace('192.0.2.1', 'not-an-ip')), 'malformed');
    expectRefused(Buffer.from(SMALL_REPORT.replace('<count>7</count>', '<count>1e9</count>')), 'malformed');
    expectRefused(Buffer.from(SMALL_REPORT.replace('</feedback>', '')), 'malformed');
  });
});

describe('reports are read', () => {
  it('from plain XML, gzip and zip alike, with references resolved and names lower-cased', () => {
    for (const bytes of [
      Buffer.from(SMALL_REPORT),
      gzipSync(Buffer.from(SMALL_REPORT)),
      buildZip([
        { name: 'folder/', data: Buffer.alloc(0), stored: true },
        { name: 'r.xml', data: Buffer.from(SMALL_REPORT) },
      ]),
      buildZip([{ name: 'r.xml', data: Buffer.from(SMALL_REPORT), stored: true }]),
    ]) {
      const parsed = parseReportAttachment(bytes);
      expect(parsed).toEqual({
        ok: true,
        report: {
          orgName: 'Example & Co',
          reportId: 'r-1',
          begin: 1700000000,
          end: 1700086399,
          policy: { domain: 'example.com', p: 'quarantine', sp: null, pct: 100, adkim: null, aspf: null },
          records: [
            {
              sourceIp: '192.0.2.1',
              count: 7,
              disposition: 'none',
              dkimAligned: 'pass',
              spfAligned: 'fail',
              dkimResult: 'pass',
              spfResult: 'pass',
              headerFrom: 'example.com',
            },
          ],
        },
      });
    }
  });

  it("DMARCbis's namespaced elements read as the plain ones", () => {
    const bis = SMALL_REPORT.replace('<feedback>', '<d:feedback xmlns:d="urn:ietf:params:xml:ns:dmarc-2.0">')
      .replace('</feedback>', '</d:feedback>')
      .replaceAll('<record>', '<d:record>')
      .replaceAll('</record>', '</d:record>');
    expect(parseReportAttachment(Buffer.from(bis))).toMatchObject({ ok: true, report: { records: [{ count: 7 }] } });
  });

  // The figures below are what Python's xml.etree.ElementTree reads from the same files (a
  // one-off check: each file unpacked with gzip/zipfile, then findtext on report_metadata,
  // policy_published and each record's row, identifiers and auth_results/spf/result; the sum of
  // the counts is the report's messages).
  const row = (sourceIp: string, disposition: string, spfAligned: string, spfResult: string) => ({
    sourceIp,
    count: 1,
    disposition,
    dkimAligned: 'fail',
    spfAligned,
    dkimResult: null,
    spfResult,
    headerFrom: 'example.com',
  });
  it.each([
    {
      file: 'google.com!example.com!1549929600!1550015999.zip',
      orgName: 'google.com',
      reportId: '949348866075514174',
      begin: 1549929600,
      end: 1550015999,
      policy: { p: 'reject', sp: 'reject' },
      records: [row('192.0.2.10', 'reject', 'fail', 'fail')],
    },
    {
      file: 'google.com!example.com!1538438400!1538524799.zip',
      orgName: 'google.com',
      reportId: '15591417298178277408',
      begin: 1538438400,
      end: 1538524799,
      policy: { p: 'none', sp: 'none' },
      // SPF passed for another domain (example.org): not aligned, so policy_evaluated says fail
      records: [row('192.0.2.50', 'none', 'fail', 'pass'), row('192.0.2.51', 'none', 'fail', 'pass')],
    },
    {
      file: 'protection.outlook.com!example.com!1711756800!1711843200.xml',
      orgName: 'Outlook.com',
      reportId: 'cfeafefe4129445e8c81018bd9177197',
      begin: 1711756800,
      end: 1711843200,
      policy: { p: 'none', sp: 'none' },
      records: [row('192.0.2.20', 'none', 'fail', 'fail')],
    },
    {
      file: 'fastmail.com!example.com!1516060800!1516147199!102675056.xml.gz',
      orgName: 'FastMail Pty Ltd',
      reportId: '102675056',
      begin: 1516060800,
      end: 1516147199,
      policy: { p: 'none', sp: 'none' },
      records: [row('192.0.2.30', 'none', 'fail', 'softfail')],
    },
    {
      file: 'esa1.example.c3s2.iphmx.com!example.com!1538604008!1538690408.xml.gz',
      orgName: 'esa1.example.c3s2.iphmx.com',
      reportId: '1a6ffb$9f77bea=6b2f4786a9824806@esa1.example.c3s2.iphmx.com',
      begin: 1538604008,
      end: 1538690408,
      // an empty <sp></sp> is no subdomain policy
      policy: { p: 'none', sp: null },
      records: [row('192.0.2.40', 'none', 'pass', 'pass')],
    },
  ])('the real report $file reads as a reference parser reads it', ({ file, policy, ...report }) => {
    expect(parseReportAttachment(fixture(file))).toEqual({
      ok: true,
      report: { ...report, policy: expect.objectContaining({ domain: 'example.com', ...policy }) },
    });
  });

  it('only attachments named or typed as XML, gzip or zip are opened', () => {
    expect(mayBeReport('google.com!example.com!1!2.zip', 'application/octet-stream')).toBe(true);
    expect(mayBeReport('report.xml.gz', null)).toBe(true);
    expect(mayBeReport(null, 'application/gzip')).toBe(true);
    expect(mayBeReport('invoice.pdf', 'application/pdf')).toBe(false);
    expect(mayBeReport(null, 'text/plain')).toBe(false);
  });
});
