import { randomBytes } from 'node:crypto';
import { addDays, localDay, validTimeZone } from '../calendar.js';
import { nowSince } from '../clock.js';
import { newId } from '../db/ids.js';
import type { WarmupSettings } from '../mailboxes/mailboxes.schemas.js';
import { parseWarmupSettings } from '../mailboxes/warmup-settings.js';
import type { EngineDeps } from './engine-deps.js';
import { acquireLease, withLease } from '../jobs/leases.js';
import {
  forgetInboundBefore,
  inboundKey,
  readInbound,
  releaseInbound,
  reserveInbound,
  type InboundReservation,
} from './plan-inbound.repository.js';
import { clientMessageId, clientProfileOf, type ClientProfileName } from './client-profile.js';
import {
  anyDueForPlanning,
  claimPlanDays,
  deferPlanning,
  findActiveRamps,
  listActiveForPlanning,
  recordPlans,
  type DecidedPlan,
} from './mailbox-engine-state.repository.js';
import { emailDomain, type PairCount } from './partners.js';
import { dayCapacity, pairCountsOf, type ModelledDay } from './plan-capacity.js';
import type { MailboxCapacity } from './pool-capacity.js';
import { loadInboundBook, type InboundBook, type PlanCandidate, type PlanMember } from './inbound-book.js';
import { partnerChooser, type PartnerChooser, type Traffic } from './partner-chooser.js';
import { dailyTarget, retimeUnplaced, spreadSendTimes } from './plan-volume.js';
import { answersAutomatically } from '../mailboxes/auto-reply-rule.js';
import { shuffled } from './random.js';
import { isSendDay, lateShare, localDaySpan, MIN_SEND_GAP_MS, sendWindow } from './send-budget.js';

// The gap is the send bounds' (send-budget.ts); named here too for the planner's existing importers.
export { MIN_SEND_GAP_MS };
import {
  insertPlannedMessages,
  loadPoolTraffic,
  loadSenderDays,
  type NewWarmupMessageRow,
} from './warmup-messages.repository.js';

const DAY_MS = 86_400_000;

/**
 * A fresh Message-ID on the sender's domain for a thread's first message, in the form the sender's
 * mail client gives its Message-IDs (nothing in it says "warmup").
 */
export function newMessageId(senderEmail: string, profile: ClientProfileName = 'thunderbird', at?: Date): string {
  return clientMessageId(profile, senderEmail, randomBytes(32), at);
}

// ---------------------------------------------------------------------------------------------
// The daily plan in the database.

/** What planning needs of the engine. */
export type PlanDeps = Pick<EngineDeps, 'db' | 'random' | 'logger' | 'workerId' | 'settings' | 'clock'>;

export interface PlannedMailbox {
  mailboxId: string;
  day: string;
  warmupDay: number;
  target: number;
  planned: number;
  /** New threads the pool carried for it that day, up to its target (pool-capacity.ts). */
  capacity: number;
  /** More mailboxes on new domains that would carry its target (pool-capacity.ts liftsOf); null: carried, or out of reach. */
  lift: number | null;
}

export interface PlanSummary {
  /** False when other workers held the leases of every bucket with mailboxes due (they plan them instead). */
  ran: boolean;
  mailboxes: PlannedMailbox[];
  messages: number;
}

/**
 * Buckets of a day's planning. Each bucket is planned under its own lease (`planLeaseKey`), so
 * several workers plan the pool at once, one bucket each, and a worker that dies leaves only its
 * bucket to whoever takes the lease over once it expires. At most this many, enough that three or
 * four workers share a large pool evenly.
 */
export const PLAN_BUCKETS = 16;
/**
 * Active mailboxes per bucket below PLAN_BUCKETS: a small pool is one bucket, planned as before by
 * one worker, instead of many buckets each costing a lease and a transaction of its own.
 */
export const PLAN_BUCKET_MAILBOXES = 500;

