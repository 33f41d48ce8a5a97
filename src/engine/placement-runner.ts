/*
 * The engine's side of placement tests, one step of each cycle: send the copies of queued tests
 * (inside the sender's send window, after the gap since its last send), then look for the copies
 * sent and report where each landed.
 *
 * A copy is found by its own Message-ID only, so no other mail of a seed is touched. It is recorded
 * where it lies and then removed from the seed (UID-exact, never a plain EXPUNGE): a placement test
 * measures, it does not teach the seed's filter, so a copy in spam is not rescued. Nothing here
 * writes interactions or rollups: the warmup statistics never see a placement test.
 */
import type { Kysely } from 'kysely';
import type { Database, PlacementTestCopyRow } from '../db/schema.js';
import type { EngineDeps } from './engine-deps.js';
import { withLease } from '../jobs/leases.js';
import { claimMailboxConnection, findDayPlan, releaseMailboxConnection } from './mailbox-engine-state.repository.js';
import { displayName } from './message-content.js';
import { isSendDay, localDaySpan, MIN_SEND_GAP_MS, sendDayOf, sendWindow } from './send-budget.js';
import { loadSendsOfDay } from './warmup-messages.repository.js';
import { openImapSession, type FoundMessage, type ImapSession } from '../mail/imap.js';
import { createSmtpSender, type SmtpSender } from '../mail/smtp.js';
import { parseWarmupSettings } from '../mailboxes/warmup-settings.js';
import { receiverVerdict, verdictColumns, type Receiver } from '../verdicts/receiver-verdict.js';
import { enqueueEvent } from '../webhooks/webhooks.repository.js';
import { findPlacementTestById } from '../placement-tests/placement-tests.repository.js';
import { placementTestView } from '../placement-tests/placement-test-view.js';

/** A copy not found this long after it was sent is `missing`. */
export const PLACEMENT_MISSING_AFTER_MS = 30 * 60_000;
/** Searches of a seed per cycle for further copies of what it holds (a copy sent twice lies in two folders at most). */
const MAX_FIND_ROUNDS = 4;
/** Tests handled per cycle and worker. */
const TESTS_PER_CYCLE = 20;

export type PlacementDeps = Pick<EngineDeps, 'db' | 'logger' | 'workerId' | 'mailboxes' | 'settings' | 'smtp' | 'imap'>;

export interface PlacementSummary {
  /** Copies sent this cycle. */
  sent: number;
  /** Copies found this cycle. */
  found: number;
  /** Copies given up as missing this cycle. */
  missing: number;
  completed: number;
  failed: number;
}

export interface PlacementOptions {
  now: Date;
  /** Test mode: no send window nor gap (the budget still holds). */
  ignoreSchedule: boolean;
  signal?: AbortSignal;
}

function placementOf(message: FoundMessage): string {
  // Gmail shows a tab's mail in INBOX: the tab, not the folder, is where it landed
  if (message.role === 'inbox' && message.category && message.category !== 'primary') return 'promotions';
  const role = message.role;
  return role === 'inbox' || role === 'spam' || role === 'promotions' ? role : 'other';
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export async function runPlacementTests(deps: PlacementDeps, options: PlacementOptions): Promise<PlacementSummary> {
  const summary: PlacementSummary = { sent: 0, found: 0, missing: 0, completed: 0, failed: 0 };
  const open = await deps.db
    .selectFrom('placement_tests')
    .select(['id', 'status'])
    .where('status', 'in', ['queued', 'sending', 'waiting'])
    .orderBy('created_at')
    .limit(TESTS_PER_CYCLE)
    .execute();
  for (const { id } of open) {
    if (options.signal?.aborted) break;
    await withLease(deps.db, `placement-test:${id}`, deps.workerId, deps.settings.leaseMs, options.now, async () => {
      try {
        const status = await sendCopies(deps, id, options, summary);
        if (status === 'waiting') await findCopies(deps, id, options, summary);
      } catch (error) {
        deps.logger.warn({ err: error, placementTest: id }, 'placement test step failed');
      }
    });
  }
  return summary;
}

async function failTest(db: Kysely<Database>, id: string, now: Date, reason: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('placement_tests')
      .set({ status: 'failed', last_error: reason, completed_at: now.toISOString() })
      .where('id', '=', id)
      .execute();
    // copies that never went out hold no more room in the sender's day
    await trx
      .updateTable('placement_test_copies')
      .set({ placement: 'missing' })
      .where('test_id', '=', id)
      .where('sent_at', 'is', null)
      .execute();
  });
}

