import { isIP } from 'node:net';
import path from 'node:path';
import { DEFAULT_DOMAIN_ZONES, DEFAULT_IP_ZONES, type BlocklistSettings } from './checks/blocklists.js';
import { isHostName, operatorHostName } from './mail/helo-name.js';
import { isValidHostEntry } from './mail/policy.js';
import { ALERT_MAIL_SETTING_DOCS, loadAlertMailSettings, type AlertMailSettings } from './alerts/alerts.config.js';
import { loadOAuthSettings, OAUTH_SETTINGS, type OAuthSettings } from './oauth/oauth.config.js';
import { loadOidcSettings, OIDC_SETTINGS, type OidcSettings } from './oidc/oidc.config.js';
import {
  booleanSetting,
  choiceSetting,
  ConfigError,
  integerSetting,
  listOf,
  optionalIntegerSetting,
  parseUrl,
  secretSetting,
  setting,
  textSetting,
  urlSetting,
  type SettingDoc,
} from './settings.js';

export { ConfigError } from './settings.js';

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

/** The providers' feeds, unless WARMUP_SNDS_URL or WARMUP_POSTMASTER_URL say otherwise. */
export const DEFAULT_SNDS_URL = 'https://sendersupport.olc.protection.outlook.com/snds/data.aspx';
export const DEFAULT_POSTMASTER_URL = 'https://gmailpostmastertools.googleapis.com';

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
  /** The operator's SMTP server for email alerts (WARMUP_ALERT_*); undefined: email alerts unavailable. */
  alertMail: AlertMailSettings | undefined;
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
    /** WARMUP_MAIL_EXPLAINED_HOSTS: internal hosts whose connection failures are told by cause. */
    explainedHosts: string[];
    /** WARMUP_MAIL_CA_FILE: PEM file of extra trusted CAs for mail servers. */
    caFile: string | undefined;
    /** WARMUP_HOSTNAME (else the host of WARMUP_PUBLIC_URL): the name SMTP connections greet with. */
    hostname: string | undefined;
  };
  /**
   * The operator's OpenAI-compatible chat endpoint for the wording of warmup mail
   * (conversations/chat-wording.ts): WARMUP_WORDING_URL, _MODEL, _API_KEY, _TIMEOUT_MS; undefined: the
   * built-in generator words every message.
   */
  wording: { url: string; model: string; apiKey: string | undefined; timeoutMs: number } | undefined;
  /** Where the providers' feeds are fetched from (feeds/): WARMUP_SNDS_URL, WARMUP_POSTMASTER_URL. */
  feeds: { sndsUrl: string; postmasterUrl: string };
  /** The API's mailbox connection checks (mailboxes/connection-guard.ts). */
  connectionChecks: {
    /** WARMUP_MAIL_CHECK_FAILURE_MS: the least time a check that reached no server takes to answer. */
    failureFloorMs: number;
    /** WARMUP_MAIL_CHECKS_AT_ONCE: checks running at once in a process, across all workspaces. */
    maxChecks: number;
  };
}

export type LogFormat = 'auto' | 'pretty' | 'json';

/** WARMUP_DNS_PAUSE_HOURS unset: the sustained period after which failing SPF or DMARC pauses warmup (checks/daily-checks.ts). */
export const DEFAULT_DNS_PAUSE_HOURS = 72;

/** A metrics token shorter than this is refused (a bootstrap key needs MIN_BOOTSTRAP_KEY_LENGTH). */
export const MIN_METRICS_TOKEN_LENGTH = 16;

/** WARMUP_MAIL_CHECK_FAILURE_MS unset: the login timeout of a check (mailboxes/connection-guard.ts). */
export const DEFAULT_MAIL_CHECK_FAILURE_MS = 10_000;
/** WARMUP_MAIL_CHECKS_AT_ONCE unset: 64 outbound connections at most. */
export const DEFAULT_MAIL_CHECKS_AT_ONCE = 32;

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

/** A comma- or space-separated list of host names, addresses and CIDR ranges. */
function hostListSetting(name: string, description: string) {
  return setting(name, 'unset', description, (raw) => {
    const entries = listOf(raw);
    const bad = entries.find((entry) => !isValidHostEntry(entry));
    if (bad !== undefined) {
      throw new ConfigError(
        `${name} must list host names, IP addresses or CIDR ranges (e.g. 10.0.0.0/8), got "${bad}"`,
      );
    }
    return entries;
  });
}

