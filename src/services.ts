import type { Kysely } from 'kysely';
import type { Clock } from './clock.js';
import { DEFAULT_LIMITS, type Limits } from './config.js';
import type { Database } from './db/schema.js';
import { loadSecretKey } from './secrets/secrets.js';
import type { MailPolicy } from './mail/policy.js';
import { installationSeedFrom } from './conversations/conversation-writer.js';
import { connectionCheckWriter } from './engine/connection-check.js';
import { createMailboxesService } from './mailboxes/mailboxes.service.js';
import type { MailClients } from './mailboxes/mail-clients.js';
import { createStatsService } from './stats/stats.service.js';
import { createTemplatesService } from './templates/templates.service.js';
import { createWorkspacesService } from './workspaces/workspaces.service.js';
import { createOAuthClient } from './oauth/oauth.client.js';
import type { OAuthSettings } from './oauth/oauth.config.js';
import { createOAuthService } from './oauth/oauth.service.js';
import { createOAuthTokens } from './oauth/oauth.tokens.js';
import { createAlertsService } from './alerts/alerts.service.js';
import { createDmarcService } from './dmarc/dmarc.service.js';
import { createFeedsService } from './feeds/feeds.service.js';
import { createPeerMail } from './peers/peer-mail.js';
import { createPeersService } from './peers/peers.service.js';
import { createWebhooksService } from './webhooks/webhooks.service.js';
import { createChecksService } from './checks/checks.service.js';
import { createPlacementTestsService } from './placement-tests/placement-tests.service.js';
import { createDnsResolver } from './checks/dns-resolver.js';
import { createAccountsService, type LoginLimits, type WorkspaceCreation } from './accounts/accounts.service.js';
import { createKnownDevices, deriveSetupToken } from './accounts/known-devices.js';
import { createPasswordQueue, type PasswordQueueSettings } from './accounts/password-queue.js';
import { createVerdictsService } from './verdicts/verdicts.service.js';
import { createOidcClient } from './oidc/oidc.client.js';
import type { OidcSettings } from './oidc/oidc.config.js';
import { createOidcSignIn } from './oidc/oidc.service.js';
import { createConnectionGuard, type ConnectionGuardSettings } from './mailboxes/connection-guard.js';

export interface ServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  dataDir: string;
  secretKey: string | undefined;
  /** How long a statistics answer may be served again, in ms (default 0: always fresh). */
  statsCacheMs?: number;
  /** How long a mailbox's round trip waits for its test message (default 20 s). */
  roundTripWaitMs?: number;
  /** How long adding a mailbox waits on each server's login check (default 10 s). */
  verifyTimeoutMs?: number;
  /** The floor of a failed connection check and the cap on checks at once (default: DEFAULT_CONNECTION_CHECKS). */
  connectionChecks?: Partial<ConnectionGuardSettings>;
  /** Workspace quotas and size limits (default: DEFAULT_LIMITS). */
  limits?: Partial<Limits>;
  /** The operator's rules for tenant-named mail hosts (default: public hosts, TLS only). */
  mailPolicy?: MailPolicy;
  /** WARMUP_DNS_SERVERS: the resolvers the DNS checks ask (default: the system's). */
  dnsServers?: readonly string[];
  /** Receives details kept out of responses (e.g. why a mail host was refused). */
  logger?: { debug(details: object, message: string): void };
  /** OAuth providers the operator set up (default: none). */
  oauth?: OAuthSettings;
  /** Default: the real SMTP and IMAP clients; a simulation gives its own mail world's. */
  mailClients?: MailClients;
  /** Failed sign-ins allowed per account and per address (default: DEFAULT_LOGIN_LIMITS). */
  loginLimits?: Partial<LoginLimits>;
  /** Sign-in through the operator's OpenID Connect provider (default: off). */
  oidc?: OidcSettings;
  /** Who may make workspaces, and how many each (default: the installation's owner, 20). */
  workspaceCreation?: Partial<WorkspaceCreation>;
  /** The bounded queue every password hash of the API goes through (default: DEFAULT_PASSWORD_QUEUE). */
  passwordQueue?: Partial<PasswordQueueSettings>;
  /** First-run setup needs the setup token (the server is reachable from other machines). */
  requireSetupToken?: boolean;
  /** The operator configured an SMTP server for email alerts (default: no). */
  alertMailConfigured?: boolean;
  /** Tests only: peers on loopback over plain http (two installations on one machine). */
  peersOnLoopback?: boolean;
}

