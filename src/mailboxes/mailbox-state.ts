/*
 * The one owner of a mailbox's state: its status (`active`, `paused`, `error`), its failure
 * counters, when the engine may send or sync for it again, and the `lastError` that explains it.
 * Every change — a send or sync that worked or failed, the health guard stopping it, the user
 * pausing, resuming or reconnecting it — is an event here: `transition` decides the new state (a
 * pure function, one test per rule), `applyMailboxEvent` writes it. Nothing else writes these
 * columns, so every path resets the same counters (a resumed mailbox starts from zero on both
 * sides).
 *
 * Failures come in two classes (mail/errors.ts): transient ones (the server down, slow or busy)
 * only postpone that side's next attempt, with exponential backoff and jitter, and never count
 * towards `error`; the mailbox stays `active` and heals by itself when its server answers again.
 * Permanent ones (a refused login, a 5xx policy rejection) count; three in a row on one side stop
 * the mailbox until the user fixes the cause.
 *
 * The DNS rule (dns-pause-rule.ts, run after each daily check) pauses an active mailbox whose SPF
 * or DMARC has failed for a sustained period (`dns-failed`) and resumes it once both pass again
 * (`dns-fixed`); `pausedFor` tells that pause from the owner's, which only the owner ends. The
 * state change and the webhook event it makes are written in one transaction, so a crash between
 * them cannot lose the event.
 */
import type { Kysely } from 'kysely';
import type { Database, MailboxRow } from '../db/schema.js';
import { classifyMailFailure, diagnoseMailFailure, type MailConnectionError } from '../mail/errors.js';
import { viewedStatus, type MailboxStatus } from './mailboxes.schemas.js';
import { emitMailboxStatusEvent } from '../webhooks/webhook-events.js';

/** Permanent failures in a row (on one side) that stop a mailbox. */
export const MAX_PERMANENT_FAILURES = 3;
/** Backoff after the first failure; doubles with each further one… */
export const RETRY_BASE_MS = 60_000;
/** …up to this. */
export const RETRY_MAX_MS = 30 * 60_000;

export interface MailboxState {
  status: MailboxStatus;
  lastError: string | null;
  /** Permanent SMTP failures in a row (`failure_count`). */
  sendFailures: number;
  /** Permanent IMAP failures in a row. */
  syncFailures: number;
  /** Transient SMTP failures in a row. */
  sendRetries: number;
  /** Transient IMAP failures in a row. */
  syncRetries: number;
  /** ISO time before which the sender leaves the mailbox alone; null: now. */
  nextSendAt: string | null;
  /** ISO time before which the reader leaves the mailbox alone; null: now. */
  nextSyncAt: string | null;
  /** `dns` while the DNS rule keeps it paused (it resumes by itself once fixed); null otherwise. */
  pausedFor: 'dns' | null;
  /**
   * ISO time it last became active again (resumed, reconnected out of `error`); null: active since
   * it was created. Back in the middle of its send window, it gets the late share of the day.
   */
  activeSince: string | null;
}

export type MailboxEvent =
  /** SMTP accepted a message (or refused only its recipient: the login worked). */
  | { type: 'send-succeeded' }
  | { type: 'send-failed'; error: MailConnectionError; at: Date; random: () => number }
  /** A sync finished; the next regular one is due at `nextSyncAt`. */
  | { type: 'sync-succeeded'; nextSyncAt: Date }
  | { type: 'sync-failed'; error: MailConnectionError; at: Date; random: () => number }
  /** The engine stops an active mailbox: the health guard, a password the key cannot decrypt. */
  | { type: 'stopped'; lastError: string }
  /** The owner pauses it: a pause of the DNS rule becomes the owner's (only the owner ends it). */
  | { type: 'paused' }
  | { type: 'resumed'; at: Date }
  /** The DNS rule: its SPF or DMARC has failed for the sustained period (lastError says which and how to fix it). */
  | { type: 'dns-failed'; lastError: string }
  /** The DNS rule: SPF and DMARC pass again. */
  | { type: 'dns-fixed'; at: Date }
  /** New server settings or password, verified by a login. */
  | { type: 'reconnected'; at: Date };

/**
 * The wait before the next attempt after `failures` failures in a row: 1, 2, 4, 8, 16, 30, 30… min,
 * each drawn at random between half of that and all of it, so mailboxes of one server that went
 * down together do not all come back in the same second.
 */
export function retryDelayMs(failures: number, random: () => number): number {
  const ceiling = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling * (0.5 + 0.5 * random()));
}

const CLEAN = {
  sendFailures: 0,
  syncFailures: 0,
  sendRetries: 0,
  syncRetries: 0,
  nextSendAt: null,
  nextSyncAt: null,
  pausedFor: null,
} as const satisfies Partial<MailboxState>;

const SIDES = {
  send: { failures: 'sendFailures', retries: 'sendRetries', next: 'nextSendAt', label: 'SMTP' },
  sync: { failures: 'syncFailures', retries: 'syncRetries', next: 'nextSyncAt', label: 'IMAP' },
} as const;
type Side = keyof typeof SIDES;

