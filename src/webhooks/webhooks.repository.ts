import type { Insertable, Kysely, Transaction } from 'kysely';
import { newId } from '../db/ids.js';
import { newestFirstPage, type PageWindow } from '../db/list-query.js';
import type { Dialect } from '../db/database.js';
import type {
  Database,
  WebhookAttemptRow,
  WebhookDeliveryRow,
  WebhookEndpointRow,
  WebhookEndpointsTable,
} from '../db/schema.js';
import type { WebhookEventType } from './webhooks.schemas.js';

// Every query that serves the API takes the workspace id: a forgotten check in a route cannot leak.

// The workspace's email alert is an endpoint too (kind `email`, alerts/): the webhooks API never shows or changes it.

export async function listEndpoints(db: Kysely<Database>, workspaceId: string): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('kind', '!=', 'email')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function findEndpoint(
  db: Kysely<Database>,
  workspaceId: string,
  id: string,
): Promise<WebhookEndpointRow | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('kind', '!=', 'email')
    .executeTakeFirst();
}

export async function insertEndpoint(db: Kysely<Database>, row: Insertable<WebhookEndpointsTable>): Promise<void> {
  await db.insertInto('webhook_endpoints').values(row).execute();
}

export async function updateEndpoint(
  db: Kysely<Database>,
  workspaceId: string,
  id: string,
  changes: Partial<Omit<WebhookEndpointRow, 'id' | 'workspace_id' | 'created_at'>>,
): Promise<WebhookEndpointRow | undefined> {
  return db
    .updateTable('webhook_endpoints')
    .set(changes)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('kind', '!=', 'email')
    .returningAll()
    .executeTakeFirst();
}

export async function deleteEndpoint(db: Kysely<Database>, workspaceId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('webhook_endpoints')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('kind', '!=', 'email')
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export interface NewWebhookEvent {
  workspaceId: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
  at: Date;
  /** An event that several workers may notice (a daily one) is made once per key. */
  dedupeKey?: string;
  /** Only to this endpoint, whatever it subscribes to (the test send). */
  endpointId?: string;
}

function inTransaction<T>(db: Kysely<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db as Transaction<Database>) : db.transaction().execute(work);
}

/**
 * Writes an event into the outbox with a pending delivery for each enabled endpoint of the
 * workspace that subscribes to it, in one transaction (the caller's when it is in one). Nothing is
 * written when no endpoint wants it, or when an event with the same dedupe key exists.
 * Returns the new deliveries' ids.
 */
export async function enqueueEvent(db: Kysely<Database>, event: NewWebhookEvent): Promise<string[]> {
  return inTransaction(db, async (trx) => {
    let endpoints = trx
      .selectFrom('webhook_endpoints')
      .select(['id', 'events'])
      .where('workspace_id', '=', event.workspaceId);
    endpoints = event.endpointId ? endpoints.where('id', '=', event.endpointId) : endpoints.where('enabled', '=', 1);
    const targets = (await endpoints.execute()).filter(
      (endpoint) => event.endpointId !== undefined || (JSON.parse(endpoint.events) as string[]).includes(event.type),
    );
    if (targets.length === 0) return [];
    const at = event.at.toISOString();
    const id = newId('evt', event.at.getTime());
    const payload = JSON.stringify({ type: event.type, timestamp: at, data: event.data });
    const inserted = await trx
      .insertInto('webhook_events')
      .values({
        id,
        workspace_id: event.workspaceId,
        type: event.type,
        payload,
        dedupe_key: event.dedupeKey ?? null,
        created_at: at,
      })
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) return [];
    const deliveries = targets.map((endpoint) => ({
      id: newId('msg', event.at.getTime()),
      event_id: id,
      endpoint_id: endpoint.id,
      workspace_id: event.workspaceId,
      status: 'pending',
      next_attempt_at: at,
      created_at: at,
    }));
    await trx.insertInto('webhook_deliveries').values(deliveries).execute();
    return deliveries.map((delivery) => delivery.id);
  });
}

/** A claimed delivery with what sending it needs. */
export interface DueDelivery {
  id: string;
  attempts: number;
  payload: string;
  url: string;
  endpointId: string;
  secretEncrypted: string;
  /** How the event is written: standard (signed JSON), slack, teams or email. */
  kind: string;
  workspaceId: string;
  createdAt: string;
}

/**
 * Claims up to `limit` pending deliveries that are due and not held by a live claim, the way the
 * sender claims planned mail (an UPDATE over SELECT … [FOR UPDATE SKIP LOCKED]), so any number of
 * workers share the outbox and a dead worker's claims expire into another's hands.
 */
export async function claimDueDeliveries(
  db: Kysely<Database>,
  criteria: { dialect: Dialect; now: Date; workerId: string; leaseUntil: Date; limit: number },
): Promise<DueDelivery[]> {
  const nowIso = criteria.now.toISOString();
  const claimed = await db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: criteria.workerId, lease_expires_at: criteria.leaseUntil.toISOString() })
    .where('id', 'in', (eb) => {
      let due = eb
        .selectFrom('webhook_deliveries as d')
        .select('d.id')
        .where('d.status', '=', 'pending')
        .where('d.next_attempt_at', '<=', nowIso)
        .where((w) => w.or([w('d.lease_expires_at', 'is', null), w('d.lease_expires_at', '<=', nowIso)]))
        .orderBy('d.next_attempt_at')
        .limit(criteria.limit);
      if (criteria.dialect === 'postgres') due = due.forUpdate(['d']).skipLocked();
      return due;
    })
    // checked again on the row itself: on PostgreSQL another worker may have claimed it since the subquery's snapshot
    .where('status', '=', 'pending')
    .where((w) => w.or([w('lease_expires_at', 'is', null), w('lease_expires_at', '<=', nowIso)]))
    .returning('id')
    .execute();
  if (claimed.length === 0) return [];
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .innerJoin('webhook_endpoints as p', 'p.id', 'd.endpoint_id')
    .select([
      'd.id',
      'd.attempts',
      'd.created_at as createdAt',
      'e.payload',
      'p.url',
      'p.id as endpointId',
      'p.secret_encrypted as secretEncrypted',
      'p.kind',
      'd.workspace_id as workspaceId',
    ])
    .where(
      'd.id',
      'in',
      claimed.map((row) => row.id),
    )
    .where('d.lease_owner', '=', criteria.workerId)
    .orderBy('d.next_attempt_at')
    .execute();
}