/** Seconds between webhook attempts, comma-separated (`5,300,1800`): 1 to 20 waits of 1 s to 2 days. */
function retryScheduleSetting(name: string, defaultText: string, description: string) {
  return setting(
    name,
    defaultText,
    description,
    (raw) => {
      if (raw === undefined || raw.trim() === '') return undefined;
      const waits = raw.split(',').map((part) => Number(part.trim()));
      if (waits.length > 20 || waits.some((wait) => !Number.isInteger(wait) || wait < 1 || wait > 172_800)) {
        throw new ConfigError(
          `${name} must list 1 to 20 waits in whole seconds from 1 to 172800, comma-separated (e.g. 5,300,1800), got "${raw}"`,
        );
      }
      return waits.map((wait) => wait * 1000);
    },
    '1 to 20 waits of 1–172800',
  );
}

/** Resolver addresses: `1.1.1.1`, `127.0.0.1:5353`, `::1` or `[::1]:5353`. */
function dnsServersSetting(name: string, description: string) {
  const valid = (entry: string) => {
    const bracketed = /^\[([^\]]+)\]:(\d{1,5})$/.exec(entry);
    const v4port = /^([\d.]+):(\d{1,5})$/.exec(entry);
    if (bracketed) return isIP(bracketed[1]!) === 6 && Number(bracketed[2]) <= 65535;
    if (v4port) return isIP(v4port[1]!) === 4 && Number(v4port[2]) <= 65535;
    return isIP(entry) !== 0;
  };
  return setting(name, "the system's resolvers", description, (raw) => {
    const entries = listOf(raw);
    const bad = entries.find((entry) => !valid(entry));
    if (bad !== undefined) {
      throw new ConfigError(
        `${name} must list IP addresses, optionally with a port (127.0.0.1:5353, [::1]:5353), got "${bad}"`,
      );
    }
    return entries;
  });
}

/** A list of DNS zones; unset: `fallback`; `off`: none. */
function zonesSetting(name: string, fallback: readonly string[], description: string) {
  return setting(
    name,
    `\`${fallback.join(',')}\``,
    description,
    (raw) => {
      if (raw === undefined || raw.trim() === '') return [...fallback];
      if (raw.trim().toLowerCase() === 'off') return [];
      const zones = listOf(raw);
      const bad = zones.find(
        (zone) => !/^(?=.{1,200}$)[a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9](?:[a-z0-9-]{0,62}))+\.?$/i.test(zone),
      );
      if (bad !== undefined || zones.length > 20) {
        throw new ConfigError(
          `${name} must list up to 20 DNS zones (e.g. zen.spamhaus.org), or be "off", got "${bad ?? raw}"`,
        );
      }
      return zones;
    },
    'up to 20 zones, or `off`',
  );
}

/*
 * Every setting of the service but the OAuth and OpenID Connect ones (oauth.config.ts,
 * oidc.config.ts): loadConfig reads them through this table, and docs/reference/configuration.md
 * is generated from it (`npm run docs:config`) in this order.
 */
