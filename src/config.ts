import { isIP } from 'node:net';
import path from 'node:path';
import { DEFAULT_DOMAIN_ZONES, DEFAULT_IP_ZONES, type BlocklistSettings } from './checks/blocklists.js';
import { isValidHostEntry } from './mail/policy.js';
import { loadOAuthSettings, type OAuthSettings } from './oauth/oauth.config.js';
import { loadOidcSettings, type OidcSettings } from './oidc/oidc.config.js';

/** Per-workspace quotas and size limits; each is answered with its own problem+json code. */
export interface Limits {
  /** Mailboxes a workspace may connect (`mailbox_limit_reached`). */
  maxMailboxes: number;
  /** Templates a workspace may hold, imports included (`template_limit_reached`). */
  maxTemplates: number;
  /** Bytes a rendered preview (subject + body + html) may reach (`preview_too_large`). */
  maxPreviewBytes: number;
  /** Bytes a template import (JSON) or mailbox import (CSV) body may have (`payload_too_large`). */
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
  /**
   * Who may make workspaces through the API. WARMUP_WORKSPACE_CREATION: `owner` (default: the
   * installation's owner only) or `everyone` (every signed-in person); WARMUP_MAX_WORKSPACES_PER_PERSON:
   * how many one person may make (default 20). The CLI is not limited.
   */
  workspaceCreation: { open: boolean; maxPerPerson: number };
  /**
   * The bounded queue every password hash of the API goes through (each takes 64 MiB):
   * WARMUP_PASSWORD_HASH_CONCURRENCY hashes at once (default 2), WARMUP_PASSWORD_HASH_QUEUE waiting
   * (default 16); past that, 429 with Retry-After.
   */
  passwordHashing: { concurrency: number; maxQueued: number };
  limits: Limits;
  /** How long a statistics answer may be served again, in ms; 0 (default) is always fresh. */
  statsCacheMs: number;
  /** How long a valid API key is remembered in each process (0: looked up on every request). */
  authCacheMs: number;
  logLevel: string;
  /** LOG_FORMAT: `pretty` lines for people, `json` lines for machines; `auto` (default) is pretty on a terminal. */
  logFormat: LogFormat;
  /** OAuth providers mailboxes may sign in with (WARMUP_OAUTH_*), and WARMUP_PUBLIC_URL. */
  oauth: OAuthSettings;
  /** Sign-in through the operator's OpenID Connect provider (WARMUP_OIDC_*); undefined: off. */
  oidc: OidcSettings | undefined;
  /** WARMUP_WEBHOOK_RETRY_SCHEDULE: the waits before each retry of a webhook, in ms; unset: the Standard Webhooks schedule. */
  webhookRetrySchedule: number[] | undefined;
  /** WARMUP_DNS_SERVERS: the resolvers (address or address:port) the DNS checks ask; empty: the system's. */
  dnsServers: string[];
  /** WARMUP_DNS_PAUSE_HOURS: failing SPF or DMARC this many hours without a break pauses warmup until fixed (default 72; 0: never). */
  dnsPauseHours: number;
  /** The blocklists the daily run asks (WARMUP_BLOCKLIST_IP_ZONES, WARMUP_BLOCKLIST_DOMAIN_ZONES, WARMUP_SPAMHAUS_DQS_KEY). */
  blocklists: BlocklistSettings;
  /** WARMUP_METRICS_PORT: where a `warmup worker` serves GET /metrics (with WARMUP_METRICS_TOKEN); unset: nowhere. */
  metricsPort: number | undefined;
  /** WARMUP_METRICS_TOKEN: the bearer token of GET /metrics; unset, the route does not exist. */
  metricsToken: string | undefined;
  /** WARMUP_FOLDER_RETENTION_DAYS: days the Warmup folder keeps warmup mail before it is removed (default 30). */
  warmupFolderRetentionDays: number;
  /**
   * WARMUP_RETENTION_DAYS: days raw interactions and finished warmup messages are kept before the
   * engine removes them (default 180; 0: kept for ever). Statistics read the rollups and do not change.
   */
  retentionDays: number;
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

export type LogFormat = 'auto' | 'pretty' | 'json';

export class ConfigError extends Error {}

/** WARMUP_DNS_PAUSE_HOURS unset: the sustained period after which failing SPF or DMARC pauses warmup (checks/daily-checks.ts). */
export const DEFAULT_DNS_PAUSE_HOURS = 72;

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

/** `owner` (default): only the installation's owner makes workspaces; `everyone`: every signed-in person. */
function workspaceCreationSetting(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === 'owner') return false;
  if (raw === 'everyone') return true;
  throw new ConfigError(`${name} must be owner or everyone, got "${raw}"`);
}

