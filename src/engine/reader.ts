/*
 * The reader: per mailbox, under its sync claim (at most one IMAP connection per mailbox at a time,
 * whatever the number of workers), log in, find the warmup mail addressed to it by
 * Message-ID, and act like a person would: take it out of spam, read it, sometimes flag it,
 * sometimes answer, then file it into `Warmup`. It also finds bounces of the mailbox's own mail and
 * gives up on mail never found. Answers to its warmup mail (a person's, an automatic reply) and the
 * Warmup folder's retention are owner-mail.ts's: nothing else of the owner's mail is touched.
 *
 * Every step records its interaction only after the IMAP action succeeded, and interactions are
 * unique on (mailbox, message, type): a crash in the middle repeats the IMAP action at most, never
 * a count.
 */
import { utcDay } from '../calendar.js';
import { nowSince } from '../clock.js';
import { inTransaction } from '../db/database.js';
import type { MailboxRow, WarmupMessageRow } from '../db/schema.js';
import { incrementDaily, listRecordedTypes, recordInteraction } from '../interactions/interactions.repository.js';
import type { Placement } from '../interactions/interactions.schemas.js';
import { classifyMailFailure, formatSeconds, isMailConnectionError, MailConnectionError } from '../mail/errors.js';
import { applyMailboxEvent } from '../mailboxes/mailbox-state.js';
import { noteSenderEvidence } from './sender-evidence.js';
import { openImapSession, WARMUP_FOLDER, type FoundMessage, type ImapSession, type ThreadHint } from '../mail/imap.js';
import type { Receiver } from '../verdicts/receiver-verdict.js';
import { recordReceiverVerdict } from '../verdicts/record-verdict.js';
import { clientProfileOf } from './client-profile.js';
import { forEachClaimed } from '../jobs/concurrency.js';
import {
  claimSyncs,
  findMailbox,
  findMailboxEmail,
  finishSyncClaim,
  markJudgementsDue,
  recordSyncTime,
  renewSyncClaim,
} from './mailbox-engine-state.repository.js';
import {
  ANSWER_SCAN_INTERVAL_MS,
  answerCandidates,
  answerScanDue,
  fileAnswers,
  pruneWarmupFolder,
  type OwnerMailContext,
} from './owner-mail.js';
import { loadScanMarks, noteAnswersScanned, saveScanMarks } from './owner-mail.repository.js';
import { noteImapAddress } from './receiver-trust.repository.js';
import {
  engagementPlanColumns,
  listPendingForRecipient,
  listRecentlyEngagedForRecipient,
  listUnfoundSentBy,
  findNextEngageAfter,
  markMessageFound,
  markSentMessageBounced,
  markUnfoundMessagesLost,
  type PendingMessageRow,
} from './warmup-messages.repository.js';
import { engage, firstStep, planFor } from './engagement.js';
import {
  habitsOf,
  inGmailTab,
  interactionOf,
  type SessionContext,
  type SyncDeps,
  type SyncOptions,
  type SyncSummary,
} from './sync-session.js';

// The sync's types are sync-session.ts's; named here too for the reader's importers.
export type { SyncDeps, SyncOptions, SyncSummary };

/** Messages handled between two renewals of the sync claim. */
const LEASE_RENEW_EVERY = 50;
/** Mailboxes synced at the same time (lanes), each over its own connection. */
const SYNC_CONCURRENCY = 4;
/** At most this many unfinished messages are looked up per mailbox and sync. */
const PENDING_LIMIT = 500;
/** A healthy mailbox is read every few minutes, not on every scheduler tick: providers cap logins. */
export const SYNC_INTERVAL_MS = 4 * 60_000;
/** A mailbox mail was sent to is due a sync this long after the send (delivery takes a moment). */
export const SYNC_AFTER_SEND_MS = 60_000;
/**
 * A mailbox that expects nothing (no mail on its way to it or waiting to be read, none of its own
 * waiting to be found or to bounce, no answers to look for) is still checked this often. Everything
 * the reader acts on is known to the database first (a send pulls its recipient's due time; its own
 * recent mail schedules the hourly look for answers and auto-replies; unfound mail the look for
 * bounces every few minutes), so this is only the bound for what the engine did not note (a worker
 * that died between two writes).
 */
