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

describe('an internal IPv4 address inside an IPv6 one (issue 28)', () => {
  // Each form reaches the IPv4 address it embeds where the network translates it (NAT64, SIIT) or
  // where the host stack does (mapped, compatible): loopback and metadata must stay out in all of them.
  it.each([
    ['NAT64', '64:ff9b::127.0.0.1'],
    ['NAT64', '64:ff9b::a9fe:a9fe'],
    ['NAT64', '64:FF9B:0:0:0:0:0a00:0001'],
    ['IPv4-compatible', '::127.0.0.1'],
    ['IPv4-compatible', '::a9fe:a9fe'],
    ['IPv4-compatible', '0:0:0:0:0:0:10.0.0.1'],
    ['IPv4-mapped', '::ffff:169.254.169.254'],
    ['IPv4-mapped', '0000:0000:0000:0000:0000:FFFF:7F00:0001'],
    ['IPv4-translated (SIIT)', '::ffff:0:127.0.0.1'],
    ['IPv4-translated (SIIT)', '::ffff:0:c0a8:101'],
    ['Teredo', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  ])('%s %s is internal', (_form, address) => {
    expect(isInternalAddress(address)).toBe(true);
  });

  it.each(['64:ff9b::8.8.8.8', '64:ff9b::5db8:d822', '::ffff:0:8.8.8.8'])(
    '%s embeds a public address and is public',
    (address) => {
      expect(isInternalAddress(address)).toBe(false);
    },
  );

  it('refuses a NAT64 form of loopback as a host, and an operator range still matches it', async () => {
    await expect(resolveMailHost('64:ff9b::7f00:1')).rejects.toBeInstanceOf(RefusedHostError);
    await expect(resolveMailHost('[::127.0.0.1]')).rejects.toBeInstanceOf(RefusedHostError);
    expect(matchesHostList(['127.0.0.0/8'], 'x', '64:ff9b::127.0.0.1')).toBe(true);
    expect(matchesHostList(['64:ff9b::/96'], 'x', '64:ff9b::127.0.0.1')).toBe(true);
  });
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
    expect(endpoint).toEqual({ address: '::1', plaintextAllowed: true, explained: false });
  });
});

describe('mail settings in the config', () => {
  it('are empty by default: public hosts only, TLS always, system CAs', () => {
    expect(loadConfig({}).mail).toEqual({
      allowedHosts: [],
      plaintextHosts: [],
      explainedHosts: [],
      caFile: undefined,
    });
  });

  it('read lists of names, addresses and CIDRs', () => {
    const config = loadConfig({
      WARMUP_MAIL_ALLOWED_HOSTS: '127.0.0.1, 10.0.0.0/8 mail.lan',
      WARMUP_MAIL_PLAINTEXT_HOSTS: 'mail.lan',
      WARMUP_MAIL_EXPLAINED_HOSTS: '10.0.0.0/8',
    });
    expect(config.mail.allowedHosts).toEqual(['127.0.0.1', '10.0.0.0/8', 'mail.lan']);
    expect(config.mail.plaintextHosts).toEqual(['mail.lan']);
    expect(config.mail.explainedHosts).toEqual(['10.0.0.0/8']);
  });

  it('tell a public address and an explained internal one by cause, not the rest of the network', async () => {
    const policy = { allowedHosts: ['127.0.0.0/8'], plaintextHosts: [], explainedHosts: ['127.0.0.2'] };
    expect((await resolveMailHost('8.8.8.8', policy)).explained).toBe(true);
    expect((await resolveMailHost('127.0.0.2', policy)).explained).toBe(true);
    expect((await resolveMailHost('127.0.0.1', policy)).explained).toBe(false);
  });

  it('refuse an entry that is none of those, naming the setting', () => {
    expect(() => loadConfig({ WARMUP_MAIL_ALLOWED_HOSTS: '10.0.0.0/99' })).toThrow(ConfigError);
    expect(() => loadConfig({ WARMUP_MAIL_ALLOWED_HOSTS: 'http://x' })).toThrow(/WARMUP_MAIL_ALLOWED_HOSTS/);
  });
});
