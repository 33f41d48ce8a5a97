/*
 * The inbound book of a planning run: how many new threads each pool member receives on each of
 * its local days, and the most it may receive, read once from the planned rows and kept up to
 * date as the planner chooses partners.
 */
import { addDays, localDay, validTimeZone } from '../calendar.js';
import type { WarmupSettings } from '../mailboxes/mailboxes.schemas.js';
import type { EngineDeps } from './engine-deps.js';
import { loadPlanTargets } from './mailbox-engine-state.repository.js';
import type { ClientProfileName } from './client-profile.js';
import { INBOUND_SLACK, type WalkMember } from './partners.js';
import { dailyTarget } from './plan-volume.js';
import { inboundKey } from './plan-inbound.repository.js';
import { isSendDay } from './send-budget.js';
import { loadInitialsDueBetween } from './warmup-messages.repository.js';

const DAY_MS = 86_400_000;

/** A pool member as the planner sees it on its planning day. */
export interface PlanCandidate {
  member: PlanMember;
  day: string;
  settings: WarmupSettings;
  /** Its ramp position, for the target of a day not planned yet. */
  warmupDay: number;
  volumeFactor: number;
  /** Due for planning now (no plan for its day yet, a send day, its window not over). */
  due: boolean;
  /** What the day allows it to send: its plan's target, or the budget planning it now would give. */
  budget: number;
  /** Its mail program (client-profile.ts): the form of the Message-IDs planned for it. */
  client: ClientProfileName;
}

/** A member of the pool with its domain worked out once for the day. */
export type PlanMember = WalkMember;

/** New threads each mailbox receives per its own local day, and the most it may receive on a day. */
export interface InboundBook {
  /** Whether a mailbox may receive another new thread on its own local day of `time` (always, for one not in the pool). */
  hasRoom(mailboxId: string, time: Date): boolean;
  /** Whether a mailbox already has all the new threads it may receive on the day it is planned for. */
  isFullToday(mailboxId: string): boolean;
  /** Counts a new thread to a recipient at `time`; returns the recipient's local day it counts on (undefined outside the pool). */
  add(recipientId: string, time: Date): string | undefined;
  /** Takes back one counted by `add`. */
  remove(recipientId: string, day: string): void;
  /** What the shared count (plan_inbound) says of a recipient's day: never less than that from now on. */
  know(recipientId: string, day: string, received: number): void;
  /** The most new threads a recipient may receive on its own local day of `time` (infinite outside the pool). */
  capAt(recipientId: string, time: Date): number;
  /** The most new threads a recipient may receive on one of its local days. */
  capOn(recipientId: string, day: string): number;
  /** The new threads planned to a recipient on a day when the book was read from the rows. */
  loadedOn(recipientId: string, day: string): number;
}

/** Every UTC offset is a whole number of quarter hours, so the local day is the same across one. */
const QUARTER_HOUR_MS = 900_000;

/**
 * One pool member's inbound: new threads on its planning day, on its other local days (rare: only
 * sends late or early in its zone fall there, so that map is made when first needed), and its cap
 * on its planning day. One of these per member of a pool of 100,000: kept small.
 */
interface InboundEntry {
  candidate: PlanCandidate;
  zone: string;
  today: number;
  otherDays?: Map<string, number>;
  capToday: number;
}

function receivedOn(entry: InboundEntry, day: string): number {
  return day === entry.candidate.day ? entry.today : (entry.otherDays?.get(day) ?? 0);
}

function setReceived(entry: InboundEntry, day: string, received: number): void {
  if (day === entry.candidate.day) entry.today = received;
  else (entry.otherDays ??= new Map()).set(day, received);
}

/**
 * The inbound bound: new threads addressed to a mailbox and due on one of its local days are at
 * most its own budget that day (its plan's target; for a day not planned yet, what planning it
 * now would give, or its ramp target for a later day) + INBOUND_SLACK. Counted from the threads
 * due within a day and a half of `at`, each on its recipient's local day.
 */
export async function loadInboundBook(db: EngineDeps['db'], everyone: PlanCandidate[], at: Date): Promise<InboundBook> {
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
      today: 0,
      capToday: capOf(c, c.day),
    });
  const add = (recipientId: string, time: Date) => {
    const entry = entries.get(recipientId);
    if (!entry) return undefined;
    const day = localDayOf(time, entry.zone);
    setReceived(entry, day, receivedOn(entry, day) + 1);
    return day;
  };
  const loaded = new Map<string, number>();
  for (const row of await loadInitialsDueBetween(
    db,
    new Date(at.getTime() - 1.5 * DAY_MS),
    new Date(at.getTime() + 1.5 * DAY_MS),
  )) {
    const day = add(row.recipient_mailbox_id, new Date(row.due_at));
    if (day === undefined) continue;
    const key = inboundKey(day, row.recipient_mailbox_id);
    loaded.set(key, (loaded.get(key) ?? 0) + 1);
  }
  return {
    hasRoom(mailboxId, time) {
      const entry = entries.get(mailboxId);
      if (!entry) return true;
      const day = localDayOf(time, entry.zone);
      return receivedOn(entry, day) < (day === entry.candidate.day ? entry.capToday : capOf(entry.candidate, day));
    },
    isFullToday(mailboxId) {
      const entry = entries.get(mailboxId);
      return entry !== undefined && entry.today >= entry.capToday;
    },
    add,
    remove(recipientId, day) {
      const entry = entries.get(recipientId);
      if (entry) setReceived(entry, day, Math.max(0, receivedOn(entry, day) - 1));
    },
    know(recipientId, day, received) {
      const entry = entries.get(recipientId);
      if (entry) setReceived(entry, day, Math.max(receivedOn(entry, day), received));
    },
    capAt(recipientId, time) {
      const entry = entries.get(recipientId);
      if (!entry) return Number.POSITIVE_INFINITY;
      const day = localDayOf(time, entry.zone);
      return day === entry.candidate.day ? entry.capToday : capOf(entry.candidate, day);
    },
    capOn(recipientId, day) {
      const entry = entries.get(recipientId);
      if (!entry) return Number.POSITIVE_INFINITY;
      return day === entry.candidate.day ? entry.capToday : capOf(entry.candidate, day);
    },
    loadedOn(recipientId, day) {
      return loaded.get(inboundKey(day, recipientId)) ?? 0;
    },
  };
}
