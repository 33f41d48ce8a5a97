import path from 'node:path';
import { isValidHostEntry } from './mail/policy.js';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** A postgres:// URL switches storage to PostgreSQL; otherwise SQLite in dataDir. */
  databaseUrl: string | undefined;
  bootstrapApiKey: string | undefined;
  secretKey: string | undefined;
  /** Requests per minute per API key; 0 turns the limit off. */
  rateLimit: number;
  /** How long a statistics answer may be served again, in ms; 0 (default) is always fresh. */
  statsCacheMs: number;
  logLevel: string;
  /** Which mail servers a tenant may name, and how the mail layer talks to them. */
  mail: {
    /** WARMUP_MAIL_ALLOWED_HOSTS: names, addresses or CIDRs allowed although internal. */
    allowedHosts: string[];
    /** WARMUP_MAIL_PLAINTEXT_HOSTS: names or addresses logged in to without TLS. */
    plaintextHosts: string[];
    /** WARMUP_MAIL_CA_FILE: PEM file of extra trusted CAs for mail servers. */
    caFile: string | undefined;
  };
}

export class ConfigError extends Error {}

function integerSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

/** A comma- or space-separated list of host names, addresses and CIDR ranges. */
function hostListSetting(env: NodeJS.ProcessEnv, name: string): string[] {
  const entries = (env[name] ?? '').split(/[\s,]+/).filter(Boolean);
  const bad = entries.find((entry) => !isValidHostEntry(entry));
  if (bad !== undefined) {
    throw new ConfigError(`${name} must list host names, IP addresses or CIDR ranges (e.g. 10.0.0.0/8), got "${bad}"`);
  }
  return entries;
}

/** Reads the environment once; everything downstream receives the parsed result. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// URL (leave it unset for SQLite)');
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "${logLevel}"`);
  }
  return {
    port: integerSetting(env, 'PORT', 3000, 0, 65535),
    host: env.HOST || '127.0.0.1',
    dataDir: path.resolve(env.WARMUP_DATA_DIR || './data'),
    databaseUrl,
    bootstrapApiKey: env.WARMUP_API_KEY || undefined,
    secretKey: env.WARMUP_SECRET_KEY || undefined,
    rateLimit: integerSetting(env, 'WARMUP_RATE_LIMIT', 1200, 0, 1_000_000),
    statsCacheMs: integerSetting(env, 'WARMUP_STATS_CACHE_MS', 0, 0, 3_600_000),
    logLevel,
    mail: {
      allowedHosts: hostListSetting(env, 'WARMUP_MAIL_ALLOWED_HOSTS'),
      plaintextHosts: hostListSetting(env, 'WARMUP_MAIL_PLAINTEXT_HOSTS'),
      caFile: env.WARMUP_MAIL_CA_FILE ? path.resolve(env.WARMUP_MAIL_CA_FILE) : undefined,
    },
  };
}