export const IDLE_CHECK_MS = 3 * 60 * 60_000;
/** Mail not found this long after sending is lost. */
export const LOST_AFTER_MS = 48 * 60 * 60_000;
/** A found message not acted on within this time (it vanished) is no longer looked for. */
const ENGAGE_GIVE_UP_MS = 7 * 24 * 60 * 60_000;
/** Second copies of mail already handled are looked for this long after it was handled. */
const STRAY_COPY_WINDOW_MS = 2 * 24 * 60 * 60_000;
/** Bounces are looked for among the mailbox's mail sent this recently. */
const BOUNCE_WINDOW_MS = 4 * 24 * 60 * 60_000;

/**
 * Syncs the mailboxes that are due on SYNC_CONCURRENCY lanes, each lane claiming its next mailbox as
 * soon as it finished one (claimSyncs: one statement per claim, FOR UPDATE SKIP LOCKED on
 * PostgreSQL), so a slow mailbox holds up its own lane only, not the others'. Each mailbox is then
 * given back with its next due time. Mailboxes that expect nothing are not due, so they cost this
 * call nothing. With `ignoreSchedule` every active mailbox not held by another worker is synced
 * once, in id order.
 */
export async function syncMailboxes(deps: SyncDeps, options: SyncOptions): Promise<SyncSummary> {
  const summary: SyncSummary = {
    synced: 0,
    skipped: 0,
    failed: 0,
    received: 0,
    rescued: 0,
    promoted: 0,
    important: 0,
    opened: 0,
    flagged: 0,
    replied: 0,
    filed: 0,
    bounced: 0,
    lost: 0,
    humanReplies: 0,
    autoReplies: 0,
    pruned: 0,
    mailboxErrors: [],
  };
  const now = options.now;
  summary.lost = await markLostMessages(deps, now);

  // A claim runs from the moment it is taken, not from the call's start: a call through many due
  // mailboxes runs for minutes, and a claim dated from its start would have run out when its last
  // mailboxes were claimed, free for a second worker to open a second session to them.
  const claimedUntil = new Map<string, Date>();
  // ignoreSchedule: every active mailbox once, in id order; claims run one at a time, so the
  // cursor only moves forward and no mailbox is skipped or synced twice by two lanes
  let after = options.ignoreSchedule ? '' : undefined;
  const claim = async (limit: number): Promise<string[]> => {
    const claimedAt = nowSince(deps.clock, now);
    const until = new Date(claimedAt.getTime() + deps.settings.leaseMs);
    const ids = await claimSyncs(deps.db, {
      dialect: deps.dialect,
      owner: deps.workerId,
      now: claimedAt,
      until,
      limit,
      everyActiveAfter: after,
    });
    for (const id of ids) claimedUntil.set(id, until);
    if (after !== undefined && ids.length > 0) after = ids[ids.length - 1];
    return ids;
  };
  await forEachClaimed(
    SYNC_CONCURRENCY,
    claim,
    async (id) => {
      // the time it expects mail next; by default (a bug or a database hiccup) a retry after the interval
      let nextDueAt = new Date(now.getTime() + SYNC_INTERVAL_MS);
      try {
        if (options.signal?.aborted) nextDueAt = now;
        // dated when the lane takes it up, not at the call's start: what it finds and does is dated then
        else nextDueAt = await syncMailbox(deps, id, { ...options, now: nowSince(deps.clock, now) }, summary);
      } catch (err) {
        // a bug or a database hiccup in one mailbox must not stop the others
        deps.logger.error({ err, mailboxId: id }, 'mailbox sync failed');
        summary.failed += 1;
      } finally {
        await finishSyncClaim(deps.db, id, deps.workerId, { claimedUntil: claimedUntil.get(id)!, nextDueAt });
        claimedUntil.delete(id);
      }
    },
    () => options.signal?.aborted === true,
  );
  return summary;
}

