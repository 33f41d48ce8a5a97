/*
 * Hands off the owner's mail. The reader touches only mail it identified as warmup mail: its own
 * Message-IDs (reader.ts), and what answers them — a person's reply to a warmup thread, or an
 * automatic reply (out of office, vacation) — never counted as placement or a reply, and never
 * answered. An automatic reply is filed into `Warmup`. A person's reply is never lost: it stays
 * unread, is filed into `Warmup` or left where it is (the workspace's `humanReplies`), is recorded
 * once with what they wrote for the owner to read, ends its thread (nothing more is written in it)
 * and raises `mailbox.human_reply`. A mailbox that answers automatically receives no
 * warmup mail for a while (mailboxes/auto-reply-rule.ts). The Warmup folder keeps warmup mail for
 * `warmupFolderRetentionDays`, then removes what it identifies as warmup mail, and nothing else.
 *
 * No step here ever expunges a message it did not identify: removing goes through
 * ImapSession.remove/move, which use UID EXPUNGE of our UIDs or leave our copy \Deleted.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import {
  THREAD_DATE_TOLERANCE_MS,
  WARMUP_FOLDER,
  type FolderMessage,
  type FoundAnswer,
  type ImapSession,
} from '../mail/imap.js';
import { inTransaction } from '../db/database.js';
import { newId } from '../db/ids.js';
import { answersAutomatically, receivesAgainAt } from '../mailboxes/auto-reply-rule.js';
import { enqueueEvent } from '../webhooks/webhooks.repository.js';
import {
  claimWarmupFolderPrune,
  closePlannedInThread,
  humanReplyChoice,
  insertHumanReply,
  recordedReplyKeys,
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

/** Why what was still planned in a thread was closed. */
export const REASON_PERSON_REPLIED = 'a person replied in this thread: warmup writes nothing more in it';

type SentRow = { message_id: string; recipient_mailbox_id: string; thread_id: string };

