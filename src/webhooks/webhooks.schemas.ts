import { Type, type Static } from '@sinclair/typebox';
import { Pagination, PaginationQuery } from '../http/common.schemas.js';

/** The events an endpoint may subscribe to; `webhook.test` is only ever sent by the test-send route. */
export const WEBHOOK_EVENT_TYPES = [
  'mailbox.error',
  'mailbox.recovered',
  'reputation.dropped',
  'check.failed',
  'placement_test.completed',
  'daily.summary',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number] | 'webhook.test';

export const WebhookEventTypeSchema = Type.Unsafe<(typeof WEBHOOK_EVENT_TYPES)[number]>({
  type: 'string',
  enum: [...WEBHOOK_EVENT_TYPES],
});

/** Endpoints a workspace may register. */
export const MAX_WEBHOOK_ENDPOINTS = 20;

const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'An `https://` (or `http://`) URL. Its host must resolve to a public address unless the operator allows it (WARMUP_MAIL_ALLOWED_HOSTS, the same rule as mail hosts).',
});

const WebhookFieldsShape = {
  url: WebhookUrl,
  events: Type.Array(WebhookEventTypeSchema, {
    minItems: 1,
    maxItems: WEBHOOK_EVENT_TYPES.length,
    uniqueItems: true,
    description: 'The events delivered to this endpoint',
  }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
  enabled: Type.Optional(Type.Boolean({ description: 'Default true; a disabled endpoint is sent nothing new' })),
};

export const CreateWebhookBody = Type.Object(WebhookFieldsShape, { additionalProperties: false });
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const WebhookPatch = Type.Partial(Type.Object(WebhookFieldsShape), {
  additionalProperties: false,
  minProperties: 1,
  description: 'Any subset of the fields, at least one',
});
export type WebhookPatch = Static<typeof WebhookPatch>;

export const Webhook = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type Webhook = Static<typeof Webhook>;

export const WebhookEnvelope = Type.Object({ webhook: Webhook });
export const WebhookList = Type.Object({ webhooks: Type.Array(Webhook) });

export const WebhookWithSecret = Type.Object({
  webhook: Webhook,
  secret: Type.String({
    description: 'The `whsec_…` signing secret (Standard Webhooks), shown this once; rotate it to get a new one',
  }),
});
export type WebhookWithSecret = Static<typeof WebhookWithSecret>;

export const WebhookAttempt = Type.Object({
  attempt: Type.Integer(),
  attemptedAt: Type.String({ format: 'date-time' }),
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null: no answer" }),
  error: Type.Union([Type.String(), Type.Null()]),
  durationMs: Type.Integer(),
});

export const WebhookDelivery = Type.Object({
  id: Type.String({ description: 'The `webhook-id` header: the same on every attempt' }),
  eventType: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When a pending delivery is tried next',
  }),
  deliveredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  lastError: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  payload: Type.Unknown({ description: 'The body as sent: `{type, timestamp, data}`' }),
  attemptLog: Type.Array(WebhookAttempt, { description: 'Every attempt, oldest first' }),
});
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveryEnvelope = Type.Object({ delivery: WebhookDelivery });

export const WebhookDeliveryListQuery = Type.Object(PaginationQuery, { additionalProperties: false });
export type WebhookDeliveryListQuery = Static<typeof WebhookDeliveryListQuery>;

export const WebhookDeliveryList = Type.Object({ deliveries: Type.Array(WebhookDelivery), pagination: Pagination });
export type WebhookDeliveryList = Static<typeof WebhookDeliveryList>;
