import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

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
      statsCacheMs: 0,
      logLevel: 'info',
      mail: { allowedHosts: [], plaintextHosts: [], caFile: undefined },
    });
  });

  it('reads every setting of the README', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      WARMUP_DATA_DIR: '/var/lib/warmup',
      DATABASE_URL: 'postgres://u@db:5432/warmup',
      WARMUP_API_KEY: 'k',
      WARMUP_SECRET_KEY: 's',
      WARMUP_RATE_LIMIT: '0',
      WARMUP_STATS_CACHE_MS: '1000',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      dataDir: '/var/lib/warmup',
      databaseUrl: 'postgres://u@db:5432/warmup',
      rateLimit: 0,
      statsCacheMs: 1000,
      logLevel: 'debug',
    });
  });

  it.each([
    [{ PORT: 'abc' }, /PORT must be an integer/],
    [{ PORT: '70000' }, /PORT must be an integer between 0 and 65535/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres:\/\/ URL/],
    [{ WARMUP_RATE_LIMIT: '-1' }, /WARMUP_RATE_LIMIT/],
    [{ WARMUP_STATS_CACHE_MS: '1.5' }, /WARMUP_STATS_CACHE_MS/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
  ])('rejects %o with a message that names the setting', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
