// `warmup doctor`: checks an installation the way an operator would by hand, and says what to fix.
// It reads and connects; it never migrates, writes a row or creates a key file.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { sql } from 'kysely';
import { checkAlertSmtp } from './alerts/alert-mail.js';
import type { Config } from './config.js';
import { createMigrator, openDatabase, SQLITE_FILE, type DatabaseHandle } from './db/database.js';
import { MailConnectionError } from './mail/errors.js';
import { loadMailPolicy, RefusedHostError, resolveMailHost, type MailPolicy } from './mail/policy.js';
import { decryptSecret, loadSecretKey, SECRET_KEY_FILE } from './secrets/secrets.js';
import { probeChatEndpoint } from './conversations/chat-wording.js';
import { forEachLimited } from './jobs/concurrency.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a warn or fail. */
  fix?: string;
}

export interface DoctorOptions {
  /** How long one mail server may take to accept a TCP connection. */
  connectTimeoutMs?: number;
  now?: () => Date;
}

/** The settings whose presence (never their value) the report names. */
const OPTIONAL_SETTINGS = [
  'DATABASE_URL',
  'WARMUP_SECRET_KEY',
  'WARMUP_API_KEY',
  'WARMUP_MAIL_ALLOWED_HOSTS',
  'WARMUP_MAIL_PLAINTEXT_HOSTS',
  'WARMUP_MAIL_EXPLAINED_HOSTS',
  'WARMUP_MAIL_CA_FILE',
  'WARMUP_TRUST_PROXY',
  'WARMUP_RATE_LIMIT',
  'WARMUP_STATS_CACHE_MS',
  'WARMUP_RETENTION_DAYS',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'WARMUP_DNS_SERVERS',
  'WARMUP_DNS_PAUSE_HOURS',
  'WARMUP_BLOCKLIST_IP_ZONES',
  'WARMUP_BLOCKLIST_DOMAIN_ZONES',
  'WARMUP_SPAMHAUS_DQS_KEY',
  'WARMUP_WEBHOOK_RETRY_SCHEDULE',
  'WARMUP_METRICS_PORT',
  'WARMUP_METRICS_TOKEN',
  'WARMUP_PUBLIC_URL',
  'WARMUP_OIDC_ISSUER',
  'WARMUP_OIDC_CLIENT_ID',
  'WARMUP_OIDC_CLIENT_SECRET',
  'WARMUP_OIDC_NAME',
  'WARMUP_ALERT_SMTP_HOST',
  'WARMUP_ALERT_SMTP_PORT',
  'WARMUP_ALERT_SMTP_TLS',
  'WARMUP_ALERT_SMTP_USER',
  'WARMUP_ALERT_SMTP_PASSWORD',
  'WARMUP_ALERT_FROM',
  'WARMUP_WORDING_URL',
  'WARMUP_WORDING_MODEL',
  'WARMUP_WORDING_API_KEY',
  'WARMUP_WORDING_TIMEOUT_MS',
] as const;

const CLOCK_SKEW_WARN_MS = 2_000;
const MAIL_CHECK_CONCURRENCY = 8;

export async function runDoctor(config: Config, env: NodeJS.ProcessEnv, options: DoctorOptions = {}): Promise<Check[]> {
  const checks: Check[] = [settingsCheck(env), ...featureChecks(config), ...timeZoneChecks()];
  if (config.wording) checks.push(await wordingCheck(config.wording));
  let policy: MailPolicy | undefined;
  try {
    policy = loadMailPolicy(config.mail);
  } catch (error) {
    checks.push({
      name: 'mail settings',
      status: 'fail',
      detail: errorText(error),
      fix: 'correct the WARMUP_MAIL_* settings',
    });
  }
  checks.push(await alertMailCheck(config, policy, options.connectTimeoutMs ?? 10_000));
  if (!config.databaseUrl && !fs.existsSync(path.join(config.dataDir, SQLITE_FILE))) {
    checks.push({
      name: 'database',
      status: 'ok',
      detail: `no database in ${config.dataDir} yet: the first start makes it`,
    });
    return checks;
  }
  let database: DatabaseHandle | undefined;
  let schema: Check;
  try {
    database = openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
    schema = await schemaCheck(database, config);
    checks.push(schema);
  } catch (error) {
    checks.push({
      name: 'database',
      status: 'fail',
      detail: `cannot open ${storageName(config)}: ${errorText(error)}`,
      fix: config.databaseUrl
        ? 'start PostgreSQL or correct DATABASE_URL (host, port, database, user)'
        : `make ${config.dataDir} writable by this user, or set WARMUP_DATA_DIR`,
    });
    await database?.close().catch(() => undefined);
    return checks;
  }
  try {
    if (database.dialect === 'postgres') checks.push(await clockCheck(database, options.now ?? (() => new Date())));
    // The checks below read the mailboxes: only a current schema has them as this release knows them.
    if (schema.status === 'ok') {
      checks.push(await secretKeyCheck(database, config));
      if (policy) checks.push(...(await mailServerChecks(database, policy, options.connectTimeoutMs ?? 5_000)));
      const now = (options.now ?? (() => new Date()))();
      checks.push(...(await dmarcReportChecks(database, now)), ...(await providerFeedChecks(database, now)));
      checks.push(...(await peerChecks(database, config, policy, now, options.connectTimeoutMs ?? 5_000)));
    }
  } finally {
    await database.close();
  }
  return checks;
}

