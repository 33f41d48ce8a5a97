/*
 * The planner's partner choice over the day's pool, within the pair rules and each recipient's
 * inbound bound.
 */
import type { InboundBook, PlanMember } from './inbound-book.js';
import {
  CANDIDATE_SAMPLE,
  CandidateSample,
  pairAllows,
  pickPartner,
  type PairCount,
  sampleCandidates,
  weightOfTraffic,
} from './partners.js';
import { shuffled, type Random } from './random.js';

/** Each pool member's new threads received and sent over the last week. */
export type Traffic = Map<string, { inbound: number; outbound: number }>;

export interface PartnerChooser {
  /** One partner (its id) for one send of `sender` at `time`, or undefined when the rules leave none. */
  choose(sender: PlanMember, pairs: ReadonlyMap<string, PairCount>, time: Date): string | undefined;
}

/**
 * Partner choice over the day's pool. A large pool is walked from a random place in a random order
 * fixed for the day, so each send weighs a random window of it (partners.ts); a small one is weighed
 * whole, in id order. Members that reached their inbound cap for their own planning day leave the
 * walk (`open`) for good, so a filling day does not make the walks longer; they are still found
 * for a send on another of their days through the whole-pool walk, which runs only when the open
 * members offer no partner on another domain. A walk reads each member's counts where they are kept
 * and builds nothing per member: the samples are two sets of arrays reused for every send.
 */
export function partnerChooser(pool: readonly PlanMember[], inbound: InboundBook, traffic: Traffic, random: Random) {
  const sampled = pool.length > CANDIDATE_SAMPLE;
  const everyone = sampled ? shuffled(pool, random) : pool;
  // closed in place, keeping the order: a new array per sweep would be 100,000 slots of garbage each time
  const open = [...everyone];
  const closeFull = () => {
    let kept = 0;
    for (const member of open) if (!inbound.isFullToday(member.id)) open[kept++] = member;
    open.length = kept;
  };
  let sinceClosed = 0;
  const fromOpen = new CandidateSample();
  const fromEveryone = new CandidateSample();
  // the send being placed, read by `weightOf` (one closure for the day, not one per send)
  let pairs: ReadonlyMap<string, PairCount> = new Map();
  let time = new Date(0);
  // a receiver has other senders than this one when the pool has three members or more
  const othersCanSend = pool.length >= 3;
  const weightOf = (member: PlanMember): number => {
    const pair = pairs.get(member.id);
    if (pair !== undefined && !pairAllows(pair, time.getTime(), inbound.capAt(member.id, time), othersCanSend))
      return 0;
    if (!inbound.hasRoom(member.id, time)) return 0;
    const seen = traffic.get(member.id);
    return seen === undefined ? weightOfTraffic(0, 0) : weightOfTraffic(seen.inbound, seen.outbound);
  };
  const chooser: PartnerChooser = {
    choose(sender, senderPairs, sendTime) {
      pairs = senderPairs;
      time = sendTime;
      // the full ones leave the walk in sweeps, so closing costs O(pool) per pool's worth of sends
      if (sampled && ++sinceClosed >= Math.max(CANDIDATE_SAMPLE, open.length / 16)) {
        closeFull();
        sinceClosed = 0;
      }
      const start = sampled ? Math.floor(random() * open.length) : 0;
      sampleCandidates(sender, open, start, weightOf, fromOpen);
      if (fromOpen.otherCount > 0) return pickPartner(fromOpen, random);
      sampleCandidates(sender, everyone, start % Math.max(1, everyone.length), weightOf, fromEveryone);
      return pickPartner(fromEveryone.otherCount > 0 || fromOpen.sameCount === 0 ? fromEveryone : fromOpen, random);
    },
  };
  return chooser;
}
