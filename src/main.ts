import type { FastifyInstance } from 'fastify';
import tty from 'node:tty';
import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { buildApp, LOG_REDACT_PATHS } from './app.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { migrateToLatest, openDatabase, type DatabaseHandle } from './db/database.js';
import { sql } from 'kysely';
import { loadMailPolicy } from './mail/policy.js';
import { createServices, type Services } from './services.js';
import { createEngineDeps, type EngineWiring } from './engine/engine-deps.js';
import { createEngine, type Engine, type EngineOptions } from './jobs/job-list.js';
import { limitHeapGrowth } from './engine/heap-growth.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import { loadSecretKey } from './secrets/secrets.js';
import { createChatWording } from './conversations/chat-wording.js';
import { installationSeedFrom } from './conversations/conversation-writer.js';
import { blocklistZones } from './checks/blocklists.js';
import { createDnsResolver } from './checks/dns-resolver.js';
import { createOAuthClient } from './oauth/oauth.client.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from './webhooks/webhook-delivery.js';
import { databaseStartupError, listenStartupError } from './startup-errors.js';

/**
 * `stderr: true` keeps stdout for a command's own output (run-once prints its JSON summary there).
 * Lines are redacted before they are formatted, so the readable form hides what the JSON form hides.
 */
export function createLogger(
  config: Pick<Config, 'logLevel'> & Partial<Pick<Config, 'logFormat'>>,
  options: { stderr?: boolean } = {},
): Logger {
  const fd = options.stderr ? 2 : 1;
  const settings = { level: config.logLevel, redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' } };
  const format = config.logFormat ?? 'auto';
  const terminal = tty.isatty(fd);
  if (format === 'pretty' || (format === 'auto' && terminal)) {
    return pino(
      settings,
      pretty({
        destination: fd,
        sync: true,
        colorize: terminal,
        translateTime: 'SYS:yyyy-mm-dd HH:MM:ss',
        ignore: 'pid,hostname',
        singleLine: true,
      }),
    );
  }
  return pino(settings, pino.destination(fd));
}

/** The database and the domain services over it: what every command starts from. */
export interface Runtime {
  database: DatabaseHandle;
  services: Services;
  clock: Clock;
}

/** Opens and migrates the database from the config and wires the services over it. */
export async function openRuntime(config: Config, clock: Clock = systemClock, logger?: Logger): Promise<Runtime> {
  const database = await openMigratedDatabase(config);
  const services = createServices({
    db: database.db,
    clock,
    dataDir: config.dataDir,
    secretKey: config.secretKey,
    statsCacheMs: config.statsCacheMs,
    limits: config.limits,
    mailPolicy: loadMailPolicy(config.mail),
    connectionChecks: config.connectionChecks,
    oauth: config.oauth,
    ...(config.oidc ? { oidc: config.oidc } : {}),
    dnsServers: config.dnsServers,
    ...(logger ? { logger } : {}),
    workspaceCreation: config.workspaceCreation,
    passwordQueue: config.passwordHashing,
    requireSetupToken: setupTokenRequired(config),
    alertMailConfigured: config.alertMail !== undefined,
  });
  return { database, services, clock };
}

/**
 * The job list over the app's database, services and settings (jobs/job-list.ts): the engine's
 * steps, the webhook outbox, the scheduled events and the daily DNS and blocklist checks. The
 * same list for `serve`, `worker` and `run-once`; one worker id for all of its leases and claims,
 * so a stop gives every one of them back. Without the settings (tests of the engine alone) the
 * list has the engine's steps only.
 */
export function createEngineFor(
  parts: { database: DatabaseHandle; services: Services; logger: Logger; clock: Clock; config?: Config },
  overrides: Pick<EngineWiring, 'random' | 'workerId' | 'settings'> &
    Omit<EngineOptions, 'webhooks' | 'checks' | 'feeds'> & { webhookSettings?: Partial<WebhookSettings> } = {},
): Engine {
  const { random, workerId, settings, webhookSettings, ...options } = overrides;
  const { config } = parts;
  limitHeapGrowth();
  const deps = createEngineDeps({
    db: parts.database.db,
    dialect: parts.database.dialect,
    clock: parts.clock,
    logger: parts.logger,
    mailboxes: parts.services.mailboxes,
    templates: parts.services.templates,
    ...(config
      ? {
          installationSeed: installationSeedFrom(
            loadSecretKey({ secretKey: config.secretKey, dataDir: config.dataDir }),
          ),
        }
      : {}),
    ...(config?.wording
      ? {
          // each refusal is one line naming the reason only: never the endpoint's key or its text
          wording: createChatWording(config.wording, (reason) =>
            parts.logger.warn({ reason }, 'chat endpoint wording not used; the built-in wording was sent'),
          ),
        }
      : {}),
    random,
    workerId,
    settings,
  });
  if (!config) return createEngine(deps, options);
  return createEngine(deps, {
    ...options,
    webhooks: {
      secretKey: loadSecretKey({ secretKey: config.secretKey, dataDir: config.dataDir }),
      policy: loadMailPolicy(config.mail),
      ...(config.alertMail ? { alertMailer: { settings: config.alertMail, policy: loadMailPolicy(config.mail) } } : {}),
      settings: {
        ...DEFAULT_WEBHOOK_SETTINGS,
        ...(config.webhookRetrySchedule ? { retryDelaysMs: config.webhookRetrySchedule } : {}),
        ...webhookSettings,
      },
    },
    feeds: {
      secretKey: loadSecretKey({ secretKey: config.secretKey, dataDir: config.dataDir }),
      policy: loadMailPolicy(config.mail),
      settings: config.feeds,
      googleAccessToken: async (refreshToken, now) =>
        (await createOAuthClient(config.oauth).refresh('google', refreshToken, now)).accessToken,
    },
    peers: parts.services.peers,
    peerMail: parts.services.peerMail,
    checks: {
      resolve: createDnsResolver({ servers: config.dnsServers }),
      pauseAfterMs: config.dnsPauseHours * 3_600_000,
      blocklistZones: blocklistZones(config.blocklists),
    },
  });
}

/** Opens the database from the config and brings its schema up to date; a failure is a one-line StartupError. */
export async function openMigratedDatabase(config: Config): Promise<DatabaseHandle> {
  let handle: DatabaseHandle | undefined;
  try {
    handle = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    await migrateToLatest(handle.db, handle.dialect);
    return handle;
  } catch (error) {
    await handle?.close().catch(() => undefined);
    throw databaseStartupError(error, config);
  }
}

export interface RunningServer {
  app: FastifyInstance;
  services: Services;
  database: DatabaseHandle;
  /** This process's Prometheus metrics: the engine of `serve` reports its cycles here. */
  metrics: Metrics;
  close(): Promise<void>;
}

/**
 * Where a browser reaches this server: WARMUP_PUBLIC_URL when set, else the address it listens on
 * (the bound port, so PORT=0 prints the real one; a wildcard host as localhost).
 */
function browserAddress(app: FastifyInstance, config: Config): string {
  if (config.oauth.publicUrl) return config.oauth.publicUrl.replace(/\/+$/, '');
  const bound = app.server.address();
  const port = typeof bound === 'object' && bound ? bound.port : config.port;
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? 'localhost' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * First-run setup belongs to whoever opens the page first, so it needs a token from the log unless
 * only this machine can reach the server: it listens on a loopback address and no proxy forwards
 * others to it.
 */
export function setupTokenRequired(config: Pick<Config, 'host' | 'trustProxy'>): boolean {
  const host = config.host.replace(/^\[|\]$/g, '').toLowerCase();
  const loopback = host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
  return !loopback || config.trustProxy;
}

/** The composition root: config → database → migrations → services → app → listen. */
export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const { database, services } = await openRuntime(config, systemClock, logger);
  if (config.bootstrapApiKey) {
    const { revokedKeys } = await services.workspaces.bootstrap(config.bootstrapApiKey);
    if (revokedKeys > 0) logger.info({ revokedKeys }, 'WARMUP_API_KEY changed: the previous bootstrap key is revoked');
  }

  const metrics = createMetrics({ db: database.db, clock: systemClock });
  const app = await buildApp({
    services,
    authCacheMs: config.authCacheMs,
    metrics,
    metricsToken: config.metricsToken,
    rateLimit: config.rateLimit,
    authFailureLimit: config.authFailureLimit,
    trustProxy: config.trustProxy,
    logger,
    healthCheck: async () => {
      await sql`select 1`.execute(database.db);
    },
  });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close();
    await database.close();
    throw listenStartupError(error, config);
  }

  const storage = database.dialect === 'sqlite' ? `SQLite in ${config.dataDir}` : 'PostgreSQL';
  const address = browserAddress(app, config);
  logger.info(`Warmup is serving on ${address} (${storage})`);
  const setupToken = services.accounts.setupToken();
  if ((await services.accounts.setupRequired()) && setupToken) {
    // the fragment never reaches a server log; the setup page reads it from the address bar
    logger.info(
      `First run: open ${address}/#setup-token=${setupToken} in your browser to create the owner account ` +
        `(setup token ${setupToken}: this server is reachable from other machines, so setting up needs it)`,
    );
  } else if (await services.accounts.setupRequired()) {
    logger.info(`First run: open ${address}/ in your browser to create the owner account`);
  } else {
    logger.info(`Open ${address}/ to sign in`);
  }

  let closing: Promise<void> | undefined;
  return {
    app,
    services,
    database,
    metrics,
    close: () => {
      // Stop accepting, let in-flight requests finish, then release the database.
      closing ??= (async () => {
        await app.close();
        await database.close();
      })();
      return closing;
    },
  };
}

/**
 * How long a process may take to stop after SIGTERM. The engine abandons its network steps at once
 * (it closes the sockets of hung servers), so a clean stop takes a second or two; past this bound
 * the process exits anyway (code 1), well inside a container's usual grace period (Compose: 60 s).
 */
export const SHUTDOWN_TIMEOUT_MS = 10_000;

/** Runs `close` once on SIGTERM/SIGINT, then exits (0, or 1 if closing failed or took too long). */
export function closeOnSignals(logger: Logger, close: () => Promise<void>): void {
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      setTimeout(() => {
        logger.error(`still not stopped ${SHUTDOWN_TIMEOUT_MS / 1000} s after ${signal}; exiting anyway`);
        process.exit(1);
      }, SHUTDOWN_TIMEOUT_MS).unref();
      close().then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'error during shutdown');
          process.exit(1);
        },
      );
    });
  }
}
