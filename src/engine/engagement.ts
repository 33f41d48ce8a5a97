/*
 * The reader's habits on a message it found: the plan drawn once at finding, then its steps one
 * at a time as each falls due (rescue, promote, open, flag, reply, file), and the reply it plans.
 */
import type { Kysely } from 'kysely';
import { utcDay } from '../calendar.js';
import { inTransaction } from '../db/database.js';
import { newId } from '../db/ids.js';
import type { Database } from '../db/schema.js';
import { incrementDaily, listRecordedTypes, recordInteraction } from '../interactions/interactions.repository.js';
import type { InteractionType } from '../interactions/interactions.schemas.js';
import { WARMUP_FOLDER, type FoundMessage, type ImapSession } from '../mail/imap.js';
import { answersAutomatically } from '../mailboxes/auto-reply-rule.js';
import type { WarmupSettings } from '../mailboxes/mailboxes.schemas.js';
import { parseWarmupSettings } from '../mailboxes/warmup-settings.js';
import { clientProfileOf } from './client-profile.js';
import { intoWakingHours, isWakingHours, MAX_TURNS, planEngagement } from './habits.js';
import { findPlanTarget } from './mailbox-engine-state.repository.js';
import { replyMessageIdFor } from './message-content.js';
import { findAutoReplyAt, threadEndedByPerson } from './owner-mail.repository.js';
import { localDaySpan, nextWindowOpening, REASON_REPLY_FIRST, sendDayOf } from './send-budget.js';
import { inGmailTab, interactionOf, type SessionContext } from './sync-session.js';
import {
  countPlannedOfDay,
  engagementPlanOf,
  expireLastPlannedThread,
  insertPlannedReply,
  loadSendsOfDay,
  markMessageEngaged,
  markMessagePromotion,
  markMessageRescued,
  setEngageAfter,
  hasReplyFrom,
  storeEngagementPlan,
  type EngagementPlan,
  type PendingMessageRow,
} from './warmup-messages.repository.js';

/**
 * What the mailbox does with a message it found, and when: drawn from its own traits once, at
 * finding. With `ignoreSchedule` every step is due at once (the choices are still drawn); with the
 * benchmarks' `rescueOnly` only the rescue and the filing are kept.
 */
export function planFor(
  context: SessionContext,
  row: PendingMessageRow,
  foundAt: Date,
  inSpam: boolean,
): EngagementPlan {
  const { deps, habits, options } = context;
  const plan = planEngagement({
    foundAt,
    inSpam,
    turn: row.turn,
    replyRatePercent: habits.replyRate,
    timeZone: habits.timezone,
    traits: habits.traits,
    random: deps.random,
    atOnce: options.ignoreSchedule,
  });
  return deps.rescueOnly ? { ...plan, openAt: null, flagAt: null, replyAt: null } : plan;
}

/** Mail found before plans were kept is planned at its next step, from now. */
async function planLate(context: SessionContext, row: PendingMessageRow): Promise<EngagementPlan> {
  const plan = planFor(context, row, context.options.now, row.placement === 'spam' || inGmailTab(row.gmail_category));
  await storeEngagementPlan(context.deps.db, row.id, plan);
  return plan;
}

function planSteps(plan: EngagementPlan): Date[] {
  return [plan.rescueAt, plan.openAt, plan.flagAt, plan.replyAt, plan.fileAt].filter((at) => at !== null);
}

export function firstStep(plan: EngagementPlan): Date {
  return new Date(Math.min(...planSteps(plan).map((at) => at.getTime())));
}

/**
 * The reader's habits on one message, one step at a time as each falls due: rescue, open, flag,
 * reply, file. One step per sync (all at once with `ignoreSchedule`); the row then waits for its
 * next step. Every step is recorded as an interaction
 * unique on (mailbox, message, type) after its IMAP action, so a crash repeats an action at most,
 * never a count, and a plan stored with the row makes a restarted worker take the same steps.
 */
