import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { newId } from '../db/ids.js';
import type { Database, WebhookEndpointRow } from '../db/schema.js';
import { pagination } from '../http/common.schemas.js';
import { ConflictError, NotFoundError, ValidationError } from '../http/errors.js';
import { LimitExceededError } from '../http/limits.js';
import { DEFAULT_MAIL_POLICY, isInternalAddress, matchesHostList, type MailPolicy } from '../mail/policy.js';
import { encryptSecret } from '../secrets/secrets.js';
import {
  deleteEndpoint,
  enqueueEvent,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  updateEndpoint,
  type DeliveryRecord,
} from './webhooks.repository.js';
import {
  MAX_WEBHOOK_ENDPOINTS,
  type CreateWebhookBody,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryList,
  type WebhookDeliveryListQuery,
  type WebhookPatch,
  type WebhookWithSecret,
} from './webhooks.schemas.js';

export interface WebhooksServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
  /** Encrypts the signing secrets at rest. */
  secretKey: Buffer;
  /** Endpoint hosts follow the mail hosts' rules. */
  mailPolicy?: MailPolicy;
}

/** A Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes. */
function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A chat URL's path and query are its secret: only where it goes, and enough of its end to tell two apart. */
export function maskedUrl(text: string): string {
  const url = new URL(text);
  return `${url.protocol}//${url.host}/…${text.slice(-4)}`;
}

function isChat(kind: string): boolean {
  return kind === 'slack' || kind === 'teams';
}

export function toWebhook(row: WebhookEndpointRow): Webhook {
  return {
    id: row.id,
    kind: row.kind as Webhook['kind'],
    url: isChat(row.kind) ? maskedUrl(row.url) : row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    enabled: row.enabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toDelivery({ delivery, eventType, payload, attempts }: DeliveryRecord): WebhookDelivery {
  return {
    id: delivery.id,
    eventType,
    status: delivery.status as WebhookDelivery['status'],
    attempts: delivery.attempts,
    nextAttemptAt: delivery.status === 'pending' ? delivery.next_attempt_at : null,
    deliveredAt: delivery.delivered_at,
    lastError: delivery.last_error,
    createdAt: delivery.created_at,
    payload: JSON.parse(payload) as unknown,
    attemptLog: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      attemptedAt: attempt.attempted_at,
      statusCode: attempt.status_code,
      error: attempt.error,
      durationMs: attempt.duration_ms,
    })),
  };
}

