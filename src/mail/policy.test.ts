import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../config.js';
import { isInternalAddress, matchesHostList, resolveMailHost, RefusedHostError } from './policy.js';

describe('isInternalAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.10',
    '169.254.169.254',
    '100.100.100.200',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:10.0.0.1',
    'fe80::1',
    'fd00:ec2::254',
    'ff02::1',
  ])('%s is internal', (address) => {
    expect(isInternalAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '172.32.0.1', '93.184.216.34', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8'])(
    '%s is public',
    (address) => {
      expect(isInternalAddress(address)).toBe(false);
    },
  );
});

describe('matchesHostList', () => {
  it('matches names (any case), addresses and CIDR ranges', () => {
    const list = ['mail.lan', '127.0.0.1', '10.0.0.0/8', 'fd00::/8'];
    expect(matchesHostList(list, 'MAIL.lan', '192.0.2.1')).toBe(true);
    expect(matchesHostList(list, 'x', '127.0.0.1')).toBe(true);
    expect(matchesHostList(list, 'x', '::ffff:127.0.0.1')).toBe(true);
    expect(matchesHostList(list, 'x', '10.200.3.4')).toBe(true);
    expect(matchesHostList(list, 'x', 'fd12::1')).toBe(true);
    expect(matchesHostList(list, 'x', '127.0.0.2')).toBe(false);
    expect(matchesHostList(list, 'other.lan', '192.168.1.1')).toBe(false);
  });
});

describe('resolveMailHost', () => {
  it('refuses a name that resolves to loopback unless the address is allowed', async () => {
    await expect(resolveMailHost('localhost')).rejects.toBeInstanceOf(RefusedHostError);
    const allowed = await resolveMailHost('localhost', { allowedHosts: ['127.0.0.1', '::1'], plaintextHosts: [] });
    expect(['127.0.0.1', '::1']).toContain(allowed.address);
    expect(allowed).toMatchObject({ servername: 'localhost', plaintextAllowed: false });
  });

  it('an address needs no lookup and has no servername', async () => {
    const endpoint = await resolveMailHost('[::1]', { allowedHosts: ['::1'], plaintextHosts: ['::1'] });
    expect(endpoint).toEqual({ address: '::1', plaintextAllowed: true });
  });
});

describe('mail settings in the config', () => {
  it('are empty by default: public hosts only, TLS always, system CAs', () => {
    expect(loadConfig({}).mail).toEqual({ allowedHosts: [], plaintextHosts: [], caFile: undefined });
  });

  it('read lists of names, addresses and CIDRs', () => {
    const config = loadConfig({
      WARMUP_MAIL_ALLOWED_HOSTS: '127.0.0.1, 10.0.0.0/8 mail.lan',
      WARMUP_MAIL_PLAINTEXT_HOSTS: 'mail.lan',
    });
    expect(config.mail.allowedHosts).toEqual(['127.0.0.1', '10.0.0.0/8', 'mail.lan']);
    expect(config.mail.plaintextHosts).toEqual(['mail.lan']);
  });

  it('refuse an entry that is none of those, naming the setting', () => {
    expect(() => loadConfig({ WARMUP_MAIL_ALLOWED_HOSTS: '10.0.0.0/99' })).toThrow(ConfigError);
    expect(() => loadConfig({ WARMUP_MAIL_ALLOWED_HOSTS: 'http://x' })).toThrow(/WARMUP_MAIL_ALLOWED_HOSTS/);
  });
});
