// Delivers the outbox (a job of the job list, every few seconds in `serve` and `worker`, once per
// `run-once`): claims due deliveries (any number of workers share them through leases),
// writes each in its endpoint's kind (signed per Standard Webhooks, a Slack or Teams message, or an
// email alert), sends it, logs the attempt and either finishes the delivery or
// schedules the next attempt. At least once: a delivery is finished only after a 2xx was seen, so
// a worker that dies mid-request leaves it to be claimed again when its lease expires (with the
// same webhook-id, which receivers use to drop a second copy).
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import { describeEvent, type AlertEvent } from '../alerts/alert-messages.js';
import { mailAlert, type AlertMailer } from '../alerts/alert-mail.js';
import { chatBody } from '../alerts/chat-formats.js';
import type { Clock } from '../clock.js';
import type { Dialect } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { forEachLimited } from '../jobs/concurrency.js';
import type { MailPolicy } from '../mail/policy.js';
import { decryptSecret } from '../secrets/secrets.js';
import { postWebhook } from './webhook-http.js';
import { claimDueDeliveries, pruneEvents, recordAttempt, type DueDelivery } from './webhooks.repository.js';

export interface WebhookSettings {
  /** Pause between two passes over the outbox (in `serve` and `worker`). */
  intervalMs: number;
  /** How long a claim on a delivery holds before another worker may take it over. */
  leaseMs: number;
  /** How long one POST may take. */
  timeoutMs: number;
  /** The waits before the 2nd, 3rd, … attempt; after the last one the delivery is `failed`. */
  retryDelaysMs: readonly number[];
  /** Events (and their logs) are kept this long once no delivery of theirs is pending. */
  retentionMs: number;
}

/** The Standard Webhooks schedule: at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (8 attempts in about a day). */
export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  intervalMs: 5_000,
  leaseMs: 60_000,
  timeoutMs: 10_000,
  retryDelaysMs: [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000],
  retentionMs: 30 * 24 * 3_600_000,
};

export interface WebhookDeliveryDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  logger: Logger;
  /** The key that encrypts signing secrets (as mailbox passwords). */
  secretKey: Buffer;
  /** Endpoint hosts follow the mail hosts' rules. */
  policy: MailPolicy;
  workerId: string;
  settings: WebhookSettings;
  /** The operator's SMTP server for email alerts; absent, an email alert's attempt fails and says so. */
  alertMailer?: AlertMailer;
  random?: () => number;
}

export interface DeliverySummary {
  delivered: number;
  retried: number;
  failed: number;
}

/** Deliveries sent at the same time, and claimed at once: two rounds of 10 s timeouts stay well inside a lease. */
const CONCURRENCY = 4;
const CLAIM_BATCH = 2 * CONCURRENCY;

/** The three Standard Webhooks headers for one attempt. */
export function signedHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}

/** One pass: every due delivery, claimed in batches, until none is left or the signal fires. */
export async function deliverDueWebhooks(
  deps: WebhookDeliveryDeps,
  options: { signal?: AbortSignal } = {},
): Promise<DeliverySummary> {
  const summary: DeliverySummary = { delivered: 0, retried: 0, failed: 0 };
  for (;;) {
    if (options.signal?.aborted) return summary;
    const now = deps.clock.now();
    const batch = await claimDueDeliveries(deps.db, {
      dialect: deps.dialect,
      now,
      workerId: deps.workerId,
      leaseUntil: new Date(now.getTime() + deps.settings.leaseMs),
      limit: CLAIM_BATCH,
    });
    if (batch.length === 0) return summary;
    await forEachLimited(batch, CONCURRENCY, async (delivery) => {
      if (options.signal?.aborted) return;
      const status = await attempt(deps, delivery, options.signal);
      if (status) summary[status === 'pending' ? 'retried' : status] += 1;
    });
    if (batch.length < CLAIM_BATCH) return summary;
  }
}

async function attempt(
  deps: WebhookDeliveryDeps,
  delivery: DueDelivery,
  signal: AbortSignal | undefined,
): Promise<'delivered' | 'pending' | 'failed' | undefined> {
  const attemptedAt = deps.clock.now();
  const started = performance.now();
  let answer: { statusCode: number | null; error: string | null };
  try {
    answer = await send(deps, delivery, attemptedAt, signal);
  } catch (error) {
    deps.logger.error({ err: error, delivery: delivery.id }, 'webhook attempt failed before sending');
    answer = { statusCode: null, error: 'the delivery could not be prepared (see the service log)' };
  }
  // Stopping mid-request proves nothing about the receiver: the claim is given back, not spent.
  if (signal?.aborted) return undefined;
  const attemptNumber = delivery.attempts + 1;
  const delay = deps.settings.retryDelaysMs[attemptNumber - 1];
  const status = answer.error === null ? 'delivered' : delay === undefined ? 'failed' : 'pending';
  const nextAttemptAt = status === 'pending' ? new Date(attemptedAt.getTime() + jittered(delay!, deps.random)) : null;
  const recorded = await recordAttempt(deps.db, delivery, deps.workerId, {
    attemptedAt,
    statusCode: answer.statusCode,
    error: answer.error,
    durationMs: performance.now() - started,
    status,
    nextAttemptAt,
  });
  if (status !== 'delivered') {
    deps.logger.debug({ delivery: delivery.id, attempt: attemptNumber, error: answer.error }, 'webhook not delivered');
  }
  return recorded ? status : undefined;
}

/** One attempt in the endpoint's kind: signed JSON, a Slack or Teams message, or an email to the owners and admins. */
async function send(
  deps: WebhookDeliveryDeps,
  delivery: DueDelivery,
  attemptedAt: Date,
  signal: AbortSignal | undefined,
): Promise<{ statusCode: number | null; error: string | null }> {
  if (delivery.kind === 'email') {
    const error = await mailAlert(
      { db: deps.db, logger: deps.logger, mailer: deps.alertMailer, ...(signal ? { signal } : {}) },
      { id: delivery.id, workspaceId: delivery.workspaceId, payload: delivery.payload, at: attemptedAt },
    );
    return { statusCode: null, error };
  }
  const post = { policy: deps.policy, timeoutMs: deps.settings.timeoutMs, ...(signal ? { signal } : {}) };
  if (delivery.kind === 'slack' || delivery.kind === 'teams') {
    // a chat's incoming webhook authenticates by its secret URL: nothing is signed
    const body = chatBody(delivery.kind, describeEvent(JSON.parse(delivery.payload) as AlertEvent));
    return postWebhook({ url: delivery.url, body, headers: {} }, post);
  }
  const secret = decryptSecret(deps.secretKey, delivery.secretEncrypted, delivery.endpointId);
  return postWebhook(
    {
      url: delivery.url,
      body: delivery.payload,
      headers: signedHeaders(secret, delivery.id, attemptedAt, delivery.payload),
    },
    post,
  );
}

/** Up to a tenth more, so the retries of endpoints that failed together spread out. */
function jittered(delayMs: number, random: (() => number) | undefined): number {
  return Math.round(delayMs * (1 + 0.1 * (random ?? Math.random)()));
}

/** Events (and their delivery logs) past the retention, none of whose deliveries is pending, are removed. */
export async function removeExpiredEvents(
  deps: Pick<WebhookDeliveryDeps, 'db' | 'settings'>,
  now: Date,
): Promise<void> {
  await pruneEvents(deps.db, new Date(now.getTime() - deps.settings.retentionMs));
}
