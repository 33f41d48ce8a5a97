/*
 * The planner's side of the pool capacity (pool-capacity.ts) and of the pair rules: the day's pool
 * as the capacity model sees it, and each sender's pair counts.
 */
import type { PlanCandidate } from './inbound-book.js';
import { INBOUND_SLACK, type PairCount } from './partners.js';
import { capacityMember, liftsOf, poolCapacity, type CapacityMember, type MailboxCapacity } from './pool-capacity.js';

/** A member of a planning run with what the capacity model reads of its day. */
export interface ModelledDay {
  candidate: PlanCandidate;
  /** Its full day's target. */
  target: number;
  /** Whether it sends on its day (weekdaysOnly). */
  sendDay: boolean;
  /**
   * Whether the day its partners write to it in is one it sends on: its local day half a day after
   * planning, when the senders planned now are in their windows (a mailbox whose Sunday night is
   * another's Monday morning receives on its Monday).
   */
  receivingDaySends: boolean;
  windowMinutes: number;
}

/**
 * The capacity model's members for a planning run: every active mailbox on its own local day, wanting
 * its full day's target (0 on a day it does not send), receiving up to its target + INBOUND_SLACK on
 * the day its partners write in (INBOUND_SLACK alone when it does not send that day; none when its
 * owner answers automatically). The model plans a whole day: a late start or a partner
 * already planned today is left to the live rules, which only ever place less.
 */
export function capacityMembersOf(everyone: readonly ModelledDay[]): CapacityMember[] {
  return everyone.map(({ candidate, target, sendDay, receivingDaySends, windowMinutes }) => ({
    ...capacityMember(candidate.member.id, candidate.member.domain, sendDay ? target : 0, windowMinutes),
    inboundCap: candidate.member.answersAutomatically ? 0 : (receivingDaySends ? target : 0) + INBOUND_SLACK,
  }));
}

/** The day's capacity of every member of the run, with what would lift each one the pool holds back. */
export function dayCapacity(everyone: readonly ModelledDay[]): Map<string, MailboxCapacity> {
  const members = capacityMembersOf(everyone);
  const capacity = poolCapacity(members);
  for (const [id, lift] of liftsOf(members, capacity)) capacity.get(id)!.lift = lift;
  return capacity;
}

/** One sender's threads per recipient over its days [fromDay, day]: the week's and today's counts. */
export function pairCountsOf(
  rows: ReadonlyArray<{ recipient: string; day: string; kind: string; n: number }>,
  fromDay: string,
  day: string,
): Map<string, PairCount> {
  const pairs = new Map<string, PairCount>();
  for (const row of rows) {
    if (row.kind !== 'initial' || row.day < fromDay || row.day > day) continue;
    const pair = pairs.get(row.recipient) ?? { week: 0, today: 0 };
    pair.week += row.n;
    if (row.day === day) pair.today += row.n;
    pairs.set(row.recipient, pair);
  }
  return pairs;
}
