import type { Kysely } from 'kysely';
import type { Clock } from './clock.js';
import { DEFAULT_LIMITS, type Limits } from './config.js';
import type { Database } from './db/schema.js';
import { loadSecretKey } from './mailboxes/credentials.js';
import type { MailPolicy } from './mail/policy.js';
import { createMailboxesService, type MailClients } from './mailboxes/mailboxes.service.js';
import { createStatsService } from './stats/stats.service.js';
import { createTemplatesService } from './templates/templates.service.js';
import { createWorkspacesService } from './workspaces/workspaces.service.js';

export interface ServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  dataDir: string;
  secretKey: string | undefined;
  /** How long a statistics answer may be served again, in ms (default 0: always fresh). */
  statsCacheMs?: number;
  /** How long a mailbox's round trip waits for its test message (default 20 s). */
  roundTripWaitMs?: number;
  /** Workspace quotas and size limits (default: DEFAULT_LIMITS). */
  limits?: Partial<Limits>;
  /** The operator's rules for tenant-named mail hosts (default: public hosts, TLS only). */
  mailPolicy?: MailPolicy;
  /** Receives details kept out of responses (e.g. why a mail host was refused). */
  logger?: { debug(details: object, message: string): void };
  /** Default: the real SMTP and IMAP clients; a simulation gives its own mail world's. */
  mailClients?: MailClients;
}

/** Wires the domain services together: plain factories, explicit dependencies. */
export function createServices({
  db,
  clock,
  dataDir,
  secretKey,
  statsCacheMs,
  roundTripWaitMs,
  limits: given,
  mailPolicy,
  logger,
  mailClients,
}: ServiceDeps) {
  const limits: Limits = { ...DEFAULT_LIMITS, ...given };
  const templates = createTemplatesService({ db, clock, limits });
  const workspaces = createWorkspacesService({
    db,
    clock,
    onWorkspaceCreated: (trx, workspaceId) => templates.seedDefaultTemplates(trx, workspaceId),
  });
  const mailboxes = createMailboxesService({
    db,
    clock,
    secretKey: loadSecretKey({ secretKey, dataDir }),
    maxMailboxes: limits.maxMailboxes,
    mailPolicy,
    logger,
    roundTripWaitMs,
    mailClients,
  });
  const stats = createStatsService({ db, clock, cacheMs: statsCacheMs });
  return { workspaces, templates, mailboxes, stats };
}

export type Services = ReturnType<typeof createServices>;