export const SETTINGS = {
  port: integerSetting('PORT', 3000, 0, 65535, 'The HTTP port of the API and the dashboard'),
  host: textSetting('HOST', '127.0.0.1', 'The interface to listen on (`0.0.0.0` in a container).'),
  dataDir: setting('WARMUP_DATA_DIR', '`./data`', 'Where the SQLite file and the generated secret key live.', (raw) =>
    path.resolve(raw ?? './data'),
  ),
  databaseUrl: setting(
    'DATABASE_URL',
    'unset',
    'A `postgres://` URL switches storage to PostgreSQL ([scale-out](../how-to/scale-out.md)); unset, SQLite in `WARMUP_DATA_DIR`.',
    (raw) => {
      if (raw !== undefined && !/^postgres(ql)?:\/\//.test(raw)) {
        throw new ConfigError('DATABASE_URL must be a postgres:// URL (leave it unset for SQLite)');
      }
      return raw;
    },
    '`postgres://…` or `postgresql://…`',
  ),
  bootstrapApiKey: secretSetting(
    'WARMUP_API_KEY',
    MIN_BOOTSTRAP_KEY_LENGTH,
    'A key valid for the `default` workspace (created on first start); changing it revokes the previous one. A shorter one stops the service from starting.',
  ),
  secretKey: textSetting(
    'WARMUP_SECRET_KEY',
    undefined,
    'The 32-byte key (64 hex characters, or base64) that encrypts mailbox passwords and OAuth tokens; unset, the key file `secret.key` in the data directory, made on first start ([key rotation](../how-to/key-rotation.md)).',
  ),
  rateLimit: integerSetting(
    'WARMUP_RATE_LIMIT',
    1200,
    0,
    1_000_000,
    'Requests a minute per API key; `0` turns the limit off',
  ),
  authFailureLimit: integerSetting(
    'WARMUP_AUTH_FAILURE_LIMIT',
    20,
    0,
    1_000_000,
    'Requests with a wrong API key or password a minute per client address (per process) before that address gets 429; `0` turns the limit off',
  ),
  trustProxy: booleanSetting(
    'WARMUP_TRUST_PROXY',
    '`true` takes the client address from `X-Forwarded-For`: set it only behind a reverse proxy that sets that header.',
  ),
  workspaceCreation: choiceSetting(
    'WARMUP_WORKSPACE_CREATION',
    ['owner', 'everyone'],
    'owner',
    "Who may make workspaces through the API: `owner`, the installation's owner only; `everyone`, every signed-in person (see [Access, sign-in and setup](../explanation/security.md#access-sign-in-and-setup)). The CLI is not limited",
  ),
  maxWorkspacesPerPerson: integerSetting(
    'WARMUP_MAX_WORKSPACES_PER_PERSON',
    20,
    1,
    100_000,
    'Workspaces one person may make through the API',
  ),
  passwordHashConcurrency: integerSetting(
    'WARMUP_PASSWORD_HASH_CONCURRENCY',
    2,
    1,
    64,
    'Password hashes (64 MiB each) a process computes at once',
  ),
  passwordHashQueue: integerSetting(
    'WARMUP_PASSWORD_HASH_QUEUE',
    16,
    0,
    10_000,
    'Password hashes that may wait for their turn; past that (or past 3 from one caller) the answer is 429 with `Retry-After`',
  ),
  maxMailboxes: integerSetting(
    'WARMUP_MAX_MAILBOXES',
    DEFAULT_LIMITS.maxMailboxes,
    1,
    1_000_000,
    'Mailboxes per workspace',
  ),
  maxTemplates: integerSetting(
    'WARMUP_MAX_TEMPLATES',
    DEFAULT_LIMITS.maxTemplates,
    1,
    1_000_000,
    'Templates per workspace, imports included',
  ),
  maxPreviewBytes: integerSetting(
    'WARMUP_MAX_PREVIEW_BYTES',
    DEFAULT_LIMITS.maxPreviewBytes,
    64 * 1024,
    64 * 1024 * 1024,
    'Bytes of a rendered template preview (subject, body and HTML); the default is 256 KiB',
  ),
  maxImportBytes: integerSetting(
    'WARMUP_MAX_IMPORT_BYTES',
    DEFAULT_LIMITS.maxImportBytes,
    64 * 1024,
    100 * 1024 * 1024,
    'Bytes of the body of a template import or a mailbox CSV import; the default is 10 MiB',
  ),
  statsCacheMs: integerSetting(
    'WARMUP_STATS_CACHE_MS',
    0,
    0,
    3_600_000,
    'Milliseconds a statistics answer is served again (per process); `1000` suits a busy dashboard',
  ),
  authCacheMs: integerSetting(
    'WARMUP_AUTH_CACHE_MS',
    2_000,
    0,
    60_000,
    'Milliseconds each process remembers a valid API key (`0` looks every request up); a key revoked on another replica keeps working there for at most this long, on the replica that revoked it not at all',
  ),
  warmupFolderRetentionDays: integerSetting(
    'WARMUP_FOLDER_RETENTION_DAYS',
    30,
    1,
    3650,
    'Days the `Warmup` folder keeps warmup mail before the engine removes it (see [Hands off your own mail](../explanation/how-warmup-works.md#hands-off-your-own-mail))',
  ),
  retentionDays: integerSetting(
    'WARMUP_RETENTION_DAYS',
    DEFAULT_RETENTION_DAYS,
    0,
    36500,
    `Days the database keeps raw history (each mailbox's activity log, \`GET /api/mailboxes/:id/interactions\`, and finished warmup emails) before the engine removes it; \`0\` keeps everything. At least ${MIN_RETENTION_DAYS}, and at least \`WARMUP_FOLDER_RETENTION_DAYS\` + ${FOLDER_RETENTION_MARGIN_DAYS}. Statistics, exports and verdicts do not change (see [Growth and retention](../how-to/scale-out.md#growth-and-retention))`,
  ),
  logLevel: choiceSetting(
    'LOG_LEVEL',
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    'info',
    'At `info`: start-up, engine cycles that did something (`warn` when a send or sync failed), errors, and HTTP requests that failed or took over a second; every request at `debug`',
  ),
  logFormat: choiceSetting(
    'LOG_FORMAT',
    ['auto', 'pretty', 'json'],
    'auto',
    '`pretty`: one readable line per event (time, level, message); `json`: one JSON object per line for a log collector; `auto`: `pretty` on a terminal, `json` otherwise. Both hide the same secrets',
  ),
  allowedHosts: hostListSetting(
    'WARMUP_MAIL_ALLOWED_HOSTS',
    'Mail hosts (names, addresses or CIDR ranges) a tenant may name although they are internal (see [TLS and host settings](../explanation/security.md#tls-and-host-settings)).',
  ),
  plaintextHosts: hostListSetting(
    'WARMUP_MAIL_PLAINTEXT_HOSTS',
    'Mail hosts (names or addresses) logged in to without TLS (see [TLS and host settings](../explanation/security.md#tls-and-host-settings)).',
  ),
  explainedHosts: hostListSetting(
    'WARMUP_MAIL_EXPLAINED_HOSTS',
    "Internal mail hosts (names, addresses or CIDR ranges) whose connection failures are told to tenants by cause (refused, no answer, not a mail server), as a public host's are; elsewhere on your network they get one uniform answer (see [TLS and host settings](../explanation/security.md#tls-and-host-settings)).",
  ),
  caFile: setting(
    'WARMUP_MAIL_CA_FILE',
    'unset',
    'A PEM file of extra CAs trusted for mail servers (see [TLS and host settings](../explanation/security.md#tls-and-host-settings)).',
    (raw) => (raw === undefined ? undefined : path.resolve(raw)),
  ),
  hostname: setting(
    'WARMUP_HOSTNAME',
    "the host of WARMUP_PUBLIC_URL, else the machine's name",
    "The host name warmup mail is submitted under (the SMTP `EHLO` greeting), as a mail program greets with its computer's name; never an address literal. Set it to this server's public name (see [Mail structure](../reference/mail-structure.md#the-smtp-greeting))",
    (raw) => {
      if (raw === undefined) return undefined;
      if (!isHostName(raw))
        throw new ConfigError(`WARMUP_HOSTNAME must be a host name such as mail.example.com, got "${raw}"`);
      return raw;
    },
  ),
  mailCheckFailureMs: integerSetting(
    'WARMUP_MAIL_CHECK_FAILURE_MS',
    DEFAULT_MAIL_CHECK_FAILURE_MS,
    0,
    120_000,
    'Milliseconds a mailbox connection check that reached no server (closed port, no route, unknown name, refused host, a server that never speaks) waits before it answers, counted from its start, so that neither the answer nor its time tells why; keep it at least the 10 s login timeout (see [Hostile input](../explanation/security.md#hostile-input))',
  ),
  mailChecksAtOnce: integerSetting(
    'WARMUP_MAIL_CHECKS_AT_ONCE',
    DEFAULT_MAIL_CHECKS_AT_ONCE,
    1,
    10_000,
    'Mailbox connection checks (add, test, reconnect, CSV import rows) a process runs at once across all workspaces, each holding an IMAP and an SMTP connection; one that finds no place within 2 s is answered 503 with `Retry-After`',
  ),
  dnsServers: dnsServersSetting(
    'WARMUP_DNS_SERVERS',
    'The DNS servers the DNS checks ask, comma-separated addresses with an optional port (`1.1.1.1`, `127.0.0.1:5353`, `[::1]:53`).',
  ),
  dnsPauseHours: integerSetting(
    'WARMUP_DNS_PAUSE_HOURS',
    DEFAULT_DNS_PAUSE_HOURS,
    0,
    24 * 365,
    'Hours of failing SPF or DMARC, without a break, after which warmup pauses until they pass again; `0` never pauses (see [DNS checks](../explanation/deliverability-checks.md#dns-checks))',
  ),
  ipZones: zonesSetting(
    'WARMUP_BLOCKLIST_IP_ZONES',
    DEFAULT_IP_ZONES,
    'DNSBL zones the daily run asks about each address a mailbox’s mail was seen sent from, comma-separated; `off`: none (see [Blocklists](../explanation/deliverability-checks.md#blocklists)).',
  ),
  domainZones: zonesSetting(
    'WARMUP_BLOCKLIST_DOMAIN_ZONES',
    DEFAULT_DOMAIN_ZONES,
    'Domain blocklist (URIBL) zones the daily run asks about each mailbox’s domain; `off`: none.',
  ),
  spamhausDqsKey: setting(
    'WARMUP_SPAMHAUS_DQS_KEY',
    'unset',
    'Your Spamhaus Data Query Service key: Spamhaus’s zones are then asked as `<key>.zen.dq.spamhaus.net` / `<key>.dbl.dq.spamhaus.net`. The key is never shown or logged.',
    (key, name) => {
      // never echoed: it is a credential
      if (key !== undefined && !/^[a-z0-9]{8,64}$/i.test(key)) {
        throw new ConfigError(`${name} must be the 8 to 64 letters and digits of your Spamhaus DQS key`);
      }
      return key;
    },
    '8 to 64 letters and digits',
  ),
  webhookRetrySchedule: retryScheduleSetting(
    'WARMUP_WEBHOOK_RETRY_SCHEDULE',
    '`5,300,1800,7200,18000,36000,36000`',
    'Seconds to wait before each retry of a webhook delivery, comma-separated; after the last one the delivery is `failed` (see [events](events.md)).',
  ),
  metricsToken: secretSetting(
    'WARMUP_METRICS_TOKEN',
    MIN_METRICS_TOKEN_LENGTH,
    'Serves Prometheus metrics at `GET /metrics` to requests with `Authorization: Bearer <token>`; unset, `/metrics` does not exist (see [metrics](metrics.md)).',
  ),
  sndsUrl: setting(
    'WARMUP_SNDS_URL',
    `\`${DEFAULT_SNDS_URL}\``,
    "Microsoft SNDS's automated data access (CSV) URL, to which `?key=<the workspace's key>` is added (see [provider feeds](../how-to/provider-feeds.md)). Change it only for a stand-in; its host must still be public unless listed in `WARMUP_MAIL_ALLOWED_HOSTS`.",
    (raw, name) => (raw === undefined ? DEFAULT_SNDS_URL : parseUrl(name, raw)),
  ),
  postmasterUrl: setting(
    'WARMUP_POSTMASTER_URL',
    `\`${DEFAULT_POSTMASTER_URL}\``,
    "Gmail Postmaster Tools API's base URL (v2 paths are added). Change it only for a stand-in; its host must still be public unless listed in `WARMUP_MAIL_ALLOWED_HOSTS`.",
    (raw, name) => (raw === undefined ? DEFAULT_POSTMASTER_URL : parseUrl(name, raw)),
  ),
  wordingUrl: urlSetting(
    'WARMUP_WORDING_URL',
    "An OpenAI-compatible chat completions URL (a local Ollama's `http://127.0.0.1:11434/v1/chat/completions`) that words warmup mail from the built-in generator's plan; every answer is checked like built-in text and the built-in wording is sent when it fails. It is the operator's endpoint and may be on a private network (see [the conversation generator](../explanation/conversation-generator.md#an-optional-chat-endpoint-for-the-wording)); unset, the built-in generator words everything.",
  ),
  wordingModel: textSetting(
    'WARMUP_WORDING_MODEL',
    undefined,
    'The model name sent to `WARMUP_WORDING_URL` (`llama3.2`, say); required with it.',
  ),
  wordingApiKey: setting(
    'WARMUP_WORDING_API_KEY',
    'unset',
    'The bearer key `WARMUP_WORDING_URL` wants, if any. It is never shown or logged.',
    (key, name) => {
      // never echoed: it is a credential
      if (key !== undefined && /\s/.test(key)) throw new ConfigError(`${name} must not contain spaces`);
      return key;
    },
  ),
  wordingTimeoutMs: integerSetting(
    'WARMUP_WORDING_TIMEOUT_MS',
    4_000,
    200,
    30_000,
    'Milliseconds a call to `WARMUP_WORDING_URL` may take, first byte to last; past it the built-in wording is sent',
  ),
  metricsPort: optionalIntegerSetting(
    'WARMUP_METRICS_PORT',
    1,
    65535,
    'A `warmup worker` serves `GET /metrics` (with `WARMUP_METRICS_TOKEN`) on this port of `HOST`; `serve` serves it on its own port',
  ),
} as const;

