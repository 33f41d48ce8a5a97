// The reverse names of DMARC report sources, asked of a real DNS server on loopback (the resolver the
// DNS checks use): a name published is shown beside its address, a hostile or missing one is not, a
// dead resolver costs a bounded time, each address is asked once, not on every pass, and an internal
// address is never asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../clock.js';
import { createDnsResolver } from '../checks/dns-resolver.js';
import { deadDnsPort, startDnsServer, type TestDnsServer } from '../../test/helpers/dns-server.js';
import { createTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { insertReport } from './dmarc.repository.js';
import { parseReportAttachment, type AggregateReport } from './report-parser.js';
import { nameDmarcSources, reverseQueryName, usableName } from './source-names.js';

function report(id: string, day: string, ips: string[]): AggregateReport {
  const begin = Date.parse(`${day}T00:00:00Z`) / 1000;
  const xml = `<feedback><report_metadata><org_name>google.com</org_name><report_id>${id}</report_id>
    <date_range><begin>${begin}</begin><end>${begin + 86_399}</end></date_range></report_metadata>
    <policy_published><domain>example.com</domain><p>none</p></policy_published>
    ${ips
      .map(
        (ip) => `<record><row><source_ip>${ip}</source_ip><count>3</count><policy_evaluated>
          <disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>
          <identifiers><header_from>example.com</header_from></identifiers></record>`,
      )
      .join('')}</feedback>`;
  const parsed = parseReportAttachment(Buffer.from(xml));
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.report;
}

describe('reverse names of DMARC sources', () => {
  const at = '2024-04-05T12:00:00.000Z';
  let testApp: TestApp;
  let dns: TestDnsServer;
  const queries: string[] = [];

  beforeAll(async () => {
    testApp = await createTestApp({ clock: fixedClock(at) });
    dns = await startDnsServer({
      [reverseQueryName('209.85.208.44')]: [{ type: 'PTR', domain: 'mail-out.example.com.' }],
      [reverseQueryName('2a00:1450:4001:82b::3')]: [{ type: 'PTR', domain: 'MX6.Example.NET' }],
      // a name no host can have, shown to the operator as it came
      [reverseQueryName('40.107.22.55')]: [{ type: 'PTR', domain: '<b>click!</b>.example' }],
      // 52.100.0.9 publishes nothing (NXDOMAIN)
    });
    const resolve = createDnsResolver({ servers: [dns.address], timeoutMs: 1_000 });
    const counting = (name: string, type: string) => {
      queries.push(name);
      return resolve(name, type);
    };
    const ips = ['209.85.208.44', '2a00:1450:4001:82b::3', '40.107.22.55', '52.100.0.9'];
    expect(await insertReport(testApp.database.db, testApp.workspace.id, report('1', '2024-04-01', ips), at)).toBe(
      'stored',
    );
    expect(await nameDmarcSources(testApp.database.db, counting)).toEqual({ asked: 4, named: 2 });
  });

  afterAll(async () => {
    await dns?.close();
    await testApp?.close();
  });

  it('shows the published names beside their addresses, in lower case without the root dot', async () => {
    const response = await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/domains/example.com' });
    expect(response.statusCode).toBe(200);
    const names = Object.fromEntries(
      (response.json().sources as Array<{ ip: string; name: string | null }>).map((s) => [s.ip, s.name]),
    );
    expect(names).toEqual({
      '209.85.208.44': 'mail-out.example.com',
      '2a00:1450:4001:82b::3': 'mx6.example.net',
      '40.107.22.55': null,
      '52.100.0.9': null,
    });
  });

  it('asks each address once: a second pass asks nothing, a new report of a known address asks it again', async () => {
    queries.length = 0;
    const resolve = createDnsResolver({ servers: [dns.address], timeoutMs: 1_000 });
    expect(await nameDmarcSources(testApp.database.db, resolve)).toEqual({ asked: 0, named: 0 });
    await insertReport(testApp.database.db, testApp.workspace.id, report('2', '2024-04-02', ['52.100.0.9']), at);
    dns.zones[reverseQueryName('52.100.0.9')] = [{ type: 'PTR', domain: 'late.example.org' }];
    expect(await nameDmarcSources(testApp.database.db, resolve)).toEqual({ asked: 1, named: 1 });
    const response = await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/domains/example.com' });
    expect(response.json().sources).toContainEqual(
      expect.objectContaining({ ip: '52.100.0.9', name: 'late.example.org' }),
    );
  });

  it("never asks the reverse name of an internal address a report names: the host's own network stays unseen", async () => {
    const internal = ['10.0.0.5', '127.0.0.1', '169.254.169.254', 'fd00:ec2::254', '::ffff:192.168.1.10'];
    for (const ip of internal) dns.zones[reverseQueryName(ip)] = [{ type: 'PTR', domain: 'db-primary.corp.internal' }];
    await insertReport(testApp.database.db, testApp.workspace.id, report('4', '2024-04-04', internal), at);
    queries.length = 0;
    const resolve = createDnsResolver({ servers: [dns.address], timeoutMs: 1_000 });
    const counting = (name: string, type: string) => {
      queries.push(name);
      return resolve(name, type);
    };
    expect(await nameDmarcSources(testApp.database.db, counting)).toEqual({ asked: 0, named: 0 });
    expect(queries).toEqual([]);
    const response = await testApp.workspace.request({ method: 'GET', url: '/api/dmarc/domains/example.com' });
    expect(response.body).not.toContain('corp.internal');
    // marked as asked: the next pass does not come back to them
    expect(await nameDmarcSources(testApp.database.db, counting)).toEqual({ asked: 0, named: 0 });
  });

  it('gives up on a resolver that does not answer within its timeout, and keeps the address unnamed', async () => {
    await insertReport(testApp.database.db, testApp.workspace.id, report('3', '2024-04-03', ['198.2.128.50']), at);
    const dead = createDnsResolver({ servers: [`127.0.0.1:${await deadDnsPort()}`], timeoutMs: 500 });
    const started = Date.now();
    expect(await nameDmarcSources(testApp.database.db, dead)).toEqual({ asked: 1, named: 0 });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('usableName', () => {
  it('keeps a host name and refuses anything else a PTR answer may hold', () => {
    expect(usableName('Mail.Example.com.')).toBe('mail.example.com');
    expect(usableName('a'.repeat(64) + '.example')).toBeNull();
    expect(usableName('x'.repeat(10_000))).toBeNull();
    expect(usableName('evil name.example')).toBeNull();
    expect(usableName('<script>.example')).toBeNull();
    expect(usableName('a..b')).toBeNull();
    expect(usableName('')).toBeNull();
    expect(usableName(42)).toBeNull();
  });
});
