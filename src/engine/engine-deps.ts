// What every engine step is given: the database, time and chance, the mail clients and the
// settings. Below the steps (prove, plan, send, sync, placement, reputation, health), which all
// import it, and below the job list that runs them.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ChatWording } from '../conversations/chat-wording.js';
import { DEFAULT_RETENTION_DAYS } from '../config.js';
import type { Dialect } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { newWorkerId } from '../jobs/leases.js';
import type { MailServerConfig } from '../mail/errors.js';
import { DEFAULT_ROUND_TRIP_WAIT_MS } from '../mail/round-trip.js';
import type { ImapSession } from '../mail/imap.js';
import type { SmtpSender } from '../mail/smtp.js';
import type { TemplateType } from '../templates/templates.schemas.js';
import type { Random } from './random.js';

export interface EngineSettings {
  /** How long a claim (planning, a mailbox's sync, a planned row) holds before another worker may take it over. */
  leaseMs: number;
  imapTimeoutMs: number;
  smtpTimeoutMs: number;
  /**
   * The longest one mailbox's whole sync may take: a server that answers each command just in time
   * must not hold a sync slot (and the mailbox's lease) for ever. Below the lease, so no other worker
   * starts a second session meanwhile.
   */
  syncDeadlineMs: number;
  /** Days the Warmup folder keeps warmup mail before it is removed (WARMUP_FOLDER_RETENTION_DAYS). */
  warmupFolderRetentionDays: number;
  /** Days raw interactions and finished warmup messages are kept (WARMUP_RETENTION_DAYS; 0: for ever). */
  retentionDays: number;
  /** How long a mailbox's round trip waits for its test message (engine/proofs.ts). */
  proofWaitMs: number;
}

export const DEFAULT_ENGINE_SETTINGS: EngineSettings = {
  leaseMs: 5 * 60_000,
  imapTimeoutMs: 30_000,
  smtpTimeoutMs: 30_000,
  syncDeadlineMs: 3 * 60_000,
  warmupFolderRetentionDays: 30,
  retentionDays: DEFAULT_RETENTION_DAYS,
  proofWaitMs: DEFAULT_ROUND_TRIP_WAIT_MS,
};

/** Everything the engine touches, passed in: time and chance included, so a test can replay days. */
export interface EngineDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  random: Random;
  logger: Logger;
  /** This process's name in lease rows. */
  workerId: string;
  mailboxes: {
    getCredentials(mailboxId: string): Promise<{ imap: MailServerConfig; smtp: MailServerConfig }>;
  };
  templates: {
    pickTemplate(
      workspaceId: string,
      criteria: { type: TemplateType; language: string; ownOnly?: boolean },
      seed: number,
    ): Promise<{ id: string; subject: string; body: string } | undefined>;
  };
  settings: EngineSettings;
  /**
   * The installation's wording seed (derived from its secret key): with a workspace's id it picks
   * the region of the phrase space that workspace's mail is written from.
   */
  installationSeed: string;
  /**
   * The operator's chat endpoint for the wording (conversations/chat-wording.ts); without it the
   * built-in generator words every message, as it does whenever the endpoint's text is refused.
   */
  wording?: ChatWording;
  /**
   * The mail clients; tests of failure handling give fakes, everything else uses the real ones.
   * Aborting `signal` must drop the connection at once (the engine is stopping).
   */
  smtp?: (config: MailServerConfig, opts: { timeoutMs: number; signal?: AbortSignal }) => SmtpSender;
  imap?: (config: MailServerConfig, opts: { timeoutMs: number; signal?: AbortSignal }) => Promise<ImapSession>;
  /**
   * Benchmarks only (bench/effectiveness.bench.ts): the reader takes mail out of spam and files it,
   * and never opens, flags or answers it, so that a run measures what the rescue alone teaches a
   * receiver's filter. No process of the product sets it: every step, as the mailbox's habits say.
   */
  rescueOnly?: boolean;
}

export interface EngineWiring extends Omit<EngineDeps, 'random' | 'workerId' | 'settings' | 'installationSeed'> {
  installationSeed?: string;
  random?: Random;
  workerId?: string;
  settings?: Partial<EngineSettings>;
}

/** The engine's dependencies from the composition root's parts; the same for `serve`, `worker`, `run-once` and tests. */
export function createEngineDeps(wiring: EngineWiring): EngineDeps {
  return {
    ...wiring,
    random: wiring.random ?? Math.random,
    workerId: wiring.workerId ?? newWorkerId(),
    settings: { ...DEFAULT_ENGINE_SETTINGS, ...wiring.settings },
    // Tests of the engine alone have no secret key; every real process passes one (main.ts).
    installationSeed: wiring.installationSeed ?? 'installation without a key',
  };
}