/** Sends what is unsent of a queued test when the sender may send; resolves to the test's status after. */
async function sendCopies(
  deps: PlacementDeps,
  id: string,
  { now, ignoreSchedule, signal }: PlacementOptions,
  summary: PlacementSummary,
): Promise<string> {
  const test = await deps.db.selectFrom('placement_tests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  if (test.status === 'waiting') return test.status;
  const sender = await deps.db
    .selectFrom('mailboxes')
    .select(['id', 'email', 'name', 'status', 'warmup'])
    .where('id', '=', test.sender_mailbox_id)
    .executeTakeFirstOrThrow();
  if (sender.status !== 'active') {
    await failTest(deps.db, id, now, `not sent: the sender is ${sender.status}`);
    summary.failed += 1;
    return 'failed';
  }
  const unsent = await deps.db
    .selectFrom('placement_test_copies as c')
    .innerJoin('mailboxes as m', 'm.id', 'c.seed_mailbox_id')
    .selectAll('c')
    .select(['m.email as seed_email', 'm.name as seed_name'])
    .where('c.test_id', '=', id)
    .where('c.sent_at', 'is', null)
    .where('c.placement', 'is', null)
    .execute();

  const settings = parseWarmupSettings(sender.warmup);
  const day = sendDayOf(settings, now);
  const span = localDaySpan(settings, day);
  const done = await loadSendsOfDay(deps.db, sender.id, span, new Date(now.getTime() - MIN_SEND_GAP_MS));
  if (!ignoreSchedule) {
    const window = sendWindow(settings, day);
    const inWindow = isSendDay(settings, day) && now >= window.start && now < window.end;
    const gapKept = !done.lastSentAt || now.getTime() - done.lastSentAt.getTime() >= MIN_SEND_GAP_MS;
    if (!inWindow || !gapKept) return test.status;
  }
  const plan = await findDayPlan(deps.db, sender.id, day);
  const room = (isSendDay(settings, day) ? (plan?.target ?? 0) : 0) - done.sent;
  if (room < unsent.length) {
    await failTest(
      deps.db,
      id,
      now,
      `not sent: the sender's day ${day} has room for ${Math.max(0, room)} more send(s), the test needed ${unsent.length}`,
    );
    summary.failed += 1;
    return 'failed';
  }

  await deps.db.updateTable('placement_tests').set({ status: 'sending' }).where('id', '=', id).execute();
  let smtp: SmtpSender | undefined;
  try {
    const credentials = await deps.mailboxes.getCredentials(sender.id);
    smtp = (deps.smtp ?? createSmtpSender)(credentials.smtp, { timeoutMs: deps.settings.smtpTimeoutMs, signal });
    for (const copy of unsent) {
      // All copies go out together, like one campaign send to several recipients: the gap is kept
      // before the first and after the last (the sender's next send counts from it), not between them.
      await smtp.send({
        from: { name: displayName(sender), address: sender.email },
        to: { name: displayName({ email: copy.seed_email, name: copy.seed_name }), address: copy.seed_email },
        subject: test.subject,
        text: test.text_body,
        html: test.html_body,
        messageId: copy.message_id,
        date: now,
      });
      await deps.db
        .updateTable('placement_test_copies')
        .set({ sent_at: now.toISOString() })
        .where('id', '=', copy.id)
        .execute();
      summary.sent += 1;
    }
  } catch (error) {
    await failTest(deps.db, id, now, `not sent: ${errorText(error)}`);
    summary.failed += 1;
    return 'failed';
  } finally {
    smtp?.close();
  }
  await deps.db
    .updateTable('placement_tests')
    .set({ status: 'waiting', sent_at: now.toISOString() })
    .where('id', '=', id)
    .execute();
  return 'waiting';
}

/** Looks for the copies not found yet, seed by seed (holding the seed through its sync claim: one IMAP session per account). */
async function findCopies(
  deps: PlacementDeps,
  id: string,
  { now, signal }: PlacementOptions,
  summary: PlacementSummary,
): Promise<void> {
  const pending = await deps.db
    .selectFrom('placement_test_copies')
    .selectAll()
    .where('test_id', '=', id)
    .where('placement', 'is', null)
    .where('sent_at', 'is not', null)
    .execute();
  const bySeed = new Map<string, PlacementTestCopyRow[]>();
  for (const copy of pending) bySeed.set(copy.seed_mailbox_id, [...(bySeed.get(copy.seed_mailbox_id) ?? []), copy]);
  for (const [seedId, copies] of bySeed) {
    if (signal?.aborted) return;
    // the seed's own sync holds its IMAP side the same way: one connection to a mailbox at a time
    const until = new Date(now.getTime() + deps.settings.leaseMs);
    if (!(await claimMailboxConnection(deps.db, seedId, deps.workerId, now, until))) continue;
    let session: ImapSession | undefined;
    try {
      const { imap } = await deps.mailboxes.getCredentials(seedId);
      const receiver = await receiverOf(deps.db, seedId, imap.host);
      session = await (deps.imap ?? openImapSession)(imap, { timeoutMs: deps.settings.imapTimeoutMs, signal });
      // A copy may lie there twice (sent again after a crash between SMTP's acceptance and its
      // record, with the same Message-ID): every copy is removed, each seed counted once.
      let wanted = copies.map((copy) => copy.message_id);
      for (let round = 0; round < MAX_FIND_ROUNDS && wanted.length > 0; round++) {
        const found = await session.findMessages(wanted, { everyCopy: true });
        for (const message of found) {
          const copy = copies.find((c) => c.message_id === message.messageId);
          if (!copy) continue;
          // read the way the reader reads warmup mail: only the receiving side's own fields count
          const verdict = receiverVerdict(message.receiverHeaders ?? [], receiver);
          const placed = await deps.db
            .updateTable('placement_test_copies')
            .set({
              placement: placementOf(message),
              folder: message.folder,
              found_at: now.toISOString(),
              ...verdictColumns(verdict),
            })
            .where('id', '=', copy.id)
            .where('placement', 'is', null)
            .executeTakeFirst();
          if (Number(placed.numUpdatedRows) > 0) summary.found += 1;
        }
        const byFolder = new Map<string, number[]>();
        for (const message of found)
          byFolder.set(message.folder, [...(byFolder.get(message.folder) ?? []), message.uid]);
        for (const [folder, uids] of byFolder) await session.remove(folder, uids);
        // another copy may lie in another folder: look again for what was found, until none is left
        wanted = [...new Set(found.map((message) => message.messageId))];
      }
    } catch (error) {
      // found next cycle, or given up as missing in time
      deps.logger.warn({ err: error, placementTest: id, mailboxId: seedId }, 'placement test: seed not searched');
    } finally {
      await session?.close();
      await releaseMailboxConnection(deps.db, seedId, deps.workerId);
    }
  }

  const givenUp = await deps.db
    .updateTable('placement_test_copies')
    .set({ placement: 'missing' })
    .where('test_id', '=', id)
    .where('placement', 'is', null)
    .where('sent_at', '<=', new Date(now.getTime() - PLACEMENT_MISSING_AFTER_MS).toISOString())
    .executeTakeFirst();
  summary.missing += Number(givenUp.numUpdatedRows);
  await completeIfDone(deps.db, id, now, summary);
}

/** The seed as the judge of whose Authentication-Results are its provider's own. */
async function receiverOf(db: Kysely<Database>, seedId: string, imapHost: string | undefined): Promise<Receiver> {
  const seed = await db
    .selectFrom('mailboxes')
    .select(['provider', 'email'])
    .where('id', '=', seedId)
    .executeTakeFirstOrThrow();
  return { provider: seed.provider, email: seed.email, imapHost: imapHost ?? '' };
}

/** Every copy placed (or missing): the test is completed and its event written, in one transaction. */
async function completeIfDone(db: Kysely<Database>, id: string, now: Date, summary: PlacementSummary): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const left = await trx
      .selectFrom('placement_test_copies')
      .select('id')
      .where('test_id', '=', id)
      .where('placement', 'is', null)
      .executeTakeFirst();
    if (left) return;
    const updated = await trx
      .updateTable('placement_tests')
      .set({ status: 'completed', completed_at: now.toISOString() })
      .where('id', '=', id)
      .where('status', '=', 'waiting')
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return;
    const record = await findPlacementTestById(trx, id);
    if (!record) return;
    const view = placementTestView(record);
    await enqueueEvent(trx, {
      workspaceId: record.test.workspace_id,
      type: 'placement_test.completed',
      at: now,
      dedupeKey: `placement_test.completed:${id}`,
      data: { placementTest: view },
    });
    summary.completed += 1;
  });
}
