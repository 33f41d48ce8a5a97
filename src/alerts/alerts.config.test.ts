import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';

const FULL = {
  WARMUP_ALERT_SMTP_HOST: 'smtp.example.com',
  WARMUP_ALERT_SMTP_USER: 'alerts@example.com',
  WARMUP_ALERT_SMTP_PASSWORD: 'p4ss word with spaces',
  WARMUP_ALERT_FROM: 'Warmup alerts <alerts@example.com>',
};

describe('the email alert settings', () => {
  it('are off when unset, and read whole when set, with the port of the TLS mode', () => {
    expect(loadConfig({}).alertMail).toBeUndefined();
    expect(loadConfig(FULL).alertMail).toEqual({
      host: 'smtp.example.com',
      port: 587,
      tls: 'starttls',
      username: 'alerts@example.com',
      password: 'p4ss word with spaces',
      from: 'Warmup alerts <alerts@example.com>',
    });
    expect(loadConfig({ ...FULL, WARMUP_ALERT_SMTP_TLS: 'implicit' }).alertMail?.port).toBe(465);
    expect(loadConfig({ ...FULL, WARMUP_ALERT_SMTP_TLS: 'none', WARMUP_ALERT_SMTP_PORT: '2525' }).alertMail?.port).toBe(
      2525,
    );
  });

  it('refuse a half-configured server, naming what is missing and never the password', () => {
    const { WARMUP_ALERT_FROM: _from, ...withoutFrom } = FULL;
    expect(() => loadConfig(withoutFrom)).toThrow(
      new ConfigError('WARMUP_ALERT_SMTP_HOST is set: WARMUP_ALERT_FROM must be set too'),
    );
    const { WARMUP_ALERT_SMTP_HOST: _host, ...withoutHost } = FULL;
    let message = '';
    try {
      loadConfig(withoutHost);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('WARMUP_ALERT_SMTP_HOST must be set');
    expect(message).not.toContain(FULL.WARMUP_ALERT_SMTP_PASSWORD);
    expect(() => loadConfig({ ...FULL, WARMUP_ALERT_FROM: 'not an address' })).toThrow(
      /WARMUP_ALERT_FROM must be an email address/,
    );
    expect(() => loadConfig({ ...FULL, WARMUP_ALERT_SMTP_TLS: 'ssl' })).toThrow(/WARMUP_ALERT_SMTP_TLS must be one of/);
  });
});