async function syncMailbox(
  deps: SyncDeps,
  mailboxId: string,
  options: SyncOptions,
  summary: SyncSummary,
): Promise<Date> {
  const { now } = options;
  const mailbox = await findMailbox(deps.db, mailboxId);
  if (!mailbox || mailbox.status !== 'active') {
    // paused or stopped meanwhile: resuming makes it due again (mailbox-state.ts)
    summary.skipped += 1;
    return new Date(now.getTime() + IDLE_CHECK_MS);
  }
  const log = deps.logger.child({ mailboxId });

  const pending = await listPendingForRecipient(
    deps.db,
    mailboxId,
    new Date(now.getTime() - ENGAGE_GIVE_UP_MS),
    PENDING_LIMIT,
    options.ignoreSchedule ? undefined : now,
  );
  const ownSent = await listUnfoundSentBy(
    deps.db,
    mailboxId,
    new Date(now.getTime() - BOUNCE_WINDOW_MS),
    PENDING_LIMIT,
  );

  // its own recent mail, which a person's or an automatic reply may answer
  const answerable = await answerCandidates(deps.db, mailboxId, now);

  const answersDue = answerable.length > 0 && answerScanDue(mailbox.answers_scanned_at, now);
  // its first recent mail starts the clock of the hourly look for answers
  if (answerable.length > 0 && mailbox.answers_scanned_at === null) await noteAnswersScanned(deps.db, mailboxId, now);

  if (pending.length > 0 || ownSent.length > 0 || answersDue) {
    let session: ImapSession | null = null;
    let server: { host: string; port: number } = { host: '', port: 0 };
    // The whole sync has a deadline: past it the session is dropped like at a stop, and the
    // mailbox's own step fails (a temporary failure, retried after a backoff); the cycle goes on.
    const deadline = AbortSignal.timeout(deps.settings.syncDeadlineMs);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    const mailboxOptions: SyncOptions = { ...options, signal };
    try {
      const { imap } = await deps.mailboxes.getCredentials(mailboxId);
      server = { host: imap.host, port: imap.port };
      session = await (deps.imap ?? openImapSession)(imap, {
        timeoutMs: deps.settings.imapTimeoutMs,
        signal,
        // the owner's mail program, as its own logins would name it
        clientId: clientProfileOf(mailbox).imapId,
      });
      // the server it actually lives on, for the pool's trust rule (evidence.ts)
      const address = session.serverAddress?.();
      if (address !== undefined) await noteImapAddress(deps.db, mailboxId, address);
      const context: SessionContext = {
        deps,
        mailbox,
        habits: habitsOf(mailbox),
        session,
        options: mailboxOptions,
        summary,
        log,
        warmupPath: null,
      };
      if (pending.length > 0) await readMail(context, pending);
      if (ownSent.length > 0) await findBounces(context, ownSent);
      const ownerMail: OwnerMailContext = {
        db: deps.db,
        session,
        mailboxId,
        now,
        log,
        warmupPath: async () => (context.warmupPath ??= await context.session.ensureFolder(WARMUP_FOLDER)),
      };
      if (answersDue && !signal.aborted) {
        const answers = await fileAnswers(ownerMail, answerable);
        summary.humanReplies += answers.humanReplies;
        summary.autoReplies += answers.autoReplies;
      }
      if (!signal.aborted) {
        // awaited first: `summary.pruned += await …` would read the sum before the wait, and mailboxes
        // synced side by side would overwrite each other's count
        const pruned = await pruneWarmupFolder(
          ownerMail,
          mailbox.warmup_folder_pruned_at,
          deps.settings.warmupFolderRetentionDays,
        );
        summary.pruned += pruned;
      }
      // an interrupted sync is not a finished one: the next worker reads the mailbox again
      if (options.signal?.aborted) return now;
      if (deadline.aborted) throw syncDeadlineError(server, deps.settings.syncDeadlineMs);
    } catch (caught) {
      // stopping is nobody's failure: the mailbox is read again by the next worker, as it was
      if (options.signal?.aborted) return now;
      const err = deadline.aborted ? syncDeadlineError(server, deps.settings.syncDeadlineMs) : caught;
      if (!isMailConnectionError(err)) throw err;
      log.warn({ err, class: classifyMailFailure(err) }, 'IMAP sync failed');
      summary.failed += 1;
      const applied = await applyMailboxEvent(
        deps.db,
        mailboxId,
        { type: 'sync-failed', error: err, at: now, random: deps.random },
        { at: now },
      );
      if (applied?.stopped) summary.mailboxErrors.push(mailboxId);
      // due again when its backoff ends
      const retryAt = applied?.row.next_sync_at;
      return retryAt ? new Date(retryAt) : new Date(now.getTime() + SYNC_INTERVAL_MS);
    } finally {
      await session?.close();
    }
    // What it found may change its senders' evidence (placement), and what bounced its own:
    // reputation and the health guard judge them again in this cycle.
    await markJudgementsDue(
      deps.db,
      [mailboxId, ...pending.filter((r) => !r.found_at).map((r) => r.sender_mailbox_id)],
      now,
    );
  }
  await recordSyncTime(deps.db, mailboxId, now);
  await applyMailboxEvent(
    deps.db,
    mailboxId,
    { type: 'sync-succeeded', nextSyncAt: new Date(now.getTime() + SYNC_INTERVAL_MS) },
    { at: now },
  );
  summary.synced += 1;
  return nextSyncDue(deps, mailbox, now, {
    expecting: pending.length > 0 || ownSent.length > 0,
    answersScannedAt:
      answerable.length === 0
        ? null
        : answersDue
          ? now.toISOString()
          : (mailbox.answers_scanned_at ?? now.toISOString()),
  });
}

