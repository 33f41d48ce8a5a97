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
  claimPlanDays,
  findActiveRamps,
  listActiveForPlanning,
  loadPlanTargets,
  recordPlans,
  type DecidedPlan,
} from './mailbox-engine-state.repository.js';
import {
  CANDIDATE_SAMPLE,
  emailDomain,
  pickPartner,
  INBOUND_SLACK,
  sampleCandidates,
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
  insertPlannedMessages,
  loadInitialsDueBetween,
  loadPoolTraffic,
  loadSenderDays,
  type NewWarmupMessageRow,
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
 * Mailboxes planned per transaction: one claim, one read of each kind and multi-row inserts for
 * all of them. A commit per mailbox was most of the planning time (~3.5 ms each on SQLite).
 */
export const PLAN_BATCH = 500;

/**
 * Plans the local day of every active mailbox that has no plan for it yet: its warmup day, its
 * target, its partners and a `planned` row per send. PLAN_BATCH mailboxes per transaction, each
 * guarded by its plan row's key (mailbox, day), so a rerun or a second worker never plans a day twice.
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

/** A member of the pool with its domain worked out once for the day. */
interface PlanMember extends PoolMember {
  domain: string;
}

type Traffic = Map<string, { inbound: number; outbound: number }>;

async function planUnderLease(deps: PlanDeps, at: Date, ignoreSchedule: boolean): Promise<PlanSummary> {
  const { db, random } = deps;
  const active = await listActiveForPlanning(db);
  const pool: PlanMember[] = active.map((m) => ({
    id: m.id,
    emailNormalized: m.email_normalized,
    answersAutomatically: answersAutomatically(m.auto_reply_at, at),
    domain: emailDomain(m.email_normalized),
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
      mailbox.last_plan_day !== day && isSendDay(settings, day) && (ignoreSchedule || at < windowOf(settings, day).end);
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
  const traffic: Traffic = await loadPoolTraffic(db, new Date(at.getTime() - 7 * DAY_MS).toISOString());
  const chooser = partnerChooser(pool, inbound, traffic, random);

  const summary: PlanSummary = { ran: true, mailboxes: [], messages: 0 };
  // A random order each day, so no mailbox always gets first pick of the least-used partners.
  const queue = shuffled(due, random);
  for (let start = 0; start < queue.length; start += PLAN_BATCH) {
    const batch = queue.slice(start, start + PLAN_BATCH);
    const outcomes = await db
      .transaction()
      .execute((trx) => planBatch({ trx, deps, batch, at, ignoreSchedule, chooser, inbound, traffic }));
    for (const outcome of outcomes) {
      const { plan } = outcome;
      summary.mailboxes.push(plan);
      summary.messages += plan.planned;
      if (plan.target < outcome.fullTarget) {
        deps.logger.info(
          { mailboxId: plan.mailboxId, day: plan.day, target: outcome.fullTarget, budget: plan.target },
          'late start: a share of the day in proportion to the window left',
        );
      }
      if (plan.planned + outcome.replies < plan.target) {
        deps.logger.info(
          {
            mailboxId: plan.mailboxId,
            day: plan.day,
            target: plan.target,
            planned: plan.planned,
            replies: outcome.replies,
          },
          'pool too small for the full target today',
        );
      }
    }
  }
  return summary;
}

interface PartnerChooser {
  /** One partner for one send of `sender` at `time`, or undefined when the rules leave none. */
  choose(
    sender: PoolMember,
    pairs: ReadonlyMap<string, { week: number; today: number }>,
    time: Date,
  ): PartnerCandidate | undefined;
}

/**
 * Partner choice over the day's pool. A large pool is walked from a random place in a random order
 * fixed for the day, so each send weighs a random window of it (partners.ts); a small one is weighed
 * whole, in id order. Members that reached their inbound cap for their own planning day leave the
 * walk (`open`) for good, so a filling day does not make the walks longer; they are still found
 * for a send on another of their days through the whole-pool walk, which runs only when the open
 * members offer no partner on another domain.
 */
function partnerChooser(pool: readonly PlanMember[], inbound: InboundBook, traffic: Traffic, random: Random) {
  const sampled = pool.length > CANDIDATE_SAMPLE;
  const everyone = sampled ? shuffled(pool, random) : pool;
  let open = everyone;
  const closeFull = () => {
    open = open.filter((member) => !inbound.isFullToday(member.id));
  };
  let sinceClosed = 0;
  const chooser: PartnerChooser = {
    choose(sender, pairs, time) {
      const candidate = (member: PlanMember): PartnerCandidate => {
        const pair = pairs.get(member.id);
        const seen = traffic.get(member.id);
        const day = inbound.of(member.id, time);
        return {
          mailboxId: member.id,
          domain: member.domain,
          inbound: seen?.inbound ?? 0,
          outbound: seen?.outbound ?? 0,
          pairWeek: pair?.week ?? 0,
          pairToday: pair?.today ?? 0,
          inboundToday: day?.today ?? 0,
          inboundCap: day?.cap ?? Number.POSITIVE_INFINITY,
        };
      };
      // the full ones leave the walk in sweeps, so closing costs O(pool) per pool's worth of sends
      if (sampled && ++sinceClosed >= Math.max(CANDIDATE_SAMPLE, open.length / 16)) {
        closeFull();
        sinceClosed = 0;
      }
      const senderDomain = emailDomain(sender.emailNormalized);
      const start = sampled ? Math.floor(random() * open.length) : 0;
      let candidates = sampleCandidates(sender, open, start, candidate);
      if (candidates.length === 0 || candidates[0].domain === senderDomain) {
        const whole = sampleCandidates(sender, everyone, start % Math.max(1, everyone.length), candidate);
        if (whole.length > 0 && (candidates.length === 0 || whole[0].domain !== senderDomain)) candidates = whole;
      }
      return pickPartner(senderDomain, candidates, random);
    },
  };
  return chooser;
}

interface BatchOutcome {
  plan: PlannedMailbox;
  fullTarget: number;
  replies: number;
}

/**
 * Plans one batch of due mailboxes in the caller's transaction: claims their days, reads their
 * ramps, waiting replies and pair counts in one statement each, chooses partners mailbox after
 * mailbox (each sees the sends chosen before it), then writes every planned row and plan at once.
 */
async function planBatch({
  trx,
  deps,
  batch,
  at,
  ignoreSchedule,
  chooser,
  inbound,
  traffic,
}: {
  trx: PlanDeps['db'];
  deps: PlanDeps;
  batch: readonly PlanCandidate[];
  at: Date;
  ignoreSchedule: boolean;
  chooser: PartnerChooser;
  inbound: InboundBook;
  traffic: Traffic;
}): Promise<BatchOutcome[]> {
  const ramps = await findActiveRamps(
    trx,
    batch.map((c) => c.member.id),
  );
  const claimed = await claimPlanDays(
    trx,
    batch.filter((c) => ramps.has(c.member.id)).map((c) => ({ mailboxId: c.member.id, day: c.day })),
    at,
  );
  const planning = batch.filter((c) => claimed.has(c.member.id));
  if (planning.length === 0) return [];
  const days = planning.map((c) => c.day).sort();
  const [firstDay, lastDay] = [days[0], days[days.length - 1]];
  const ids = planning.map((c) => c.member.id);
  const history = await loadSenderDays(trx, ids, addDays(firstDay, -6), lastDay);
  const historyOf = new Map<string, typeof history>();
  for (const row of history) {
    const rows = historyOf.get(row.sender);
    if (rows) rows.push(row);
    else historyOf.set(row.sender, [row]);
  }

  const messages: NewWarmupMessageRow[] = [];
  const plans: DecidedPlan[] = [];
  const outcomes: BatchOutcome[] = [];
  for (const { member, day, settings } of planning) {
    const mailbox = ramps.get(member.id)!;
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
    const own = historyOf.get(member.id) ?? [];
    const replies = own.reduce((sum, row) => sum + (row.kind === 'reply' && row.day === day ? row.planned : 0), 0);
    const pairs = pairCountsOf(own, addDays(day, -6), day);
    const window = windowOf(settings, day);
    const from = at > window.start && at < window.end ? at : window.start;
    const slots = spreadSendTimes(Math.max(0, budget - replies), from, window.end, MIN_SEND_GAP_MS, deps.random);
    // One partner per send time: each recipient's cap is for its own local day of that time.
    let planned = 0;
    const recipients: string[] = [];
    for (const time of slots) {
      const partner = chooser.choose(member, pairs, time);
      if (!partner) continue;
      const pair = pairs.get(partner.mailboxId) ?? { week: 0, today: 0 };
      pairs.set(partner.mailboxId, { week: pair.week + 1, today: pair.today + 1 });
      inbound.add(partner.mailboxId, time);
      recipients.push(partner.mailboxId);
      const messageId = newMessageId(member.emailNormalized, clientProfileOf(member.id).name);
      messages.push({
        id: newId('wm', at.getTime()),
        message_id: messageId,
        thread_id: messageId,
        sender_mailbox_id: member.id,
        recipient_mailbox_id: partner.mailboxId,
        kind: 'initial',
        turn: 1,
        parent_message_id: null,
        plan_day: day,
        due_at: time.toISOString(),
        status: 'planned',
        created_at: at.toISOString(),
      });
      planned += 1;
    }
    // The 7-day traffic the weights read moves once the mailbox's day is chosen.
    for (const recipient of recipients) {
      const seen = traffic.get(recipient) ?? { inbound: 0, outbound: 0 };
      seen.inbound += 1;
      traffic.set(recipient, seen);
    }
    const sent = traffic.get(member.id) ?? { inbound: 0, outbound: 0 };
    sent.outbound += planned;
    traffic.set(member.id, sent);
    // A day on which the pool allowed no send does not advance the ramp: a small pool warms slowly.
    const nextWarmupDay = planned + replies > 0 ? warmupDay : mailbox.warmup_day;
    const plan = { mailboxId: member.id, day, warmupDay: nextWarmupDay, target: budget, planned };
    plans.push(plan);
    outcomes.push({ plan, fullTarget: target, replies });
  }
  await insertPlannedMessages(trx, messages);
  await recordPlans(trx, plans, at);
  return outcomes;
}

/** One sender's threads per recipient over its days [fromDay, day]: the week's and today's counts. */
function pairCountsOf(
  rows: ReadonlyArray<{ recipient: string; day: string; kind: string; n: number }>,
  fromDay: string,
  day: string,
): Map<string, { week: number; today: number }> {
  const pairs = new Map<string, { week: number; today: number }>();
  for (const row of rows) {
    if (row.kind !== 'initial' || row.day < fromDay || row.day > day) continue;
    const pair = pairs.get(row.recipient) ?? { week: 0, today: 0 };
    pair.week += row.n;
    if (row.day === day) pair.today += row.n;
    pairs.set(row.recipient, pair);
  }
  return pairs;
}

/** New threads each mailbox receives per its own local day, and the most it may receive on a day. */
interface InboundBook {
  /** A mailbox's count and cap on its own local day of `time`; undefined for one not in the pool. */
  of(mailboxId: string, time: Date): DayInbound | undefined;
  /** Whether a mailbox already has all the new threads it may receive on the day it is planned for. */
  isFullToday(mailboxId: string): boolean;
  add(recipientId: string, time: Date): void;
}

/** Every UTC offset is a whole number of quarter hours, so the local day is the same across one. */
const QUARTER_HOUR_MS = 900_000;

/** One pool member's inbound: new threads per local day of its own, and its cap on its planning day. */
interface InboundEntry {
  candidate: PlanCandidate;
  zone: string;
  perDay: Map<string, number>;
  capToday: number;
}

/**
 * The inbound bound: new threads addressed to a mailbox and due on one of its local days are at
 * most its own budget that day (its plan's target; for a day not planned yet, what planning it
 * now would give, or its ramp target for a later day) + INBOUND_SLACK. Counted from the threads
 * due within a day and a half of `at`, each on its recipient's local day.
 */
async function loadInboundBook(db: PlanDeps['db'], everyone: PlanCandidate[], at: Date): Promise<InboundBook> {
  // localDay goes through Intl, far slower than a map look-up: cached per zone and quarter hour
  const localDays = new Map<string, Map<number, string>>();
  const localDayOf = (time: Date, zone: string) => {
    let ofZone = localDays.get(zone);
    if (!ofZone) localDays.set(zone, (ofZone = new Map()));
    const quarter = Math.floor(time.getTime() / QUARTER_HOUR_MS);
    let day = ofZone.get(quarter);
    if (day === undefined) ofZone.set(quarter, (day = localDay(time, zone)));
    return day;
  };
  const days = new Set<string>();
  for (const c of everyone) for (const d of [-1, 0, 1]) days.add(addDays(c.day, d));
  const planned = await loadPlanTargets(db, [...days]);
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
  const entries = new Map<string, InboundEntry>();
  for (const c of everyone)
    entries.set(c.member.id, {
      candidate: c,
      zone: validTimeZone(c.settings.timezone),
      perDay: new Map(),
      capToday: capOf(c, c.day),
    });
  const add = (recipientId: string, time: Date) => {
    const entry = entries.get(recipientId);
    if (!entry) return;
    const day = localDayOf(time, entry.zone);
    entry.perDay.set(day, (entry.perDay.get(day) ?? 0) + 1);
  };
  for (const row of await loadInitialsDueBetween(
    db,
    new Date(at.getTime() - 1.5 * DAY_MS),
    new Date(at.getTime() + 1.5 * DAY_MS),
  ))
    add(row.recipient_mailbox_id, new Date(row.due_at));
  return {
    of(mailboxId, time) {
      const entry = entries.get(mailboxId);
      if (!entry) return undefined;
      const day = localDayOf(time, entry.zone);
      const today = entry.perDay.get(day) ?? 0;
      return { today, cap: day === entry.candidate.day ? entry.capToday : capOf(entry.candidate, day) };
    },
    isFullToday(mailboxId) {
      const entry = entries.get(mailboxId);
      return entry !== undefined && (entry.perDay.get(entry.candidate.day) ?? 0) >= entry.capToday;
    },
    add,
  };
}

/**
 * The day's budget planned at `at`: the whole target, or the late share of it when the window has
 * begun (`--ignore-schedule` plans the whole day whatever the time).
 */
function dayBudget(settings: WarmupSettings, day: string, target: number, at: Date, ignoreSchedule: boolean): number {
  return ignoreSchedule ? target : lateShare(target, windowOf(settings, day), at);
}

/**
 * `sendWindow`, remembered: it goes through Intl (tens of µs) and a pool shares few windows, time
 * zones and days, while the planner asks several times per mailbox. Forgotten when it grows large.
 */
const windows = new Map<string, ReturnType<typeof sendWindow>>();
function windowOf(settings: WarmupSettings, day: string): ReturnType<typeof sendWindow> {
  const key = `${settings.timezone} ${settings.sendWindow.start} ${settings.sendWindow.end} ${day}`;
  let window = windows.get(key);
  if (window === undefined) {
    if (windows.size >= 10_000) windows.clear();
    window = sendWindow(settings, day);
    windows.set(key, window);
  }
  return window;
}
