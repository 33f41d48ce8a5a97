/*
 * The real culprit. A receiver whose own filter files the pool's mail into spam makes every sender
 * writing to it look bad, and the sender's owner cannot fix that: the receiver's owner can (an
 * allow rule for the pool's addresses, or its filter rules). So a receiver whose filing is the
 * outlier is found, named to its owner, and its placements stop counting against the senders.
 *
 * The rule, over the mail sent in the last FILTERING_WINDOW_DAYS days. For a receiver R and a sender
 * S that wrote to it:
 *
 * - R junks S when more than half of S's mail that R found was in spam (JUNK_SHARE);
 * - the witnesses of S at R are the other receivers that found S's mail and whose word about R may
 *   count: R's own party (its owner's other mailboxes), and established receivers of other parties
 *   with a known server (evidence.ts);
 * - S contrasts at R when R junks S and S's witnesses found most of S's mail in the inbox (less than
 *   JUNK_SHARE in spam).
 *
 * R is a filtering receiver (the culprit) when all of these hold:
 *
 * 1. at least FILTERING_MIN_SENDERS senders contrast at R, and they are at least
 *    FILTERING_SENDER_SHARE of the senders R and some witness both found mail from: R junks most
 *    senders, not one;
 * 2. over the contrasting senders together, the lower 95 % Wilson bound of R's spam rate is above
 *    FILTERING_RATE_LINE and the upper 95 % bound of the witnesses' spam rate is below it: with the
 *    samples at hand, R junks most of this mail and the others do not (6 of 6 against 0 of 6 is
 *    enough, 3 of 3 against 0 of 3 is not);
 * 3. the witnesses speak for R's own party, or come from at least CORROBORATING_PARTIES parties each
 *    on its own server (the matching of evidence.ts): one hostile party with many workspaces cannot
 *    find mail in its inboxes and so have an honest receiver declared a culprit.
 *
 * Why this opens no hole: a sender whose mail really is junked everywhere contrasts nowhere (its
 * witnesses junk it too), so it cannot make any receiver a culprit, and its spam at the other
 * receivers still counts. A culprit's placements are set aside only at that culprit.
 */
import type { Kysely } from 'kysely';
import { utcDay } from '../calendar.js';
import type { Database } from '../db/schema.js';
import { receiverFilteringMessage } from '../mailboxes/mailbox-outlook.js';
import { enqueueEvent } from '../webhooks/webhooks.repository.js';
import { wilsonLower, wilsonUpper } from './confidence.js';
import { CORROBORATING_PARTIES, independentReports, isEstablished, partiesOf, serverNetwork } from './evidence.js';
import { markJudgementsDue } from './mailbox-engine-state.repository.js';
import {
  saveFilteringReceivers,
  tallyFiling,
  type FilingTally,
  type FilteringFinding,
} from './receiver-filtering.repository.js';
import { listReceiverFacts, listStewards } from './receiver-trust.repository.js';
import { windowStart } from './reputation.js';

/** The culprit rule looks at the mail sent over the last 7 days, like the health guard. */
export const FILTERING_WINDOW_DAYS = 7;
/** A receiver "junks" a sender, or witnesses "find it in the inbox", by more or less than this share in spam. */
export const JUNK_SHARE = 0.5;
/** Senders that must contrast at a receiver before it can be the culprit. */
export const FILTERING_MIN_SENDERS = 3;
/** …and the share of its comparable senders they must be ("most or all"). */
export const FILTERING_SENDER_SHARE = 2 / 3;
/** The line the 95 % Wilson bounds must lie on either side of: the receiver's above, the witnesses' below. */
export const FILTERING_RATE_LINE = 0.5;

// The shapes the rule reads and writes live with their SQL, so the repository imports nothing of the rule.
export type { FilingTally, FilteringFinding } from './receiver-filtering.repository.js';