/** Asks the operator's chat endpoint for one short line, as the engine would; never shows the key. */
async function wordingCheck(settings: NonNullable<Config['wording']>): Promise<Check> {
  const reason = await probeChatEndpoint(settings);
  const where = `${new URL(settings.url).host}, model ${settings.model}`;
  if (reason === null) return { name: 'wording endpoint', status: 'ok', detail: `${where} answers` };
  return {
    name: 'wording endpoint',
    status: 'warn',
    detail: `${where}: ${reason}; the built-in wording is sent meanwhile`,
    fix: 'check WARMUP_WORDING_URL, WARMUP_WORDING_MODEL and WARMUP_WORDING_API_KEY, or unset WARMUP_WORDING_URL',
  };
}

function settingsCheck(env: NodeJS.ProcessEnv): Check {
  const set = OPTIONAL_SETTINGS.filter((name) => env[name] !== undefined && env[name] !== '');
  return {
    name: 'settings',
    status: 'ok',
    detail: set.length === 0 ? 'all defaults (nothing to configure)' : `set: ${set.join(', ')}`,
  };
}

/**
 * What the checks, blocklists, webhooks, metrics and sign-in settings amount to. Whether a secret
 * (the DQS key, the metrics token, the OIDC client secret) is set, never its value.
 */
function featureChecks(config: Config): Check[] {
  const { ipZones, domainZones, spamhausDqsKey } = config.blocklists;
  const resolvers = config.dnsServers.length > 0 ? config.dnsServers.join(', ') : "this machine's resolvers";
  const checks: Check[] = [
    {
      name: 'DNS checks',
      status: 'ok',
      detail: `asked through ${resolvers}; ${
        config.dnsPauseHours === 0
          ? 'failing SPF or DMARC never pauses warmup (WARMUP_DNS_PAUSE_HOURS=0)'
          : `failing SPF or DMARC for ${config.dnsPauseHours} h pauses warmup`
      }`,
    },
    {
      name: 'blocklists',
      status: 'ok',
      detail:
        ipZones.length + domainZones.length === 0
          ? 'none asked'
          : `${ipZones.length} address list(s), ${domainZones.length} domain list(s); Spamhaus DQS key ${spamhausDqsKey ? 'set' : 'not set (Spamhaus answers public resolvers with a refusal, shown as not answered)'}`,
    },
    {
      name: 'webhooks',
      status: 'ok',
      detail: config.webhookRetrySchedule
        ? `retried after ${config.webhookRetrySchedule.length} wait(s) of WARMUP_WEBHOOK_RETRY_SCHEDULE`
        : 'retried on the Standard Webhooks schedule',
    },
    {
      name: 'OpenID Connect sign-in',
      status: 'ok',
      detail: config.oidc ? 'on (issuer, client id and client secret set)' : 'off',
    },
  ];
  if (config.metricsPort !== undefined && config.metricsToken === undefined) {
    checks.push({
      name: 'metrics',
      status: 'warn',
      detail: `WARMUP_METRICS_PORT is ${config.metricsPort} but WARMUP_METRICS_TOKEN is not set: /metrics does not exist`,
      fix: `set WARMUP_METRICS_TOKEN (at least 16 characters) or leave WARMUP_METRICS_PORT unset`,
    });
  } else {
    checks.push({
      name: 'metrics',
      status: 'ok',
      detail: config.metricsToken
        ? `GET /metrics with the token set${config.metricsPort !== undefined ? `, workers on port ${config.metricsPort}` : ''}`
        : 'off (WARMUP_METRICS_TOKEN not set)',
    });
  }
  return checks;
}