export interface AnswerSummary {
  /** Replies a person wrote to warmup threads, recorded now (filed into Warmup or left, as the workspace chooses). */
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
export async function answerCandidates(db: Kysely<Database>, mailboxId: string, now: Date): Promise<SentRow[]> {
  return listSentSince(db, mailboxId, new Date(now.getTime() - ANSWER_WINDOW_MS), ANSWER_IDS_LIMIT);
}

/**
 * Files every answer to the mailbox's recent warmup mail into Warmup, and notes the mailboxes
 * whose owners answer automatically. The engine's own replies (known Message-IDs) are the
 * reader's, not this step's.
 */
export async function fileAnswers(context: OwnerMailContext, sent: ReadonlyArray<SentRow>): Promise<AnswerSummary> {
  const { db, session, now, log } = context;
  const summary: AnswerSummary = { humanReplies: 0, autoReplies: 0 };
  if (sent.length === 0) return summary;
  await noteAnswersScanned(db, context.mailboxId, now);
  const recipientOf = new Map(sent.map((row) => [row.message_id, row.recipient_mailbox_id]));
  const threadOf = new Map(sent.map((row) => [row.message_id, row.thread_id]));
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
  const recorded = await recordedReplyKeys(
    db,
    context.mailboxId,
    answers.filter((a) => a.automatic === null).map(replyKey),
  );
  const choice = await humanReplyChoice(db, context.mailboxId);
  for (const answer of answers) {
    // warmup mail itself, the reader's: by its Message-ID, the one a provider kept when it renamed
    // it, or (renamed with nothing kept) as the warmup reply to that message from that sender, sent then
    if ([answer.messageId, ...answer.originalMessageIds].some((id) => id && ours.has(id))) continue;
    if (isOurReply(answer, ourReplies)) continue;
    if (answer.automatic === null) {
      // left in the inbox on an earlier scan: recorded then, left alone now
      if (recorded.has(replyKey(answer)) || !choice) continue;
      const kept = await keepHumanReply(context, answer, choice, {
        threadId: threadOf.get(answer.answers[0]) ?? null,
        poolMailboxId: recipientOf.get(answer.answers[0]) ?? null,
      });
      if (kept) summary.humanReplies += 1;
      continue;
    }
    try {
      await session.move(answer.folder, answer.uid, await context.warmupPath());
    } catch (err) {
      log.warn({ err }, 'could not file an answer to warmup mail');
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

/**
 * What identifies a person's reply among the mailbox's: its Message-ID, or (it has none) its
 * sender, date and subject, which a rescan finds the same.
 */
function replyKey(answer: FoundAnswer): string {
  return answer.messageId || `no-message-id:${answer.from}:${answer.date?.toISOString() ?? ''}:${answer.subject}`;
}

/**
 * Keeps a person's reply: filed into Warmup (unread: MOVE keeps its flags) or left where it is, as
 * the workspace chooses; recorded once with what they wrote; its thread closed; the event queued.
 * The record, the closing and the event commit together, so a second worker or scan adds none.
 */
async function keepHumanReply(
  context: OwnerMailContext,
  answer: FoundAnswer,
  choice: NonNullable<Awaited<ReturnType<typeof humanReplyChoice>>>,
  thread: { threadId: string | null; poolMailboxId: string | null },
): Promise<boolean> {
  const { db, session, now, log } = context;
  let folder = answer.folder;
  if (choice.leave === 'file') {
    try {
      const warmupPath = await context.warmupPath();
      await session.move(answer.folder, answer.uid, warmupPath);
      folder = warmupPath;
    } catch (err) {
      // recorded where it is all the same: what a person wrote is never lost
      log.warn({ err }, "could not file a person's reply to warmup mail");
    }
  }
  const row = {
    id: newId('rpl', now.getTime()),
    workspace_id: choice.workspaceId,
    mailbox_id: context.mailboxId,
    reply_key: replyKey(answer),
    answers_message_id: answer.answers[0],
    thread_id: thread.threadId,
    pool_mailbox_id: thread.poolMailboxId,
    from_name: answer.fromName,
    from_email: answer.from,
    subject: answer.subject,
    written_at: answer.date?.toISOString() ?? null,
    excerpt: answer.excerpt,
    folder,
    found_at: now.toISOString(),
  };
  return inTransaction(db, async (trx) => {
    if (!(await insertHumanReply(trx, row))) return false;
    const closed = row.thread_id === null ? 0 : await closePlannedInThread(trx, row.thread_id, REASON_PERSON_REPLIED);
    await enqueueEvent(trx, {
      workspaceId: choice.workspaceId,
      type: 'mailbox.human_reply',
      at: now,
      dedupeKey: `mailbox.human_reply:${row.id}`,
      data: {
        mailbox: choice.mailbox,
        reply: {
          id: row.id,
          from: { name: row.from_name, email: row.from_email },
          subject: row.subject,
          date: row.written_at,
          excerpt: row.excerpt,
          folder: row.folder,
          answersMessageId: row.answers_message_id,
        },
      },
    });
    log.info(
      { replyId: row.id, folder: row.folder, closedInThread: closed },
      "a person replied to warmup mail: kept unread for the mailbox's owner, and its thread ended",
    );
    return true;
  });
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
/**
 * What pruning may delete: warmup mail itself (its own Message-ID, or the one a provider renamed, is
 * ours), or an automatic reply to it. A message that only answers warmup mail and carries no automatic
 * sign may be a person's, recorded or not (one without a Message-ID has no key to find its record by):
 * it stays, however old.
 */
function isWarmupOrItsAutoReply(message: FolderMessage, known: ReadonlySet<string>): boolean {
  if (known.has(message.messageId) || message.originalMessageIds.some((id) => known.has(id))) return true;
  return message.automatic !== null && message.answers.some((id) => known.has(id));
}

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
    old.flatMap((m) => [m.messageId, ...m.originalMessageIds, ...m.answers]),
  );
  // a person's reply stays for its owner, however old
  const people = await recordedReplyKeys(
    db,
    mailboxId,
    old.map((m) => m.messageId),
  );
  const warmup = old.filter((m) => !people.has(m.messageId) && isWarmupOrItsAutoReply(m, known));
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
