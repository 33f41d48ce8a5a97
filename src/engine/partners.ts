import type { Random } from './random.js';

/*
 * The pair and receiver rules: what keeps each pair's and each receiver's mail looking like
 * colleagues writing to each other. Colleagues write to the same person several times a day, but
 * not in bursts, and nobody's inbox is filled by one correspondent. (They replace a cap of 3 new
 * threads per pair in 7 days, which a small pool spent in its first days: its volume then
 * collapsed to nothing until the week let go.)
 */

/** New threads one sender opens with one receiver on one of its local days, at most: several, not a stream. */
export const PAIR_THREADS_PER_DAY = 3;
/**
 * A pair earns its daily threads: 1 a day at first, one more for every PAIR_TRUST_STEP threads it
 * opened over the sender's previous 7 days, up to PAIR_THREADS_PER_DAY. Two strangers write once;
 * people who already correspond write more often.
 */
export const PAIR_TRUST_STEP = 2;
/** Two new threads of the same pair are at least this far apart: nobody writes a colleague twice in a few minutes. */
export const PAIR_SPACING_MS = 90 * 60_000;
/**
 * One sender's new threads to a receiver on a day are at most this share of the receiver's inbound
 * cap that day (at least 1), when the pool has other senders for it: a mailbox whose mail all comes
 * from one address does not look like a person's.
 */
export const RECEIVER_SHARE = 0.5;

/** What the pair rules read of one sender→receiver pair. */
export interface PairCount {
  /** Threads the sender opened with it over its last 7 days, today included. */
  week: number;
  /** Threads it opened with it today. */
  today: number;
  /** When today's threads planned in this run are due (ms), for the spacing. */
  times?: number[];
}

/** The most new threads a pair may open today, from the threads it opened over the previous 7 days. */
export function pairDayLimit(priorWeek: number): number {
  return Math.min(PAIR_THREADS_PER_DAY, 1 + Math.floor(Math.max(0, priorWeek) / PAIR_TRUST_STEP));
}

/**
 * The most new threads one sender may send a receiver on its day: RECEIVER_SHARE of its inbound cap
 * (at least 1), or the whole cap when the pool offers it no other sender.
 */
export function receiverShareLimit(inboundCap: number, othersCanSend: boolean): number {
  if (!othersCanSend) return inboundCap;
  return Math.max(1, Math.floor(RECEIVER_SHARE * inboundCap));
}

/**
 * Whether the pair rules allow one more thread of a pair at `time`: under its day limit, under the
 * receiver's share, and PAIR_SPACING_MS from the pair's other threads of the day.
 */
export function pairAllows(
  pair: PairCount | undefined,
  time: number,
  receiverCap: number,
  othersCanSend: boolean,
): boolean {
  if (pair === undefined) return receiverCap > 0;
  if (pair.today >= pairDayLimit(pair.week - pair.today)) return false;
  if (pair.today >= receiverShareLimit(receiverCap, othersCanSend)) return false;
  if (pair.times) for (const t of pair.times) if (Math.abs(t - time) < PAIR_SPACING_MS) return false;
  return true;
}

/**
 * New threads addressed to a mailbox and due on one of its local days are at most its own budget
 * that day (what its ramp lets it send) plus this: a young mailbox is warmed gently from both sides, and
 * the pool can still place every sender's threads (the caps add up to more than the budgets).
 */
export const INBOUND_SLACK = 2;

/** One mailbox of the pool as the partner choice of one sender sees it. */
export interface PartnerCandidate {
  mailboxId: string;
  /** Lower-case domain of its address. */
  domain: string;
  /** Warmup emails addressed to it over the last 7 days, planned ones included. */
  inbound: number;
  /** Warmup emails it sent or will send over the same 7 days. */
  outbound: number;
  /** Threads this sender opened with it over the sender's last 7 days, today included. */
  pairWeek: number;
  /** Threads this sender already opened with it today. */
  pairToday: number;
  /** New threads addressed to it, from every sender, due on its own local day of this send. */
  inboundToday: number;
  /** The most new threads it may receive that day: its own day's budget + INBOUND_SLACK. */
  inboundCap: number;
}

export interface PartnerChoice {
  senderDomain: string;
  candidates: readonly PartnerCandidate[];
  count: number;
  random: Random;
}