/**
 * The SMTP server of email alerts: reached, TLS as configured, and the login accepted, then QUIT
 * before any MAIL FROM, so nothing is sent. The server's answer is shown (it is the operator's own
 * server); the password never is.
 */
async function alertMailCheck(config: Config, policy: MailPolicy | undefined, timeoutMs: number): Promise<Check> {
  const settings = config.alertMail;
  if (!settings) {
    return {
      name: 'email alerts',
      status: 'ok',
      detail: 'off (WARMUP_ALERT_SMTP_HOST not set): alerts go to webhooks, Slack and Teams only',
    };
  }
  const where = `${settings.host}:${settings.port} (${settings.tls})`;
  try {
    await checkAlertSmtp({ settings, policy: policy ?? { allowedHosts: [], plaintextHosts: [] } }, timeoutMs);
    return {
      name: 'email alerts',
      status: 'ok',
      detail: `${where} answers and accepts the login of ${settings.username}`,
    };
  } catch (error) {
    const login = error instanceof MailConnectionError && error.kind === 'auth';
    return {
      name: 'email alerts',
      status: 'fail',
      detail: `${where}: ${errorText(error)}`,
      fix: login
        ? 'check WARMUP_ALERT_SMTP_USER and WARMUP_ALERT_SMTP_PASSWORD'
        : 'check WARMUP_ALERT_SMTP_HOST, WARMUP_ALERT_SMTP_PORT and WARMUP_ALERT_SMTP_TLS (and WARMUP_MAIL_CA_FILE for a private CA)',
    };
  }
}

/** Send windows are in each mailbox's zone: a Node without full ICU data would plan them in UTC. */
function timeZoneChecks(): Check[] {
  try {
    const hour = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', hour: 'numeric', hour12: false });
    hour.format(new Date());
    return [{ name: 'time zones', status: 'ok', detail: 'time zone data available' }];
  } catch {
    return [
      {
        name: 'time zones',
        status: 'fail',
        detail: 'this Node.js has no time zone data',
        fix: 'use a Node.js build with full ICU (the official builds have it)',
      },
    ];
  }
}

async function schemaCheck(database: DatabaseHandle, config: Config): Promise<Check> {
  const migrator = await createMigrator(database.db, database.dialect);
  const pending = (await migrator.getMigrations()).filter((m) => m.executedAt === undefined);
  if (pending.length > 0) {
    return {
      name: 'database',
      status: 'warn',
      detail: `${storageName(config)}: ${pending.length} schema change(s) not applied yet`,
      fix: 'run `warmup migrate` (or start the service, which applies them)',
    };
  }
  return { name: 'database', status: 'ok', detail: `${storageName(config)}, schema up to date` };
}

async function secretKeyCheck(database: DatabaseHandle, config: Config): Promise<Check> {
  const keyFile = path.join(config.dataDir, SECRET_KEY_FILE);
  const stored = await database.db
    .selectFrom('mailboxes')
    .select(['id', 'password_encrypted'])
    // a mailbox that signs in with OAuth, or a peer's address, has no password
    .where('password_encrypted', '!=', '')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!config.secretKey && !fs.existsSync(keyFile)) {
    return stored
      ? {
          name: 'secret key',
          status: 'fail',
          detail: `no WARMUP_SECRET_KEY and no ${keyFile}, but mailboxes are stored`,
          fix: `restore ${SECRET_KEY_FILE} from a backup or set the WARMUP_SECRET_KEY the passwords were stored with`,
        }
      : { name: 'secret key', status: 'ok', detail: `${keyFile} will be made on first start` };
  }
  let key: Buffer;
  try {
    key = loadSecretKey({ secretKey: config.secretKey, dataDir: config.dataDir });
  } catch (error) {
    return { name: 'secret key', status: 'fail', detail: errorText(error), fix: 'see docs/how-to/key-rotation.md' };
  }
  const source = config.secretKey ? 'WARMUP_SECRET_KEY' : keyFile;
  if (stored) {
    try {
      decryptSecret(key, stored.password_encrypted, stored.id);
    } catch {
      return {
        name: 'secret key',
        status: 'fail',
        detail: `${source} does not decrypt the stored mailbox passwords`,
        fix: 'use the key the passwords were stored with (every process of one database must share one key)',
      };
    }
  }
  if (!config.secretKey) {
    const mode = fs.statSync(keyFile).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      return {
        name: 'secret key',
        status: 'warn',
        detail: `${keyFile} is readable by others (mode ${mode.toString(8)})`,
        fix: `chmod 600 ${keyFile}`,
      };
    }
    if (database.dialect === 'postgres') {
      return {
        name: 'secret key',
        status: 'warn',
        detail: `${keyFile} is local to this machine, but the database is shared`,
        fix: 'set the same WARMUP_SECRET_KEY for every process of this database',
      };
    }
  }
  return { name: 'secret key', status: 'ok', detail: `${source}${stored ? ', decrypts the stored passwords' : ''}` };
}

