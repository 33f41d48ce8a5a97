// The sender's claims on due `warmup_messages` rows and the row leases that go with them: which
// senders have mail due, taking a batch of due rows for one worker, giving leases back, and
// expiring what is more than a day overdue. Each write is guarded by the status it expects.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db/database.js';
import type { Database, WarmupMessageRow } from '../db/schema.js';

/** Row leases are given back in chunks of this many ids (SQLite caps bound parameters). */
const RELEASE_CHUNK = 500;

const SENDER_LEASE_PREFIX = 'send:';

/** The lease a worker holds while it decides and sends for one sender mailbox. */
export function senderLeaseKey(senderId: string): string {
  return `${SENDER_LEASE_PREFIX}${senderId}`;
}

/** Which planned rows are due to be sent now. */
export interface DueCriteria {
  dialect: Dialect;
  now: Date;
  /** When set, every row planned for this day or earlier is due too, whatever its time. */
  dueByPlanDay?: string;
  /** When set, only rows of senders not backing off after a failure past this time (`next_send_at`). */
  senderReadyBy?: Date;
}

export interface ClaimCriteria extends DueCriteria {
  workerId: string;
  leaseUntil: Date;
  /** Only this sender's rows (claimed under its lease, see senderLeaseKey). */
  senderId: string;
  limit: number;
}

/**
 * Due planned rows free to claim: sender and recipient active and proven (to a peer's address:
 * announced to its peer), the sender not backing off, no live row lease. Walked in `due_at` order
 * through `warmup_messages_due`, or through `warmup_messages_sender_due` for one sender.
 */
function claimableRows(db: Kysely<Database>, criteria: DueCriteria) {
  const nowIso = criteria.now.toISOString();
  const { dueByPlanDay, senderReadyBy } = criteria;
  return (
    db
      .selectFrom('warmup_messages as w')
      .innerJoin('mailboxes as s', 's.id', 'w.sender_mailbox_id')
      .innerJoin('mailboxes as r', 'r.id', 'w.recipient_mailbox_id')
      .where('w.status', '=', 'planned')
      .where('s.status', '=', 'active')
      // mail for a paused or broken mailbox would only be lost: it waits until the mailbox is back;
      // mail to a peer's address (a stand-in, peers/peer-mail.ts) waits until the peer accepted its announcement
      .where((w) =>
        w.or([
          w('r.status', '=', 'active'),
          w.and([w('r.status', '=', 'peer'), w('w.peer_announced_at', 'is not', null)]),
        ]),
      )
      .$if(senderReadyBy !== undefined, (q) =>
        q.where((w) =>
          w.or([w('s.next_send_at', 'is', null), w('s.next_send_at', '<=', senderReadyBy!.toISOString())]),
        ),
      )
      // a mailbox whose servers changed since it was planned waits until it has proven them
      .where('s.proven_at', 'is not', null)
      .where('r.proven_at', 'is not', null)
      .where((w) => w.or([w('w.lease_expires_at', 'is', null), w('w.lease_expires_at', '<=', nowIso)]))
      .where((w) =>
        dueByPlanDay !== undefined
          ? w.or([w('w.due_at', '<=', nowIso), w('w.plan_day', '<=', dueByPlanDay)])
          : w('w.due_at', '<=', nowIso),
      )
  );
}

/**
 * Senders with rows to claim that no worker (this one included) holds the lease of, earliest due
 * first: the distinct senders among the first `scan` claimable rows, leaving out `exclude`. A read
 * only: the sender's lease decides who claims its rows.
 */
export async function findDueSenders(
  db: Kysely<Database>,
  criteria: DueCriteria & { exclude: readonly string[]; scan: number },
): Promise<string[]> {
  const { exclude } = criteria;
  const rows = await claimableRows(db, criteria)
    .select('w.sender_mailbox_id')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('leases as l')
            .select('l.key')
            .where('l.key', '=', sql<string>`${sql.lit(SENDER_LEASE_PREFIX)} || ${sql.ref('w.sender_mailbox_id')}`)
            .where('l.expires_at', '>', criteria.now.toISOString()),
        ),
      ),
    )
    .$if(exclude.length > 0, (q) => q.where('w.sender_mailbox_id', 'not in', exclude))
    .orderBy('w.due_at')
    .limit(criteria.scan)
    .execute();
  return [...new Set(rows.map((row) => row.sender_mailbox_id))];
}

/**
 * Claims one sender's due rows, earliest first: one UPDATE … WHERE id IN (SELECT … LIMIT n [FOR
 * UPDATE SKIP LOCKED]) … RETURNING on the row lease columns, so a row is never claimed twice even
 * by a worker that claims without the sender's lease.
 */
export async function claimDueMessages(db: Kysely<Database>, criteria: ClaimCriteria): Promise<WarmupMessageRow[]> {
  const nowIso = criteria.now.toISOString();
  let due = claimableRows(db, criteria)
    .select('w.id')
    .where('w.sender_mailbox_id', '=', criteria.senderId)
    .orderBy('w.due_at')
    .limit(criteria.limit);
  if (criteria.dialect === 'postgres') due = due.forUpdate(['w']).skipLocked();
  return (
    db
      .updateTable('warmup_messages')
      .set({ lease_owner: criteria.workerId, lease_expires_at: criteria.leaseUntil.toISOString() })
      .where('id', 'in', due)
      // Checked again on the row itself: on PostgreSQL another worker may have claimed it since the
      // subquery's snapshot. SQLite runs the statement alone, and the check there would have it walk
      // every planned row by status instead of the claimed rows by their key.
      .$if(criteria.dialect === 'postgres', (q) =>
        q
          .where('status', '=', 'planned')
          .where((w) => w.or([w('lease_expires_at', 'is', null), w('lease_expires_at', '<=', nowIso)])),
      )
      .returningAll()
      .execute()
  );
}

const STALE_REASON = 'not sent: more than a day overdue';

/** Marks planned rows due before `staleBefore` and not leased at `now` as `expired`. */
export async function expirePlannedMessages(db: Kysely<Database>, staleBefore: Date, now: Date): Promise<void> {
  await db
    .updateTable('warmup_messages')
    .set({ status: 'expired', last_error: STALE_REASON, lease_owner: null, lease_expires_at: null })
    .where('status', '=', 'planned')
    .where('due_at', '<', staleBefore.toISOString())
    .where((w) => w.or([w('lease_expires_at', 'is', null), w('lease_expires_at', '<=', now.toISOString())]))
    .execute();
}

/** Gives back the row leases `owner` holds on these rows. */
export async function releaseMessageLeases(db: Kysely<Database>, ids: readonly string[], owner: string): Promise<void> {
  for (let start = 0; start < ids.length; start += RELEASE_CHUNK) {
    await db
      .updateTable('warmup_messages')
      .set({ lease_owner: null, lease_expires_at: null })
      .where('id', 'in', ids.slice(start, start + RELEASE_CHUNK))
      .where('lease_owner', '=', owner)
      .execute();
  }
}

/** Gives back every row lease of a worker. */
export async function releaseAllMessageLeases(db: Kysely<Database>, owner: string): Promise<void> {
  await db
    .updateTable('warmup_messages')
    .set({ lease_owner: null, lease_expires_at: null })
    .where('lease_owner', '=', owner)
    .execute();
}