export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * Whether the pair rules (day limit, receiver share: the pool around a candidate list offers others)
 * and the candidate's own inbound cap still allow this sender to write to it today.
 */
export function isEligible(candidate: PartnerCandidate): boolean {
  return (
    candidate.pairToday < pairDayLimit(candidate.pairWeek - candidate.pairToday) &&
    candidate.pairToday < receiverShareLimit(candidate.inboundCap, true) &&
    candidate.inboundToday < candidate.inboundCap
  );
}

/**
 * How strongly a candidate is preferred: the less it received lately the likelier, and a mailbox
 * that already receives more than it sends is held back, so each one's inbound stays near its
 * outbound (reciprocity). Always > 0: weighting orders, the hard rules exclude.
 */
export function partnerWeight(candidate: Pick<PartnerCandidate, 'inbound' | 'outbound'>): number {
  return weightOfTraffic(candidate.inbound, candidate.outbound);
}

/** `partnerWeight` of a member's 7-day inbound and outbound, without an object. */
export function weightOfTraffic(inbound: number, outbound: number): number {
  const surplus = Math.max(0, inbound - outbound);
  return 1 / (1 + inbound) / (1 + surplus);
}

/** Draws up to `count` of `pool` without replacement, each draw proportional to its weight. */
function weightedSample(pool: readonly PartnerCandidate[], count: number, random: Random): PartnerCandidate[] {
  const remaining = [...pool];
  const weights = remaining.map(partnerWeight);
  const picked: PartnerCandidate[] = [];
  while (picked.length < count && remaining.length > 0) {
    const total = weights.reduce((sum, w) => sum + w, 0);
    let point = random() * total;
    let index = remaining.length - 1;
    for (let i = 0; i < remaining.length; i++) {
      point -= weights[i];
      if (point < 0) {
        index = i;
        break;
      }
    }
    picked.push(remaining[index]);
    remaining.splice(index, 1);
    weights.splice(index, 1);
  }
  return picked;
}

/**
 * The recipients of one sender's new threads for one send round: each partner at most once per
 * call, and only while the pair rules allow it (`isEligible`). Preferences: another
 * domain first (the same domain only when the others are used up), then `partnerWeight`. Returns
 * fewer than `count` when the pool cannot honour the rules: a small pool warms more slowly, never
 * more aggressively.
 */
export function choosePartners({ senderDomain, candidates, count, random }: PartnerChoice): PartnerCandidate[] {
  // A fixed order, so that the same seed picks the same partners whatever order the rows came in.
  const eligible = candidates
    .filter(isEligible)
    .sort((a, b) => (a.mailboxId < b.mailboxId ? -1 : a.mailboxId > b.mailboxId ? 1 : 0));
  const otherDomain = eligible.filter((c) => c.domain !== senderDomain);
  const sameDomain = eligible.filter((c) => c.domain === senderDomain);
  const picked = weightedSample(otherDomain, count, random);
  return picked.concat(weightedSample(sameDomain, count - picked.length, random));
}

export interface PoolMember {
  id: string;
  emailNormalized: string;
  /** Its owner answers automatically (see mailboxes/auto-reply-rule.ts): it receives no warmup mail. */
  answersAutomatically?: boolean;
}

/** A mailbox's new threads due on its local day of one send, and the most it may receive that day. */
export interface DayInbound {
  today: number;
  cap: number;
}

/**
 * The candidates one sender may write to: every other member of the pool, except a mailbox with
 * the same address (the same account connected in two workspaces would be writing to itself) and
 * a mailbox whose owner answers automatically. A member missing from `dayInbound` has no cap.
 */
export function candidatesFor(
  sender: PoolMember,
  pool: readonly PoolMember[],
  traffic: ReadonlyMap<string, { inbound: number; outbound: number }>,
  pairs: ReadonlyMap<string, { week: number; today: number }>,
  dayInbound: ReadonlyMap<string, DayInbound> = new Map(),
): PartnerCandidate[] {
  return pool
    .filter(
      (member) =>
        member.id !== sender.id && member.emailNormalized !== sender.emailNormalized && !member.answersAutomatically,
    )
    .map((member) => ({
      mailboxId: member.id,
      domain: emailDomain(member.emailNormalized),
      inbound: traffic.get(member.id)?.inbound ?? 0,
      outbound: traffic.get(member.id)?.outbound ?? 0,
      pairWeek: pairs.get(member.id)?.week ?? 0,
      pairToday: pairs.get(member.id)?.today ?? 0,
      inboundToday: dayInbound.get(member.id)?.today ?? 0,
      inboundCap: dayInbound.get(member.id)?.cap ?? Number.POSITIVE_INFINITY,
    }));
}