/** Leases and due times compare this machine's clock with the other processes' through the database. */
async function clockCheck(database: DatabaseHandle, now: () => Date): Promise<Check> {
  const before = now().getTime();
  const row = (await sql<{ now: Date | string }>`select now() as now`.execute(database.db)).rows[0];
  const after = now().getTime();
  const server = new Date(row?.now ?? 0).getTime();
  const skew = Math.abs(server - (before + after) / 2) - (after - before) / 2;
  if (skew > CLOCK_SKEW_WARN_MS) {
    return {
      name: 'clock',
      status: 'warn',
      detail: `this machine's clock is ${(skew / 1000).toFixed(1)} s off the database server's`,
      fix: 'synchronise the clocks (NTP): leases and due times assume one time',
    };
  }
  return { name: 'clock', status: 'ok', detail: "agrees with the database server's clock" };
}

interface ServerUse {
  host: string;
  port: number;
  mailboxes: Set<string>;
}

/** Every IMAP and SMTP server a mailbox uses: allowed by the mail policy, and accepting connections. */
async function mailServerChecks(database: DatabaseHandle, policy: MailPolicy, timeoutMs: number): Promise<Check[]> {
  const rows = await database.db
    .selectFrom('mailboxes')
    .select(['id', 'imap', 'smtp'])
    .where('status', '!=', 'paused')
    // a peer's address: its servers are the peer's to run
    .where('peer_id', 'is', null)
    .execute();
  const servers = new Map<string, ServerUse>();
  for (const row of rows) {
    for (const json of [row.imap, row.smtp]) {
      const { host, port } = JSON.parse(json) as { host: string; port: number };
      const key = `${host}:${port}`;
      const use = servers.get(key) ?? { host, port, mailboxes: new Set<string>() };
      use.mailboxes.add(row.id);
      servers.set(key, use);
    }
  }
  if (servers.size === 0) return [{ name: 'mail servers', status: 'ok', detail: 'no mailbox to check yet' }];
  const failures: Check[] = [];
  await forEachLimited([...servers.values()], MAIL_CHECK_CONCURRENCY, async (server) => {
    const problem = await reachProblem(server, policy, timeoutMs);
    if (problem) failures.push({ name: `mail server ${server.host}:${server.port}`, status: 'fail', ...problem });
  });
  failures.sort((a, b) => a.name.localeCompare(b.name));
  const reachable = servers.size - failures.length;
  return [
    ...failures,
    ...(reachable > 0
      ? [{ name: 'mail servers', status: 'ok' as const, detail: `${reachable} of ${servers.size} accept connections` }]
      : []),
  ];
}

async function reachProblem(
  server: ServerUse,
  policy: MailPolicy,
  timeoutMs: number,
): Promise<{ detail: string; fix: string } | undefined> {
  const count = server.mailboxes.size;
  const used = `used by ${count} mailbox${count === 1 ? '' : 'es'}`;
  let address: string;
  try {
    address = (await resolveMailHost(server.host, policy)).address;
  } catch (error) {
    if (error instanceof RefusedHostError) {
      return {
        detail: `${used}; an internal address the mail policy refuses`,
        fix: 'if this is your own mail server, add it to WARMUP_MAIL_ALLOWED_HOSTS',
      };
    }
    return { detail: `${used}; the name does not resolve`, fix: 'check the host name and this machine’s DNS' };
  }
  const connected = await new Promise<string | undefined>((resolve) => {
    const socket = net.connect({ host: address, port: server.port });
    const done = (outcome: string | undefined) => {
      socket.destroy();
      resolve(outcome);
    };
    socket.setTimeout(timeoutMs);
    socket.once('connect', () => done(undefined));
    socket.once('timeout', () => done(`no answer within ${timeoutMs / 1000} s`));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
  });
  if (connected === undefined) return undefined;
  return {
    detail: `${used}; cannot connect to ${address}:${server.port} (${connected})`,
    fix: 'check that the server runs and that a firewall lets this machine reach that port',
  };
}

