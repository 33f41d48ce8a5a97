import { describe, expect, it } from 'vitest';
import type { DnsCheck } from './checks.schemas.js';
import { dnsStatus } from './dns-status.js';

const pass = (check: DnsCheck['check']) => ({ check, status: 'pass' as const, fix: null });
const fail = (check: DnsCheck['check'], fix = `fix ${check}`) => ({ check, status: 'fail' as const, fix });
const ALL_PASS = [pass('mx'), pass('spf'), pass('dmarc'), pass('dkim')];
const listing = (zone: string, subject: string, status: 'listed' | 'clear' | 'unreachable' = 'listed') => ({
  zone,
  subject,
  status,
  delistUrl: zone.includes('spamhaus') ? 'https://check.spamhaus.org/' : null,
});

describe('dnsStatus', () => {
  it('is "Not checked yet" before the first daily run', () => {
    expect(dnsStatus([], [])).toEqual({ tone: 'unknown', label: 'Not checked yet', fix: null });
  });

  it('is ok when every check passes, a DKIM check without a selector included, and no list says listed', () => {
    const skipped = { check: 'dkim' as const, status: 'skipped' as const, fix: 'give the selector' };
    const clear = [
      listing('zen.spamhaus.org', '192.0.2.1', 'clear'),
      listing('bl.spamcop.net', '192.0.2.1', 'unreachable'),
    ];
    expect(dnsStatus([pass('mx'), pass('spf'), pass('dmarc'), skipped], clear)).toEqual({
      tone: 'ok',
      label: 'DNS ok',
      fix: null,
    });
  });

  it('names a failing check with its fix, SPF and DMARC before DKIM and MX whatever the order given', () => {
    expect(dnsStatus([pass('mx'), fail('dmarc'), pass('spf'), pass('dkim')], [])).toEqual({
      tone: 'error',
      label: 'DMARC failing',
      fix: 'fix dmarc',
    });
    expect(dnsStatus([fail('mx'), fail('dkim'), fail('dmarc'), fail('spf')], [])).toEqual({
      tone: 'error',
      label: 'SPF, DMARC, DKIM and MX failing',
      fix: 'fix spf',
    });
    expect(dnsStatus([fail('mx'), fail('dkim'), pass('spf'), pass('dmarc')], []).label).toBe('DKIM and MX failing');
  });

  it('counts the lists that list it, not the addresses, with where to ask for removal', () => {
    const listed = [
      listing('zen.spamhaus.org', '192.0.2.1'),
      listing('zen.spamhaus.org', '192.0.2.2'),
      listing('bl.spamcop.net', '192.0.2.3', 'clear'),
    ];
    expect(dnsStatus(ALL_PASS, listed)).toEqual({
      tone: 'error',
      label: 'Listed on 1 blocklist',
      fix: 'Find and stop what got 192.0.2.1 listed on zen.spamhaus.org, then ask for its removal at https://check.spamhaus.org/.',
    });
    const two = [listing('bl.example.net', 'example.com'), listing('dbl.spamhaus.org', 'example.com')];
    expect(dnsStatus(ALL_PASS, two)).toMatchObject({
      label: 'Listed on 2 blocklists',
      fix: 'Find and stop what got example.com listed on bl.example.net, then ask for its removal.',
    });
  });

  it('says both a failing check and a listing, the check first, its fix first', () => {
    expect(dnsStatus([fail('spf'), pass('dmarc')], [listing('zen.spamhaus.org', '192.0.2.1')])).toEqual({
      tone: 'error',
      label: 'SPF failing; listed on 1 blocklist',
      fix: 'fix spf',
    });
    // listed before its DNS was ever checked
    expect(dnsStatus([], [listing('zen.spamhaus.org', '192.0.2.1')]).label).toBe('Listed on 1 blocklist');
  });

  it('warns of a check the DNS server did not answer, below any failure', () => {
    const unanswered = { check: 'spf' as const, status: 'unreachable' as const, fix: 'try again later' };
    expect(dnsStatus([pass('mx'), unanswered, pass('dmarc')], [])).toEqual({
      tone: 'warn',
      label: 'SPF not answered',
      fix: 'try again later',
    });
    expect(dnsStatus([fail('mx'), unanswered], []).label).toBe('MX failing');
  });
});