export interface AttemptOutcome {
  attemptedAt: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** delivered: a 2xx; pending: tried again at `nextAttemptAt`; failed: that was the last attempt. */
  status: 'delivered' | 'pending' | 'failed';
  nextAttemptAt: Date | null;
}

/**
 * Logs one attempt and moves the delivery on, only while this worker still holds its claim: a
 * worker that stalled past its lease leaves the row to whoever took it over (the receiver may then
 * get the message twice, with the same webhook-id: at least once, never lost).
 */
export async function recordAttempt(
  db: Kysely<Database>,
  delivery: Pick<DueDelivery, 'id' | 'attempts'>,
  workerId: string,
  outcome: AttemptOutcome,
): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const attempt = delivery.attempts + 1;
    const updated = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: outcome.status,
        attempts: attempt,
        next_attempt_at: (outcome.nextAttemptAt ?? outcome.attemptedAt).toISOString(),
        lease_owner: null,
        lease_expires_at: null,
        last_error: outcome.status === 'delivered' ? null : outcome.error,
        delivered_at: outcome.status === 'delivered' ? outcome.attemptedAt.toISOString() : null,
      })
      .where('id', '=', delivery.id)
      .where('lease_owner', '=', workerId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return false;
    await trx
      .insertInto('webhook_attempts')
      .values({
        id: newId('att', outcome.attemptedAt.getTime()),
        delivery_id: delivery.id,
        attempt,
        attempted_at: outcome.attemptedAt.toISOString(),
        status_code: outcome.statusCode,
        error: outcome.error,
        duration_ms: Math.round(outcome.durationMs),
      })
      .execute();
    return true;
  });
}

/** Gives back a stopping worker's claims so another takes them over at once. */
export async function releaseDeliveryClaims(db: Kysely<Database>, workerId: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ lease_owner: null, lease_expires_at: null })
    .where('lease_owner', '=', workerId)
    .execute();
}

export interface DeliveryRecord {
  delivery: WebhookDeliveryRow;
  eventType: string;
  payload: string;
  attempts: WebhookAttemptRow[];
}

/** One page of an endpoint's deliveries, newest first, each with its attempts. */
export async function listDeliveries(
  db: Kysely<Database>,
  workspaceId: string,
  endpointId: string,
  page: PageWindow,
): Promise<{ records: DeliveryRecord[]; total: number }> {
  const { rows, total } = await newestFirstPage(
    db.selectFrom('webhook_deliveries').where('workspace_id', '=', workspaceId).where('endpoint_id', '=', endpointId),
    'created_at',
    page,
  );
  return { records: await withEventsAndAttempts(db, rows), total };
}

export async function findDelivery(
  db: Kysely<Database>,
  workspaceId: string,
  id: string,
): Promise<DeliveryRecord | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? (await withEventsAndAttempts(db, [row]))[0] : undefined;
}

async function withEventsAndAttempts(db: Kysely<Database>, rows: WebhookDeliveryRow[]): Promise<DeliveryRecord[]> {
  if (rows.length === 0) return [];
  const events = await db
    .selectFrom('webhook_events')
    .select(['id', 'type', 'payload'])
    .where(
      'id',
      'in',
      rows.map((row) => row.event_id),
    )
    .execute();
  const attempts = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      rows.map((row) => row.id),
    )
    .orderBy('attempt')
    .execute();
  const eventById = new Map(events.map((event) => [event.id, event]));
  return rows.map((delivery) => {
    const event = eventById.get(delivery.event_id);
    return {
      delivery,
      eventType: event?.type ?? 'unknown',
      payload: event?.payload ?? 'null',
      attempts: attempts.filter((attempt) => attempt.delivery_id === delivery.id),
    };
  });
}

/** Drops events (with their deliveries and attempts) older than `before` that are no longer pending. */
export async function pruneEvents(db: Kysely<Database>, before: Date): Promise<void> {
  const beforeIso = before.toISOString();
  await db
    .deleteFrom('webhook_events')
    .where('created_at', '<', beforeIso)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('webhook_deliveries')
            .select('id')
            .whereRef('webhook_deliveries.event_id', '=', 'webhook_events.id')
            .where('webhook_deliveries.status', '=', 'pending'),
        ),
      ),
    )
    .execute();
}

/** Workspaces with an enabled endpoint that subscribes to `type`. */
export async function subscribedWorkspaces(db: Kysely<Database>, type: WebhookEventType): Promise<string[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(['workspace_id', 'events'])
    .where('enabled', '=', 1)
    .execute();
  return [
    ...new Set(
      rows.filter((row) => (JSON.parse(row.events) as string[]).includes(type)).map((row) => row.workspace_id),
    ),
  ];
}
