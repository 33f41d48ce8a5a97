/*
 * Whose word counts. A sender's mail is judged by its receivers: where they found it (spam or
 * not), whether they found it at all (lost), and whether their server refused it (bounced). A
 * receiver in another workspace is run by someone else, who can file everything into spam or
 * delete it on purpose, and who can open as many workspaces and connect as many addresses as they
 * like. So evidence is weighed by who stands behind it, one party one voice:
 *
 * - from the sender's own workspace: it counts in full;
 * - from anywhere else, a problem (spam, lost or bounced, each on its own) counts only when
 *   CORROBORATING_PARTIES independent parties report it, each from a different mail server;
 *   otherwise those messages are set aside, as if never sent there. Mail found in the inbox still
 *   counts: praise costs the victim nothing.
 *
 * The words, precisely:
 *
 * - The party of a receiver is the set of people who own or administer its workspace. Two
 *   workspaces that share any such person are one party, and so on down the chain (union-find
 *   over the memberships with role owner or admin): a person and every workspace they own or
 *   administer speak with one voice. A workspace nobody owns or administers (one run by API keys
 *   alone) is a party of its own.
 * - The server of a receiver is the network its mail lives on: the address the engine's IMAP
 *   client last connected to (mailboxes.imap_address, recorded at every sync), as its /24 for
 *   IPv4 or its /48 for IPv6. Domain names and host names cost nothing to add; addresses on other
 *   networks mean other machines. A receiver not synced since the address was recorded has no
 *   known server and does not corroborate.
 * - A receiver is established once it has been proven (a round trip seen) and its workspace has
 *   existed for ESTABLISHED_AFTER_DAYS days: a young one's reports never corroborate and its
 *   spam, lost and bounced messages are always set aside.
 * - A party reports a problem on a server when its established receivers there saw it at
 *   REPORTING_RATES or more. The problem counts when CORROBORATING_PARTIES such reports can be
 *   paired off, each from a different party on a different server (a matching between reporting
 *   parties and servers): one party on three servers, or three parties on one server, is one voice.
 *
 * One exception comes first, for every receiver, of the sender's own workspace or not: a receiver
 * found to file most senders' mail into spam while others find it in the inbox (the culprit rule,
 * receiver-filtering.ts) has its spam set aside, in all the evidence, as if never sent there.
 *
 * The health guard judges only this trusted evidence. Reputation is scored on it too, and all the
 * evidence may move the score by at most FOREIGN_EVIDENCE_BOUND points either way, so the owner
 * still sees a hint of what a lone party reported without it deciding anything.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { DeliveryCounts } from '../interactions/interactions.repository.js';
import { listFilteringReceivers } from './receiver-filtering.repository.js';
import { listReceiverFacts, listStewards, type ReceiverFacts, type Steward } from './receiver-trust.repository.js';
import { tallyByReceiver } from './warmup-messages.repository.js';

/** Points by which evidence that did not count may still move a reputation score, either way. */
export const FOREIGN_EVIDENCE_BOUND = 5;
/** Independent parties, each on its own mail server, that must report a problem before it counts. */
export const CORROBORATING_PARTIES = 3;
/** Days a receiver's proof and its workspace must be old before its reports corroborate. */
export const ESTABLISHED_AFTER_DAYS = 14;

export type Problem = 'spam' | 'lost' | 'bounced';
const PROBLEMS: readonly Problem[] = ['spam', 'lost', 'bounced'];

/**
 * The rate at which one party "reports" a problem on a server: half the rate at which reputation
 * takes its whole penalty (spam over the mail found, lost and bounced over the mail sent).
 */
export const REPORTING_RATES: Readonly<Record<Problem, number>> = { spam: 0.2, lost: 0.1, bounced: 0.05 };

/** A sender's mail as one receiver saw it, with who stands behind that receiver. */
export interface ReceiverEvidence extends DeliveryCounts {
  workspaceId: string;
  /** Its party (see above): equal for receivers run by the same people. */
  party: string;
  /** Its mail server (see above); null when unknown. */
  server: string | null;
  /** Proven and in a workspace old enough (see above). */
  established: boolean;
  /** Its own filter files most senders' mail into spam (receiver-filtering.ts): its spam is not the sender's doing. */
  filtering?: boolean;
}

export interface WeighedEvidence {
  /** Everything, whoever reported it: what the statistics show. */
  all: DeliveryCounts;
  /** What the health guard and reputation go by. */
  trusted: DeliveryCounts;
  /** The problems that independent parties corroborated (and so count in `trusted`). */
  corroborated: Problem[];
}