export function createWebhooksService({ db, clock, secretKey, mailPolicy = DEFAULT_MAIL_POLICY }: WebhooksServiceDeps) {
  /**
   * An http(s) URL without credentials. A host given as an internal address is refused here; a
   * name is checked where it is resolved, at each attempt (it may point elsewhere by then).
   */
  function checkedUrl(text: string): string {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw ValidationError.field('/body/url', 'must be an absolute http:// or https:// URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw ValidationError.field('/body/url', 'must be an http:// or https:// URL');
    }
    if (url.username || url.password) {
      throw ValidationError.field('/body/url', 'must not hold a user name or password; the signature authenticates');
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && isInternalAddress(host) && !matchesHostList(mailPolicy.allowedHosts, host, host)) {
      throw ValidationError.field('/body/url', 'must not point to an internal address');
    }
    return url.toString();
  }

  async function existing(workspaceId: string, id: string): Promise<WebhookEndpointRow> {
    const row = await findEndpoint(db, workspaceId, id);
    if (!row) throw new NotFoundError(`webhook ${id} not found`);
    return row;
  }

  function sealedSecret(id: string): { secret: string; secret_encrypted: string } {
    const secret = generateSecret();
    // the endpoint id is authenticated with the ciphertext: copied onto another row it does not decrypt
    return { secret, secret_encrypted: encryptSecret(secretKey, secret, id) };
  }

  return {
    async list(workspaceId: string): Promise<Webhook[]> {
      return (await listEndpoints(db, workspaceId)).map(toWebhook);
    },

    async get(workspaceId: string, id: string): Promise<Webhook> {
      return toWebhook(await existing(workspaceId, id));
    },

    async create(workspaceId: string, body: CreateWebhookBody): Promise<WebhookWithSecret> {
      const url = checkedUrl(body.url);
      if ((await listEndpoints(db, workspaceId)).length >= MAX_WEBHOOK_ENDPOINTS) {
        throw new LimitExceededError(
          409,
          'webhook_limit_reached',
          `a workspace holds at most ${MAX_WEBHOOK_ENDPOINTS} webhooks; delete one first`,
        );
      }
      const now = clock.now().toISOString();
      const id = newId('whk');
      const kind = body.kind ?? 'standard';
      // a chat's incoming webhook checks no signature: a chat destination has no secret to show or keep
      const { secret, secret_encrypted } = isChat(kind)
        ? { secret: undefined, secret_encrypted: '' }
        : sealedSecret(id);
      const row: WebhookEndpointRow = {
        id,
        workspace_id: workspaceId,
        url,
        description: body.description ?? null,
        events: JSON.stringify(body.events),
        secret_encrypted,
        enabled: body.enabled === false ? 0 : 1,
        kind,
        created_at: now,
        updated_at: now,
      };
      await insertEndpoint(db, row);
      return { webhook: toWebhook(row), ...(secret === undefined ? {} : { secret }) };
    },

    async update(workspaceId: string, id: string, patch: WebhookPatch): Promise<Webhook> {
      await existing(workspaceId, id);
      const changes: Partial<WebhookEndpointRow> = { updated_at: clock.now().toISOString() };
      if (patch.url !== undefined) changes.url = checkedUrl(patch.url);
      if (patch.events !== undefined) changes.events = JSON.stringify(patch.events);
      if (patch.description !== undefined) changes.description = patch.description;
      if (patch.enabled !== undefined) changes.enabled = patch.enabled ? 1 : 0;
      const row = await updateEndpoint(db, workspaceId, id, changes);
      if (!row) throw new NotFoundError(`webhook ${id} not found`);
      return toWebhook(row);
    },

    async remove(workspaceId: string, id: string): Promise<void> {
      if (!(await deleteEndpoint(db, workspaceId, id))) throw new NotFoundError(`webhook ${id} not found`);
    },

    /** A new signing secret, shown this once; the old one stops signing at once. */
    async rotateSecret(workspaceId: string, id: string): Promise<WebhookWithSecret> {
      const endpoint = await existing(workspaceId, id);
      if (isChat(endpoint.kind)) {
        throw new ConflictError('a Slack or Teams destination has no signing secret; its URL is its secret');
      }
      const { secret, secret_encrypted } = sealedSecret(id);
      const row = await updateEndpoint(db, workspaceId, id, {
        secret_encrypted,
        updated_at: clock.now().toISOString(),
      });
      if (!row) throw new NotFoundError(`webhook ${id} not found`);
      return { webhook: toWebhook(row), secret };
    },

    /** Queues a `webhook.test` event for this endpoint alone (enabled or not); the `webhooks` job delivers it. */
    async sendTest(workspaceId: string, id: string): Promise<WebhookDelivery> {
      const endpoint = await existing(workspaceId, id);
      const [deliveryId] = await enqueueEvent(db, {
        workspaceId,
        endpointId: endpoint.id,
        type: 'webhook.test',
        at: clock.now(),
        data: { webhook: { id: endpoint.id, url: toWebhook(endpoint).url }, message: 'A test event sent from Warmup.' },
      });
      const record = deliveryId ? await findDelivery(db, workspaceId, deliveryId) : undefined;
      if (!record) throw new NotFoundError(`webhook ${id} not found`);
      return toDelivery(record);
    },

    async listDeliveries(
      workspaceId: string,
      id: string,
      query: WebhookDeliveryListQuery,
    ): Promise<WebhookDeliveryList> {
      await existing(workspaceId, id);
      const page = query.page ?? 1;
      const limit = query.limit ?? 20;
      const { records, total } = await listDeliveries(db, workspaceId, id, { offset: (page - 1) * limit, limit });
      return { deliveries: records.map(toDelivery), pagination: pagination(page, limit, total) };
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