function otherSideClean(state: MailboxState, side: Side): boolean {
  const other = SIDES[side === 'send' ? 'sync' : 'send'];
  return state[other.failures] === 0 && state[other.retries] === 0;
}

function succeeded(state: MailboxState, side: Side, next: string | null): MailboxState {
  const s = SIDES[side];
  // While active, lastError only ever explains failures still going on; once both sides work it goes.
  const lastError = state.status === 'active' && otherSideClean(state, side) ? null : state.lastError;
  return { ...state, [s.failures]: 0, [s.retries]: 0, [s.next]: next, lastError };
}

function clock(iso: Date): string {
  return `${iso.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** What the user reads while a server is down: true for its cause, and that there is nothing to do yet. */
export function transientError(error: MailConnectionError, retryAt: Date): string {
  return (
    `${error.message} — a temporary failure: warmup tries again by itself (next attempt after ` +
    `${clock(retryAt)}); nothing to do unless it lasts.`
  );
}

/** What the user must fix, for a failure that will not heal by itself. */
export function permanentError(error: MailConnectionError): string {
  const label = error.side === 'smtp' ? 'SMTP' : 'IMAP';
  const answer = error.serverResponse ?? error.message;
  if (error.kind === 'auth' && error.code === 'OAUTH_REFUSED') {
    return `${label} login refused with a valid OAuth token: check that ${label === 'IMAP' ? 'IMAP' : 'SMTP AUTH'} is allowed for this mailbox, or reconnect it (${answer})`;
  }
  if (error.kind === 'auth') return `${label} login refused: check the app password (${answer})`;
  if (error.kind === 'connection')
    return `${label} server ${error.host}:${error.port} cannot be used: ${diagnoseMailFailure(error).fix} (${error.message})`;
  return (
    `${label} server ${error.host}:${error.port} refuses this mailbox's mail: ${answer}. ` +
    `Check that the account may send (not suspended, no sending limit reached).`
  );
}

function failed(
  state: MailboxState,
  side: Side,
  event: { error: MailConnectionError; at: Date; random: () => number },
): MailboxState | null {
  // A failure of a mailbox the user paused (or the engine stopped) meanwhile changes nothing.
  if (state.status !== 'active') return null;
  const s = SIDES[side];
  if (classifyMailFailure(event.error) === 'transient') {
    const retries = state[s.retries] + 1;
    const retryAt = new Date(event.at.getTime() + retryDelayMs(retries, event.random));
    return {
      ...state,
      [s.retries]: retries,
      [s.next]: retryAt.toISOString(),
      lastError: transientError(event.error, retryAt),
    };
  }
  const failures = state[s.failures] + 1;
  if (failures >= MAX_PERMANENT_FAILURES) {
    return { ...state, ...CLEAN, status: 'error', lastError: permanentError(event.error) };
  }
  const retryAt = new Date(event.at.getTime() + retryDelayMs(failures, event.random));
  return {
    ...state,
    // the server answered: whatever kept it away before is over
    [s.retries]: 0,
    [s.failures]: failures,
    [s.next]: retryAt.toISOString(),
    lastError: `${permanentError(event.error)} — failure ${failures} of ${MAX_PERMANENT_FAILURES}, then warmup stops`,
  };
}

/** The state after `event`, or null when the event does not apply to a mailbox in this state. */
export function transition(state: MailboxState, event: MailboxEvent): MailboxState | null {
  switch (event.type) {
    case 'send-succeeded':
      return succeeded(state, 'send', null);
    case 'sync-succeeded':
      return succeeded(state, 'sync', event.nextSyncAt.toISOString());
    case 'send-failed':
      return failed(state, 'send', event);
    case 'sync-failed':
      return failed(state, 'sync', event);
    case 'stopped':
      return state.status === 'active' ? { ...state, ...CLEAN, status: 'error', lastError: event.lastError } : null;
    case 'paused':
      // lastError stays, so the user still sees why a stopped mailbox stopped
      return state.status === 'paused' && state.pausedFor === null
        ? null
        : { ...state, status: 'paused', pausedFor: null };
    case 'resumed':
      return state.status === 'active'
        ? null
        : { ...state, ...CLEAN, status: 'active', lastError: null, activeSince: event.at.toISOString() };
    case 'dns-failed':
      return state.status === 'active'
        ? { ...state, ...CLEAN, status: 'paused', pausedFor: 'dns', lastError: event.lastError }
        : null;
    case 'dns-fixed':
      return state.status === 'paused' && state.pausedFor === 'dns'
        ? { ...state, ...CLEAN, status: 'active', lastError: null, activeSince: event.at.toISOString() }
        : null;
    case 'reconnected':
      // a paused mailbox stays paused: new settings are not a resume
      return state.status === 'error'
        ? { ...state, ...CLEAN, status: 'active', lastError: null, activeSince: event.at.toISOString() }
        : { ...state, ...CLEAN, lastError: null };
  }
}