/** A secret given in a setting (a key, a token): no spaces, and long enough not to be guessed. */
function secretSetting(env: NodeJS.ProcessEnv, name: string, minLength: number): string | undefined {
  const secret = env[name] || undefined;
  if (secret === undefined) return undefined;
  if (/\s/.test(secret)) throw new ConfigError(`${name} must not contain spaces`);
  if (secret.length < minLength) {
    // Never echo the secret itself: this message ends up in logs.
    throw new ConfigError(
      `${name} must be at least ${minLength} characters (it has ${secret.length}); make one with: openssl rand -hex 32`,
    );
  }
  return secret;
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

/** A metrics token shorter than this is refused (a bootstrap key needs MIN_BOOTSTRAP_KEY_LENGTH). */
export const MIN_METRICS_TOKEN_LENGTH = 16;

/** Seconds between webhook attempts, comma-separated (`5,300,1800`): 1 to 20 waits of 1 s to 2 days. */
function retryScheduleSetting(env: NodeJS.ProcessEnv, name: string): number[] | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const waits = raw.split(',').map((part) => Number(part.trim()));
  if (waits.length > 20 || waits.some((wait) => !Number.isInteger(wait) || wait < 1 || wait > 172_800)) {
    throw new ConfigError(
      `${name} must list 1 to 20 waits in whole seconds from 1 to 172800, comma-separated (e.g. 5,300,1800), got "${raw}"`,
    );
  }
  return waits.map((wait) => wait * 1000);
}

/** Resolver addresses: `1.1.1.1`, `127.0.0.1:5353`, `::1` or `[::1]:5353`. */
function dnsServersSetting(env: NodeJS.ProcessEnv, name: string): string[] {
  const entries = (env[name] ?? '').split(/[\s,]+/).filter(Boolean);
  const valid = (entry: string) => {
    const bracketed = /^\[([^\]]+)\]:(\d{1,5})$/.exec(entry);
    const v4port = /^([\d.]+):(\d{1,5})$/.exec(entry);
    if (bracketed) return isIP(bracketed[1]!) === 6 && Number(bracketed[2]) <= 65535;
    if (v4port) return isIP(v4port[1]!) === 4 && Number(v4port[2]) <= 65535;
    return isIP(entry) !== 0;
  };
  const bad = entries.find((entry) => !valid(entry));
  if (bad !== undefined) {
    throw new ConfigError(
      `${name} must list IP addresses, optionally with a port (127.0.0.1:5353, [::1]:5353), got "${bad}"`,
    );
  }
  return entries;
}

/** A list of DNS zones; unset: `fallback`; `off`: none. */
function zonesSetting(env: NodeJS.ProcessEnv, name: string, fallback: readonly string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  if (raw.trim().toLowerCase() === 'off') return [];
  const zones = raw.split(/[\s,]+/).filter(Boolean);
  const bad = zones.find(
    (zone) => !/^(?=.{1,200}$)[a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9](?:[a-z0-9-]{0,62}))+\.?$/i.test(zone),
  );
  if (bad !== undefined || zones.length > 20) {
    throw new ConfigError(
      `${name} must list up to 20 DNS zones (e.g. zen.spamhaus.org), or be "off", got "${bad ?? raw}"`,
    );
  }
  return zones;
}

function dqsKeySetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const key = env[name] || undefined;
  // never echoed: it is a credential
  if (key !== undefined && !/^[a-z0-9]{8,64}$/i.test(key)) {
    throw new ConfigError(`${name} must be the 8 to 64 letters and digits of your Spamhaus DQS key`);
  }
  return key;
}

/** WARMUP_RETENTION_DAYS unset (engine/retention.ts). */
export const DEFAULT_RETENTION_DAYS = 180;
/**
 * The shortest retention allowed: well past every window the engine looks back over (reputation
 * 14 days, health 7, the reader and answers 7), so nothing it still reads is removed.
 */
export const MIN_RETENTION_DAYS = 30;
/**
 * The retention must exceed the Warmup folder's by this much: pruning the folder recognises
 * warmup mail by its row, so the row must outlive the mail (pruning takes a batch a day).
 */
