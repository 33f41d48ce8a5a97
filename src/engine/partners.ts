import type { Random } from './random.js';

/** A sender opens at most this many threads with one recipient in any 7 of its days. */
export const PAIR_LIMIT_PER_WEEK = 3;
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

/** Whether the pair rules and the candidate's own inbound cap still allow this sender to write to it today. */
export function isEligible(candidate: PartnerCandidate): boolean {
  return (
    candidate.pairToday === 0 &&
    candidate.pairWeek < PAIR_LIMIT_PER_WEEK &&
    candidate.inboundToday < candidate.inboundCap
  );
}

/**
 * How strongly a candidate is preferred: the less it received lately the likelier, and a mailbox
 * that already receives more than it sends is held back, so each one's inbound stays near its
 * outbound (reciprocity). Always > 0: weighting orders, the hard rules exclude.
 */
export function partnerWeight(candidate: PartnerCandidate): number {
  const surplus = Math.max(0, candidate.inbound - candidate.outbound);
  return 1 / (1 + candidate.inbound) / (1 + surplus);
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
 * The recipients of one sender's new threads for one day. Hard rules: never the same partner
 * twice a day, at most PAIR_LIMIT_PER_WEEK threads per partner in 7 days. Preferences: another
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

/**
 * The candidates of one send drawn from `pool` (in a random order fixed for the day): walking from
 * `start`, the first CANDIDATE_SAMPLE eligible members on another domain than the sender's. Only
 * when the whole pool has none does it return the eligible members of the sender's own domain, so
 * "another domain where possible" holds over the whole pool, not just the window. `candidate`
 * builds what the partner choice sees of a member (its traffic, pair counts and inbound cap).
 */
export function sampleCandidates<Member extends PoolMember>(
  sender: PoolMember,
  pool: readonly Member[],
  start: number,
  candidate: (member: Member) => PartnerCandidate,
): PartnerCandidate[] {
  const senderDomain = emailDomain(sender.emailNormalized);
  const otherDomain: PartnerCandidate[] = [];
  const sameDomain: PartnerCandidate[] = [];
  for (let step = 0; step < pool.length && otherDomain.length < CANDIDATE_SAMPLE; step++) {
    const member = pool[(start + step) % pool.length];
    if (member.id === sender.id || member.emailNormalized === sender.emailNormalized || member.answersAutomatically)
      continue;
    const built = candidate(member);
    if (!isEligible(built)) continue;
    if (built.domain !== senderDomain) otherDomain.push(built);
    else if (otherDomain.length === 0 && sameDomain.length < CANDIDATE_SAMPLE) sameDomain.push(built);
  }
  return otherDomain.length > 0 ? otherDomain : sameDomain;
}

/**
 * One partner for one send: a weighted draw (`partnerWeight`) among the eligible candidates on
 * another domain, or on the sender's own when no other is eligible. The same draw as
 * `choosePartners` with a count of 1 over candidates already in id order, without its sort: the
 * planner asks for one partner per send, millions of times a day at scale.
 */
export function pickPartner(
  senderDomain: string,
  candidates: readonly PartnerCandidate[],
  random: Random,
): PartnerCandidate | undefined {
  const eligible = candidates.filter(isEligible);
  const otherDomain = eligible.filter((c) => c.domain !== senderDomain);
  const pool = otherDomain.length > 0 ? otherDomain : eligible;
  if (pool.length === 0) return undefined;
  const weights = pool.map(partnerWeight);
  let point = random() * weights.reduce((sum, w) => sum + w, 0);
  for (let i = 0; i < pool.length; i++) {
    point -= weights[i];
    if (point < 0) return pool[i];
  }
  return pool[pool.length - 1];
}
