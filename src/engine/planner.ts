import { createHash, randomBytes } from 'node:crypto';
import { addDays, localDay, validTimeZone } from '../calendar.js';
import { newId } from '../db/ids.js';
import type { WarmupSettings } from '../mailboxes/mailboxes.schemas.js';
import { parseWarmupSettings } from '../mailboxes/warmup-settings.js';
import type { EngineDeps } from './engine.js';
import { withLease } from './leases.js';
import { clientProfileOf, messageIdToken, type ClientProfileName } from './client-profile.js';
import { messageIdFor } from './message-content.js';
import {
  claimPlanDay,
  findActiveRamp,
  listActiveForPlanning,
  loadPlanTargets,
  recordPlan,
} from './mailbox-engine-state.repository.js';
import {
  candidatesFor,
  choosePartners,
  emailDomain,
  INBOUND_SLACK,
  type DayInbound,
  type PartnerCandidate,
  type PoolMember,
} from './partners.js';
import { answersAutomatically } from '../mailboxes/auto-reply-rule.js';
import { shuffled, type Random } from './random.js';
import { isSendDay, lateShare, MIN_SEND_GAP_MS, sendWindow } from './send-budget.js';

// The gap is the send bounds' (send-budget.ts); named here too for the planner's existing importers.
export { MIN_SEND_GAP_MS };
import {
  countPlannedReplies,
  insertPlannedMessages,
  loadInitialsDueBetween,
  loadPairCounts,
  loadPoolTraffic,
} from './warmup-messages.repository.js';

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

/**
 * A fresh Message-ID on the sender's domain for a thread's first message, in the form the sender's
 * mail client gives its Message-IDs (nothing in it says "warmup").
 */
