/*
 * The pool's capacity: how many new threads a day the pool can carry for each of its mailboxes,
 * within the pair and receiver rules (partners.ts) and every receiver's inbound bound (its own
 * budget + INBOUND_SLACK). Pure: the planner plans up to it, and the outlook asks it what would
 * lift it (more mailboxes on other domains, or a lower daily limit).
 */
import { INBOUND_SLACK, PAIR_SPACING_MS, PAIR_THREADS_PER_DAY, receiverShareLimit } from './partners.js';

/** One mailbox of the pool as the capacity model sees it on a day. */
export interface CapacityMember {
  id: string;
  /** Lower-case domain of its address. */
  domain: string;
  /** New threads its ramp wants today: its day's target, 0 on a day it does not send (weekend, paused). */
  wants: number;
  /** The most new threads it may receive today: its day's budget + INBOUND_SLACK; 0 when it receives none. */
  inboundCap: number;
  /** Length of its send window in minutes: a pair's threads are PAIR_SPACING_MS apart within it. */
  windowMinutes: number;
}

/** What the pool carries for one mailbox on a day. */
export interface MailboxCapacity {
  /** New threads the pool can take from it today, given what the others want of the same receivers. */
  send: number;
  /** New threads it can take in today (its inbound bound). */
  receive: number;
  /**
   * Set by liftsOf for a member the pool holds back: how many more mailboxes, each on a domain of its
   * own, would carry all it wants (null: not even MAX_LIFT_MAILBOXES would).
   */
  lift?: number | null;
}

/**
 * Above this many members the pair rules do not bind (each sender has more partners than any daily
 * limit of 500 needs at one thread a pair) and the caps add up to more than the budgets: the
 * allocation below is skipped and a member's capacity is one thread for every other member that
 * receives mail, a lower bound of what its pairs allow. Keeps the model O(pool) at scale.
 */
export const CAPACITY_EXACT_MEMBERS = 200;

/** The most new threads a pair of this sender and receiver carries in a day, at full trust. */
export function pairCapacity(sender: CapacityMember, receiver: CapacityMember, othersCanSend: boolean): number {
  if (receiver.id === sender.id || receiver.inboundCap <= 0) return 0;
  const spaced = 1 + Math.floor((sender.windowMinutes * 60_000) / PAIR_SPACING_MS);
  return Math.min(PAIR_THREADS_PER_DAY, spaced, receiverShareLimit(receiver.inboundCap, othersCanSend));
}

/**
 * Each member's capacity for a day. A fair allocation: the senders take turns, the one with the
 * fewest threads so far first, each thread to the receiver with the most room left among those its
 * pair rules still allow, until every sender has what it wants or nothing is left for it. A sender
 * that got all it wanted can take more: its capacity adds what its pairs could still place in the
 * receivers' remaining room. So a mailbox held back by the pool is told exactly what it gets, and one
 * that is not is told how far it could go.
 */
export function poolCapacity(members: readonly CapacityMember[]): Map<string, MailboxCapacity> {
  const othersCanSend = members.length >= 3;
  const result = new Map<string, MailboxCapacity>();
  if (members.length > CAPACITY_EXACT_MEMBERS) {
    const receiving = members.reduce((count, m) => count + (m.inboundCap > 0 ? 1 : 0), 0);
    for (const sender of members)
      result.set(sender.id, { send: receiving - (sender.inboundCap > 0 ? 1 : 0), receive: sender.inboundCap });
    return result;
  }
  const n = members.length;
  const pairRoom = members.map((s) => members.map((r) => pairCapacity(s, r, othersCanSend)));
  const room = members.map((m) => m.inboundCap);
  const placed = new Array<number>(n).fill(0);
  const done = members.map((m) => m.wants <= 0);
  for (;;) {
    let sender = -1;
    for (let i = 0; i < n; i++)
      if (!done[i] && (sender === -1 || placed[i] < placed[sender] || (placed[i] === placed[sender] && i < sender)))
        sender = i;
    if (sender === -1) break;
    let receiver = -1;
    for (let j = 0; j < n; j++)
      if (pairRoom[sender][j] > 0 && room[j] > 0 && (receiver === -1 || room[j] > room[receiver])) receiver = j;
    if (receiver === -1) {
      done[sender] = true;
      continue;
    }
    pairRoom[sender][receiver] -= 1;
    room[receiver] -= 1;
    placed[sender] += 1;
    if (placed[sender] >= members[sender].wants) done[sender] = true;
  }
  members.forEach((member, i) => {
    let more = 0;
    for (let j = 0; j < n; j++) more += Math.min(pairRoom[i][j], room[j]);
    result.set(member.id, { send: placed[i] + more, receive: member.inboundCap });
  });
  return result;
}

/** A member wanting `target` new threads a day, with its inbound bound and window. */
export function capacityMember(
  id: string,
  domain: string,
  target: number,
  windowMinutes: number,
  receives = true,
): CapacityMember {
  return { id, domain, wants: target, inboundCap: receives ? target + INBOUND_SLACK : 0, windowMinutes };
}