/** How many buckets a pool of this many active mailboxes is planned in. */
export function planBucketsFor(poolSize: number): number {
  return Math.min(PLAN_BUCKETS, Math.max(1, Math.ceil(poolSize / PLAN_BUCKET_MAILBOXES)));
}

/**
 * The bucket of a mailbox: FNV-1a of its id, so every worker puts it in the same one. (Two workers
 * that count the pool differently, as it crosses a size, may split it differently for a moment:
 * they then plan some mailboxes under different leases, which costs work, never correctness; the
 * plan rows and the inbound counts are what hold the rules.)
 */
export function planBucketOf(mailboxId: string, buckets: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < mailboxId.length; i++) hash = Math.imul(hash ^ mailboxId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % buckets;
}

/**
 * A bucket's lease. Not per day: a bucket holds mailboxes of every time zone, on whatever local day
 * each is planning; the plan row (mailbox, day) is what keeps a day from being planned twice.
 */
export function planLeaseKey(bucket: number): string {
  return `plan:${bucket}`;
}

/**
 * Mailboxes planned per transaction: one claim, one read of each kind and multi-row inserts for
 * all of them. A commit per mailbox was most of the planning time (~3.5 ms each on SQLite).
 */
export const PLAN_BATCH = 500;

/**
 * Plans the local day of every active mailbox that has no plan for it yet: its warmup day, its
 * target, its partners and a `planned` row per send. The due mailboxes are planned bucket by bucket,
 * each bucket under its lease (one a worker holds is left to it), PLAN_BATCH mailboxes per
 * transaction, each guarded by its plan row's key (mailbox, day), so a rerun or a second worker never
 * plans a day twice. Every new thread first reserves a place in its recipient's inbound count of the
 * day (plan-inbound.repository.ts), shared by all planners: together they never exceed a recipient's cap.
 * A mailbox whose send window already closed today starts tomorrow, unless `ignoreSchedule`.
 */
export async function planDay(
  deps: PlanDeps,
  at: Date,
  options: {
    ignoreSchedule?: boolean;
    /** Mailboxes per transaction (PLAN_BATCH); tests take smaller ones to stop a planner between two. */
    batchSize?: number;
  } = {},
): Promise<PlanSummary> {
  const ignoreSchedule = options.ignoreSchedule ?? false;
  const batchSize = options.batchSize ?? PLAN_BATCH;
  const planning = await preparePlanning(deps, at, ignoreSchedule);
  if (planning === undefined) return { ran: true, mailboxes: [], messages: 0 };
  const buckets = new Map<number, PlanCandidate[]>();
  for (const candidate of planning.due) {
    const bucket = planBucketOf(candidate.member.id, planning.buckets);
    const members = buckets.get(bucket);
    if (members) members.push(candidate);
    else buckets.set(bucket, [candidate]);
  }
  const summary: PlanSummary = { ran: false, mailboxes: [], messages: 0 };
  // Buckets in a random order, so workers starting together mostly reach for different ones.
  for (const bucket of shuffled([...buckets.keys()], deps.random)) {
    const key = planLeaseKey(bucket);
    const outcome = await withLease(deps.db, key, deps.workerId, deps.settings.leaseMs, leaseMoment(deps, at), () =>
      planBucket(deps, planning, buckets.get(bucket)!, { at, ignoreSchedule, batchSize, lease: key }),
    );
    if (!outcome.ran) continue;
    summary.ran = true;
    summary.mailboxes.push(...outcome.result.mailboxes);
    summary.messages += outcome.result.messages;
  }
  return summary;
}

/** What a worker reads once per planning run and shares between the buckets it plans. */
interface Planning {
  /** How many buckets the pool is planned in (planBucketsFor). */
  buckets: number;
  due: PlanCandidate[];
  chooser: PartnerChooser;
  inbound: InboundBook;
  traffic: Traffic;
  /** What the pool carries for each member today (pool-capacity.ts): a sender plans at most its `send`. */
  capacity: Map<string, MailboxCapacity>;
}