export const NO_EVIDENCE: Readonly<DeliveryCounts> = Object.freeze({ sent: 0, found: 0, spam: 0, bounced: 0, lost: 0 });

function add(a: DeliveryCounts, b: DeliveryCounts): DeliveryCounts {
  return {
    sent: a.sent + b.sent,
    found: a.found + b.found,
    spam: a.spam + b.spam,
    bounced: a.bounced + b.bounced,
    lost: a.lost + b.lost,
  };
}

function problemRate(counts: DeliveryCounts, problem: Problem): number {
  const whole = problem === 'spam' ? counts.found : counts.sent;
  return whole > 0 ? counts[problem] / whole : 0;
}

/**
 * The most reports that can be paired off, no party and no server twice: a maximum matching of
 * the bipartite graph party—server (augmenting paths; a sender has a few dozen receivers).
 */
export function independentReports(reports: ReadonlyMap<string, ReadonlySet<string>>): number {
  const partyOfServer = new Map<string, string>();
  const augment = (party: string, visited: Set<string>): boolean => {
    for (const server of reports.get(party) ?? []) {
      if (visited.has(server)) continue;
      visited.add(server);
      const holder = partyOfServer.get(server);
      if (holder === undefined || augment(holder, visited)) {
        partyOfServer.set(server, party);
        return true;
      }
    }
    return false;
  };
  let matched = 0;
  for (const party of reports.keys()) if (augment(party, new Set())) matched += 1;
  return matched;
}

/** Whether enough independent parties, on as many servers, report the problem for it to count. */
function isCorroborated(foreign: readonly ReceiverEvidence[], problem: Problem): boolean {
  const cells = new Map<string, { party: string; server: string; counts: DeliveryCounts }>();
  for (const entry of foreign) {
    if (!entry.established || entry.server === null) continue;
    const key = `${entry.party}\u0000${entry.server}`;
    const cell = cells.get(key) ?? { party: entry.party, server: entry.server, counts: { ...NO_EVIDENCE } };
    cell.counts = add(cell.counts, entry);
    cells.set(key, cell);
  }
  const reports = new Map<string, Set<string>>();
  for (const cell of cells.values()) {
    if (cell.counts[problem] === 0 || problemRate(cell.counts, problem) < REPORTING_RATES[problem]) continue;
    reports.set(cell.party, (reports.get(cell.party) ?? new Set()).add(cell.server));
  }
  return reports.size >= CORROBORATING_PARTIES && independentReports(reports) >= CORROBORATING_PARTIES;
}

/** Splits a sender's evidence into what counts and what is set aside (see the rule above). */
export function weighEvidence(senderWorkspaceId: string, evidence: readonly ReceiverEvidence[]): WeighedEvidence {
  let all: DeliveryCounts = { ...NO_EVIDENCE };
  let own: DeliveryCounts = { ...NO_EVIDENCE };
  let foreignTotal: DeliveryCounts = { ...NO_EVIDENCE };
  let established: DeliveryCounts = { ...NO_EVIDENCE };
  const foreign: ReceiverEvidence[] = [];
  for (const reported of evidence) {
    // a culprit's spam is set aside for every sender, own workspace or not, in `all` too: it says
    // nothing about the sender (its inbox placements still count: praise costs nothing)
    const entry = reported.filtering
      ? { ...reported, sent: reported.sent - reported.spam, found: reported.found - reported.spam, spam: 0 }
      : reported;
    all = add(all, entry);
    if (entry.workspaceId === senderWorkspaceId) {
      own = add(own, entry);
    } else {
      foreign.push(entry);
      foreignTotal = add(foreignTotal, entry);
      if (entry.established && entry.server !== null) established = add(established, entry);
    }
  }
  const corroborated = PROBLEMS.filter((problem) => isCorroborated(foreign, problem));
  // a corroborated problem counts as the established receivers saw it; a young one's word never does
  const counts = (problem: Problem) => (corroborated.includes(problem) ? established[problem] : 0);
  const setAside = (problem: Problem) => foreignTotal[problem] - counts(problem);
  const trusted = add(own, {
    // a message set aside is as if it had not been sent to that receiver at all
    sent: foreignTotal.sent - setAside('spam') - setAside('lost') - setAside('bounced'),
    found: foreignTotal.found - setAside('spam'),
    spam: counts('spam'),
    lost: counts('lost'),
    bounced: counts('bounced'),
  });
  return { all, trusted, corroborated };
}

/** The reputation score on trusted evidence, moved towards the score on all of it by at most the bound. */
export function boundedScore(score: (counts: DeliveryCounts) => number, weighed: WeighedEvidence): number {
  const trusted = score(weighed.trusted);
  const everything = score(weighed.all);
  return Math.max(trusted - FOREIGN_EVIDENCE_BOUND, Math.min(trusted + FOREIGN_EVIDENCE_BOUND, everything));
}