export function stateOf(row: MailboxRow): MailboxState {
  return {
    status: viewedStatus(row.status),
    lastError: row.last_error,
    sendFailures: Number(row.failure_count),
    syncFailures: Number(row.sync_failures),
    sendRetries: Number(row.send_retries),
    syncRetries: Number(row.sync_retries),
    nextSendAt: row.next_send_at,
    nextSyncAt: row.next_sync_at,
    pausedFor: row.paused_for,
    activeSince: row.active_since,
  };
}

function columnsOf(state: MailboxState) {
  return {
    status: state.status,
    last_error: state.lastError === null ? null : state.lastError.slice(0, 1000),
    failure_count: state.sendFailures,
    sync_failures: state.syncFailures,
    send_retries: state.sendRetries,
    sync_retries: state.syncRetries,
    next_send_at: state.nextSendAt,
    next_sync_at: state.nextSyncAt,
    paused_for: state.pausedFor,
    active_since: state.activeSince,
  };
}

function sameState(a: MailboxState, b: MailboxState): boolean {
  return (Object.keys(a) as Array<keyof MailboxState>).every((key) => a[key] === b[key]);
}

export interface AppliedEvent {
  row: MailboxRow;
  /** The event changed the state (false: it did not apply, or changed nothing). */
  changed: boolean;
  /** The event moved the mailbox into `error`. */
  stopped: boolean;
}

function isBackToWork(
  event: MailboxEvent,
): event is Extract<MailboxEvent, { type: 'resumed' | 'dns-fixed' | 'reconnected' }> {
  return event.type === 'resumed' || event.type === 'dns-fixed' || event.type === 'reconnected';
}

/**
 * When the mailbox stopped, after a change of status: the moment it enters `error`; kept while it
 * stays stopped or its owner pauses it (its page still says since when it has not worked); cleared
 * once it is active again.
 */
export function stoppedAtAfter(
  row: Pick<MailboxRow, 'stopped_at'>,
  before: MailboxStatus,
  after: MailboxStatus,
  at: Date,
): string | null {
  if (after === 'error') return before === 'error' ? (row.stopped_at ?? at.toISOString()) : at.toISOString();
  return after === 'active' ? null : row.stopped_at;
}

/** Concurrent writers (other workers, the API) win a race this many times before we give up. */
const MAX_RACES = 5;

/**
 * Applies `event` to the mailbox (only inside `workspaceId` when given) and returns its row;
 * undefined when there is no such mailbox. The write is compare-and-set on every state column,
 * so an event decided on a state another process changed meanwhile is decided again on the new one.
 */
export async function applyMailboxEvent(
  db: Kysely<Database>,
  mailboxId: string,
  event: MailboxEvent,
  options: { workspaceId?: string; at?: Date } = {},
): Promise<AppliedEvent | undefined> {
  for (let race = 0; race < MAX_RACES; race += 1) {
    let query = db.selectFrom('mailboxes').selectAll().where('id', '=', mailboxId);
    if (options.workspaceId !== undefined) query = query.where('workspace_id', '=', options.workspaceId);
    const row = await query.executeTakeFirst();
    if (!row) return undefined;
    const before = stateOf(row);
    const after = transition(before, event);
    if (!after || sameState(before, after)) return { row, changed: false, stopped: false };
    const current = columnsOf(before);
    const changes: Partial<MailboxRow> = columnsOf(after);
    // status changes are what a user sees in the mailbox's updatedAt; counters are the engine's business
    if (after.status !== before.status && options.at) changes.updated_at = options.at.toISOString();
    const when = options.at ?? ('at' in event ? event.at : new Date());
    const stoppedAt = stoppedAtAfter(row, before.status, after.status, when);
    if (stoppedAt !== row.stopped_at) changes.stopped_at = stoppedAt;
    // the new state and the webhook event it makes (mailbox.error, mailbox.recovered) commit together
    const writeWithEvent = async (trx: Kysely<Database>) => {
      let update = trx.updateTable('mailboxes').set(changes).where('id', '=', mailboxId);
      for (const [column, value] of Object.entries(current) as Array<[keyof typeof current, string | number | null]>) {
        update = value === null ? update.where(column, 'is', null) : update.where(column, '=', value);
      }
      const row = await update.returningAll().executeTakeFirst();
      if (row) await emitMailboxStatusEvent(trx, row, before.status, options.at ?? new Date());
      // back to work (resumed, reconnected, its DNS fixed): read at once, not at its next periodic check
      if (row && after.status === 'active' && isBackToWork(event)) {
        const at = event.at.toISOString();
        await trx
          .updateTable('mailboxes')
          .set({ sync_due_at: at })
          .where('id', '=', mailboxId)
          .where('sync_due_at', '>', at)
          .execute();
      }
      return row;
    };
    // only a change of status can make an event: counters alone need no transaction
    const written =
      db.isTransaction || after.status === before.status
        ? await writeWithEvent(db)
        : await db.transaction().execute(writeWithEvent);
    if (written) {
      return { row: written, changed: true, stopped: before.status !== 'error' && after.status === 'error' };
    }
  }
  throw new Error(`mailbox ${mailboxId}: its state kept changing under event ${event.type}`);
}