/**
 * When the mailbox is due again after a sync: in a few minutes while mail is on its way to it or
 * its own may still bounce; when its next found message is due to be read; when answers to its
 * recent mail are due to be looked for (hourly); otherwise the periodic check. A send to it pulls
 * the time earlier (sender.ts).
 */
async function nextSyncDue(
  deps: SyncDeps,
  mailbox: MailboxRow,
  now: Date,
  state: { expecting: boolean; answersScannedAt: string | null },
): Promise<Date> {
  if (state.expecting) return new Date(now.getTime() + SYNC_INTERVAL_MS);
  let next = now.getTime() + IDLE_CHECK_MS;
  if (state.answersScannedAt !== null) {
    next = Math.min(next, new Date(state.answersScannedAt).getTime() + ANSWER_SCAN_INTERVAL_MS);
  }
  const engageAfter = await findNextEngageAfter(deps.db, mailbox.id, new Date(now.getTime() - ENGAGE_GIVE_UP_MS));
  if (engageAfter !== undefined) next = Math.min(next, new Date(engageAfter).getTime());
  return new Date(Math.max(next, now.getTime() + SYNC_INTERVAL_MS));
}

function syncDeadlineError(server: { host: string; port: number }, deadlineMs: number): MailConnectionError {
  return new MailConnectionError({
    side: 'imap',
    kind: 'timeout',
    message: `IMAP sync with ${server.host}:${server.port} did not finish within ${formatSeconds(deadlineMs)}`,
    host: server.host,
    port: server.port,
    code: 'SYNC_DEADLINE',
  });
}

/**
 * Where the mail was found, as a placement. On Gmail a message in INBOX outside the Primary tab
 * (Promotions, Updates, Social, Forums) counts as `promotions`: not where a person's mail goes;
 * its exact tab is kept with the message (gmail_category).
 */
function placementOf(found: FoundMessage): Placement {
  if (found.folder.toLowerCase() === WARMUP_FOLDER.toLowerCase()) return 'other';
  if (found.role === 'inbox' && inGmailTab(found.category)) return 'promotions';
  switch (found.role) {
    case 'inbox':
    case 'spam':
    case 'promotions':
      return found.role;
    default:
      return 'other';
  }
}

async function readMail(context: SessionContext, pending: PendingMessageRow[]): Promise<void> {
  const { deps, mailbox, session, options } = context;
  const byMessageId = new Map(pending.map((row) => [row.message_id, row]));
  // Mail it already finished with is looked for in the same search: a second copy of it (delivered
  // twice) found outside Warmup is filed like the first.
  const finished = (
    await listRecentlyEngagedForRecipient(
      deps.db,
      mailbox.id,
      new Date(options.now.getTime() - STRAY_COPY_WINDOW_MS),
      PENDING_LIMIT,
    )
  ).filter((id) => !byMessageId.has(id));
  // Warmup is searched too: a message filed there by a sync that crashed before noting it is finished.
  // Finished mail is filed already: only a second copy, where deliveries land, is looked for.
  const found = await session.findMessages([...byMessageId.keys(), ...finished], {
    includeFolders: [WARMUP_FOLDER],
    filedAlready: finished,
    everyCopy: true,
    threads: threadHintsOf(pending),
  });
  const seen = new Set<string>();
  const copies: FoundMessage[] = [];
  let handled = 0;
  for (const message of found) {
    if (options.signal?.aborted) return;
    const row = byMessageId.get(message.messageId);
    const first = !seen.has(message.messageId);
    seen.add(message.messageId);
    if (!row || !first) {
      if (!isWarmupFolder(message.folder)) copies.push(message);
      continue;
    }
    handled += 1;
    if (handled % LEASE_RENEW_EVERY === 0) await renewSyncLease(context);
    try {
      if (!row.found_at) await recordReceived(context, row, message);
      const due =
        options.ignoreSchedule || (row.engage_after !== null && row.engage_after <= options.now.toISOString());
      if (row.engaged_at === null && due) await engage(context, row, message);
    } catch (err) {
      // The server refused something about this one message (the owner moved or deleted it
      // meanwhile): the next sync looks again. A broken connection or login ends the sync.
      if (!isMailConnectionError(err) || err.kind !== 'protocol') throw err;
      context.log.warn({ err, messageId: row.message_id }, 'could not act on a warmup message');
    }
  }
  for (const copy of copies) {
    if (options.signal?.aborted) return;
    // a copy of mail still waiting to be read waits with it
    if (byMessageId.get(copy.messageId)?.engaged_at === null) continue;
    await fileSecondCopy(context, copy);
  }
}

