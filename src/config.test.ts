import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_LIMITS, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('needs nothing: SQLite in ./data on 127.0.0.1:3000', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      dataDir: path.resolve('./data'),
      databaseUrl: undefined,
      bootstrapApiKey: undefined,
      secretKey: undefined,
      rateLimit: 1200,
      authFailureLimit: 20,
      trustProxy: false,
      workspaceCreation: { open: false, maxPerPerson: 20 },
      passwordHashing: { concurrency: 2, maxQueued: 16 },
      limits: DEFAULT_LIMITS,
      statsCacheMs: 0,
      authCacheMs: 2000,
      logLevel: 'info',
      logFormat: 'auto',
      oauth: { publicUrl: undefined, providers: {} },
      metricsToken: undefined,
      metricsPort: undefined,
      webhookRetrySchedule: undefined,
      alertMail: undefined,
      dnsServers: [],
      dnsPauseHours: 72,
      blocklists: {
        ipZones: ['zen.spamhaus.org', 'b.barracudacentral.org', 'bl.spamcop.net'],
        domainZones: ['dbl.spamhaus.org'],
        spamhausDqsKey: undefined,
      },
      warmupFolderRetentionDays: 30,
      retentionDays: 180,
      mail: { allowedHosts: [], plaintextHosts: [], explainedHosts: [], caFile: undefined },
      feeds: {
        sndsUrl: 'https://sendersupport.olc.protection.outlook.com/snds/data.aspx',
        postmasterUrl: 'https://gmailpostmastertools.googleapis.com',
      },
      connectionChecks: { failureFloorMs: 10_000, maxChecks: 32 },
    });
  });

  it('reads every setting of the configuration reference', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      WARMUP_DATA_DIR: '/var/lib/warmup',
      DATABASE_URL: 'postgres://u@db:5432/warmup',
      WARMUP_API_KEY: 'k'.repeat(32),
      WARMUP_SECRET_KEY: 's',
      WARMUP_RATE_LIMIT: '0',
      WARMUP_AUTH_FAILURE_LIMIT: '5',
      WARMUP_TRUST_PROXY: 'true',
      WARMUP_MAX_MAILBOXES: '10',
      WARMUP_MAX_TEMPLATES: '50',
      WARMUP_MAX_PREVIEW_BYTES: '100000',
      WARMUP_MAX_IMPORT_BYTES: '200000',
      WARMUP_STATS_CACHE_MS: '1000',
      LOG_LEVEL: 'debug',
      WARMUP_METRICS_TOKEN: 'm'.repeat(16),
      WARMUP_METRICS_PORT: '9464',
      WARMUP_WEBHOOK_RETRY_SCHEDULE: '5, 300,1800',
      WARMUP_DNS_SERVERS: '1.1.1.1, 127.0.0.1:5353 [::1]:53',
      WARMUP_DNS_PAUSE_HOURS: '24',
      WARMUP_BLOCKLIST_IP_ZONES: 'zen.spamhaus.org, bl.example.net',
      WARMUP_BLOCKLIST_DOMAIN_ZONES: 'off',
      WARMUP_SPAMHAUS_DQS_KEY: 'abcdef0123456789',
      WARMUP_FOLDER_RETENTION_DAYS: '7',
      WARMUP_RETENTION_DAYS: '400',
      WARMUP_WORKSPACE_CREATION: 'everyone',
      WARMUP_MAX_WORKSPACES_PER_PERSON: '3',
      WARMUP_PASSWORD_HASH_CONCURRENCY: '4',
      WARMUP_PASSWORD_HASH_QUEUE: '64',
      WARMUP_MAIL_CHECK_FAILURE_MS: '15000',
      WARMUP_MAIL_CHECKS_AT_ONCE: '8',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      dataDir: '/var/lib/warmup',
      databaseUrl: 'postgres://u@db:5432/warmup',
      bootstrapApiKey: 'k'.repeat(32),
      rateLimit: 0,
      authFailureLimit: 5,
      trustProxy: true,
      limits: { maxMailboxes: 10, maxTemplates: 50, maxPreviewBytes: 100000, maxImportBytes: 200000 },
      statsCacheMs: 1000,
      logLevel: 'debug',
      metricsToken: 'm'.repeat(16),
      metricsPort: 9464,
      webhookRetrySchedule: [5_000, 300_000, 1_800_000],
      dnsServers: ['1.1.1.1', '127.0.0.1:5353', '[::1]:53'],
      dnsPauseHours: 24,
      blocklists: {
        ipZones: ['zen.spamhaus.org', 'bl.example.net'],
        domainZones: [],
        spamhausDqsKey: 'abcdef0123456789',
      },
      warmupFolderRetentionDays: 7,
      retentionDays: 400,
      workspaceCreation: { open: true, maxPerPerson: 3 },
      passwordHashing: { concurrency: 4, maxQueued: 64 },
      connectionChecks: { failureFloorMs: 15_000, maxChecks: 8 },
    });
  });

  it.each([
    [{ PORT: 'abc' }, /PORT must be an integer/],
    [{ PORT: '70000' }, /PORT must be an integer between 0 and 65535/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres:\/\/ URL/],
    [{ WARMUP_RATE_LIMIT: '-1' }, /WARMUP_RATE_LIMIT/],
    [{ WARMUP_STATS_CACHE_MS: '1.5' }, /WARMUP_STATS_CACHE_MS/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ WARMUP_MAIL_CHECKS_AT_ONCE: '0' }, /WARMUP_MAIL_CHECKS_AT_ONCE must be an integer between 1/],
    [
      { WARMUP_BLOCKLIST_IP_ZONES: 'zen.spamhaus.org, not_a zone!' },
      /WARMUP_BLOCKLIST_IP_ZONES must list up to 20 DNS zones/,
    ],
    [{ WARMUP_SPAMHAUS_DQS_KEY: 'short' }, /WARMUP_SPAMHAUS_DQS_KEY must be the 8 to 64 letters/],
    [{ WARMUP_DNS_PAUSE_HOURS: '-1' }, /WARMUP_DNS_PAUSE_HOURS/],
    [{ LOG_FORMAT: 'xml' }, /LOG_FORMAT must be one of auto, pretty, json/],
    [{ WARMUP_WORKSPACE_CREATION: 'anyone' }, /WARMUP_WORKSPACE_CREATION must be one of owner, everyone/],
    [{ WARMUP_PASSWORD_HASH_CONCURRENCY: '0' }, /WARMUP_PASSWORD_HASH_CONCURRENCY must be an integer between 1/],
    [{ WARMUP_FOLDER_RETENTION_DAYS: '0' }, /WARMUP_FOLDER_RETENTION_DAYS must be an integer between 1/],
    [{ WARMUP_RETENTION_DAYS: '29' }, /WARMUP_RETENTION_DAYS must be 0 \(keep everything\) or at least 60/],
    [
      { WARMUP_RETENTION_DAYS: '180', WARMUP_FOLDER_RETENTION_DAYS: '160' },
      /WARMUP_RETENTION_DAYS must be 0 \(keep everything\) or at least 190/,
    ],
    [{ WARMUP_RETENTION_DAYS: '-1' }, /WARMUP_RETENTION_DAYS must be an integer between 0/],
    [{ WARMUP_API_KEY: 'short' }, /WARMUP_API_KEY must be at least 32 characters \(it has 5\)/],
    [{ WARMUP_API_KEY: `${'k'.repeat(31)}` }, /WARMUP_API_KEY must be at least 32 characters/],
    [{ WARMUP_AUTH_FAILURE_LIMIT: 'many' }, /WARMUP_AUTH_FAILURE_LIMIT/],
    [{ WARMUP_TRUST_PROXY: 'yes please' }, /WARMUP_TRUST_PROXY must be true or false/],
    [{ WARMUP_MAX_MAILBOXES: '0' }, /WARMUP_MAX_MAILBOXES must be an integer between 1/],
    [{ WARMUP_MAX_TEMPLATES: '-3' }, /WARMUP_MAX_TEMPLATES/],
    [{ WARMUP_MAX_PREVIEW_BYTES: '10' }, /WARMUP_MAX_PREVIEW_BYTES/],
    [{ WARMUP_MAX_IMPORT_BYTES: '1e12' }, /WARMUP_MAX_IMPORT_BYTES/],
    [{ WARMUP_WEBHOOK_RETRY_SCHEDULE: '5,0' }, /WARMUP_WEBHOOK_RETRY_SCHEDULE must list 1 to 20 waits/],
    [{ WARMUP_WEBHOOK_RETRY_SCHEDULE: '5,soon' }, /WARMUP_WEBHOOK_RETRY_SCHEDULE/],
    [{ WARMUP_DNS_SERVERS: 'dns.example.com' }, /WARMUP_DNS_SERVERS must list IP addresses/],
    [{ WARMUP_DNS_SERVERS: '127.0.0.1:99999' }, /WARMUP_DNS_SERVERS/],
    [{ WARMUP_METRICS_PORT: '0' }, /WARMUP_METRICS_PORT must be an integer between 1 and 65535/],
    [{ WARMUP_METRICS_TOKEN: 'short' }, /WARMUP_METRICS_TOKEN must be at least 16 characters \(it has 5\)/],
    [{ WARMUP_METRICS_TOKEN: 'has a space in it here' }, /WARMUP_METRICS_TOKEN must not contain spaces/],
  ])('rejects %o with a message that names the setting', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('never repeats a rejected WARMUP_API_KEY in its message', () => {
    const attempt = () => loadConfig({ WARMUP_API_KEY: 'hunter2-secret' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).not.toThrow(/hunter2/);
  });
});

