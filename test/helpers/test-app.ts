import type { FastifyBaseLogger, FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { fixedClock } from '../../src/clock.js';
import { systemClock, type Clock } from '../../src/clock.js';
import type { Limits } from '../../src/config.js';
import type { MailPolicy } from '../../src/mail/policy.js';
import type { ConnectionGuardSettings } from '../../src/mailboxes/connection-guard.js';
import type { OAuthSettings } from '../../src/oauth/oauth.config.js';
import type { OidcSettings } from '../../src/oidc/oidc.config.js';
import { createServices, type Services } from '../../src/services.js';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.js';
import type { LoginLimits, WorkspaceCreation } from '../../src/accounts/accounts.service.js';
import type { PasswordQueueSettings } from '../../src/accounts/password-queue.js';
import { getMailStack, stackMailPolicy } from '../mailstack/use-mail-stack.js';
import { deadDnsPort } from './dns-server.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export interface TestWorkspace {
  id: string;
  apiKey: string;
  /** app.inject with this workspace's key. */
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
}

export interface TestApp {
  app: FastifyInstance;
  database: TestDatabase;
  services: Services;
  clock: Clock;
  /** The app's Prometheus metrics (GET /metrics answers only with `metricsToken` given). */
  metrics: Metrics;
  /** A workspace made the way `warmup workspace create` makes one (with the default templates). */
  workspace: TestWorkspace;
  createWorkspace(name: string): Promise<TestWorkspace>;
  close(): Promise<void>;
}

export const TEST_SECRET_KEY = 'a'.repeat(64);

function testMailPolicy(): MailPolicy | undefined {
  let stack: ReturnType<typeof getMailStack> = null;
  try {
    stack = getMailStack();
  } catch {
    // outside a vitest run (npm run screenshots): no stack, the default policy
  }
  return stack ? stackMailPolicy(stack) : undefined;
}

export async function createTestApp(
  options: {
    clock?: Clock | ReturnType<typeof fixedClock>;
    rateLimit?: number;
    /** Wrong keys a minute per client address; 0 (the default here) turns the limit off. */
    authFailureLimit?: number;
    trustProxy?: boolean;
    limits?: Partial<Limits>;
    logger?: FastifyBaseLogger;
    slowRequestMs?: number;
    /** Default: the run's mail stack allowed and its CA trusted (stackMailPolicy), else the default policy. */
    mailPolicy?: MailPolicy;
    /** The local stack delivers in milliseconds: a mailbox that cannot prove itself should not cost 20 s. */
    roundTripWaitMs?: number;
    /** The login check's wait on a server that greets but never answers (default: the service's 10 s). */
    verifyTimeoutMs?: number;
    /**
     * The floor of a connection check that reached no server, and the cap on checks at once
     * (default: no floor, so that the many tests of closed ports answer at once).
     */
    connectionChecks?: Partial<ConnectionGuardSettings>;
    /** OAuth providers, as loadConfig reads them from WARMUP_OAUTH_* (default: none). */
    oauth?: OAuthSettings;
    /** Sign-in through an OpenID Connect provider, as loadConfig reads it from WARMUP_OIDC_* (default: off). */
    oidc?: OidcSettings;
    /** The resolvers of the DNS checks (a test DNS server on loopback). */
    dnsServers?: string[];
    /** Serves GET /metrics behind this bearer token. */
    metricsToken?: string;
    /** Failed sign-ins allowed per account and per address (default: the service's). */
    loginLimits?: Partial<LoginLimits>;
    /** Who may make workspaces (default: the installation's owner, as WARMUP_WORKSPACE_CREATION unset). */
    workspaceCreation?: Partial<WorkspaceCreation>;
    /** The bounded queue of password hashes (default: the service's). */
    passwordQueue?: Partial<PasswordQueueSettings>;
    /** First-run setup needs the setup token, as on a server reachable from other machines. */
    requireSetupToken?: boolean;
    /** How long a valid API key is remembered (default 0: looked up every time). */
    authCacheMs?: number;
    /** The operator configured an SMTP server for email alerts (default: no). */
    alertMailConfigured?: boolean;
    /** Peers on loopback over plain http: two test installations on one machine. */
    peersOnLoopback?: boolean;
    /** Requests a minute to /peer/v1 from one address (default: the app's). */
    peerRequestsPerMinute?: number;
  } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  const clock = options.clock ?? systemClock;
  const services = createServices({
    db: database.db,
    clock,
    dataDir: database.dataDir,
    secretKey: TEST_SECRET_KEY,
    limits: options.limits,
    mailPolicy: options.mailPolicy ?? testMailPolicy(),
    ...(options.logger ? { logger: options.logger } : {}),
    roundTripWaitMs: options.roundTripWaitMs ?? 5_000,
    ...(options.verifyTimeoutMs ? { verifyTimeoutMs: options.verifyTimeoutMs } : {}),
    connectionChecks: { failureFloorMs: 0, ...options.connectionChecks },
    ...(options.oauth ? { oauth: options.oauth } : {}),
    ...(options.oidc ? { oidc: options.oidc } : {}),
    // tests never ask the internet's DNS: without a test server, a loopback port nobody answers on
    dnsServers: options.dnsServers ?? [`127.0.0.1:${await deadDnsPort()}`],
    ...(options.loginLimits ? { loginLimits: options.loginLimits } : {}),
    ...(options.workspaceCreation ? { workspaceCreation: options.workspaceCreation } : {}),
    ...(options.passwordQueue ? { passwordQueue: options.passwordQueue } : {}),
    ...(options.requireSetupToken ? { requireSetupToken: true } : {}),
    ...(options.alertMailConfigured ? { alertMailConfigured: true } : {}),
    ...(options.peersOnLoopback ? { peersOnLoopback: true } : {}),
  });
  const metrics = createMetrics({ db: database.db, clock });
  const app = await buildApp({
    services,
    metrics,
    ...(options.metricsToken ? { metricsToken: options.metricsToken } : {}),
    rateLimit: options.rateLimit ?? 0,
    authFailureLimit: options.authFailureLimit ?? 0,
    trustProxy: options.trustProxy,
    logger: options.logger,
    ...(options.slowRequestMs !== undefined ? { slowRequestMs: options.slowRequestMs } : {}),
    ...(options.authCacheMs ? { authCacheMs: options.authCacheMs } : {}),
    ...(options.peerRequestsPerMinute ? { peerRequestsPerMinute: options.peerRequestsPerMinute } : {}),
    healthCheck: async () => {},
  });
  await app.ready();

  async function createWorkspace(name: string): Promise<TestWorkspace> {
    const { workspace, apiKey } = await services.workspaces.createWorkspace(name);
    return {
      id: workspace.id,
      apiKey,
      request: (opts) =>
        app.inject({ ...opts, headers: { authorization: `Bearer ${apiKey}`, ...(opts.headers ?? {}) } }),
    };
  }

  return {
    app,
    database,
    services,
    clock,
    metrics,
    workspace: await createWorkspace('test'),
    createWorkspace,
    close: async () => {
      await app.close();
      await database.close();
    },
  };
}