/**
 * Replies may reach the mailbox under a Message-ID their sender's provider gave them, keeping
 * nothing of ours: they are also known by the message they answer, their sender and their Date.
 */
function threadHintsOf(pending: PendingMessageRow[]): ThreadHint[] {
  return pending.flatMap((row) =>
    row.parent_message_id && row.sent_at
      ? [
          {
            messageId: row.message_id,
            parentMessageId: row.parent_message_id,
            from: row.sender_email,
            sentAt: new Date(row.sent_at),
          },
        ]
      : [],
  );
}

function isWarmupFolder(folder: string): boolean {
  return folder.toLowerCase() === WARMUP_FOLDER.toLowerCase();
}

/**
 * A second copy of warmup mail this mailbox already handled (a resend after a lease expired, a
 * relay's retry) is treated like the first — read and flagged as the first was — and filed.
 * Counted once: the first copy's interactions stand.
 */
async function fileSecondCopy(context: SessionContext, copy: FoundMessage): Promise<void> {
  const { deps, mailbox, session, summary, log } = context;
  try {
    const done = await listRecordedTypes(deps.db, mailbox.id, copy.messageId);
    if (done.has('opened') && !copy.seen) await session.markSeen(copy.folder, copy.uid);
    if (done.has('flagged') && !copy.flagged) await session.flag(copy.folder, copy.uid);
    context.warmupPath ??= await session.ensureFolder(WARMUP_FOLDER);
    await session.move(copy.folder, copy.uid, context.warmupPath);
    summary.filed += 1;
  } catch (err) {
    if (!isMailConnectionError(err) || err.kind !== 'protocol') throw err;
    log.warn({ err, messageId: copy.messageId }, 'could not file a second copy of a warmup message');
  }
}

/** A long sync keeps its lease, so no second worker opens another connection to the mailbox meanwhile. */
async function renewSyncLease(context: SessionContext): Promise<void> {
  const { deps, mailbox, options } = context;
  const now = nowSince(deps.clock, options.now);
  await renewSyncClaim(deps.db, mailbox.id, deps.workerId, new Date(now.getTime() + deps.settings.leaseMs));
}

async function recordReceived(context: SessionContext, row: PendingMessageRow, message: FoundMessage): Promise<void> {
  const { deps, mailbox, options } = context;
  const now = options.now;
  const placement = placementOf(message);
  const category = message.role === 'inbox' ? (message.category ?? null) : null;
  // mail in a Gmail tab gets a rescue step too: to Primary, the way a person drags it there
  const plan = planFor(context, row, now, placement === 'spam' || inGmailTab(category));
  const engageAfter = firstStep(plan);
  const recorded = await inTransaction(deps.db, async (trx) => {
    const subject = row.subject === null ? message.subject.slice(0, 300) : undefined;
    if (!(await markMessageFound(trx, row.id, { at: now, placement, engageAfter, plan, category, subject })))
      return false;
    await recordReceiverVerdict(trx, {
      warmupMessageId: row.id,
      senderMailboxId: row.sender_mailbox_id,
      receiver: { ...receiverOf(mailbox), id: mailbox.id, workspaceId: mailbox.workspace_id },
      identifiedBy: message.identifiedBy ?? 'message-id',
      placement,
      foundAt: now,
      headers: message.receiverHeaders ?? [],
    });
    return recordInteraction(trx, interactionOf(mailbox, row, 'received', now, placement));
  });
  row.found_at = now.toISOString();
  row.placement = placement;
  row.gmail_category = category;
  row.engage_after = engageAfter.toISOString();
  Object.assign(row, engagementPlanColumns(plan));
  if (recorded) {
    context.summary.received += 1;
    await noteEvidence(context, row, message);
  }
}