/** Who stands behind a receiver (see evidence.ts). */
export interface ReceiverStanding {
  party: string;
  server: string | null;
  established: boolean;
}

interface Placed {
  found: number;
  spam: number;
}

function addTo(total: Placed, cell: Placed): void {
  total.found += cell.found;
  total.spam += cell.spam;
}

/** One sender's found mail: per receiver, and summed the ways a receiver's witnesses are drawn from. */
interface SenderMail {
  receivers: Map<string, Placed>;
  /** Per party, over all its receivers. */
  byParty: Map<string, Placed>;
  /** Over the receivers that may witness for another party (established, known server), and per party. */
  heard: Placed;
  heardByParty: Map<string, Placed>;
}

/** The receivers whose filing is the outlier (see the rule above), by receiver id. */
export function findFilteringReceivers(
  tallies: readonly FilingTally[],
  standing: ReadonlyMap<string, ReceiverStanding>,
): Map<string, FilteringFinding> {
  const bySender = new Map<string, SenderMail>();
  const sendersOf = new Map<string, Set<string>>();
  for (const tally of tallies) {
    const receiver = standing.get(tally.receiverId);
    if (tally.found <= 0 || receiver === undefined) continue;
    const mail = bySender.get(tally.senderId) ?? {
      receivers: new Map<string, Placed>(),
      byParty: new Map<string, Placed>(),
      heard: { found: 0, spam: 0 },
      heardByParty: new Map<string, Placed>(),
    };
    bySender.set(tally.senderId, mail);
    const cell = mail.receivers.get(tally.receiverId) ?? { found: 0, spam: 0 };
    mail.receivers.set(tally.receiverId, cell);
    addTo(cell, tally);
    const party = mail.byParty.get(receiver.party) ?? { found: 0, spam: 0 };
    mail.byParty.set(receiver.party, party);
    addTo(party, tally);
    if (receiver.established && receiver.server !== null) {
      addTo(mail.heard, tally);
      const heard = mail.heardByParty.get(receiver.party) ?? { found: 0, spam: 0 };
      mail.heardByParty.set(receiver.party, heard);
      addTo(heard, tally);
    }
    sendersOf.set(tally.receiverId, (sendersOf.get(tally.receiverId) ?? new Set()).add(tally.senderId));
  }
  const findings = new Map<string, FilteringFinding>();
  for (const [receiverId, senderIds] of sendersOf) {
    const own = standing.get(receiverId)!;
    const finding: FilteringFinding = {
      junkedSenders: 0,
      senders: 0,
      spam: 0,
      found: 0,
      witnessSpam: 0,
      witnessFound: 0,
    };
    const contrasting: SenderMail[] = [];
    for (const senderId of senderIds) {
      const mail = bySender.get(senderId)!;
      const here = mail.receivers.get(receiverId)!;
      // the witnesses: its own party but itself, and the heard receivers of every other party
      const ownParty = mail.byParty.get(own.party)!;
      const heardOwnParty = mail.heardByParty.get(own.party) ?? { found: 0, spam: 0 };
      const witnessFound = ownParty.found - here.found + mail.heard.found - heardOwnParty.found;
      const witnessSpam = ownParty.spam - here.spam + mail.heard.spam - heardOwnParty.spam;
      if (witnessFound === 0) continue;
      finding.senders += 1;
      const junkedHere = here.spam / here.found > JUNK_SHARE;
      const inboxElsewhere = witnessSpam / witnessFound < JUNK_SHARE;
      if (!junkedHere || !inboxElsewhere) continue;
      finding.junkedSenders += 1;
      finding.spam += here.spam;
      finding.found += here.found;
      finding.witnessSpam += witnessSpam;
      finding.witnessFound += witnessFound;
      contrasting.push(mail);
    }
    const most =
      finding.junkedSenders >= FILTERING_MIN_SENDERS &&
      finding.junkedSenders >= FILTERING_SENDER_SHARE * finding.senders;
    const sure =
      wilsonLower(finding.spam, finding.found) > FILTERING_RATE_LINE &&
      wilsonUpper(finding.witnessSpam, finding.witnessFound) < FILTERING_RATE_LINE;
    if (most && sure && isHeard(receiverId, own, contrasting, standing)) findings.set(receiverId, finding);
  }
  return findings;
}

