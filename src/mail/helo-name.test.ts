// The SMTP greeting names a host, never an address: the operator's name, the public URL's host,
// else the machine's.
import { describe, expect, it } from 'vitest';
import { heloNameOf, isHostName, operatorHostName } from './helo-name.js';

describe('the EHLO name', () => {
  it('is the configured name, else the machine name; an address never passes as a name', () => {
    const policy = { allowedHosts: [], plaintextHosts: [] };
    expect(heloNameOf({ ...policy, heloName: 'mail.example.org' }, 'vm')).toBe('mail.example.org');
    expect(heloNameOf(policy, 'desk-7.example.org')).toBe('desk-7.example.org');
    expect(heloNameOf(policy, 'vm')).toBe('vm');
    expect(heloNameOf({ ...policy, heloName: '[127.0.0.1]' }, '10.0.0.8')).toBe('localhost');
    for (const literal of ['127.0.0.1', '[127.0.0.1]', '::1', '[IPv6:::1]', ''])
      expect(isHostName(literal)).toBe(false);
  });

  it('comes from WARMUP_HOSTNAME, else the host of WARMUP_PUBLIC_URL when that is a name', () => {
    expect(operatorHostName('mx.example.org', 'https://warmup.example.org')).toBe('mx.example.org');
    expect(operatorHostName(undefined, 'https://warmup.example.org:8443/app')).toBe('warmup.example.org');
    expect(operatorHostName(undefined, 'http://192.0.2.7:3000')).toBeUndefined();
    expect(operatorHostName(undefined, 'http://localhost:3000')).toBeUndefined();
  });
});
