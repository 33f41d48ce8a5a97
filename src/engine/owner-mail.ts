/*
 * Hands off the owner's mail. The reader touches only mail it identified as warmup mail: its own
 * Message-IDs (reader.ts), and what answers them — a person's reply to a warmup thread, or an
 * automatic reply (out of office, vacation) — which is filed into `Warmup` too, never counted as
 * placement or a reply, and never answered. A mailbox that answers automatically receives no
 * warmup mail for a while (mailboxes/auto-reply-rule.ts). The Warmup folder keeps warmup mail for
 * `warmupFolderRetentionDays`, then removes what it identifies as warmup mail, and nothing else.
 *
 * No step here ever expunges a message it did not identify: removing goes through
 * ImapSession.remove/move, which use UID EXPUNGE of our UIDs or leave our copy \Deleted.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import { THREAD_DATE_TOLERANCE_MS, WARMUP_FOLDER, type FoundAnswer, type ImapSession } from '../mail/imap.js';
import { answersAutomatically, receivesAgainAt } from '../mailboxes/auto-reply-rule.js';
import {
  claimWarmupFolderPrune,
  knownMessageIds,
  knownReplies,
  type KnownReply,
  listSentSince,
  noteAnswersScanned,
  recordAutoReply,
} from './owner-mail.repository.js';

/** Answers are looked for to the mailbox's mail sent this recently. */
export const ANSWER_WINDOW_MS = 7 * 24 * 60 * 60_000;
/**
 * Answers are looked for this often while the mailbox has recent mail that could be answered:
 * each look is a few searches per folder, too many for every sync, and a reply waiting an hour
 * in the owner's inbox does no harm.
 */
export const ANSWER_SCAN_INTERVAL_MS = 60 * 60_000;
/** At most this many of its sent messages are looked for answers per sync. */
const ANSWER_IDS_LIMIT = 500;
/** At most this many answers are downloaded per folder and sync (a bounded start of each). */
const ANSWERS_PER_FOLDER = 50;
/** At most this many old messages of the Warmup folder are looked at per prune. */
const PRUNE_BATCH = 500;
const DAY_MS = 24 * 60 * 60_000;

export interface OwnerMailContext {
  db: Kysely<Database>;
  session: ImapSession;
  mailboxId: string;
  now: Date;
  log: Logger;
  /** The Warmup folder's path, once made sure of in this session. */
  warmupPath(): Promise<string>;
}

export interface AnswerSummary {
  /** Replies a person wrote to warmup threads, filed into Warmup. */
  humanReplies: number;
  /** Automatic replies to warmup mail, filed into Warmup. */
  autoReplies: number;
}

/**
 * Whether answers are due to be looked for. Never before the mailbox sent anything: the first look
 * comes an interval after its first recent mail was seen (`answersScannedAt` starts that clock).
 */
export function answerScanDue(answersScannedAt: string | null, now: Date): boolean {
  return (
    answersScannedAt !== null && answersScannedAt <= new Date(now.getTime() - ANSWER_SCAN_INTERVAL_MS).toISOString()
  );
}

/** The mailbox's recent mail that a person's or an automatic reply could answer. */
export async function answerCandidates(
  db: Kysely<Database>,
  mailboxId: string,
  now: Date,
): Promise<Array<{ message_id: string; recipient_mailbox_id: string }>> {
  return listSentSince(db, mailboxId, new Date(now.getTime() - ANSWER_WINDOW_MS), ANSWER_IDS_LIMIT);
}

/**
 * Files every answer to the mailbox's recent warmup mail into Warmup, and notes the mailboxes
 * whose owners answer automatically. The engine's own replies (known Message-IDs) are the
 * reader's, not this step's.
 */