export async function engage(context: SessionContext, row: PendingMessageRow, message: FoundMessage): Promise<void> {
  const { deps, mailbox, session, options, summary, habits } = context;
  const now = options.now;
  // a sync after a night of downtime acts in the morning, not at once
  if (!options.ignoreSchedule && !isWakingHours(now, habits.timezone)) {
    await setEngageAfter(deps.db, row.id, intoWakingHours(now, habits.timezone, deps.random));
    return;
  }
  const plan = engagementPlanOf(row) ?? (await planLate(context, row));
  const due = (at: Date | null): boolean => at !== null && (options.ignoreSchedule || at <= now);
  const done = await listRecordedTypes(deps.db, mailbox.id, row.message_id);
  let folder = message.folder;
  let uid = message.uid;

  // Teaching the filter is the point: mail that arrived in spam always goes back to the inbox.
  // Decided by where it arrived, not where it is now: a sync that moved it and then failed before
  // writing that down leaves it in the inbox, and the rescue still has to be counted. Mail put into
  // spam after it was found (no rescue planned) is taken out with the next step.
  const inSpam = row.placement === 'spam' || message.role === 'spam';
  const rescue = async () => {
    if (message.role === 'spam') {
      const movedUid = await session.move(folder, uid, 'INBOX');
      folder = 'INBOX';
      uid = movedUid ?? (await relocate(session, row.message_id, folder)) ?? uid;
    }
    const recorded = await inTransaction(deps.db, async (trx) => {
      await markMessageRescued(trx, row.id, now);
      return recordInteraction(trx, interactionOf(mailbox, row, 'rescued', now));
    });
    if (recorded) summary.rescued += 1;
    await important();
  };
  // Gmail marks what its owner cares about: mail taken out of spam or a tab, and mail answered.
  const important = async () => {
    if (await session.markImportant?.(folder, uid)) summary.important += 1;
  };
  // Gmail's tabs: the nearest IMAP has to dragging the message to Primary, counted only when Gmail
  // shows it left the tab (a fresh X-GM-RAW search); tried once either way. Never a `rescued`
  // interaction: that one is out of spam (rescueRate is over spam). The sender's daily counter moves
  // with `promoted_at`, in one transaction, so a second sync or a crash after the move never counts twice.
  const promote = async () => {
    const category = row.gmail_category;
    const moved =
      message.role === 'inbox' && inGmailTab(category) && session.promote
        ? await session.promote(folder, uid, category)
        : false;
    const counted = await inTransaction(deps.db, async (trx) => {
      if (!(await markMessagePromotion(trx, row.id, now, moved))) return false;
      await incrementDaily(trx, row.sender_mailbox_id, utcDay(now), 'promoted_to_primary');
      return true;
    });
    if (counted) summary.promoted += 1;
    row.rescue_due_at = null;
    await important();
  };
  const open = async () => {
    await session.markSeen(folder, uid);
    if (await record(context, row, 'opened')) summary.opened += 1;
  };
  const flag = async () => {
    await session.flag(folder, uid);
    if (await record(context, row, 'flagged')) summary.flagged += 1;
  };
  const reply = async () => {
    if (await planReply(context, row)) summary.replied += 1;
    await important();
  };
  // A mailbox whose owner answers automatically receives no warmup mail, replies included (looked
  // up only when a reply is planned: most found mail is never answered).
  const replyPlanned = !done.has('replied') && row.turn < MAX_TURNS && plan.replyAt !== null;
  const away = replyPlanned && answersAutomatically(await findAutoReplyAt(deps.db, row.sender_mailbox_id), now);
  // a person replied in this thread: warmup writes nothing more in it, from either side
  const ended = replyPlanned && (await threadEndedByPerson(deps.db, row.thread_id));
  // The steps not taken yet, in order; null: not taken (now).
  const steps: Array<{ at: Date | null; take: () => Promise<void> }> = [
    { at: inSpam && !done.has('rescued') ? (plan.rescueAt ?? firstStep(plan)) : null, take: rescue },
    {
      at: !inSpam && inGmailTab(row.gmail_category) && row.rescue_due_at !== null ? plan.rescueAt : null,
      take: promote,
    },
    { at: done.has('opened') ? null : plan.openAt, take: open },
    { at: done.has('flagged') ? null : plan.flagAt, take: flag },
    { at: replyPlanned && !away && !ended ? plan.replyAt : null, take: reply },
  ];
  for (const [index, step] of steps.entries()) {
    if (!due(step.at)) continue;
    await step.take();
    if (options.ignoreSchedule) continue;
    // One step per sync: steps that fell due together (after downtime, or a flag right after
    // opening) still come apart by a sync interval at least. The next one is due from then on.
    const rest = [...steps.filter((other, i) => i !== index).map((other) => other.at), plan.fileAt];
    const next = Math.min(...rest.filter((at) => at !== null).map((at) => at.getTime()));
    await setEngageAfter(deps.db, row.id, new Date(next));
    return;
  }

  if (!due(plan.fileAt)) {
    const next = planSteps(plan).filter((at) => at > now);
    await setEngageAfter(deps.db, row.id, new Date(Math.min(...next.map((at) => at.getTime()))));
    return;
  }
  if (folder.toLowerCase() !== WARMUP_FOLDER.toLowerCase()) {
    context.warmupPath ??= await session.ensureFolder(WARMUP_FOLDER);
    await session.move(folder, uid, context.warmupPath);
    summary.filed += 1;
  }
  await markMessageEngaged(deps.db, row.id, now);
  row.engaged_at = now.toISOString();
}

