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
      limits: DEFAULT_LIMITS,
      statsCacheMs: 0,
      logLevel: 'info',
      warmupFolderRetentionDays: 30,
      mail: { allowedHosts: [], plaintextHosts: [], caFile: undefined },
    });
  });

  it('reads every setting of the README', () => {
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
      WARMUP_FOLDER_RETENTION_DAYS: '7',
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
      warmupFolderRetentionDays: 7,
    });
  });

  it.each([
    [{ PORT: 'abc' }, /PORT must be an integer/],
    [{ PORT: '70000' }, /PORT must be an integer between 0 and 65535/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres:\/\/ URL/],
    [{ WARMUP_RATE_LIMIT: '-1' }, /WARMUP_RATE_LIMIT/],
    [{ WARMUP_STATS_CACHE_MS: '1.5' }, /WARMUP_STATS_CACHE_MS/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ WARMUP_FOLDER_RETENTION_DAYS: '0' }, /WARMUP_FOLDER_RETENTION_DAYS must be an integer between 1/],
    [{ WARMUP_API_KEY: 'short' }, /WARMUP_API_KEY must be at least 32 characters \(it has 5\)/],
    [{ WARMUP_API_KEY: `${'k'.repeat(31)}` }, /WARMUP_API_KEY must be at least 32 characters/],
    [{ WARMUP_AUTH_FAILURE_LIMIT: 'many' }, /WARMUP_AUTH_FAILURE_LIMIT/],
    [{ WARMUP_TRUST_PROXY: 'yes please' }, /WARMUP_TRUST_PROXY must be true or false/],
    [{ WARMUP_MAX_MAILBOXES: '0' }, /WARMUP_MAX_MAILBOXES must be an integer between 1/],
    [{ WARMUP_MAX_TEMPLATES: '-3' }, /WARMUP_MAX_TEMPLATES/],
    [{ WARMUP_MAX_PREVIEW_BYTES: '10' }, /WARMUP_MAX_PREVIEW_BYTES/],
    [{ WARMUP_MAX_IMPORT_BYTES: '1e12' }, /WARMUP_MAX_IMPORT_BYTES/],
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