/** The sender's DKIM selector and sending address, from this copy's headers; never fails the sync. */
async function noteEvidence(context: SessionContext, row: PendingMessageRow, message: FoundMessage): Promise<void> {
  try {
    await noteSenderEvidence(
      context.deps.db,
      row.sender_mailbox_id,
      context.mailbox.workspace_id,
      message.deliveryHeaders,
      context.options.now,
    );
  } catch (err) {
    context.log.warn({ err, messageId: row.message_id }, 'could not note what the headers say about the sender');
  }
}

/** The receiving mailbox, as the judge of whose Authentication-Results are its provider's own. */
function receiverOf(mailbox: MailboxRow): Receiver {
  let imapHost = '';
  try {
    const imap = JSON.parse(mailbox.imap) as { host?: unknown };
    if (typeof imap.host === 'string') imapHost = imap.host;
  } catch {
    // no host: only the provider and the mailbox's domain name the receiver
  }
  return { provider: mailbox.provider, email: mailbox.email, imapHost };
}

/** Delivery reports in the mailbox's own INBOX/spam naming its recent mail: bounced, against it. */
async function findBounces(context: SessionContext, ownSent: WarmupMessageRow[]): Promise<void> {
  const { deps, mailbox, session, options, summary, log } = context;
  const now = options.now;
  const earliest = ownSent.reduce(
    (min, row) => ((row.sent_at ?? min) < min ? (row.sent_at ?? min) : min),
    now.toISOString(),
  );
  // IMAP SINCE is a calendar day on the server's clock; a day's margin keeps zone differences out.
  const since = new Date(new Date(earliest).getTime() - 24 * 60 * 60_000);
  // each report is downloaded once: the scan goes on from where the last one stopped
  const marks = await loadScanMarks(deps.db, mailbox.id);
  const scan = await session.scanBounces(
    ownSent.map((row) => row.message_id),
    since,
    marks,
  );
  const bounces = scan.bounces;
  const byMessageId = new Map(ownSent.map((row) => [row.message_id, row]));
  const reports = new Map<string, { folder: string; uid: number }>();
  for (const bounce of bounces) {
    const row = byMessageId.get(bounce.messageId);
    if (!row) continue;
    reports.set(`${bounce.folder}\u0000${bounce.uid}`, { folder: bounce.folder, uid: bounce.uid });
    const recorded = await inTransaction(deps.db, async (trx) => {
      const lastError = (bounce.diagnostic ?? 'delivery report received').slice(0, 1000);
      if (!(await markSentMessageBounced(trx, row.id, lastError))) return false;
      const recipientEmail = await findMailboxEmail(trx, row.recipient_mailbox_id);
      return recordInteraction(trx, {
        mailboxId: mailbox.id,
        type: 'bounced',
        senderMailboxId: mailbox.id,
        counterpartMailboxId: row.recipient_mailbox_id,
        counterpartEmail: recipientEmail ?? bounce.recipient ?? '',
        subject: row.subject,
        messageId: row.message_id,
        threadId: row.thread_id,
        occurredAt: now,
      });
    });
    if (recorded) summary.bounced += 1;
  }
  await saveScanMarks(deps.db, mailbox.id, scan.marks, now);
  // The reports are about warmup mail: out of the owner's inbox with the rest of it.
  for (const report of reports.values()) {
    try {
      context.warmupPath ??= await session.ensureFolder(WARMUP_FOLDER);
      await session.move(report.folder, report.uid, context.warmupPath);
    } catch (err) {
      log.warn({ err }, 'could not file a delivery report');
    }
  }
}

/**
 * Mail sent more than 48 h ago that its recipient, although it synced since, never found: lost,
 * counted against the sender on the day it was sent. One UPDATE … RETURNING claims the rows, so
 * two workers never count one twice.
 */
export async function markLostMessages(deps: Pick<SyncDeps, 'db'>, now: Date): Promise<number> {
  return inTransaction(deps.db, async (trx) => {
    const lost = await markUnfoundMessagesLost(trx, new Date(now.getTime() - LOST_AFTER_MS));
    for (const row of lost) {
      await incrementDaily(trx, row.sender_mailbox_id, utcDay(new Date(row.sent_at ?? now)), 'lost');
    }
    // lost mail is evidence about its senders: reputation and the health guard judge them again
    await markJudgementsDue(
      trx,
      lost.map((row) => row.sender_mailbox_id),
      now,
    );
    return lost.length;
  });
}
