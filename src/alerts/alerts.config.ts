/*
 * The SMTP server the operator lends to email alerts, read once from the environment. It is the
 * operator's own server (not a tenant's), so its host is trusted as configured; its password is a
 * credential and is never echoed, not even in a configuration error. Email alerts exist only when
 * host, user, password and from address are all set.
 */
import {
  ConfigError,
  setting,
  choiceSetting,
  optionalIntegerSetting,
  textSetting,
  type SettingDoc,
} from '../settings.js';

export type AlertSmtpTls = 'starttls' | 'implicit' | 'none';

export interface AlertMailSettings {
  host: string;
  port: number;
  /** starttls: upgrade required; implicit: TLS from the first byte; none: plain text (a relay on the operator's own network). */
  tls: AlertSmtpTls;
  username: string;
  password: string;
  /** The From address of every alert. */
  from: string;
}

const ADDRESS = /^[^\s@<>",]+@[^\s@<>",]+$/;

export const ALERT_MAIL_SETTINGS = {
  host: textSetting(
    'WARMUP_ALERT_SMTP_HOST',
    undefined,
    'The SMTP server that sends email alerts to each workspace’s owners and admins; unset, email alerts are unavailable (see [Alerts](../how-to/alerts.md)). Needs the user, password and from address below.',
  ),
  port: optionalIntegerSetting(
    'WARMUP_ALERT_SMTP_PORT',
    1,
    65535,
    'Its port; unset: 587 with `starttls`, 465 with `implicit`, 25 with `none`',
  ),
  tls: choiceSetting(
    'WARMUP_ALERT_SMTP_TLS',
    ['starttls', 'implicit', 'none'] as const,
    'starttls',
    'How the connection is protected: `starttls` (the upgrade is required, never skipped), `implicit` (TLS from the first byte) or `none` (plain text: only for a relay on your own network). Certificates are checked against the system CAs and `WARMUP_MAIL_CA_FILE`.',
  ),
  username: textSetting('WARMUP_ALERT_SMTP_USER', undefined, 'The user name alerts log in to the SMTP server with.'),
  password: setting(
    'WARMUP_ALERT_SMTP_PASSWORD',
    'unset',
    'Its password. Never shown, logged or sent anywhere but to that server.',
    (raw) => raw,
  ),
  from: setting(
    'WARMUP_ALERT_FROM',
    'unset',
    'The address alerts come from (`Warmup alerts <alerts@example.com>` or a bare address).',
    (raw, name) => {
      if (raw === undefined) return undefined;
      const address = /<([^<>]+)>\s*$/.exec(raw)?.[1] ?? raw.trim();
      if (!ADDRESS.test(address)) throw new ConfigError(`${name} must be an email address, got "${raw}"`);
      return raw.trim();
    },
    'an address, optionally with a display name',
  ),
} as const;

export const ALERT_MAIL_SETTING_DOCS: readonly SettingDoc[] = Object.values(ALERT_MAIL_SETTINGS);

const DEFAULT_PORTS: Record<AlertSmtpTls, number> = { starttls: 587, implicit: 465, none: 25 };

/** The settings, or undefined when WARMUP_ALERT_SMTP_HOST is unset; a half-configured server is an error. */
export function loadAlertMailSettings(env: NodeJS.ProcessEnv): AlertMailSettings | undefined {
  const host = ALERT_MAIL_SETTINGS.host.read(env);
  const username = ALERT_MAIL_SETTINGS.username.read(env);
  const password = ALERT_MAIL_SETTINGS.password.read(env);
  const from = ALERT_MAIL_SETTINGS.from.read(env);
  const tls = ALERT_MAIL_SETTINGS.tls.read(env);
  const port = ALERT_MAIL_SETTINGS.port.read(env) ?? DEFAULT_PORTS[tls];
  if (host === undefined) {
    if (username !== undefined || password !== undefined || from !== undefined) {
      throw new ConfigError('WARMUP_ALERT_SMTP_HOST must be set when the other WARMUP_ALERT_* settings are');
    }
    return undefined;
  }
  const missing = [
    ['WARMUP_ALERT_SMTP_USER', username],
    ['WARMUP_ALERT_SMTP_PASSWORD', password],
    ['WARMUP_ALERT_FROM', from],
  ].filter(([, value]) => value === undefined);
  if (missing.length > 0) {
    throw new ConfigError(`WARMUP_ALERT_SMTP_HOST is set: ${missing.map(([name]) => name).join(', ')} must be set too`);
  }
  return { host, port, tls, username: username!, password: password!, from: from! };
}