/** The chat endpoint settings together: a URL needs a model, and a model or key without a URL is a mistake. */
function wordingOf(
  url: string | undefined,
  model: string | undefined,
  apiKey: string | undefined,
  timeoutMs: number,
): Config['wording'] {
  if (url === undefined) {
    if (model !== undefined || apiKey !== undefined) {
      throw new ConfigError('WARMUP_WORDING_MODEL and WARMUP_WORDING_API_KEY need WARMUP_WORDING_URL');
    }
    return undefined;
  }
  if (model === undefined) throw new ConfigError('WARMUP_WORDING_URL needs WARMUP_WORDING_MODEL (the model name)');
  return { url, model, apiKey, timeoutMs };
}

/** Every setting the service reads, in the order of the configuration reference. */
export const ALL_SETTINGS: readonly SettingDoc[] = [
  ...Object.values(SETTINGS),
  ...ALERT_MAIL_SETTING_DOCS,
  ...OAUTH_SETTINGS,
  ...OIDC_SETTINGS,
];

/** Reads the environment once; everything downstream receives the parsed result. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const read = <K extends keyof typeof SETTINGS>(key: K) =>
    SETTINGS[key].read(env) as ReturnType<(typeof SETTINGS)[K]['read']>;
  const warmupFolderRetentionDays = read('warmupFolderRetentionDays');
  const retentionDays = read('retentionDays');
  const shortestRetention = Math.max(MIN_RETENTION_DAYS, warmupFolderRetentionDays + FOLDER_RETENTION_MARGIN_DAYS);
  if (retentionDays !== 0 && retentionDays < shortestRetention) {
    throw new ConfigError(
      `WARMUP_RETENTION_DAYS must be 0 (keep everything) or at least ${shortestRetention} ` +
        `(${MIN_RETENTION_DAYS} days, and ${FOLDER_RETENTION_MARGIN_DAYS} more than WARMUP_FOLDER_RETENTION_DAYS, ` +
        `whose warmup mail is recognised by what is kept), got "${env.WARMUP_RETENTION_DAYS}"`,
    );
  }
  const oauth = loadOAuthSettings(env);
  return {
    port: read('port'),
    host: read('host'),
    dataDir: read('dataDir'),
    databaseUrl: read('databaseUrl'),
    bootstrapApiKey: read('bootstrapApiKey'),
    secretKey: read('secretKey'),
    rateLimit: read('rateLimit'),
    authFailureLimit: read('authFailureLimit'),
    trustProxy: read('trustProxy'),
    workspaceCreation: {
      open: read('workspaceCreation') === 'everyone',
      maxPerPerson: read('maxWorkspacesPerPerson'),
    },
    passwordHashing: {
      concurrency: read('passwordHashConcurrency'),
      maxQueued: read('passwordHashQueue'),
    },
    limits: {
      maxMailboxes: read('maxMailboxes'),
      maxTemplates: read('maxTemplates'),
      maxPreviewBytes: read('maxPreviewBytes'),
      maxImportBytes: read('maxImportBytes'),
    },
    statsCacheMs: read('statsCacheMs'),
    authCacheMs: read('authCacheMs'),
    logLevel: read('logLevel'),
    logFormat: read('logFormat'),
    oauth,
    oidc: loadOidcSettings(env),
    dnsServers: read('dnsServers'),
    blocklists: {
      ipZones: read('ipZones'),
      domainZones: read('domainZones'),
      spamhausDqsKey: read('spamhausDqsKey'),
    },
    dnsPauseHours: read('dnsPauseHours'),
    webhookRetrySchedule: read('webhookRetrySchedule'),
    alertMail: loadAlertMailSettings(env),
    metricsPort: read('metricsPort'),
    metricsToken: read('metricsToken'),
    warmupFolderRetentionDays,
    retentionDays,
    mail: {
      allowedHosts: read('allowedHosts'),
      plaintextHosts: read('plaintextHosts'),
      explainedHosts: read('explainedHosts'),
      caFile: read('caFile'),
      hostname: operatorHostName(read('hostname'), oauth.publicUrl),
    },
    wording: wordingOf(read('wordingUrl'), read('wordingModel'), read('wordingApiKey'), read('wordingTimeoutMs')),
    feeds: { sndsUrl: read('sndsUrl'), postmasterUrl: read('postmasterUrl') },
    connectionChecks: {
      failureFloorMs: read('mailCheckFailureMs'),
      maxChecks: read('mailChecksAtOnce'),
    },
  };
}