export function newMessageId(senderEmail: string, profile: ClientProfileName = 'thunderbird'): string {
  return messageIdFor(senderEmail, messageIdToken(profile, randomBytes(32)));
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

interface PlanCandidate {
  member: PoolMember;
  day: string;
  settings: WarmupSettings;
  /** Its ramp position, for the target of a day not planned yet. */
  warmupDay: number;
  volumeFactor: number;
  /** Due for planning now (no plan for its day yet, a send day, its window not over). */
  due: boolean;
  /** What the day allows it to send: its plan's target, or the budget planning it now would give. */
  budget: number;
}

async function planUnderLease(deps: PlanDeps, at: Date, ignoreSchedule: boolean): Promise<PlanSummary> {
  const { db, random } = deps;
  const active = await listActiveForPlanning(db);
  const pool: PoolMember[] = active.map((m) => ({
    id: m.id,
    emailNormalized: m.email_normalized,
    answersAutomatically: answersAutomatically(m.auto_reply_at, at),
  }));

  const everyone: PlanCandidate[] = [];
  for (const mailbox of active) {
    let settings: WarmupSettings;
    try {
      settings = parseWarmupSettings(mailbox.warmup);
    } catch (error) {
      deps.logger.warn({ err: error, mailboxId: mailbox.id }, 'unreadable warmup settings; not planning this mailbox');
      continue;
    }
    const day = localDay(at, validTimeZone(settings.timezone));
    const member = { id: mailbox.id, emailNormalized: mailbox.email_normalized };
    const due =
      mailbox.last_plan_day !== day &&
      isSendDay(settings, day) &&
      (ignoreSchedule || at < sendWindow(settings, day).end);
    const target = dailyTarget({
      settings,
      warmupDay: mailbox.warmup_day + (mailbox.last_plan_day === day ? 0 : 1),
      mailboxId: mailbox.id,
      day,
      volumeFactor: Number(mailbox.volume_factor),
    });
    everyone.push({
      member,
      day,
      settings,
      warmupDay: mailbox.warmup_day + (mailbox.last_plan_day === day ? 0 : 1),
      volumeFactor: Number(mailbox.volume_factor),
      due,
      budget: due ? dayBudget(settings, day, target, at, ignoreSchedule) : 0,
    });
  }
  const due = everyone.filter((c) => c.due);
  if (due.length === 0) return { ran: true, mailboxes: [], messages: 0 };

  const inbound = await loadInboundBook(db, everyone, at);

  const traffic = await loadPoolTraffic(db, new Date(at.getTime() - 7 * DAY_MS).toISOString());
  const summary: PlanSummary = { ran: true, mailboxes: [], messages: 0 };
  // A random order each day, so no mailbox always gets first pick of the least-used partners.
  for (const { member, day, settings } of shuffled(due, random)) {
    const outcome = await db.transaction().execute(async (trx) => {
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
      const budget = dayBudget(settings, day, target, at, ignoreSchedule);
      // Replies already waiting for this day come first: new threads get what they leave.
      const replies = await countPlannedReplies(trx, member.id, day);
      const pairs = new Map(await loadPairCounts(trx, member.id, addDays(day, -6), day));
      const window = sendWindow(settings, day);
      const from = at > window.start && at < window.end ? at : window.start;
      const slots = spreadSendTimes(Math.max(0, budget - replies), from, window.end, MIN_SEND_GAP_MS, random);
      // One partner per send time: each recipient's cap is for its own local day of that time.
      const partners: PartnerCandidate[] = [];
      const times: Date[] = [];
      for (const time of slots) {
        const [partner] = choosePartners({
          senderDomain: emailDomain(member.emailNormalized),
          candidates: candidatesFor(member, pool, traffic, pairs, inbound.onDayOf(time)),
          count: 1,
          random,
        });
        if (!partner) continue;
        partners.push(partner);
        times.push(time);
        const pair = pairs.get(partner.mailboxId) ?? { week: 0, today: 0 };
        pairs.set(partner.mailboxId, { week: pair.week + 1, today: pair.today + 1 });
        inbound.add(partner.mailboxId, time);
      }
      const rows = partners.map((partner, i) => {
        const messageId = newMessageId(member.emailNormalized, clientProfileOf(member.id).name);
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
      const nextWarmupDay = rows.length + replies > 0 ? warmupDay : mailbox.warmup_day;
      await recordPlan(trx, {
        mailboxId: member.id,
        day,
        warmupDay: nextWarmupDay,
        target: budget,
        planned: rows.length,
        at,
      });
      return {
        plan: { mailboxId: member.id, day, warmupDay: nextWarmupDay, target: budget, planned: rows.length },
        fullTarget: target,
        replies,
        recipients: partners.map((p) => p.mailboxId),
      };
    });
    if (!outcome) continue;
    const { plan, recipients } = outcome;
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
    if (plan.target < outcome.fullTarget) {
      deps.logger.info(
        { mailboxId: member.id, day, target: outcome.fullTarget, budget: plan.target },
        'late start: a share of the day in proportion to the window left',
      );
    }
    if (plan.planned + outcome.replies < plan.target) {
      deps.logger.info(
        { mailboxId: member.id, day, target: plan.target, planned: plan.planned, replies: outcome.replies },
        'pool too small for the full target today',
      );
    }
  }
  return summary;
}

/** New threads each mailbox receives per its own local day, and the most it may receive on a day. */
interface InboundBook {
  /** Every mailbox's count and cap on its own local day of `time`. */
  onDayOf(time: Date): Map<string, DayInbound>;
  add(recipientId: string, time: Date): void;
}

/**
 * The inbound bound: new threads addressed to a mailbox and due on one of its local days are at
 * most its own budget that day (its plan's target; for a day not planned yet, what planning it
 * now would give, or its ramp target for a later day) + INBOUND_SLACK. Counted from the threads
 * due within a day and a half of `at`, each on its recipient's local day.
 */
async function loadInboundBook(db: PlanDeps['db'], everyone: PlanCandidate[], at: Date): Promise<InboundBook> {
  const byId = new Map(everyone.map((c) => [c.member.id, c]));
  const zoneOf = (c: PlanCandidate) => validTimeZone(c.settings.timezone);
  const days = new Set<string>();
  for (const c of everyone) for (const d of [-1, 0, 1]) days.add(addDays(c.day, d));
  const planned = await loadPlanTargets(db, [...days]);
  const counts = new Map<string, number>();
  const key = (id: string, time: Date) => {
    const c = byId.get(id);
    return c ? `${id} ${localDay(time, zoneOf(c))}` : undefined;
  };
  for (const row of await loadInitialsDueBetween(
    db,
    new Date(at.getTime() - 1.5 * DAY_MS),
    new Date(at.getTime() + 1.5 * DAY_MS),
  )) {
    const k = key(row.recipient_mailbox_id, new Date(row.due_at));
    if (k) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const capOf = (c: PlanCandidate, day: string): number => {
    const own =
      planned.get(`${c.member.id} ${day}`) ??
      (day === c.day
        ? c.budget
        : day > c.day && isSendDay(c.settings, day)
          ? // its ramp position today: a later day's is never lower
            dailyTarget({
              settings: c.settings,
              warmupDay: c.warmupDay,
              mailboxId: c.member.id,
              day,
              volumeFactor: c.volumeFactor,
            })
          : 0);
    return own + INBOUND_SLACK;
  };
  return {
    onDayOf(time) {
      const book = new Map<string, DayInbound>();
      for (const c of everyone) {
        const day = localDay(time, zoneOf(c));
        book.set(c.member.id, { today: counts.get(`${c.member.id} ${day}`) ?? 0, cap: capOf(c, day) });
      }
      return book;
    },
    add(recipientId, time) {
      const k = key(recipientId, time);
      if (k) counts.set(k, (counts.get(k) ?? 0) + 1);
    },
  };
}

/**
 * The day's budget planned at `at`: the whole target, or the late share of it when the window has
 * begun (`--ignore-schedule` plans the whole day whatever the time).
 */
function dayBudget(settings: WarmupSettings, day: string, target: number, at: Date, ignoreSchedule: boolean): number {
  return ignoreSchedule ? target : lateShare(target, sendWindow(settings, day), at);
}