/**
 * The most eligible candidates on other domains one send weighs in a large pool. Weighing the whole
 * pool for every send is O(pool) per send and O(pool²) per day; a random window of the pool keeps
 * every hard rule (eligibility is checked before a member is taken) and the preferences within the
 * window, at a cost that does not grow with the pool.
 */
export const CANDIDATE_SAMPLE = 32;

/** A member of the pool as the partner walk reads it: its domain worked out once for the day. */
export interface WalkMember extends PoolMember {
  domain: string;
}

/**
 * The eligible members one walk found, with their weights: kept in arrays made once and reused for
 * every send (millions a day at scale), where a candidate object per walked member and the arrays
 * of each filter were most of the garbage planning made.
 */
export class CandidateSample {
  readonly otherIds: string[] = new Array<string>(CANDIDATE_SAMPLE);
  readonly otherWeights = new Float64Array(CANDIDATE_SAMPLE);
  otherCount = 0;
  readonly sameIds: string[] = new Array<string>(CANDIDATE_SAMPLE);
  readonly sameWeights = new Float64Array(CANDIDATE_SAMPLE);
  sameCount = 0;
}

/**
 * The candidates of one send drawn from `pool` (in a random order fixed for the day), into
 * `sample`: walking from `start`, the first CANDIDATE_SAMPLE eligible members on another domain
 * than the sender's, and, while none is found, up to as many eligible members of the sender's own
 * domain (used only when the whole pool has none on another: "another domain where possible" holds
 * over the whole pool, not just the window). `weightOf` is a member's `partnerWeight` for this
 * sender and send, or 0 when the rules exclude it (its pair counts, its inbound cap that day).
 */
export function sampleCandidates<Member extends WalkMember>(
  sender: WalkMember,
  pool: readonly Member[],
  start: number,
  weightOf: (member: Member) => number,
  sample: CandidateSample,
): void {
  sample.otherCount = 0;
  sample.sameCount = 0;
  const length = pool.length;
  for (let step = 0; step < length && sample.otherCount < CANDIDATE_SAMPLE; step++) {
    let index = start + step;
    if (index >= length) index -= length;
    const member = pool[index];
    if (member.id === sender.id || member.emailNormalized === sender.emailNormalized || member.answersAutomatically)
      continue;
    if (member.domain !== sender.domain) {
      const weight = weightOf(member);
      if (weight <= 0) continue;
      sample.otherIds[sample.otherCount] = member.id;
      sample.otherWeights[sample.otherCount++] = weight;
    } else if (sample.otherCount === 0 && sample.sameCount < CANDIDATE_SAMPLE) {
      const weight = weightOf(member);
      if (weight <= 0) continue;
      sample.sameIds[sample.sameCount] = member.id;
      sample.sameWeights[sample.sameCount++] = weight;
    }
  }
}

/**
 * One partner for one send: a weighted draw (`partnerWeight`) among the sampled candidates on
 * another domain, or on the sender's own when no other is eligible. The same draw as
 * `choosePartners` with a count of 1 over candidates already in order, without its sort and
 * filters: the planner asks for one partner per send, millions of times a day at scale.
 */
export function pickPartner(sample: CandidateSample, random: Random): string | undefined {
  const other = sample.otherCount > 0;
  const count = other ? sample.otherCount : sample.sameCount;
  if (count === 0) return undefined;
  const ids = other ? sample.otherIds : sample.sameIds;
  const weights = other ? sample.otherWeights : sample.sameWeights;
  let total = 0;
  for (let i = 0; i < count; i++) total += weights[i];
  let point = random() * total;
  for (let i = 0; i < count; i++) {
    point -= weights[i];
    if (point < 0) return ids[i];
  }
  return ids[count - 1];
}
