import { describe, expect, it } from 'vitest';
import { blocklistZones, DEFAULT_DOMAIN_ZONES, DEFAULT_IP_ZONES, reversedAddress } from './blocklists.js';

describe('reversedAddress', () => {
  it('reverses an IPv4 address by octet and an IPv6 address by nibble (RFC 5782)', () => {
    expect(reversedAddress('85.10.20.99')).toBe('99.20.10.85');
    expect(reversedAddress('2001:db8::1')).toBe('1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2');
  });
});

describe('blocklistZones', () => {
  it('asks the public zones by default, each with its delist page', () => {
    expect(blocklistZones({ ipZones: DEFAULT_IP_ZONES, domainZones: DEFAULT_DOMAIN_ZONES })).toEqual([
      { name: 'zen.spamhaus.org', query: 'zen.spamhaus.org', kind: 'ip', delistUrl: 'https://check.spamhaus.org/' },
      {
        name: 'b.barracudacentral.org',
        query: 'b.barracudacentral.org',
        kind: 'ip',
        delistUrl: 'https://www.barracudacentral.org/rbl/removal-request',
      },
      { name: 'bl.spamcop.net', query: 'bl.spamcop.net', kind: 'ip', delistUrl: 'https://www.spamcop.net/bl.shtml' },
      { name: 'dbl.spamhaus.org', query: 'dbl.spamhaus.org', kind: 'domain', delistUrl: 'https://check.spamhaus.org/' },
    ]);
  });

  it("moves Spamhaus's zones to DQS with the key in the query only, and leaves a list without a known page without one", () => {
    expect(
      blocklistZones({ ipZones: ['zen.spamhaus.org', 'bl.example.net'], domainZones: [], spamhausDqsKey: 'k3y' }),
    ).toEqual([
      {
        name: 'zen.dq.spamhaus.net',
        query: 'k3y.zen.dq.spamhaus.net',
        kind: 'ip',
        delistUrl: 'https://check.spamhaus.org/',
      },
      { name: 'bl.example.net', query: 'bl.example.net', kind: 'ip', delistUrl: null },
    ]);
  });
});