export const FOLDER_RETENTION_MARGIN_DAYS = 30;

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
  const warmupFolderRetentionDays = integerSetting(env, 'WARMUP_FOLDER_RETENTION_DAYS', 30, 1, 3650);
  const retentionDays = integerSetting(env, 'WARMUP_RETENTION_DAYS', DEFAULT_RETENTION_DAYS, 0, 36500);
  const shortestRetention = Math.max(MIN_RETENTION_DAYS, warmupFolderRetentionDays + FOLDER_RETENTION_MARGIN_DAYS);
  if (retentionDays !== 0 && retentionDays < shortestRetention) {
    throw new ConfigError(
      `WARMUP_RETENTION_DAYS must be 0 (keep everything) or at least ${shortestRetention} ` +
        `(${MIN_RETENTION_DAYS} days, and ${FOLDER_RETENTION_MARGIN_DAYS} more than WARMUP_FOLDER_RETENTION_DAYS, ` +
        `whose warmup mail is recognised by what is kept), got "${env.WARMUP_RETENTION_DAYS}"`,
    );
  }
  const logFormat = env.LOG_FORMAT || 'auto';
  if (logFormat !== 'auto' && logFormat !== 'pretty' && logFormat !== 'json') {
    throw new ConfigError(`LOG_FORMAT must be one of auto, pretty, json, got "${logFormat}"`);
  }
  return {
    port: integerSetting(env, 'PORT', 3000, 0, 65535),
    host: env.HOST || '127.0.0.1',
    dataDir: path.resolve(env.WARMUP_DATA_DIR || './data'),
    databaseUrl,
    bootstrapApiKey: secretSetting(env, 'WARMUP_API_KEY', MIN_BOOTSTRAP_KEY_LENGTH),
    secretKey: env.WARMUP_SECRET_KEY || undefined,
    rateLimit: integerSetting(env, 'WARMUP_RATE_LIMIT', 1200, 0, 1_000_000),
    authFailureLimit: integerSetting(env, 'WARMUP_AUTH_FAILURE_LIMIT', 20, 0, 1_000_000),
    trustProxy: booleanSetting(env, 'WARMUP_TRUST_PROXY'),
    workspaceCreation: {
      open: workspaceCreationSetting(env, 'WARMUP_WORKSPACE_CREATION'),
      maxPerPerson: integerSetting(env, 'WARMUP_MAX_WORKSPACES_PER_PERSON', 20, 1, 100_000),
    },
    passwordHashing: {
      concurrency: integerSetting(env, 'WARMUP_PASSWORD_HASH_CONCURRENCY', 2, 1, 64),
      maxQueued: integerSetting(env, 'WARMUP_PASSWORD_HASH_QUEUE', 16, 0, 10_000),
    },
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
    authCacheMs: integerSetting(env, 'WARMUP_AUTH_CACHE_MS', 2_000, 0, 60_000),
    logLevel,
    logFormat,
    oauth: loadOAuthSettings(env),
    oidc: loadOidcSettings(env),
    dnsServers: dnsServersSetting(env, 'WARMUP_DNS_SERVERS'),
    blocklists: {
      ipZones: zonesSetting(env, 'WARMUP_BLOCKLIST_IP_ZONES', DEFAULT_IP_ZONES),
      domainZones: zonesSetting(env, 'WARMUP_BLOCKLIST_DOMAIN_ZONES', DEFAULT_DOMAIN_ZONES),
      spamhausDqsKey: dqsKeySetting(env, 'WARMUP_SPAMHAUS_DQS_KEY'),
    },
    dnsPauseHours: integerSetting(env, 'WARMUP_DNS_PAUSE_HOURS', DEFAULT_DNS_PAUSE_HOURS, 0, 24 * 365),
    webhookRetrySchedule: retryScheduleSetting(env, 'WARMUP_WEBHOOK_RETRY_SCHEDULE'),
    metricsPort: env.WARMUP_METRICS_PORT ? integerSetting(env, 'WARMUP_METRICS_PORT', 0, 1, 65535) : undefined,
    metricsToken: secretSetting(env, 'WARMUP_METRICS_TOKEN', MIN_METRICS_TOKEN_LENGTH),
    warmupFolderRetentionDays,
    retentionDays,
    mail: {
      allowedHosts: hostListSetting(env, 'WARMUP_MAIL_ALLOWED_HOSTS'),
      plaintextHosts: hostListSetting(env, 'WARMUP_MAIL_PLAINTEXT_HOSTS'),
      caFile: env.WARMUP_MAIL_CA_FILE ? path.resolve(env.WARMUP_MAIL_CA_FILE) : undefined,
    },
  };
}