/** A report folder that has kept nothing for this long is likely not where the `rua` mail goes. */
const DMARC_QUIET_MS = 3 * 86_400_000;
/** A feed not fetched for this long: its verdicts no longer count (the health guard reads 7 days). */
const FEED_STALE_MS = 2 * 86_400_000;

/** Each workspace's DMARC report folder: read without error, and reports arriving. */
async function dmarcReportChecks(database: DatabaseHandle, now: Date): Promise<Check[]> {
  const sources = await database.db
    .selectFrom('dmarc_sources as src')
    .innerJoin('workspaces as ws', 'ws.id', 'src.workspace_id')
    .innerJoin('mailboxes as mb', 'mb.id', 'src.mailbox_id')
    .select(['ws.name as workspace', 'mb.email', 'src.folder', 'src.checked_at', 'src.last_error', 'src.updated_at'])
    .select((eb) =>
      eb
        .selectFrom('dmarc_reports as rep')
        .whereRef('rep.workspace_id', '=', 'src.workspace_id')
        .select((e) => e.fn.max('rep.received_at').as('latest'))
        .as('latest_report_at'),
    )
    .orderBy('ws.name')
    .execute();
  if (sources.length === 0) return [{ name: 'DMARC reports', status: 'ok', detail: 'no workspace reads them' }];
  const problems: Check[] = [];
  for (const source of sources) {
    const where = `workspace "${source.workspace}", ${source.email} folder ${source.folder}`;
    if (source.last_error) {
      problems.push({
        name: 'DMARC reports',
        status: 'warn',
        detail: `${where}: ${source.last_error}`,
        fix: 'check the mailbox (its login, its servers) and the folder name; PUT /api/dmarc/source names another',
      });
      continue;
    }
    const latest = source.latest_report_at ? Date.parse(String(source.latest_report_at)) : null;
    const since = latest ?? Date.parse(source.updated_at);
    if (source.checked_at && now.getTime() - since > DMARC_QUIET_MS) {
      const days = Math.floor((now.getTime() - since) / 86_400_000);
      problems.push({
        name: 'DMARC reports',
        status: 'warn',
        detail: `${where}: ${latest === null ? 'no report has arrived' : 'no new report'} in ${days} days`,
        fix: `publish rua=mailto:${source.email} in the _dmarc TXT record of each domain (docs/how-to/dmarc-reports.md)`,
      });
    }
  }
  const fine = sources.length - problems.length;
  return [
    ...problems,
    ...(fine > 0
      ? [{ name: 'DMARC reports', status: 'ok' as const, detail: `${fine} workspace(s) read their reports` }]
      : []),
  ];
}

/** Each connected SNDS or Postmaster Tools feed: fetched without error, and lately. Never the key or token. */
async function providerFeedChecks(database: DatabaseHandle, now: Date): Promise<Check[]> {
  const feeds = await database.db
    .selectFrom('feed_connections as fc')
    .innerJoin('workspaces as ws', 'ws.id', 'fc.workspace_id')
    .select(['ws.name as workspace', 'fc.feed', 'fc.checked_at', 'fc.last_error', 'fc.fetched_day', 'fc.updated_at'])
    .orderBy('ws.name')
    .orderBy('fc.feed')
    .execute();
  if (feeds.length === 0) return [{ name: 'provider feeds', status: 'ok', detail: 'none connected' }];
  const label: Record<string, string> = { snds: 'Microsoft SNDS', postmaster: 'Gmail Postmaster Tools' };
  const fix: Record<string, string> = {
    snds: 'paste a current data access key (SNDS, "Automated Data Access"): PUT /api/feeds/snds',
    postmaster:
      'connect Postmaster Tools again (POST /api/feeds/postmaster/authorize) with an account that verified the domains',
  };
  const problems: Check[] = [];
  for (const feed of feeds) {
    const where = `workspace "${feed.workspace}", ${label[feed.feed] ?? feed.feed}`;
    const fetched = feed.fetched_day ? Date.parse(`${feed.fetched_day}T00:00:00.000Z`) : null;
    if (feed.last_error) {
      problems.push({
        name: 'provider feeds',
        status: 'warn',
        detail: `${where}: ${feed.last_error}`,
        fix: fix[feed.feed],
      });
    } else if (now.getTime() - (fetched ?? Date.parse(feed.updated_at)) > FEED_STALE_MS) {
      problems.push({
        name: 'provider feeds',
        status: 'warn',
        detail: `${where}: ${fetched === null ? 'never fetched' : `last fetched on ${feed.fetched_day}`}`,
        fix: 'make sure a `warmup serve`, `warmup worker` or a daily `warmup run-once` runs (the feeds job fetches once a day)',
      });
    }
  }
  const fine = feeds.length - problems.length;
  return [
    ...problems,
    ...(fine > 0 ? [{ name: 'provider feeds', status: 'ok' as const, detail: `${fine} feed(s) fetched lately` }] : []),
  ];
}

