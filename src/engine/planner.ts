import { createHash, randomBytes } from 'node:crypto';
import { addDays, isWeekend, localDay, localWindow, validTimeZone } from '../calendar.js';
import { newId } from '../db/ids.js';
import type { WarmupSettings } from '../mailboxes/mailboxes.schemas.js';
import { parseWarmupSettings } from '../mailboxes/warmup-settings.js';
import type { EngineDeps } from './engine.js';
import { withLease } from './leases.js';
import { messageIdFor } from './message-content.js';
import { claimPlanDay, findActiveRamp, listActiveForPlanning, recordPlan } from './mailbox-engine-state.repository.js';
import { answersAutomatically } from '../mailboxes/auto-reply-rule.js';
import { candidatesFor, choosePartners, emailDomain, type PoolMember } from './partners.js';
import { shuffled, type Random } from './random.js';
import { insertPlannedMessages, loadPairCounts, loadPoolTraffic } from './warmup-messages.repository.js';

/** Sends of one day are at least this far apart (less only when the window is too short). */
export const MIN_SEND_GAP_MS = 4 * 60_000;
/** About one day in seven is a light day. */
export const LIGHT_DAY_CHANCE = 1 / 7;
export const LIGHT_DAY_FACTOR = 0.6;
export const VARIANCE_MIN = 0.75;
export const VARIANCE_MAX = 1.1;

const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------------------------
// Volume arithmetic: pure, so tests can predict every day of a ramp.

/** The ramp before variance: min(dailyLimit, startVolume + rampUpIncrement × (n − 1)). */
export function rampVolume(
  settings: Pick<WarmupSettings, 'startVolume' | 'rampUpIncrement' | 'dailyLimit'>,
  warmupDay: number,
): number {
  return Math.min(settings.dailyLimit, settings.startVolume + settings.rampUpIncrement * (Math.max(1, warmupDay) - 1));
}

/**
 * The day's variance factor: 0.6 on a light day (about one in seven), else 0.75–1.10. Derived from
 * a hash of mailbox and day, so it is stable: replanning, another worker or a test computing the
 * expected volume get the same factor, and mailboxes do not all have their light day together.
 */
export function dayVariance(mailboxId: string, day: string): number {
  const digest = createHash('sha256').update(`${mailboxId}:${day}`).digest();
  const light = digest.readUInt32BE(0) / 2 ** 32;
  if (light < LIGHT_DAY_CHANCE) return LIGHT_DAY_FACTOR;
  const spread = digest.readUInt32BE(4) / 2 ** 32;
  return VARIANCE_MIN + (VARIANCE_MAX - VARIANCE_MIN) * spread;
}

export interface TargetInput {
  settings: Pick<WarmupSettings, 'startVolume' | 'rampUpIncrement' | 'dailyLimit'>;
  warmupDay: number;
  mailboxId: string;
  day: string;
  /** The health guard's factor: 1, or 0.5 while spam placement is high. */
  volumeFactor: number;
}

/** Sends wanted on a day: the ramp × variance × health factor, rounded, at least 1, never over dailyLimit. */
export function dailyTarget({ settings, warmupDay, mailboxId, day, volumeFactor }: TargetInput): number {
  const raw = rampVolume(settings, warmupDay) * dayVariance(mailboxId, day) * volumeFactor;
  return Math.min(settings.dailyLimit, Math.max(1, Math.round(raw)));
}

/**
 * `count` instants spread at random over [from, to], sorted, at least `minGapMs` apart (or as far
 * apart as the span allows): random offsets in the span left after the gaps, then the gaps added.
 * Whole seconds, so the gaps stay exact.
 */
export function spreadSendTimes(count: number, from: Date, to: Date, minGapMs: number, random: Random): Date[] {
  if (count <= 0) return [];
  const span = Math.max(0, to.getTime() - from.getTime());
  const gap = count > 1 ? Math.floor(Math.min(minGapMs, span / (count - 1)) / 1000) * 1000 : 0;
  const slack = span - gap * (count - 1);
  const offsets = Array.from({ length: count }, () => Math.floor((random() * slack) / 1000) * 1000).sort(
    (a, b) => a - b,
  );
  return offsets.map((offset, i) => new Date(from.getTime() + offset + gap * i));
}

/** A fresh Message-ID on the sender's domain for a thread's first message (nothing in it says "warmup"). */
export function newMessageId(senderEmail: string, at: Date): string {
  return messageIdFor(senderEmail, `${at.getTime().toString(36)}.${randomBytes(9).toString('base64url')}`);
}

/** Today's send window of a mailbox as instants. */
export function sendWindow(settings: WarmupSettings, day: string): { start: Date; end: Date } {
  return localWindow(day, settings.sendWindow, validTimeZone(settings.timezone));
}

// ---------------------------------------------------------------------------------------------
// The daily plan in the database.

/** What planning needs of the engine. */
export type PlanDeps = Pick<EngineDeps, 'db' | 'random' | 'logger' | 'workerId' | 'settings'>;

export interface PlannedMailbox {
  mailboxId: string;
  day: string;
  warmupDay: number;
  target: number;
  planned: number;
}

export interface PlanSummary {
  /** False when another worker held the planning lease (it plans instead). */
  ran: boolean;
  mailboxes: PlannedMailbox[];
  messages: number;
}