/** The day before which each database's inbound counts were last dropped by this process. */
const forgotten = new WeakMap<PlanDeps['db'], string>();

/** The pool, its due mailboxes, the inbound book and the week's traffic; undefined when nobody is due. */
async function preparePlanning(deps: PlanDeps, at: Date, ignoreSchedule: boolean): Promise<Planning | undefined> {
  const { db, random } = deps;
  // test mode plans a day whose window is over too, so it looks at every mailbox
  if (!ignoreSchedule && !(await anyDueForPlanning(db, at))) return undefined;
  const active = await listActiveForPlanning(db);
  const pool: PlanMember[] = active.map((m) => ({
    id: m.id,
    emailNormalized: m.email_normalized,
    answersAutomatically: answersAutomatically(m.auto_reply_at, at),
    domain: emailDomain(m.email_normalized),
  }));

  // A pool shares a few settings and time zones: each is parsed once, so 100,000 mailboxes hold a handful.
  const settingsOf = new Map<string, WarmupSettings>();
  const dayIn = new Map<string, string>();
  // the receivers' days while the senders planned now write: half a day on (plan-capacity.ts)
  const writingDayIn = new Map<string, string>();
  const writingAt = new Date(at.getTime() + DAY_MS / 2);
  const everyone: PlanCandidate[] = [];
  const modelled: ModelledDay[] = [];
  for (const [index, mailbox] of active.entries()) {
    let settings = settingsOf.get(mailbox.warmup);
    if (settings === undefined) {
      let problem: string | undefined;
      settings = parseWarmupSettings(mailbox.warmup, (text) => (problem = text));
      // its defaults are a guess, not the owner's plan: it sends nothing until its settings are saved again
      if (problem !== undefined) {
        deps.logger.warn({ mailboxId: mailbox.id, problem }, 'unreadable warmup settings; not planning this mailbox');
        continue;
      }
      settingsOf.set(mailbox.warmup, settings);
    }
    let day = dayIn.get(settings.timezone);
    if (day === undefined) dayIn.set(settings.timezone, (day = localDay(at, validTimeZone(settings.timezone))));
    const member = pool[index];
    // a peer's address is planned by its own installation: here it is only a partner
    const due =
      mailbox.peer_id === null &&
      mailbox.last_plan_day !== day &&
      isSendDay(settings, day) &&
      (ignoreSchedule || at < windowOf(settings, day).end);
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
      client: clientProfileOf(mailbox).name,
    });
    const window = windowOf(settings, day);
    let writingDay = writingDayIn.get(settings.timezone);
    if (writingDay === undefined)
      writingDayIn.set(settings.timezone, (writingDay = localDay(writingAt, validTimeZone(settings.timezone))));
    modelled.push({
      candidate: everyone[everyone.length - 1],
      target,
      sendDay: isSendDay(settings, day),
      receivingDaySends: isSendDay(settings, writingDay),
      windowMinutes: Math.max(0, (window.end.getTime() - window.start.getTime()) / 60_000),
    });
  }
  await deferPlanning(db, at, nextPlanningTimes(active, everyone, at));
  const due = everyone.filter((c) => c.due);
  if (due.length === 0) return undefined;

  // the inbound counts of days gone by are no longer read by anyone: dropped once a day per worker
  const gone = addDays(at.toISOString().slice(0, 10), -3);
  if (forgotten.get(db) !== gone) {
    await forgetInboundBefore(db, gone);
    forgotten.set(db, gone);
  }
  const inbound = await loadInboundBook(db, everyone, at);
  const traffic: Traffic = await loadPoolTraffic(db, new Date(at.getTime() - 7 * DAY_MS).toISOString());
  return {
    buckets: planBucketsFor(pool.length),
    due,
    chooser: partnerChooser(pool, inbound, traffic, random),
    inbound,
    traffic,
    capacity: dayCapacity(modelled),
  };
}