/** A peer still pending after this has likely not added this installation. */
const PEER_PENDING_WARN_MS = 86_400_000;

/**
 * The installations this one peers with: a public URL to be called back at, and each peer reachable
 * (a TCP connection to its URL's port, under the mail policy: no signed request, so nothing changes
 * on either side), not pending for long, and its last handshake's error. Never a key.
 */
async function peerChecks(
  database: DatabaseHandle,
  config: Config,
  policy: MailPolicy | undefined,
  now: Date,
  timeoutMs: number,
): Promise<Check[]> {
  const peers = await database.db
    .selectFrom('peers')
    .select(['url', 'state', 'last_error', 'created_at', 'handshake_at'])
    .where('state', '!=', 'removed')
    .orderBy('url')
    .execute();
  if (peers.length === 0) return [{ name: 'peers', status: 'ok', detail: 'this installation peers with none' }];
  const checks: Check[] = [];
  if (!config.oauth.publicUrl) {
    checks.push({
      name: 'peers',
      status: 'fail',
      detail: `${peers.length} peer(s), but WARMUP_PUBLIC_URL is not set: they cannot reach this installation, and it refuses their requests`,
      fix: 'set WARMUP_PUBLIC_URL to the https origin the peers call',
    });
  }
  await forEachLimited(peers, MAIL_CHECK_CONCURRENCY, async (peer) => {
    const name = `peer ${peer.url}`;
    if (peer.state === 'paused') {
      checks.push({ name, status: 'ok', detail: 'paused here: nothing flows either way' });
      return;
    }
    const url = new URL(peer.url);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const unreachable = policy
      ? await reachProblem({ host: url.hostname, port, mailboxes: new Set() }, policy, timeoutMs)
      : undefined;
    if (unreachable) {
      checks.push({
        name,
        status: 'warn',
        detail: unreachable.detail.replace(/^used by 0 mailboxes; /, ''),
        fix: unreachable.fix,
      });
    } else if (peer.state === 'pending' && now.getTime() - Date.parse(peer.created_at) > PEER_PENDING_WARN_MS) {
      checks.push({
        name,
        status: 'warn',
        detail: `pending since ${peer.created_at.slice(0, 10)}: the peer has not added this installation yet${peer.last_error ? ` (${peer.last_error})` : ''}`,
        fix: "ask the peer's operator to add this installation's URL and key (`warmup peer key` prints them)",
      });
    } else if (peer.last_error) {
      checks.push({ name, status: 'warn', detail: `${peer.state}; the last handshake failed: ${peer.last_error}` });
    } else {
      const since = peer.handshake_at ? `, last handshake ${peer.handshake_at}` : '';
      // without a mail policy (its settings failed above) the port was not tried
      const reach = policy ? 'reachable' : 'not tried (the mail settings are invalid)';
      checks.push({ name, status: 'ok', detail: `${peer.state}, ${reach}${since}` });
    }
  });
  return checks.sort((a, b) => a.name.localeCompare(b.name));
}

function storageName(config: Config): string {
  return config.databaseUrl ? 'PostgreSQL' : `SQLite in ${config.dataDir}`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}

export function hasFailure(checks: readonly Check[]): boolean {
  return checks.some((check) => check.status === 'fail');
}

/** The report, one line per check: status, name, what was found and, where needed, the fix. */
export function formatChecks(checks: readonly Check[]): string {
  const label: Record<CheckStatus, string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' };
  return checks
    .map(
      (check) =>
        `${label[check.status]}  ${check.name}: ${check.detail}${check.fix ? `\n      fix: ${check.fix}` : ''}`,
    )
    .join('\n');
}