/** Whether the witnesses include the receiver's own party, or enough independent parties on their own servers. */
function isHeard(
  receiverId: string,
  own: ReceiverStanding,
  contrasting: readonly SenderMail[],
  standing: ReadonlyMap<string, ReceiverStanding>,
): boolean {
  const foreign = new Map<string, Set<string>>();
  for (const mail of contrasting) {
    for (const id of mail.receivers.keys()) {
      if (id === receiverId) continue;
      const witness = standing.get(id)!;
      if (witness.party === own.party) return true;
      if (!witness.established || witness.server === null) continue;
      foreign.set(witness.party, (foreign.get(witness.party) ?? new Set()).add(witness.server));
    }
  }
  return independentReports(foreign) >= CORROBORATING_PARTIES;
}

export interface FilteringSummary {
  /** Receivers filtering now. */
  filtering: number;
  /** Of those, the ones that became so in this pass (each a `mailbox.receiver_filtering` event). */
  started: number;
  /** Receivers that no longer are. */
  ended: number;
}

/**
 * Applies the culprit rule as of `at` to the whole pool (one grouped read of the window), keeps the
 * receivers it finds, makes a `mailbox.receiver_filtering` event for each new episode, and has the
 * senders that wrote to a receiver whose standing changed judged again at once (their evidence
 * changed).
 */
export async function detectFilteringReceivers(db: Kysely<Database>, at: Date): Promise<FilteringSummary> {
  const tallies = await tallyFiling(db, windowStart(utcDay(at), FILTERING_WINDOW_DAYS));
  const facts = await listReceiverFacts(db, [...new Set(tallies.map((tally) => tally.receiverId))]);
  const workspaceIds = new Set([...facts.values()].map((fact) => fact.workspaceId));
  const parties = partiesOf(workspaceIds, await listStewards(db, [...workspaceIds]));
  const standing = new Map<string, ReceiverStanding>();
  for (const fact of facts.values()) {
    standing.set(fact.mailboxId, {
      party: parties.get(fact.workspaceId) ?? `workspace:${fact.workspaceId}`,
      server: fact.imapAddress === null ? null : serverNetwork(fact.imapAddress),
      established: isEstablished(fact, at),
    });
  }
  const findings = findFilteringReceivers(tallies, standing);
  const change = await saveFilteringReceivers(db, findings, at);
  for (const { mailboxId, since } of change.started) {
    const finding = findings.get(mailboxId)!;
    const mailbox = await db
      .selectFrom('mailboxes')
      .select(['id', 'email', 'name', 'workspace_id'])
      .where('id', '=', mailboxId)
      .executeTakeFirst();
    if (!mailbox) continue;
    await enqueueEvent(db, {
      workspaceId: mailbox.workspace_id,
      type: 'mailbox.receiver_filtering',
      at,
      dedupeKey: `mailbox.receiver_filtering:${mailboxId}:${since}`,
      data: {
        mailbox: { id: mailbox.id, email: mailbox.email, name: mailbox.name },
        junkedSenders: finding.junkedSenders,
        senders: finding.senders,
        message: receiverFilteringMessage(finding.junkedSenders, finding.senders),
      },
    });
  }
  const changed = new Set([...change.started.map((started) => started.mailboxId), ...change.ended]);
  if (changed.size > 0) {
    const senders = tallies.filter((tally) => changed.has(tally.receiverId)).map((tally) => tally.senderId);
    await markJudgementsDue(db, senders, at);
  }
  return { filtering: findings.size, started: change.started.length, ended: change.ended.length };
}
