import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { newId } from '../db/ids.js';
import type { Database, WebhookEndpointRow } from '../db/schema.js';
import { AppError, NotFoundError } from '../http/errors.js';
import { enqueueEvent, findDelivery, insertEndpoint } from '../webhooks/webhooks.repository.js';
import type { Alerts, EmailAlert, EmailAlertBody } from '../webhooks/webhooks.schemas.js';
import { toWebhook } from '../webhooks/webhooks.service.js';
import { alertRecipients, findEmailAlert, listChatDestinations } from './alerts.repository.js';

export interface AlertsServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** Whether the operator configured an SMTP server for email alerts (WARMUP_ALERT_SMTP_HOST and the rest). */
  emailConfigured: boolean;
}

export const EMAIL_UNAVAILABLE =
  'The operator has not configured an SMTP server for alerts (WARMUP_ALERT_SMTP_HOST and the settings beside it), so alerts cannot be emailed. Slack and Teams alerts work without it.';

function unavailable(path: string): AppError {
  return new AppError(409, 'email_alerts_unavailable', EMAIL_UNAVAILABLE, [
    { path, message: 'email alerts need an SMTP server the operator configures' },
  ]);
}

/**
 * The workspace's alerts: its email alert (an outbox endpoint of kind `email`, made the first time
 * an admin chooses events, so its alerts share the webhooks' retries and crash safety) and its
 * Slack and Teams destinations, which are webhook endpoints of those kinds.
 */
export function createAlertsService({ db, clock, emailConfigured }: AlertsServiceDeps) {
  async function emailAlert(workspaceId: string, row: WebhookEndpointRow | undefined): Promise<EmailAlert> {
    return {
      available: emailConfigured,
      unavailableReason: emailConfigured ? null : EMAIL_UNAVAILABLE,
      events: row ? (JSON.parse(row.events) as string[]) : [],
      recipients: (await alertRecipients(db, workspaceId)).length,
    };
  }

  async function get(workspaceId: string): Promise<Alerts> {
    return {
      email: await emailAlert(workspaceId, await findEmailAlert(db, workspaceId)),
      destinations: (await listChatDestinations(db, workspaceId)).map(toWebhook),
    };
  }

  /** Chooses the events emailed to the owners and admins; none turns email alerts off. */
  async function setEmail(workspaceId: string, body: EmailAlertBody): Promise<Alerts> {
    if (body.events.length > 0 && !emailConfigured) {
      throw unavailable('/body/events');
    }
    const now = clock.now().toISOString();
    const events = JSON.stringify(body.events);
    const enabled = body.events.length > 0 ? 1 : 0;
    const existing = await findEmailAlert(db, workspaceId);
    if (existing) {
      await db
        .updateTable('webhook_endpoints')
        .set({ events, enabled, updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', existing.id)
        .execute();
    } else {
      await insertEndpoint(db, {
        id: newId('whk'),
        workspace_id: workspaceId,
        kind: 'email',
        // nothing is posted or signed: the recipients are the owners and admins at the time of sending
        url: '',
        secret_encrypted: '',
        description: null,
        events,
        enabled,
        created_at: now,
        updated_at: now,
      });
    }
    return get(workspaceId);
  }

  return {
    get,

    setEmail,

    /** Queues a test alert to the owners and admins; the `webhooks` job mails it within seconds. */
    async testEmail(workspaceId: string): Promise<{ id: string; status: string }> {
      if (!emailConfigured) {
        throw unavailable('/body');
      }
      let endpoint = await findEmailAlert(db, workspaceId);
      if (!endpoint) {
        await setEmail(workspaceId, { events: [] });
        endpoint = await findEmailAlert(db, workspaceId);
      }
      const [deliveryId] = await enqueueEvent(db, {
        workspaceId,
        endpointId: endpoint!.id,
        type: 'webhook.test',
        at: clock.now(),
        data: { message: 'A test alert sent from Warmup.' },
      });
      const record = deliveryId ? await findDelivery(db, workspaceId, deliveryId) : undefined;
      if (!record) throw new NotFoundError('email alert not found');
      return { id: record.delivery.id, status: record.delivery.status };
    },
  };
}

export type AlertsService = ReturnType<typeof createAlertsService>;