/** The most hypothetical mailboxes the lift looks for: beyond it the answer is "many". */
export const MAX_LIFT_MAILBOXES = 50;

/**
 * How many more mailboxes, each on a domain of its own, wanting the pool's typical (median) target
 * with the typical window, the pool needs for `mailboxId` to carry all it wants: the model run again
 * with 1, 2, … of them. 0 when it already does; undefined when MAX_LIFT_MAILBOXES would not do it.
 */
export function mailboxesToLift(members: readonly CapacityMember[], mailboxId: string): number | undefined {
  const own = members.find((m) => m.id === mailboxId);
  if (own === undefined) return undefined;
  const typical = typicalMember(members);
  for (let k = 0; k <= MAX_LIFT_MAILBOXES; k++) {
    const more = Array.from({ length: k }, (_, i) =>
      capacityMember(`\u0000lift-${i}`, `\u0000lift-${i}.invalid`, typical.wants, typical.windowMinutes),
    );
    const capacity = poolCapacity([...members, ...more]).get(mailboxId)!;
    if (capacity.send >= own.wants) return k;
  }
  return undefined;
}

/**
 * For every member the pool holds back (its capacity below what it wants), the fewest more typical
 * mailboxes on domains of their own that carry all it wants: mailboxesToLift for all of them in one
 * pass of the model, 0, 1, 2, … more at a time. Members the pool carries are not in the map. Pools
 * over CAPACITY_EXACT_MEMBERS hold no one back (each member's capacity there is the whole pool).
 */
export function liftsOf(
  members: readonly CapacityMember[],
  capacity: ReadonlyMap<string, MailboxCapacity> = poolCapacity(members),
): Map<string, number | null> {
  const lifts = new Map<string, number | null>();
  let open = members.filter((m) => m.wants > 0 && (capacity.get(m.id)?.send ?? 0) < m.wants);
  if (open.length === 0 || members.length > CAPACITY_EXACT_MEMBERS) return lifts;
  const typical = typicalMember(members);
  for (let k = 1; k <= MAX_LIFT_MAILBOXES && open.length > 0; k++) {
    const more = Array.from({ length: k }, (_, i) =>
      capacityMember(`\u0000lift-${i}`, `\u0000lift-${i}.invalid`, typical.wants, typical.windowMinutes),
    );
    const lifted = poolCapacity([...members, ...more]);
    open = open.filter((m) => {
      if (lifted.get(m.id)!.send < m.wants) return true;
      lifts.set(m.id, k);
      return false;
    });
  }
  for (const member of open) lifts.set(member.id, null);
  return lifts;
}

/** The median wants and window of a pool (of its members that send today). */
function typicalMember(members: readonly CapacityMember[]): { wants: number; windowMinutes: number } {
  const sending = members.filter((m) => m.wants > 0);
  const from = sending.length > 0 ? sending : members;
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length === 0 ? 0 : sorted[Math.floor((sorted.length - 1) / 2)];
  };
  return { wants: median(from.map((m) => m.wants)), windowMinutes: median(from.map((m) => m.windowMinutes)) };
}

/**
 * The workspace's pool in one line of data: "your pool carries about `carries` emails a day per
 * mailbox; your ramps want `wants.min`–`wants.max`: connect mailboxes on `moreDomains` more domains,
 * or lower the daily limit to `carries`". `held` counts the members the pool holds back today;
 * with none, `moreDomains` is 0. `moreDomains` is null when even MAX_LIFT_MAILBOXES would not do.
 */
export interface PoolOutlook {
  members: number;
  /** Median capacity of the members that send today (new threads a day). */
  carries: number;
  wants: { min: number; max: number };
  /** Members whose capacity is below what they want today. */
  held: number;
  /** More mailboxes, each on a new domain, that would carry every held member's wants. */
  moreDomains: number | null;
}

export function poolOutlook(members: readonly CapacityMember[]): PoolOutlook {
  const capacity = poolCapacity(members);
  const sending = members.filter((m) => m.wants > 0);
  const carried = sending.map((m) => Math.min(capacity.get(m.id)!.send, m.wants)).sort((a, b) => a - b);
  const held = sending.filter((m) => capacity.get(m.id)!.send < m.wants);
  let moreDomains: number | null = 0;
  for (const member of held) {
    const k = mailboxesToLift(members, member.id);
    if (k === undefined) {
      moreDomains = null;
      break;
    }
    moreDomains = Math.max(moreDomains, k);
  }
  const wanted = sending.map((m) => m.wants);
  return {
    members: members.length,
    carries: carried.length === 0 ? 0 : carried[Math.floor((carried.length - 1) / 2)],
    wants: { min: wanted.length ? Math.min(...wanted) : 0, max: wanted.length ? Math.max(...wanted) : 0 },
    held: held.length,
    moreDomains,
  };
}