/** The network of an address: its /24 for IPv4 (an IPv4-mapped IPv6 address is IPv4), its /48 for IPv6. */
export function serverNetwork(address: string): string | null {
  const text = address.trim().toLowerCase();
  const v4 = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.\d{1,3}$/.exec(text);
  if (v4) return `${v4[1]}.${v4[2]}.${v4[3]}.0/24`;
  if (!text.includes(':')) return null;
  const [head, tail = ''] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = text.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  if (groups.length !== 8 || groups.some((group) => !/^[0-9a-f]{1,4}$/.test(group))) return null;
  return `${groups
    .slice(0, 3)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/48`;
}

/** Which workspaces are one party: each workspace to a representative of its party (union-find). */
export function partiesOf(workspaceIds: Iterable<string>, stewards: readonly Steward[]): Map<string, string> {
  const parent = new Map<string, string>();
  const find = (node: string): string => {
    let root = node;
    while (parent.get(root) !== root) root = parent.get(root) ?? root;
    // path compression: the next find is one step
    for (let next = node; next !== root;) {
      const up = parent.get(next) ?? root;
      parent.set(next, root);
      next = up;
    }
    return root;
  };
  const ensure = (node: string) => {
    if (!parent.has(node)) parent.set(node, node);
  };
  for (const id of workspaceIds) ensure(`workspace:${id}`);
  for (const { workspaceId, userId } of stewards) {
    ensure(`workspace:${workspaceId}`);
    ensure(`person:${userId}`);
    const a = find(`workspace:${workspaceId}`);
    const b = find(`person:${userId}`);
    // the smaller name is the root, so a party's representative does not depend on the order
    if (a < b) parent.set(b, a);
    else if (b < a) parent.set(a, b);
  }
  const parties = new Map<string, string>();
  for (const id of workspaceIds) parties.set(id, find(`workspace:${id}`));
  return parties;
}

/** Whether a receiver's reports may corroborate as of `at` (see the rule above). */
export function isEstablished(facts: ReceiverFacts, at: Date): boolean {
  const before = new Date(at.getTime() - ESTABLISHED_AFTER_DAYS * 86_400_000).toISOString();
  return facts.provenAt !== null && facts.provenAt <= before && facts.workspaceCreatedAt <= before;
}

/** These senders' evidence over their mail sent since `since`, weighed as of `at`; a sender with none is absent. */
export async function loadWeighedEvidence(
  db: Kysely<Database>,
  since: Date,
  at: Date,
  senderIds: readonly string[],
): Promise<Map<string, WeighedEvidence>> {
  const tallies = await tallyByReceiver(db, since, senderIds);
  const receiverIds = [...new Set(tallies.map((tally) => tally.receiverMailboxId))];
  const facts = await listReceiverFacts(db, receiverIds);
  const filtering = await listFilteringReceivers(db, receiverIds);
  const workspaceIds = new Set(tallies.map((tally) => tally.receiverWorkspaceId));
  const parties = partiesOf(workspaceIds, await listStewards(db, [...workspaceIds]));
  const bySender = new Map<string, { workspaceId: string; receivers: ReceiverEvidence[] }>();
  for (const tally of tallies) {
    const sender = bySender.get(tally.senderMailboxId) ?? { workspaceId: tally.senderWorkspaceId, receivers: [] };
    const receiver = facts.get(tally.receiverMailboxId);
    const address = receiver?.imapAddress ?? null;
    sender.receivers.push({
      workspaceId: tally.receiverWorkspaceId,
      party: parties.get(tally.receiverWorkspaceId) ?? `workspace:${tally.receiverWorkspaceId}`,
      server: address === null ? null : serverNetwork(address),
      established: receiver !== undefined && isEstablished(receiver, at),
      filtering: filtering.has(tally.receiverMailboxId),
      sent: tally.sent,
      found: tally.found,
      spam: tally.spam,
      lost: tally.lost,
      bounced: tally.bounced,
    });
    bySender.set(tally.senderMailboxId, sender);
  }
  return new Map(
    [...bySender].map(([senderId, sender]) => [senderId, weighEvidence(sender.workspaceId, sender.receivers)]),
  );
}

/** A sender nobody reported on yet. */
export const NO_WEIGHED_EVIDENCE: Readonly<WeighedEvidence> = Object.freeze({
  all: NO_EVIDENCE,
  trusted: NO_EVIDENCE,
  corroborated: [],
});