export async function fileAnswers(
  context: OwnerMailContext,
  sent: ReadonlyArray<{ message_id: string; recipient_mailbox_id: string }>,
): Promise<AnswerSummary> {
  const { db, session, now, log } = context;
  const summary: AnswerSummary = { humanReplies: 0, autoReplies: 0 };
  if (sent.length === 0) return summary;
  await noteAnswersScanned(db, context.mailboxId, now);
  const recipientOf = new Map(sent.map((row) => [row.message_id, row.recipient_mailbox_id]));
  // IMAP SINCE is a calendar day on the server's clock; a day's margin keeps zone differences out.
  const since = new Date(now.getTime() - ANSWER_WINDOW_MS - DAY_MS);
  const answers = await session.findAnswers([...recipientOf.keys()], since, ANSWERS_PER_FOLDER);
  if (answers.length === 0) return summary;
  const ours = await knownMessageIds(
    db,
    answers.flatMap((a) => [a.messageId, ...a.originalMessageIds]),
  );
  const ourReplies = await knownReplies(
    db,
    answers.map((a) => ({ parentMessageId: a.answers[0], from: a.from })),
  );
  for (const answer of answers) {
    // warmup mail itself, the reader's: by its Message-ID, the one a provider kept when it renamed
    // it, or (renamed with nothing kept) as the warmup reply to that message from that sender, sent then
    if ([answer.messageId, ...answer.originalMessageIds].some((id) => id && ours.has(id))) continue;
    if (isOurReply(answer, ourReplies)) continue;
    try {
      await session.move(answer.folder, answer.uid, await context.warmupPath());
    } catch (err) {
      log.warn({ err }, 'could not file an answer to warmup mail');
      continue;
    }
    if (answer.automatic === null) {
      summary.humanReplies += 1;
      continue;
    }
    summary.autoReplies += 1;
    const recipient = recipientOf.get(answer.answers[0]);
    if (recipient === undefined || recipient === context.mailboxId) continue;
    const noted = await recordAutoReply(db, recipient, now);
    if (noted && !answersAutomatically(noted.previous, now)) {
      log.info(
        { answeringMailboxId: recipient, sign: answer.automatic, until: receivesAgainAt(now.toISOString()) },
        'a mailbox answers warmup mail automatically: it receives no warmup mail until its automatic replies stop',
      );
    }
  }
  return summary;
}

/** Whether an answer is one of our warmup replies, renamed by the sender's provider (see ThreadHint). */
function isOurReply(answer: FoundAnswer, replies: KnownReply[]): boolean {
  if (answer.date === null) return false;
  const at = answer.date.getTime();
  return replies.some(
    (reply) =>
      reply.parentMessageId === answer.answers[0] &&
      reply.fromEmail.toLowerCase() === answer.from.toLowerCase() &&
      reply.sentAt !== null &&
      Math.abs(new Date(reply.sentAt).getTime() - at) <= THREAD_DATE_TOLERANCE_MS,
  );
}

/**
 * Once a day (the first time a day after the mailbox's first sync): removes from the Warmup folder the warmup mail older than `retentionDays` — mail
 * whose Message-ID is warmup mail or whose In-Reply-To/References name warmup mail. Anything
 * else in the folder (the owner put it there) stays.
 */
export async function pruneWarmupFolder(
  context: OwnerMailContext,
  lastPrunedAt: string | null,
  retentionDays: number,
): Promise<number> {
  const { db, session, mailboxId, now, log } = context;
  if (lastPrunedAt !== null && lastPrunedAt > new Date(now.getTime() - DAY_MS).toISOString()) return 0;
  if (!(await claimWarmupFolderPrune(db, mailboxId, new Date(now.getTime() - DAY_MS), now))) return 0;
  // A mailbox's first sync starts the daily clock instead: its Warmup folder holds nothing old yet
  // (or the owner's), and the first sync of a new mailbox has enough to do.
  if (lastPrunedAt === null) return 0;
  const old = await session.findOlderThan(WARMUP_FOLDER, new Date(now.getTime() - retentionDays * DAY_MS), PRUNE_BATCH);
  if (old.length === 0) return 0;
  const known = await knownMessageIds(
    db,
    old.flatMap((m) => [m.messageId, ...m.answers]),
  );
  const warmup = old.filter((m) => known.has(m.messageId) || m.answers.some((id) => known.has(id)));
  if (warmup.length === 0) return 0;
  const { expunged } = await session.remove(
    await context.warmupPath(),
    warmup.map((m) => m.uid),
  );
  log.info(
    { removed: warmup.length, expunged, retentionDays },
    expunged
      ? 'removed old warmup mail from the Warmup folder'
      : 'marked old warmup mail in the Warmup folder \\Deleted (the server has no UIDPLUS: nothing is expunged)',
  );
  return warmup.length;
}
