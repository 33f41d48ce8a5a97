/*
 * The engine's SQL on `mailboxes` (and its day plans in `mailbox_plans`): which mailboxes take
 * part, and the columns only the engine writes. Status changes and failure counting
 * (`status`, `failure_count`, `sync_failures`, `next_sync_at`, `last_error`…) are not here: every
 * write of those goes through mailboxes/mailbox-state.ts.
 * Functions take `db` or a transaction's `trx`, like the other repositories.
 */
import type { Kysely } from 'kysely';
import type { Database, MailboxRow } from '../db/schema.js';

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
 * address. An unproven one neither sends to nor receives from the others.
 */
export async function listActiveForPlanning(
  db: Kysely<Database>,
): Promise<
  Array<
    Pick<
      MailboxRow,
      'id' | 'email_normalized' | 'warmup' | 'last_plan_day' | 'warmup_day' | 'volume_factor' | 'auto_reply_at'
    >
  >
> {
  return db
    .selectFrom('mailboxes')
    .select(['id', 'email_normalized', 'warmup', 'last_plan_day', 'warmup_day', 'volume_factor', 'auto_reply_at'])
    .where('status', '=', 'active')
    .where('proven_at', 'is not', null)
    .orderBy('id')
    .execute();
}

/** The active mailboxes with their current score and the score recorded for `day`, if any. */
export async function listActiveWithReputation(
  db: Kysely<Database>,
  day: string,
): Promise<Array<{ id: string; reputation: MailboxRow['reputation']; recorded: number | null }>> {
  return db
    .selectFrom('mailboxes as m')
    .leftJoin('daily_stats as d', (join) => join.onRef('d.mailbox_id', '=', 'm.id').on('d.day', '=', day))
    .select(['m.id', 'm.reputation', 'd.reputation as recorded'])
    .where('m.status', '=', 'active')
    .execute();
}

/** The active mailboxes with what the health guard needs. */
export async function listActiveForHealth(
  db: Kysely<Database>,
): Promise<Array<Pick<MailboxRow, 'id' | 'email' | 'volume_factor'>>> {
  return db.selectFrom('mailboxes').select(['id', 'email', 'volume_factor']).where('status', '=', 'active').execute();
}

/** Active mailboxes to read, longest unread first; unless `dueAt` is undefined, only those whose next sync is due. */
export async function listActiveForSync(db: Kysely<Database>, dueAt: Date | undefined): Promise<Array<{ id: string }>> {
  let query = db.selectFrom('mailboxes').select('id').where('status', '=', 'active');
  if (dueAt !== undefined) {
    const dueIso = dueAt.toISOString();
    query = query.where((eb) => eb.or([eb('next_sync_at', 'is', null), eb('next_sync_at', '<=', dueIso)]));
  }
  return query.orderBy('last_sync_at').orderBy('id').execute();
}

// ---------------------------------------------------------------------------------------------
// The day's plan

/** The ramp positions (and last planned day) of those of `ids` that are still active. */
export async function findActiveRamps(
  trx: Kysely<Database>,
  ids: readonly string[],
): Promise<Map<string, Pick<MailboxRow, 'warmup_day' | 'volume_factor' | 'last_plan_day'>>> {
  if (ids.length === 0) return new Map();
  const rows = await trx
    .selectFrom('mailboxes')
    .select(['id', 'warmup_day', 'volume_factor', 'last_plan_day'])
    .where('id', 'in', ids)
    .where('status', '=', 'active')
    .execute();
  return new Map(rows.map((row) => [row.id, row]));
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
        created_at: createdAt,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['mailbox_id', 'day']).doUpdateSet((eb) => ({
        warmup_day: eb.ref('excluded.warmup_day'),
        target: eb.ref('excluded.target'),
        planned: eb.ref('excluded.planned'),
      })),
    )
    .execute();
  const alike = new Map<string, { plan: DecidedPlan; ids: string[] }>();
  for (const plan of plans) {
    const key = `${plan.day} ${plan.warmupDay} ${plan.target} ${plan.planned}`;
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
        plan_limited_by: plan.planned < plan.target ? 'pool_too_small' : null,
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