describe('OAuth provider settings', () => {
  it('turns a provider on with its client id and secret, with the real endpoints, scopes and servers', () => {
    const config = loadConfig({
      WARMUP_PUBLIC_URL: 'https://warmup.example.com/',
      WARMUP_OAUTH_MICROSOFT_CLIENT_ID: 'ms-id',
      WARMUP_OAUTH_MICROSOFT_CLIENT_SECRET: 'ms-secret',
      WARMUP_OAUTH_GOOGLE_CLIENT_ID: 'g-id',
      WARMUP_OAUTH_GOOGLE_CLIENT_SECRET: 'g-secret',
    });
    expect(config.oauth.publicUrl).toBe('https://warmup.example.com');
    expect(config.oauth.providers.microsoft).toMatchObject({
      issuer: 'https://login.microsoftonline.com/common/v2.0',
      scopes: expect.arrayContaining([
        'offline_access',
        'https://outlook.office.com/IMAP.AccessAsUser.All',
        'https://outlook.office.com/SMTP.Send',
      ]),
      imap: { host: 'outlook.office365.com', port: 993, secure: true },
      smtp: { host: 'smtp.office365.com', port: 587, secure: false },
      mailboxProvider: 'outlook',
    });
    expect(config.oauth.providers.google).toMatchObject({
      issuer: 'https://accounts.google.com',
      scopes: expect.arrayContaining(['https://mail.google.com/']),
      authorizationParams: { access_type: 'offline', prompt: 'consent' },
      mailboxProvider: 'gmail',
    });
    expect(config.oauth.providers.generic).toBeUndefined();
  });

  it('refuses a half-configured provider, a generic one without endpoints or servers, and no public URL', () => {
    const base = { WARMUP_PUBLIC_URL: 'https://warmup.example.com' };
    expect(() => loadConfig({ ...base, WARMUP_OAUTH_GOOGLE_CLIENT_ID: 'id' })).toThrow(/GOOGLE_CLIENT_SECRET/);
    expect(() =>
      loadConfig({ WARMUP_OAUTH_MICROSOFT_CLIENT_ID: 'id', WARMUP_OAUTH_MICROSOFT_CLIENT_SECRET: 's' }),
    ).toThrow(/WARMUP_PUBLIC_URL/);
    const generic = { ...base, WARMUP_OAUTH_GENERIC_CLIENT_ID: 'id', WARMUP_OAUTH_GENERIC_CLIENT_SECRET: 's' };
    expect(() => loadConfig(generic)).toThrow(/GENERIC_ISSUER, or/);
    expect(() => loadConfig({ ...generic, WARMUP_OAUTH_GENERIC_ISSUER: 'https://id.example.org' })).toThrow(
      /GENERIC_IMAP_HOST/,
    );
    const full = loadConfig({
      ...generic,
      WARMUP_OAUTH_GENERIC_AUTHORIZATION_URL: 'https://id.example.org/authorize',
      WARMUP_OAUTH_GENERIC_TOKEN_URL: 'https://id.example.org/token',
      WARMUP_OAUTH_GENERIC_SCOPES: 'openid email offline_access mail',
      WARMUP_OAUTH_GENERIC_IMAP_HOST: 'mail.example.org',
      WARMUP_OAUTH_GENERIC_IMAP_PORT: '993',
      WARMUP_OAUTH_GENERIC_IMAP_SECURE: 'true',
      WARMUP_OAUTH_GENERIC_SMTP_HOST: 'mail.example.org',
      WARMUP_OAUTH_GENERIC_SMTP_PORT: '587',
      WARMUP_OAUTH_GENERIC_SMTP_SECURE: 'false',
    });
    expect(full.oauth.providers.generic).toMatchObject({
      tokenUrl: 'https://id.example.org/token',
      scopes: ['openid', 'email', 'offline_access', 'mail'],
      mailboxProvider: 'custom',
    });
  });
});

describe('WARMUP_HOSTNAME', () => {
  it('is the name SMTP greets with, else the public URL host; an address literal is refused', () => {
    expect(loadConfig({ WARMUP_HOSTNAME: 'mx.example.org' }).mail.hostname).toBe('mx.example.org');
    expect(loadConfig({ WARMUP_PUBLIC_URL: 'https://warmup.example.org' }).mail.hostname).toBe('warmup.example.org');
    expect(loadConfig({}).mail.hostname).toBeUndefined();
    expect(() => loadConfig({ WARMUP_HOSTNAME: '[127.0.0.1]' })).toThrow(/WARMUP_HOSTNAME must be a host name/);
  });
});