/** Wires the domain services together: plain factories, explicit dependencies. */
export function createServices({
  db,
  clock,
  dataDir,
  secretKey,
  statsCacheMs,
  roundTripWaitMs,
  verifyTimeoutMs,
  connectionChecks,
  limits: given,
  mailPolicy,
  logger,
  oauth = { publicUrl: undefined, providers: {} },
  dnsServers,
  mailClients,
  loginLimits,
  oidc,
  workspaceCreation,
  passwordQueue,
  requireSetupToken = false,
  alertMailConfigured = false,
  peersOnLoopback = false,
}: ServiceDeps) {
  const limits: Limits = { ...DEFAULT_LIMITS, ...given };
  const templates = createTemplatesService({ db, clock, limits });
  const workspaces = createWorkspacesService({
    db,
    clock,
    onWorkspaceCreated: (trx, workspaceId) => templates.seedDefaultTemplates(trx, workspaceId),
  });
  const key = loadSecretKey({ secretKey, dataDir });
  const installationSeed = installationSeedFrom(key);
  const accounts = createAccountsService({
    db,
    clock,
    insertWorkspace: workspaces.insertWorkspace,
    keysOfPerson: {
      list: workspaces.listKeysMadeBy,
      revoke: workspaces.revokeKeysMadeBy,
      cap: workspaces.capKeysMadeBy,
    },
    knownDevices: createKnownDevices(key),
    loginLimits,
    workspaceCreation,
    passwordQueue: createPasswordQueue(passwordQueue),
    ...(requireSetupToken ? { setupToken: deriveSetupToken(key) } : {}),
  });
  const oauthClient = createOAuthClient(oauth);
  const oauthTokens = createOAuthTokens({ db, clock, secretKey: key, client: oauthClient });
  const mailboxes = createMailboxesService({
    db,
    clock,
    secretKey: key,
    oauthTokens,
    maxMailboxes: limits.maxMailboxes,
    maxImportBytes: limits.maxImportBytes,
    mailPolicy,
    logger,
    roundTripWaitMs,
    verifyTimeoutMs,
    connectionGuard: createConnectionGuard(connectionChecks, logger),
    mailClients,
    checkMail: async (mailbox) => connectionCheckWriter({ installationSeed }, mailbox),
  });
  const stats = createStatsService({ db, clock, cacheMs: statsCacheMs });
  const oauthFlows = createOAuthService({
    db,
    clock,
    secretKey: key,
    client: oauthClient,
    mailboxes,
    publicUrl: oauth.publicUrl,
  });
  const oidcSignIn = createOidcSignIn({
    db,
    clock,
    secretKey: key,
    client: oidc ? createOidcClient(oidc) : undefined,
    accounts,
  });
  const webhooks = createWebhooksService({ db, clock, secretKey: key, mailPolicy });
  const alerts = createAlertsService({ db, clock, emailConfigured: alertMailConfigured });
  const checks = createChecksService({ db, clock, resolve: createDnsResolver({ servers: dnsServers }) });
  const verdicts = createVerdictsService({ db, clock });
  const placementTests = createPlacementTestsService({ db, clock });
  const dmarc = createDmarcService({ db, clock });
  const feeds = createFeedsService({ db, clock, secretKey: key });
  const peers = createPeersService({
    db,
    clock,
    secretKey: key,
    mailPolicy,
    publicUrl: oauth.publicUrl,
    allowPlainLoopback: peersOnLoopback,
  });
  const peerMail = createPeerMail({ db, clock, peers });
  return {
    accounts,
    oidcSignIn,
    workspaces,
    templates,
    mailboxes,
    stats,
    oauth: oauthFlows,
    webhooks,
    alerts,
    checks,
    verdicts,
    placementTests,
    dmarc,
    feeds,
    peers,
    peerMail,
  };
}

export type Services = ReturnType<typeof createServices>;