/** Where a message went after a move, when the server did not say (no UIDPLUS). */
async function relocate(session: ImapSession, messageId: string, folder: string): Promise<number | undefined> {
  const [found] = await session.findMessages([messageId], { includeFolders: [folder] });
  return found?.uid;
}

async function record(context: SessionContext, row: PendingMessageRow, type: InteractionType): Promise<boolean> {
  const { deps, mailbox, options } = context;
  return inTransaction(deps.db, (trx) => recordInteraction(trx, interactionOf(mailbox, row, type, options.now)));
}

/**
 * Plans the answer as a new `planned` row from this mailbox back to the sender, in the same thread,
 * and records `replied`. The human delay before answering is over (it was the reply step's wait):
 * the reply is wanted now. It goes out inside this mailbox's send window (the next one when the
 * person answers outside it) and counts against that day's budget, before new threads: when the
 * day is already full, its last new thread not sent yet gives way. The reply's Message-ID is
 * derived from the parent's, so doing this twice plans one reply.
 */
async function planReply(context: SessionContext, row: PendingMessageRow): Promise<boolean> {
  const { deps, mailbox, options } = context;
  const now = options.now;
  const settings = parseWarmupSettings(mailbox.warmup);
  const { at: dueAt, day } = options.ignoreSchedule
    ? { at: now, day: sendDayOf(settings, now) }
    : nextWindowOpening(settings, now);
  return inTransaction(deps.db, async (trx) => {
    // Outlook's Message-ID carries the send time; the reply to a parent is planned once (see hasReplyFrom)
    if (await hasReplyFrom(trx, mailbox.id, row.message_id)) return false;
    const messageId = replyMessageIdFor(mailbox.email, row.message_id, clientProfileOf(mailbox).name, dueAt);
    const inserted = await insertPlannedReply(trx, {
      id: newId('msg', now.getTime()),
      message_id: messageId,
      thread_id: row.thread_id,
      sender_mailbox_id: mailbox.id,
      recipient_mailbox_id: row.sender_mailbox_id,
      kind: 'reply',
      turn: row.turn + 1,
      parent_message_id: row.message_id,
      plan_day: day,
      due_at: dueAt.toISOString(),
      status: 'planned',
      created_at: now.toISOString(),
    });
    if (inserted) await makeRoomForReply(trx, mailbox.id, settings, day);
    return recordInteraction(trx, interactionOf(mailbox, row, 'replied', now));
  });
}

/** When a planned day holds more than its budget with a new reply, its last unsent new thread is closed. */
async function makeRoomForReply(
  trx: Kysely<Database>,
  mailboxId: string,
  settings: WarmupSettings,
  day: string,
): Promise<void> {
  const budget = await findPlanTarget(trx, mailboxId, day);
  if (budget === undefined) return; // not planned yet: the planner counts the reply in
  const span = localDaySpan(settings, day);
  const { sent } = await loadSendsOfDay(trx, mailboxId, span, span.start);
  const planned = await countPlannedOfDay(trx, mailboxId, day);
  if (sent + planned > budget) await expireLastPlannedThread(trx, mailboxId, day, REASON_REPLY_FIRST);
}