/** The planning lease: one planner at a time, so partner choices see each other's sends. */
export const PLAN_LEASE_KEY = 'plan';

/**
 * Plans the local day of every active mailbox that has no plan for it yet: its warmup day, its
 * target, its partners and a `planned` row per send. One transaction per mailbox, guarded by the
 * plan row's key (mailbox, day), so a rerun or a second worker never plans a day twice.
 * A mailbox whose send window already closed today starts tomorrow, unless `ignoreSchedule`.
 */
export async function planDay(
  deps: PlanDeps,
  at: Date,
  options: { ignoreSchedule?: boolean } = {},
): Promise<PlanSummary> {
  const outcome = await withLease(deps.db, PLAN_LEASE_KEY, deps.workerId, deps.settings.leaseMs, at, () =>
    planUnderLease(deps, at, options.ignoreSchedule ?? false),
  );
  return outcome.ran ? outcome.result : { ran: false, mailboxes: [], messages: 0 };
}

async function planUnderLease(deps: PlanDeps, at: Date, ignoreSchedule: boolean): Promise<PlanSummary> {
  const { db, random } = deps;
  const active = await listActiveForPlanning(db);
  const pool: PoolMember[] = active.map((m) => ({
    id: m.id,
    emailNormalized: m.email_normalized,
    answersAutomatically: answersAutomatically(m.auto_reply_at, at),
  }));

  const due: Array<{ member: PoolMember; day: string; settings: WarmupSettings }> = [];
  for (const mailbox of active) {
    let settings: WarmupSettings;
    try {
      settings = parseWarmupSettings(mailbox.warmup);
    } catch (error) {
      deps.logger.warn({ err: error, mailboxId: mailbox.id }, 'unreadable warmup settings; not planning this mailbox');
      continue;
    }
    const day = localDay(at, validTimeZone(settings.timezone));
    if (mailbox.last_plan_day === day) continue;
    if (settings.weekdaysOnly && isWeekend(day)) continue;
    if (!ignoreSchedule && at >= sendWindow(settings, day).end) continue;
    due.push({ member: { id: mailbox.id, emailNormalized: mailbox.email_normalized }, day, settings });
  }
  if (due.length === 0) return { ran: true, mailboxes: [], messages: 0 };

  const traffic = await loadPoolTraffic(db, new Date(at.getTime() - 7 * DAY_MS).toISOString());
  const summary: PlanSummary = { ran: true, mailboxes: [], messages: 0 };
  // A random order each day, so no mailbox always gets first pick of the least-used partners.
  for (const { member, day, settings } of shuffled(due, random)) {
    const planned = await db.transaction().execute(async (trx) => {
      const mailbox = await findActiveRamp(trx, member.id);
      if (!mailbox) return undefined;
      if (!(await claimPlanDay(trx, member.id, day, at))) return undefined;

      const warmupDay = mailbox.warmup_day + 1;
      const target = dailyTarget({
        settings,
        warmupDay,
        mailboxId: member.id,
        day,
        volumeFactor: Number(mailbox.volume_factor),
      });
      const pairs = await loadPairCounts(trx, member.id, addDays(day, -6), day);
      const partners = choosePartners({
        senderDomain: emailDomain(member.emailNormalized),
        candidates: candidatesFor(member, pool, traffic, pairs),
        count: target,
        random,
      });
      const window = sendWindow(settings, day);
      const from = at > window.start && at < window.end ? at : window.start;
      const times = spreadSendTimes(partners.length, from, window.end, MIN_SEND_GAP_MS, random);
      const rows = partners.map((partner, i) => {
        const messageId = newMessageId(member.emailNormalized, at);
        return {
          id: newId('wm', at.getTime()),
          message_id: messageId,
          thread_id: messageId,
          sender_mailbox_id: member.id,
          recipient_mailbox_id: partner.mailboxId,
          kind: 'initial',
          turn: 1,
          parent_message_id: null,
          plan_day: day,
          due_at: times[i].toISOString(),
          status: 'planned',
          created_at: at.toISOString(),
        };
      });
      await insertPlannedMessages(trx, rows);
      // A day on which the pool allowed no send does not advance the ramp: a small pool warms slowly.
      const nextWarmupDay = rows.length > 0 ? warmupDay : mailbox.warmup_day;
      await recordPlan(trx, { mailboxId: member.id, day, warmupDay: nextWarmupDay, target, planned: rows.length, at });
      return {
        mailboxId: member.id,
        day,
        warmupDay: nextWarmupDay,
        target,
        planned: rows.length,
        recipients: partners.map((p) => p.mailboxId),
      };
    });
    if (!planned) continue;
    const { recipients, ...plan } = planned;
    for (const recipient of recipients) {
      const entry = traffic.get(recipient) ?? { inbound: 0, outbound: 0 };
      entry.inbound += 1;
      traffic.set(recipient, entry);
    }
    const own = traffic.get(member.id) ?? { inbound: 0, outbound: 0 };
    own.outbound += plan.planned;
    traffic.set(member.id, own);
    summary.mailboxes.push(plan);
    summary.messages += plan.planned;
    if (plan.planned < plan.target) {
      deps.logger.info(
        { mailboxId: member.id, day, target: plan.target, planned: plan.planned },
        'pool too small for the full target today',
      );
    }
  }
  return summary;
}