/**
 * When the mailboxes that were due at `at` but need no plan now are due again: at the start of their
 * next local day (planned already, not a send day, or the window over). The ones planned now are
 * moved on by the next run, which finds their day planned: one more read of the pool after a run
 * that planned, instead of a write on the planning transaction's path.
 */
function nextPlanningTimes(
  active: ReadonlyArray<{ id: string; plan_due_at: string }>,
  everyone: readonly PlanCandidate[],
  at: Date,
): Map<string, string[]> {
  const dueAt = new Map(active.map((mailbox) => [mailbox.id, mailbox.plan_due_at]));
  const now = at.toISOString();
  const until = new Map<string, string[]>();
  for (const candidate of everyone) {
    if (candidate.due || (dueAt.get(candidate.member.id) ?? now) > now) continue;
    const next = nextDayStartOf(candidate.settings, candidate.day);
    const ids = until.get(next);
    if (ids) ids.push(candidate.member.id);
    else until.set(next, [candidate.member.id]);
  }
  return until;
}

/**
 * A lease runs from the moment it is taken or renewed, not from the run's start: planning a large
 * pool takes longer than a lease, and a bucket leased with the run's start date would be free for a
 * second worker to plan alongside (each mailbox is still planned once, but the work is done twice).
 */
function leaseMoment(deps: PlanDeps, at: Date): Date {
  return nowSince(deps.clock, at);
}

/**
 * Plans one bucket's due mailboxes, PLAN_BATCH at a time, in a random order, renewing the bucket's
 * lease before each batch; a worker that lost it (it ran out and another worker took it) leaves the
 * rest of the bucket to that worker.
 */
