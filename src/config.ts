import path from 'node:path';
import { isValidHostEntry } from './mail/policy.js';

/** Per-workspace quotas and size limits; each is answered with its own problem+json code. */
export interface Limits {
  /** Mailboxes a workspace may connect (`mailbox_limit_reached`). */
  maxMailboxes: number;
  /** Templates a workspace may hold, imports included (`template_limit_reached`). */
  maxTemplates: number;
  /** Bytes a rendered preview (subject + body + html) may reach (`preview_too_large`). */
  maxPreviewBytes: number;
  /** Bytes a template import body may have (`payload_too_large`). */
  maxImportBytes: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxMailboxes: 200,
  maxTemplates: 1000,
  maxPreviewBytes: 256 * 1024,
  maxImportBytes: 10 * 1024 * 1024,
};

/** A bootstrap key shorter than this is refused: it must not be guessable. */
export const MIN_BOOTSTRAP_KEY_LENGTH = 32;

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
  /** Failed authentications a minute per client address before 429; 0 turns the limit off. */
  authFailureLimit: number;
  /** Take the client address from X-Forwarded-For (only behind a proxy that sets it). */
  trustProxy: boolean;
  limits: Limits;
  /** How long a statistics answer may be served again, in ms; 0 (default) is always fresh. */
  statsCacheMs: number;
  logLevel: string;
  /** WARMUP_FOLDER_RETENTION_DAYS: days the Warmup folder keeps warmup mail before it is removed (default 30). */
  warmupFolderRetentionDays: number;
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

function booleanSetting(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function bootstrapKey(env: NodeJS.ProcessEnv): string | undefined {
  const key = env.WARMUP_API_KEY || undefined;
  if (key === undefined) return undefined;
  if (/\s/.test(key)) throw new ConfigError('WARMUP_API_KEY must not contain spaces');
  if (key.length < MIN_BOOTSTRAP_KEY_LENGTH) {
    // Never echo the key itself: this message ends up in logs.
    throw new ConfigError(
      `WARMUP_API_KEY must be at least ${MIN_BOOTSTRAP_KEY_LENGTH} characters (it has ${key.length}); make one with: openssl rand -hex 32`,
    );
  }
  return key;
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
    bootstrapApiKey: bootstrapKey(env),
    secretKey: env.WARMUP_SECRET_KEY || undefined,
    rateLimit: integerSetting(env, 'WARMUP_RATE_LIMIT', 1200, 0, 1_000_000),
    authFailureLimit: integerSetting(env, 'WARMUP_AUTH_FAILURE_LIMIT', 20, 0, 1_000_000),
    trustProxy: booleanSetting(env, 'WARMUP_TRUST_PROXY'),
    limits: {
      maxMailboxes: integerSetting(env, 'WARMUP_MAX_MAILBOXES', DEFAULT_LIMITS.maxMailboxes, 1, 1_000_000),
      maxTemplates: integerSetting(env, 'WARMUP_MAX_TEMPLATES', DEFAULT_LIMITS.maxTemplates, 1, 1_000_000),
      maxPreviewBytes: integerSetting(
        env,
        'WARMUP_MAX_PREVIEW_BYTES',
        DEFAULT_LIMITS.maxPreviewBytes,
        64 * 1024,
        64 * 1024 * 1024,
      ),
      maxImportBytes: integerSetting(
        env,
        'WARMUP_MAX_IMPORT_BYTES',
        DEFAULT_LIMITS.maxImportBytes,
        64 * 1024,
        100 * 1024 * 1024,
      ),
    },
    statsCacheMs: integerSetting(env, 'WARMUP_STATS_CACHE_MS', 0, 0, 3_600_000),
    logLevel,
    warmupFolderRetentionDays: integerSetting(env, 'WARMUP_FOLDER_RETENTION_DAYS', 30, 1, 3650),
    mail: {
      allowedHosts: hostListSetting(env, 'WARMUP_MAIL_ALLOWED_HOSTS'),
      plaintextHosts: hostListSetting(env, 'WARMUP_MAIL_PLAINTEXT_HOSTS'),
      caFile: env.WARMUP_MAIL_CA_FILE ? path.resolve(env.WARMUP_MAIL_CA_FILE) : undefined,
    },
  };
}
