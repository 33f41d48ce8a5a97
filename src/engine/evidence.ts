/*
 * Whose word counts. A sender's mail is judged by its receivers: where they found it (spam or
 * not), whether they found it at all (lost), and whether their server refused it (bounced). A
 * receiver in another workspace is run by someone else, who can file everything into spam or
 * delete it on purpose. So evidence is weighed by the workspace it comes from:
 *
 * - from the sender's own workspace: it counts in full;
 * - from other workspaces, a problem (spam, lost or bounced, each on its own) counts only when at
 *   least CORROBORATING_WORKSPACES other workspaces, with receivers on at least
 *   CORROBORATING_DOMAINS different domains, each report it at a meaningful rate (REPORTING_RATES);
 *   otherwise those messages are set aside, as if never sent to that workspace. Mail such a
 *   workspace found in the inbox still counts: praise costs the victim nothing.
 *
 * The health guard judges only this trusted evidence. Reputation is scored on it too, and all the
 * evidence may move the score by at most FOREIGN_EVIDENCE_BOUND points either way, so the owner
 * still sees a hint of what a lone workspace reported without it deciding anything.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { DeliveryCounts } from '../interactions/interactions.repository.js';
import { tallyByReceiver } from './warmup-messages.repository.js';

/** Points by which evidence that did not count may still move a reputation score, either way. */
export const FOREIGN_EVIDENCE_BOUND = 5;
/** Foreign workspaces that must each report a problem before it counts. */
export const CORROBORATING_WORKSPACES = 3;
/** Distinct receiving domains among those workspaces' reports. */
export const CORROBORATING_DOMAINS = 3;

export type Problem = 'spam' | 'lost' | 'bounced';
const PROBLEMS: readonly Problem[] = ['spam', 'lost', 'bounced'];

/**
 * The rate at which one workspace "reports" a problem: half the rate at which reputation takes its
 * whole penalty (spam over the mail found, lost and bounced over the mail sent).
 */
export const REPORTING_RATES: Readonly<Record<Problem, number>> = { spam: 0.2, lost: 0.1, bounced: 0.05 };

/** A sender's mail as the receivers of one workspace on one domain saw it. */
export interface ReceiverEvidence extends DeliveryCounts {
  workspaceId: string;
  /** Lower-case domain of the receiving mailboxes. */
  domain: string;
}

export interface WeighedEvidence {
  /** Everything, whoever reported it: what the statistics show. */
  all: DeliveryCounts;
  /** What the health guard and reputation go by. */
  trusted: DeliveryCounts;
  /** The problems that other workspaces corroborated (and so count in `trusted`). */
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

/** Whether enough independent workspaces (and domains) report the problem for it to count. */
function isCorroborated(foreign: readonly ReceiverEvidence[], problem: Problem): boolean {
  const byWorkspace = new Map<string, { counts: DeliveryCounts; domains: Set<string> }>();
  for (const entry of foreign) {
    const workspace = byWorkspace.get(entry.workspaceId) ?? { counts: { ...NO_EVIDENCE }, domains: new Set() };
    workspace.counts = add(workspace.counts, entry);
    if (entry[problem] > 0) workspace.domains.add(entry.domain);
    byWorkspace.set(entry.workspaceId, workspace);
  }
  const reporting = [...byWorkspace.values()].filter(
    (w) => w.counts[problem] > 0 && problemRate(w.counts, problem) >= REPORTING_RATES[problem],
  );
  const domains = new Set(reporting.flatMap((w) => [...w.domains]));
  return reporting.length >= CORROBORATING_WORKSPACES && domains.size >= CORROBORATING_DOMAINS;
}

/** Splits a sender's evidence into what counts and what is set aside (see the rule above). */
export function weighEvidence(senderWorkspaceId: string, evidence: readonly ReceiverEvidence[]): WeighedEvidence {
  let all: DeliveryCounts = { ...NO_EVIDENCE };
  let own: DeliveryCounts = { ...NO_EVIDENCE };
  let foreignTotal: DeliveryCounts = { ...NO_EVIDENCE };
  const foreign: ReceiverEvidence[] = [];
  for (const entry of evidence) {
    all = add(all, entry);
    if (entry.workspaceId === senderWorkspaceId) {
      own = add(own, entry);
    } else {
      foreign.push(entry);
      foreignTotal = add(foreignTotal, entry);
    }
  }
  const corroborated = PROBLEMS.filter((problem) => isCorroborated(foreign, problem));
  const counts = (problem: Problem) => (corroborated.includes(problem) ? foreignTotal[problem] : 0);
  const setAside = (problem: Problem) => foreignTotal[problem] - counts(problem);
  const trusted = add(own, {
    // a message set aside is as if it had not been sent to that workspace at all
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

/** These senders' evidence over their mail sent since `since`, weighed; a sender with none is absent. */
export async function loadWeighedEvidence(
  db: Kysely<Database>,
  since: Date,
  senderIds: readonly string[],
): Promise<Map<string, WeighedEvidence>> {
  const bySender = new Map<string, { workspaceId: string; receivers: ReceiverEvidence[] }>();
  for (const tally of await tallyByReceiver(db, since, senderIds)) {
    const sender = bySender.get(tally.senderMailboxId) ?? { workspaceId: tally.senderWorkspaceId, receivers: [] };
    sender.receivers.push({
      workspaceId: tally.receiverWorkspaceId,
      domain: tally.receiverEmail.slice(tally.receiverEmail.lastIndexOf('@') + 1),
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