async function planBucket(
  deps: PlanDeps,
  { chooser, inbound, traffic, capacity }: Planning,
  due: readonly PlanCandidate[],
  { at, ignoreSchedule, batchSize, lease }: { at: Date; ignoreSchedule: boolean; batchSize: number; lease: string },
): Promise<Omit<PlanSummary, 'ran'>> {
  const summary: Omit<PlanSummary, 'ran'> = { mailboxes: [], messages: 0 };
  // A random order each day, so no mailbox always gets first pick of the least-used partners.
  const queue = shuffled(due, deps.random);
  for (let start = 0; start < queue.length; start += batchSize) {
    if (start > 0 && !(await acquireLease(deps.db, lease, deps.workerId, deps.settings.leaseMs, leaseMoment(deps, at))))
      break;
    const batch = queue.slice(start, start + batchSize);
    const outcomes = await planBatch({ deps, batch, at, ignoreSchedule, chooser, inbound, traffic, capacity });
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

interface BatchOutcome {
  plan: PlannedMailbox;
  fullTarget: number;
  replies: number;
}

/** One new thread of a mailbox being planned: its time, and the partner and partner's day once chosen. */
interface Send {
  time: Date;
  partner?: string;
  /** The partner's local day of `time`, where its inbound counts. */
  day?: string;
  /** Its place in the partner's inbound count of the day is reserved (or the partner has no count). */
  reserved: boolean;
}

/** A mailbox of the batch while it is planned. */
interface SenderPlan {
  candidate: PlanCandidate;
  ramp: { warmup_day: number; volume_factor: number };
  warmupDay: number;
  target: number;
  budget: number;
  replies: number;
  /** New threads the pool carries for it today, and what would lift it (pool-capacity.ts). */
  capacity: number;
  lift: number | null;
  pairs: Map<string, PairCount>;
  sends: Send[];
}

/** Rounds of choosing again for sends whose partner's day filled up meanwhile; what is still refused is not sent. */
const RESERVE_ROUNDS = 4;

/**
 * Plans one batch of due mailboxes: reads their ramps, waiting replies and pair counts in one
 * statement each, chooses partners mailbox after mailbox (each sees the sends chosen before it),
 * reserves the partners' inbound places (choosing again for those another planner filled
 * meanwhile), then in one transaction claims the days and writes every planned row and plan.
 * Places reserved for a mailbox another worker planned first are given back.
 */
async function planBatch({
  deps,
  batch,
  at,
  ignoreSchedule,
  chooser,
  inbound,
  traffic,
  capacity,
}: {
  deps: PlanDeps;
  batch: readonly PlanCandidate[];
  at: Date;
  ignoreSchedule: boolean;
  chooser: PartnerChooser;
  inbound: InboundBook;
  traffic: Traffic;
  capacity: Map<string, MailboxCapacity>;
}): Promise<BatchOutcome[]> {
  const { db } = deps;
  const ramps = await findActiveRamps(
    db,
    batch.map((c) => c.member.id),
  );
  // planned meanwhile (by another worker, or an earlier bucket run) or no longer active: left out
  const planning = batch.filter((c) => {
    const ramp = ramps.get(c.member.id);
    return ramp !== undefined && ramp.last_plan_day !== c.day;
  });
  if (planning.length === 0) return [];
  const days = planning.map((c) => c.day).sort();
  const [firstDay, lastDay] = [days[0], days[days.length - 1]];
  const history = await loadSenderDays(
    db,
    planning.map((c) => c.member.id),
    addDays(firstDay, -6),
    lastDay,
  );
  const historyOf = new Map<string, typeof history>();
  for (const row of history) {
    const rows = historyOf.get(row.sender);
    if (rows) rows.push(row);
    else historyOf.set(row.sender, [row]);
  }

  const place = (sender: SenderPlan, send: Send) => {
    const partner = chooser.choose(sender.candidate.member, sender.pairs, send.time);
    send.partner = partner;
    send.day = undefined;
    send.reserved = false;
    if (partner === undefined) return;
    const pair = sender.pairs.get(partner);
    if (pair) {
      pair.week += 1;
      pair.today += 1;
      (pair.times ??= []).push(send.time.getTime());
    } else sender.pairs.set(partner, { week: 1, today: 1, times: [send.time.getTime()] });
    send.day = inbound.add(partner, send.time);
    // a partner outside the book (unreadable settings) has no count to reserve in
    send.reserved = send.day === undefined;
  };
  const unplace = (sender: SenderPlan, send: Send) => {
    const pair = sender.pairs.get(send.partner!)!;
    pair.week -= 1;
    pair.today -= 1;
    const at = pair.times?.indexOf(send.time.getTime()) ?? -1;
    if (at >= 0) pair.times!.splice(at, 1);
    inbound.remove(send.partner!, send.day!);
  };

  const senders: SenderPlan[] = [];
  for (const candidate of planning) {
    const { member, day, settings } = candidate;
    const ramp = ramps.get(member.id)!;
    const warmupDay = ramp.held ? Math.max(1, ramp.warmup_day) : ramp.warmup_day + 1;
    const target = dailyTarget({
      settings,
      warmupDay,
      mailboxId: member.id,
      day,
      volumeFactor: Number(ramp.volume_factor),
    });
    const budget = dayBudget(settings, day, target, at, ignoreSchedule);
    // Replies already waiting for this day come first: new threads get what they leave.
    const own = historyOf.get(member.id) ?? [];
    const replies = own.reduce((sum, row) => sum + (row.kind === 'reply' && row.day === day ? row.planned : 0), 0);
    const window = windowOf(settings, day);
    const from = at > window.start && at < window.end ? at : window.start;
    // the ramp, up to what the pool carries: a ramp that outgrows its pool plateaus there
    const carried = capacity.get(member.id)?.send ?? Number.POSITIVE_INFINITY;
    const newThreads = Math.min(Math.max(0, budget - replies), carried);
    const slots = spreadSendTimes(newThreads, from, window.end, MIN_SEND_GAP_MS, deps.random);
    const sender: SenderPlan = {
      candidate,
      ramp: { warmup_day: ramp.warmup_day, volume_factor: Number(ramp.volume_factor) },
      warmupDay,
      target,
      budget,
      replies,
      capacity: Number.isFinite(carried) ? carried : budget,
      lift: capacity.get(member.id)?.lift ?? null,
      pairs: pairCountsOf(own, addDays(day, -6), day),
      sends: slots.map((time) => ({ time, reserved: false })),
    };
    // One partner per send time: each recipient's cap is for its own local day of that time.
    for (const send of sender.sends) place(sender, send);
    retimeUnplaced(sender.sends, from, window.end, MIN_SEND_GAP_MS, deps.random, (send) => place(sender, send));
    senders.push(sender);
  }

  // The places chosen, reserved in the shared counts; a refused one is chosen again, knowing how full
  // its partner's day really is.
  for (let round = 1; ; round++) {
    const waiting = senders.flatMap((sender) =>
      sender.sends.filter((s) => s.partner !== undefined && !s.reserved).map((send) => ({ sender, send })),
    );
    if (waiting.length === 0) break;
    const wanted = new Map<string, InboundReservation>();
    for (const { send } of waiting) {
      const key = inboundKey(send.day!, send.partner!);
      const reservation = wanted.get(key);
      if (reservation) reservation.count += 1;
      else
        wanted.set(key, {
          day: send.day!,
          mailboxId: send.partner!,
          count: 1,
          cap: inbound.capOn(send.partner!, send.day!),
          initial: inbound.loadedOn(send.partner!, send.day!),
        });
    }
    const granted = await reserveInbound(db, [...wanted.values()]);
    for (const [key, received] of granted) inbound.know(wanted.get(key)!.mailboxId, wanted.get(key)!.day, received);
    const refused = waiting.filter(({ send }) => !granted.has(inboundKey(send.day!, send.partner!)));
    for (const { send } of waiting) if (granted.has(inboundKey(send.day!, send.partner!))) send.reserved = true;
    if (refused.length === 0) break;
    for (const { sender, send } of refused) unplace(sender, send);
    const refusedKeys = [...new Set(refused.map(({ send }) => inboundKey(send.day!, send.partner!)))].map((key) =>
      wanted.get(key)!,
    );
    for (const [key, received] of await readInbound(db, refusedKeys))
      inbound.know(wanted.get(key)!.mailboxId, wanted.get(key)!.day, received);
    for (const { sender, send } of refused) {
      if (round < RESERVE_ROUNDS) place(sender, send);
      else send.partner = undefined;
    }
  }

  const messages: NewWarmupMessageRow[] = [];
  const plans: DecidedPlan[] = [];
  const outcomes: BatchOutcome[] = [];
  const rowsOf = new Map<string, NewWarmupMessageRow[]>();
  const createdAt = at.toISOString();
  for (const sender of senders) {
    const { member, day } = sender.candidate;
    const rows: NewWarmupMessageRow[] = [];
    const profile = sender.candidate.client;
    for (const send of sender.sends) {
      if (send.partner === undefined) continue;
      const messageId = newMessageId(member.emailNormalized, profile, send.time);
      rows.push({
        id: newId('wm', at.getTime()),
        message_id: messageId,
        thread_id: messageId,
        sender_mailbox_id: member.id,
        recipient_mailbox_id: send.partner,
        kind: 'initial',
        turn: 1,
        parent_message_id: null,
        plan_day: day,
        due_at: send.time.toISOString(),
        status: 'planned',
        created_at: createdAt,
      });
    }
    rowsOf.set(member.id, rows);
    const planned = rows.length;
    // A day on which the pool allowed no send does not advance the ramp: a small pool warms slowly.
    // Its target is then the one of the ramp day it stays on, so the two shown side by side agree.
    const advanced = planned + sender.replies > 0;
    const nextWarmupDay = advanced ? sender.warmupDay : sender.ramp.warmup_day;
    const target = advanced ? sender.budget : stayingBudget(sender, at, ignoreSchedule);
    const plan = {
      mailboxId: member.id,
      day,
      warmupDay: nextWarmupDay,
      target,
      planned,
      capacity: Math.min(sender.capacity, target),
      lift: sender.capacity < target ? sender.lift : null,
    };
    plans.push(plan);
    outcomes.push({ plan, fullTarget: sender.target, replies: sender.replies });
  }

  // A failed transaction keeps its places taken: a commit whose answer was lost may still have
  // written the rows, and places held for nothing only make their recipients receive less.
  const claimed = await db.transaction().execute(async (trx) => {
    const ours = await claimPlanDays(
      trx,
      plans.map((plan) => ({ mailboxId: plan.mailboxId, day: plan.day })),
      at,
    );
    for (const plan of plans) if (ours.has(plan.mailboxId)) messages.push(...rowsOf.get(plan.mailboxId)!);
    await insertPlannedMessages(trx, messages);
    await recordPlans(
      trx,
      plans.filter((plan) => ours.has(plan.mailboxId)),
      at,
    );
    return ours;
  });
  // mailboxes another worker planned first: their rows were not written, their places go back
  await giveBack(db, senders, inbound, (id) => !claimed.has(id));

  // The 7-day traffic the weights read moves once the mailboxes' days are written.
  for (const sender of senders) {
    if (!claimed.has(sender.candidate.member.id)) continue;
    let planned = 0;
    for (const send of sender.sends) {
      if (send.partner === undefined) continue;
      const seen = traffic.get(send.partner) ?? { inbound: 0, outbound: 0 };
      seen.inbound += 1;
      traffic.set(send.partner, seen);
      planned += 1;
    }
    const sent = traffic.get(sender.candidate.member.id) ?? { inbound: 0, outbound: 0 };
    sent.outbound += planned;
    traffic.set(sender.candidate.member.id, sent);
  }
  return outcomes.filter((outcome) => claimed.has(outcome.plan.mailboxId));
}

/** Gives back the reserved places of the senders `which` selects (their rows were not written). */
async function giveBack(
  db: PlanDeps['db'],
  senders: readonly SenderPlan[],
  inbound: InboundBook,
  which: (mailboxId: string) => boolean,
): Promise<void> {
  const given = new Map<string, { day: string; mailboxId: string; count: number }>();
  for (const sender of senders) {
    if (!which(sender.candidate.member.id)) continue;
    for (const send of sender.sends) {
      if (send.partner === undefined || send.day === undefined) continue;
      inbound.remove(send.partner, send.day);
      const key = inboundKey(send.day, send.partner);
      const entry = given.get(key) ?? { day: send.day, mailboxId: send.partner, count: 0 };
      entry.count += 1;
      given.set(key, entry);
    }
  }
  if (given.size > 0) await releaseInbound(db, [...given.values()]);
}

/** The day's budget of a sender whose ramp stays where it was (nothing sent): its target on that ramp day. */
function stayingBudget(sender: SenderPlan, at: Date, ignoreSchedule: boolean): number {
  const { member, day, settings } = sender.candidate;
  const target = dailyTarget({
    settings,
    warmupDay: sender.ramp.warmup_day,
    mailboxId: member.id,
    day,
    volumeFactor: sender.ramp.volume_factor,
  });
  return dayBudget(settings, day, target, at, ignoreSchedule);
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

/** The start of the local day after `day`, as an ISO time, remembered per zone and day like the windows. */
const nextDayStarts = new Map<string, string>();
function nextDayStartOf(settings: WarmupSettings, day: string): string {
  const key = `${settings.timezone} ${day}`;
  let start = nextDayStarts.get(key);
  if (start === undefined) {
    if (nextDayStarts.size >= 10_000) nextDayStarts.clear();
    start = localDaySpan(settings, day).end.toISOString();
    nextDayStarts.set(key, start);
  }
  return start;
}
