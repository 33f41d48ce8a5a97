/*
 * The engine's SQL on `mailboxes` (and its day plans in `mailbox_plans`): which mailboxes take
 * part, and the columns only the engine writes. Status changes and failure counting
 * (`status`, `failure_count`, `sync_failures`, `next_sync_at`, `last_error`…) are not here: every
 * write of those goes through mailboxes/mailbox-state.ts.
 * Functions take `db` or a transaction's `trx`, like the other repositories.
 */
import { heldDomains } from './provider-signals.repository.js';
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db/database.js';
import { DUE_AT_ONCE } from '../db/migrations/023-work-claims.js';
import type { Database, MailboxRow, MailboxRowUpdate } from '../db/schema.js';

// ---------------------------------------------------------------------------------------------
// Reads

export async function findMailbox(db: Kysely<Database>, id: string): Promise<MailboxRow | undefined> {
  return db.selectFrom('mailboxes').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A mailbox as the other side of a message: its address and display name. */
export async function findMailboxParty(
  db: Kysely<Database>,
  id: string,
): Promise<Pick<MailboxRow, 'email' | 'name'> | undefined> {
  return db.selectFrom('mailboxes').select(['email', 'name']).where('id', '=', id).executeTakeFirst();
}

export async function findMailboxEmail(db: Kysely<Database>, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('mailboxes').select('email').where('id', '=', id).executeTakeFirst();
  return row?.email;
}

/**
 * The pool, with what the planner needs, by id: active mailboxes whose round trip proved their
 * address, and the peers' addresses taking part (stand-ins). An unproven one neither sends to nor
 * receives from the others.
 */
export async function listActiveForPlanning(
  db: Kysely<Database>,
): Promise<
  Array<
    Pick<
      MailboxRow,
      | 'id'
      | 'email_normalized'
      | 'warmup'
      | 'last_plan_day'
      | 'warmup_day'
      | 'volume_factor'
      | 'auto_reply_at'
      | 'plan_due_at'
      | 'provider'
      | 'oauth_provider'
      | 'smtp'
      | 'peer_id'
    >
  >
> {
  return db
    .selectFrom('mailboxes')
    .select([
      'id',
      'email_normalized',
      'warmup',
      'last_plan_day',
      'warmup_day',
      'volume_factor',
      'auto_reply_at',
      'plan_due_at',
      // which mail service it is at: its mail program fits that (client-profile.ts)
      'provider',
      'oauth_provider',
      'smtp',
      // a peer's address (a stand-in): a partner, never planned itself (its own installation plans it)
      'peer_id',
    ])
    .where('status', 'in', ['active', 'peer'])
    .where('proven_at', 'is not', null)
    .orderBy('id')
    .execute();
}

/** Whether any mailbox of the pool is due for planning at `at`: one row read from the `(status, plan_due_at)` index. */
export async function anyDueForPlanning(db: Kysely<Database>, at: Date): Promise<boolean> {
  const row = await db
    .selectFrom('mailboxes')
    .select('id')
    .where('status', '=', 'active')
    .where('plan_due_at', '<=', at.toISOString())
    .where('proven_at', 'is not', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Mailboxes found not due for planning at `at` are next due at the given times (the start of their
 * next local day), in lists of 500. One made due again since `at` (its settings changed) stays due.
 */
export async function deferPlanning(
  db: Kysely<Database>,
  at: Date,
  until: ReadonlyMap<string, readonly string[]>,
): Promise<void> {
  for (const [dueAt, ids] of until) {
    for (let start = 0; start < ids.length; start += 500) {
      await db
        .updateTable('mailboxes')
        .set({ plan_due_at: dueAt })
        .where('id', 'in', ids.slice(start, start + 500))
        .where('plan_due_at', '<=', at.toISOString())
        .execute();
    }
  }
}

/** Those of `ids` still active, with their current score and the score recorded for `day`, if any. */
export async function listWithReputation(
  db: Kysely<Database>,
  ids: readonly string[],
  day: string,
): Promise<Array<{ id: string; reputation: MailboxRow['reputation']; recorded: number | null }>> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('mailboxes as m')
    .leftJoin('daily_stats as d', (join) => join.onRef('d.mailbox_id', '=', 'm.id').on('d.day', '=', day))
    .select(['m.id', 'm.reputation', 'd.reputation as recorded'])
    .where('m.id', 'in', ids)
    .where('m.status', '=', 'active')
    .orderBy('m.id')
    .execute();
}

/** Those of `ids` still active, with what the health guard needs. */
export async function listForHealth(
  db: Kysely<Database>,
  ids: readonly string[],
): Promise<Array<Pick<MailboxRow, 'id' | 'workspace_id' | 'email' | 'volume_factor'>>> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('mailboxes')
    .select(['id', 'workspace_id', 'email', 'volume_factor'])
    .where('id', 'in', ids)
    .where('status', '=', 'active')
    .orderBy('id')
    .execute();
}

// ---------------------------------------------------------------------------------------------
// The day's plan

/** The ramp positions (and last planned day) of those of `ids` that are still active. */
export async function findActiveRamps(
  trx: Kysely<Database>,
  ids: readonly string[],
): Promise<Map<string, Pick<MailboxRow, 'warmup_day' | 'volume_factor' | 'last_plan_day'> & { held: boolean }>> {
  if (ids.length === 0) return new Map();
  const rows = await trx
    .selectFrom('mailboxes')
    .select(['id', 'workspace_id', 'email_normalized', 'warmup_day', 'volume_factor', 'last_plan_day'])
    .where('id', 'in', ids)
    .where('status', '=', 'active')
    .execute();
  // a domain the providers' feeds hold (provider-signals.ts) stays on its ramp day
  const held = await heldDomains(
    trx,
    rows.map((row) => row.workspace_id),
  );
  const domainOf = (row: (typeof rows)[number]) =>
    row.email_normalized.slice(row.email_normalized.lastIndexOf('@') + 1);
  return new Map(rows.map((row) => [row.id, { ...row, held: held.has(`${row.workspace_id} ${domainOf(row)}`) }]));
}

/**
 * Claims (mailbox, day) for planning, many mailboxes in one statement; returns the ids claimed.
 * A mailbox whose day already has a plan (another worker's, or an earlier run's) is left out.
 */
export async function claimPlanDays(
  trx: Kysely<Database>,
  plans: ReadonlyArray<{ mailboxId: string; day: string }>,
  at: Date,
): Promise<Set<string>> {
  if (plans.length === 0) return new Set();
  const createdAt = at.toISOString();
  const claimed = await trx
    .insertInto('mailbox_plans')
    .values(
      plans.map((plan) => ({
        mailbox_id: plan.mailboxId,
        day: plan.day,
        warmup_day: 0,
        target: 0,
        planned: 0,
        created_at: createdAt,
      })),
    )
    .onConflict((oc) => oc.columns(['mailbox_id', 'day']).doNothing())
    .returning('mailbox_id')
    .execute();
  return new Set(claimed.map((row) => row.mailbox_id));
}

export interface DecidedPlan {
  mailboxId: string;
  day: string;
  warmupDay: number;
  target: number;
  planned: number;
  /** New threads the pool carried for it that day, up to its target: below the target, the pool held it back. */
  capacity: number;
  /** Then, more mailboxes on new domains that would carry its target; null when carried or out of reach. */
  lift: number | null;
}

/**
 * The days' plans as decided: kept on the plan rows (one upsert) and as each mailbox's current ramp
 * position. Mailboxes whose new columns are the same share one UPDATE: a day's plans take few
 * distinct (ramp day, target, planned) combinations, so a batch costs a handful of statements.
 */
export async function recordPlans(trx: Kysely<Database>, plans: readonly DecidedPlan[], at: Date): Promise<void> {
  if (plans.length === 0) return;
  const createdAt = at.toISOString();
  await trx
    .insertInto('mailbox_plans')
    .values(
      plans.map((plan) => ({
        mailbox_id: plan.mailboxId,
        day: plan.day,
        warmup_day: plan.warmupDay,
        target: plan.target,
        planned: plan.planned,
        capacity: plan.capacity,
        created_at: createdAt,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['mailbox_id', 'day']).doUpdateSet((eb) => ({
        warmup_day: eb.ref('excluded.warmup_day'),
        target: eb.ref('excluded.target'),
        planned: eb.ref('excluded.planned'),
        capacity: eb.ref('excluded.capacity'),
      })),
    )
    .execute();
  const alike = new Map<string, { plan: DecidedPlan; ids: string[] }>();
  for (const plan of plans) {
    const key = `${plan.day} ${plan.warmupDay} ${plan.target} ${plan.planned} ${plan.capacity} ${plan.lift}`;
    const group = alike.get(key);
    if (group) group.ids.push(plan.mailboxId);
    else alike.set(key, { plan, ids: [plan.mailboxId] });
  }
  for (const { plan, ids } of alike.values()) {
    await trx
      .updateTable('mailboxes')
      .set({
        warmup_day: plan.warmupDay,
        daily_target: plan.planned,
        // kept where the API reads it: why a mailbox sends less than its ramp today
        ramp_target: plan.target,
        plan_capacity: plan.capacity,
        plan_lift: plan.lift,
        // Only the pool's own limit is a hold: a young pair's first days (one thread a day until it
        // earns more) or a late start also plan fewer, and more mailboxes would change neither.
        plan_limited_by: plan.planned < plan.target && plan.capacity < plan.target ? 'pool_too_small' : null,
        last_plan_day: plan.day,
        updated_at: createdAt,
      })
      .where('id', 'in', ids)
      .execute();
  }
}

export async function setVolumeFactor(db: Kysely<Database>, id: string, volumeFactor: number, at: Date): Promise<void> {
  await db
    .updateTable('mailboxes')
    .set({ volume_factor: volumeFactor, updated_at: at.toISOString() })
    .where('id', '=', id)
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Syncs: due times and claims

export interface SyncClaimCriteria {
  dialect: Dialect;
  owner: string;
  now: Date;
  /** The claim holds until then; a dead worker's claim runs out at that time. */
  until: Date;
  limit: number;
  /**
   * Every active mailbox not claimed by someone else, whatever its due time and backoff, in id
   * order after `afterId` (test mode: `ignoreSchedule`); otherwise only due ones, the longest due first.
   */
  everyActiveAfter?: string;
}

/**
 * Claims mailboxes to sync in one statement: UPDATE … WHERE id IN (SELECT … LIMIT n [FOR UPDATE
 * SKIP LOCKED]) … RETURNING, like the sender's claim of planned rows. The claim sets the owner and
 * `sync_claimed_until`, and moves the due time to the same instant: a mail sent to the mailbox
 * meanwhile pulls the due time earlier again (pullSyncDue), which the sync's end keeps
 * (finishSyncClaim), so nothing sent during a sync waits for the next periodic check.
 * Only the due mailboxes are read (the index covers active mailboxes by due time): idle ones cost nothing.
 */
export async function claimSyncs(db: Kysely<Database>, criteria: SyncClaimCriteria): Promise<string[]> {
  const nowIso = criteria.now.toISOString();
  const until = criteria.until.toISOString();
  const after = criteria.everyActiveAfter;
  const rows = await db
    .updateTable('mailboxes')
    .set({ sync_owner: criteria.owner, sync_claimed_until: until, sync_due_at: until })
    .where('id', 'in', (eb) => {
      let due = eb
        .selectFrom('mailboxes as m')
        .select('m.id')
        .where('m.status', '=', 'active')
        .where((w) => w.or([w('m.sync_claimed_until', 'is', null), w('m.sync_claimed_until', '<=', nowIso)]));
      due =
        after !== undefined
          ? due.where('m.id', '>', after).orderBy('m.id')
          : due
              .where('m.sync_due_at', '<=', nowIso)
              // backing off after a failed sync, or read a moment ago: providers cap logins
              .where((w) => w.or([w('m.next_sync_at', 'is', null), w('m.next_sync_at', '<=', nowIso)]))
              // straight from the (status, sync_due_at) index: no sort of the due ones
              .orderBy('m.sync_due_at');
      due = due.limit(criteria.limit);
      if (criteria.dialect === 'postgres') due = due.forUpdate().skipLocked();
      return due;
    })
    // checked again on the row itself: on PostgreSQL another worker may have claimed it since the
    // subquery's snapshot. (Not the status: SQLite would then walk every active mailbox by the
    // status index instead of the claimed ones by key; a mailbox paused meanwhile is skipped by the sync.)
    .where((w) => w.or([w('sync_claimed_until', 'is', null), w('sync_claimed_until', '<=', nowIso)]))
    .returning('id')
    .execute();
  return rows.map((row) => row.id).sort();
}

/** Holds the claim longer (a long sync); false when it is no longer ours (it ran out and another worker took it). */
export async function renewSyncClaim(db: Kysely<Database>, id: string, owner: string, until: Date): Promise<boolean> {
  const row = await db
    .updateTable('mailboxes')
    .set({ sync_claimed_until: until.toISOString() })
    .where('id', '=', id)
    .where('sync_owner', '=', owner)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Gives the claim back with the next due time. A due time pulled earlier during the sync (mail
 * sent to it meanwhile: it is no longer the claim's own `claimedUntil`) stays when it is earlier.
 */
export async function finishSyncClaim(
  db: Kysely<Database>,
  id: string,
  owner: string,
  claim: { claimedUntil: Date; nextDueAt: Date },
): Promise<void> {
  const claimed = claim.claimedUntil.toISOString();
  const next = claim.nextDueAt.toISOString();
  await db
    .updateTable('mailboxes')
    .set({
      sync_owner: null,
      sync_claimed_until: null,
      sync_due_at: sql<string>`case when sync_due_at <> ${claimed} and sync_due_at < ${next} then sync_due_at else ${next} end`,
    })
    .where('id', '=', id)
    .where('sync_owner', '=', owner)
    .execute();
}

/**
 * Claims one mailbox's IMAP side outside the sync (a placement test reading a seed), so the reader
 * and the runner never hold two connections to it at once. The due time is left as it is.
 */
export async function claimMailboxConnection(
  db: Kysely<Database>,
  id: string,
  owner: string,
  now: Date,
  until: Date,
): Promise<boolean> {
  const nowIso = now.toISOString();
  const row = await db
    .updateTable('mailboxes')
    .set({ sync_owner: owner, sync_claimed_until: until.toISOString() })
    .where('id', '=', id)
    .where((w) => w.or([w('sync_claimed_until', 'is', null), w('sync_claimed_until', '<=', nowIso)]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Gives back a claim taken by claimMailboxConnection, the due time untouched. */
export async function releaseMailboxConnection(db: Kysely<Database>, id: string, owner: string): Promise<void> {
  await db
    .updateTable('mailboxes')
    .set({ sync_owner: null, sync_claimed_until: null })
    .where('id', '=', id)
    .where('sync_owner', '=', owner)
    .execute();
}

/** Mail is on its way to these mailboxes: each is synced at `at` at the latest. */
export async function pullSyncDue(db: Kysely<Database>, ids: readonly string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  const atIso = at.toISOString();
  await db
    .updateTable('mailboxes')
    .set({ sync_due_at: atIso })
    .where('id', 'in', [...new Set(ids)])
    .where('sync_due_at', '>', atIso)
    .execute();
}

/** Gives back every sync claim of a worker (it stops): what it held is due again at once. */
export async function releaseSyncClaims(db: Kysely<Database>, owner: string): Promise<void> {
  await db
    .updateTable('mailboxes')
    .set({
      sync_owner: null,
      sync_claimed_until: null,
      sync_due_at: sql<string>`case when sync_due_at = sync_claimed_until then ${DUE_AT_ONCE} else sync_due_at end`,
    })
    .where('sync_owner', '=', owner)
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Reputation and the health guard: due times and claims

/** The due-time column of a daily judgement. */
export type Judgement = 'reputation_due_at' | 'health_due_at';

export interface JudgementClaimCriteria {
  dialect: Dialect;
  now: Date;
  /** The claim holds until then (the due time moves there: another worker leaves the mailbox alone). */
  until: Date;
  limit: number;
  /** Every active mailbox, due or not, in id order after this id (test mode: `ignoreSchedule`). */
  everyActiveAfter?: string;
}

/**
 * Claims a bucket of active mailboxes due for a judgement in one statement (FOR UPDATE SKIP LOCKED
 * on PostgreSQL): their due time moves to the claim's end, so a second worker takes other ones,
 * and a dead worker's bucket is due again after the lease.
 */
export async function claimJudgements(
  db: Kysely<Database>,
  column: Judgement,
  criteria: JudgementClaimCriteria,
): Promise<string[]> {
  const nowIso = criteria.now.toISOString();
  const after = criteria.everyActiveAfter;
  const rows = await db
    .updateTable('mailboxes')
    .set({ [column]: criteria.until.toISOString() })
    .where('id', 'in', (eb) => {
      let due = eb.selectFrom('mailboxes as m').select('m.id').where('m.status', '=', 'active');
      due =
        after !== undefined
          ? due.where('m.id', '>', after).orderBy('m.id')
          : due.where(`m.${column}`, '<=', nowIso).orderBy(`m.${column}`);
      due = due.limit(criteria.limit);
      if (criteria.dialect === 'postgres') due = due.forUpdate().skipLocked();
      return due;
    })
    // (not the status again: see claimSyncs)
    .$if(after === undefined, (q) => q.where(column, '<=', nowIso))
    .returning('id')
    .execute();
  return rows.map((row) => row.id).sort();
}

/**
 * The judged mailboxes' next due time. One whose evidence changed during the judgement (marked due
 * again by markJudgementsDue: its due time is no longer the claim's) keeps that earlier time.
 */
export async function finishJudgements(
  db: Kysely<Database>,
  column: Judgement,
  ids: readonly string[],
  claimedUntil: Date,
  nextDueAt: (id: string) => Date,
): Promise<void> {
  const claimed = claimedUntil.toISOString();
  const byNext = new Map<string, string[]>();
  for (const id of ids) {
    const next = nextDueAt(id).toISOString();
    byNext.set(next, [...(byNext.get(next) ?? []), id]);
  }
  for (const [next, group] of byNext) {
    await db
      .updateTable('mailboxes')
      .set({ [column]: next })
      .where('id', 'in', group)
      .where(column, '=', claimed)
      .execute();
  }
}

/** The evidence about these mailboxes' mail changed: reputation and the health guard judge them at `at`. */
export async function markJudgementsDue(db: Kysely<Database>, ids: readonly string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  const atIso = at.toISOString();
  await db
    .updateTable('mailboxes')
    .set({
      reputation_due_at: sql<string>`case when reputation_due_at > ${atIso} then ${atIso} else reputation_due_at end`,
      health_due_at: sql<string>`case when health_due_at > ${atIso} then ${atIso} else health_due_at end`,
    })
    .where('id', 'in', [...new Set(ids)])
    .where((w) => w.or([w('reputation_due_at', '>', atIso), w('health_due_at', '>', atIso)]))
    .execute();
}

/**
 * After a mailbox's sync: its own evidence (bounces of its mail) and that of the senders whose mail
 * it found since `foundSince` may have changed; they are judged at `at`. One statement.
 */
export async function markJudgementsDueAfterSync(
  db: Kysely<Database>,
  mailboxId: string,
  foundSince: Date,
  at: Date,
): Promise<void> {
  const atIso = at.toISOString();
  await db
    .updateTable('mailboxes')
    .set({
      reputation_due_at: sql<string>`case when reputation_due_at > ${atIso} then ${atIso} else reputation_due_at end`,
      health_due_at: sql<string>`case when health_due_at > ${atIso} then ${atIso} else health_due_at end`,
    })
    .where((w) =>
      w.or([
        w('id', '=', mailboxId),
        w('id', 'in', (eb) =>
          eb
            .selectFrom('warmup_messages')
            .select('sender_mailbox_id')
            .where('recipient_mailbox_id', '=', mailboxId)
            .where('found_at', '>=', foundSince.toISOString()),
        ),
      ]),
    )
    .where((w) => w.or([w('reputation_due_at', '>', atIso), w('health_due_at', '>', atIso)]))
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Proofs (the round trip that admits a mailbox to the pool: engine/proofs.ts)

/** Active mailboxes not proven yet whose next round trip is due, the longest waiting first. */
export async function listDueForProof(
  db: Kysely<Database>,
  nowIso: string,
  limit: number,
): Promise<Array<Pick<MailboxRow, 'id' | 'proof_attempts'>>> {
  return db
    .selectFrom('mailboxes')
    .select(['id', 'proof_attempts'])
    .where('status', '=', 'active')
    .where('proven_at', 'is', null)
    .where((eb) => eb.or([eb('next_proof_at', 'is', null), eb('next_proof_at', '<=', nowIso)]))
    .orderBy('next_proof_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * Takes one due round trip for this worker by moving its next try to `retryAtIso` (a worker that
 * dies mid-proof leaves it to be tried then); undefined when another worker took it first.
 */
export async function claimProof(
  db: Kysely<Database>,
  id: string,
  nowIso: string,
  retryAtIso: string,
): Promise<MailboxRow | undefined> {
  return db
    .updateTable('mailboxes')
    .set({ next_proof_at: retryAtIso })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .where('proven_at', 'is', null)
    .where((eb) => eb.or([eb('next_proof_at', 'is', null), eb('next_proof_at', '<=', nowIso)]))
    .returningAll()
    .executeTakeFirst();
}

/**
 * The outcome of a round trip, kept only while the mailbox still has the servers and password it
 * was made with (an owner's change meanwhile ran and recorded a round trip of its own); false when
 * it was not kept.
 */
export async function updateProof(
  db: Kysely<Database>,
  tried: Pick<MailboxRow, 'id' | 'imap' | 'smtp' | 'password_encrypted'>,
  changes: MailboxRowUpdate,
): Promise<boolean> {
  const result = await db
    .updateTable('mailboxes')
    .set(changes)
    .where('id', '=', tried.id)
    .where('imap', '=', tried.imap)
    .where('smtp', '=', tried.smtp)
    .where('password_encrypted', '=', tried.password_encrypted)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

// ---------------------------------------------------------------------------------------------
// Sender evidence

/** What a peer's copy may teach about the sender: its address, workspace and DKIM selector. */
export async function findSenderDkim(
  db: Kysely<Database>,
  id: string,
): Promise<Pick<MailboxRow, 'email' | 'workspace_id' | 'dkim_selector' | 'dkim_selector_source'> | undefined> {
  return db
    .selectFrom('mailboxes')
    .select(['email', 'workspace_id', 'dkim_selector', 'dkim_selector_source'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A selector learned from mail; never over one the user gave, even if they gave it meanwhile. */
export async function learnDkimSelector(db: Kysely<Database>, id: string, selector: string): Promise<void> {
  await db
    .updateTable('mailboxes')
    .set({ dkim_selector: selector, dkim_selector_source: 'mail' })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('dkim_selector_source', 'is', null), eb('dkim_selector_source', '!=', 'user')]))
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Syncs

/**
 * When the mailbox was last read. Its status, failure counters, backoff and lastError are
 * mailboxes/mailbox-state.ts's alone.
 */
export async function recordSyncTime(db: Kysely<Database>, id: string, at: Date): Promise<void> {
  await db.updateTable('mailboxes').set({ last_sync_at: at.toISOString() }).where('id', '=', id).execute();
}

/** The budget of a mailbox's planned day (its plan's target); undefined when the day has no plan. */
export async function findPlanTarget(
  db: Kysely<Database>,
  mailboxId: string,
  day: string,
): Promise<number | undefined> {
  const row = await db
    .selectFrom('mailbox_plans')
    .select('target')
    .where('mailbox_id', '=', mailboxId)
    .where('day', '=', day)
    .executeTakeFirst();
  return row ? Number(row.target) : undefined;
}

/** A mailbox's plan of a day, its budget and when it was made; undefined when the day has no plan. */
export async function findDayPlan(
  db: Kysely<Database>,
  mailboxId: string,
  day: string,
): Promise<{ target: number; plannedAt: Date } | undefined> {
  const row = await db
    .selectFrom('mailbox_plans')
    .select(['target', 'created_at'])
    .where('mailbox_id', '=', mailboxId)
    .where('day', '=', day)
    .executeTakeFirst();
  return row ? { target: Number(row.target), plannedAt: new Date(row.created_at) } : undefined;
}

/** The targets of the plans made for these days, keyed `<mailbox id> <day>`. */
export async function loadPlanTargets(db: Kysely<Database>, days: readonly string[]): Promise<Map<string, number>> {
  if (days.length === 0) return new Map();
  const rows = await db
    .selectFrom('mailbox_plans')
    .select(['mailbox_id', 'day', 'target'])
    .where('day', 'in', days)
    .execute();
  return new Map(rows.map((row) => [`${row.mailbox_id} ${row.day}`, Number(row.target)]));
}
