import { Type, type Static } from '@sinclair/typebox';
import { Pagination, PaginationQuery } from '../http/common.schemas.js';

/** The events an endpoint may subscribe to; `webhook.test` is only ever sent by the test-send route. */
export const WEBHOOK_EVENT_TYPES = [
  'mailbox.error',
  'mailbox.recovered',
  'mailbox.human_reply',
  'mailbox.receiver_filtering',
  'reputation.dropped',
  'check.failed',
  'placement_test.completed',
  'daily.summary',
  'domain.provider_signal',
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

/** How an endpoint's events are written. */
export const WEBHOOK_KINDS = ['standard', 'slack', 'teams'] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

const WebhookKindSchema = Type.Unsafe<WebhookKind>({
  type: 'string',
  enum: [...WEBHOOK_KINDS],
  description:
    '`standard` (default): the event as JSON, signed per Standard Webhooks. `slack`: a Slack incoming webhook message (text and blocks). `teams`: a Microsoft Teams incoming webhook message (an Adaptive Card). A Slack or Teams URL holds its secret: it is never shown back in full, and nothing is signed.',
});

export const CreateWebhookBody = Type.Object(
  { ...WebhookFieldsShape, kind: Type.Optional(WebhookKindSchema) },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const WebhookPatch = Type.Partial(Type.Object(WebhookFieldsShape), {
  additionalProperties: false,
  minProperties: 1,
  description: 'Any subset of the fields, at least one',
});
export type WebhookPatch = Static<typeof WebhookPatch>;

export const Webhook = Type.Object({
  id: Type.String(),
  kind: WebhookKindSchema,
  url: Type.String({
    description:
      'A Slack or Teams URL is shown as its scheme, host and last four characters (`https://hooks.slack.com/…AbCd`)',
  }),
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
  secret: Type.Optional(
    Type.String({
      description:
        'The `whsec_…` signing secret (Standard Webhooks) of a `standard` endpoint, shown this once; rotate it to get a new one. A Slack or Teams destination has none.',
    }),
  ),
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

// Alerts (alerts/): the workspace's email alert and its Slack and Teams destinations, in one view
// that every member may read.

export const EmailAlert = Type.Object({
  available: Type.Boolean({ description: 'False when the operator configured no SMTP server for alerts' }),
  unavailableReason: Type.Union([Type.String(), Type.Null()], { description: 'Why email alerts are unavailable' }),
  events: Type.Array(Type.String(), { description: 'The events emailed; empty: none' }),
  recipients: Type.Integer({ description: 'How many owners and admins the alerts go to' }),
});
export type EmailAlert = Static<typeof EmailAlert>;

export const EmailAlertBody = Type.Object(
  {
    events: Type.Array(WebhookEventTypeSchema, {
      maxItems: WEBHOOK_EVENT_TYPES.length,
      uniqueItems: true,
      description: 'The events to email to the owners and admins; empty turns email alerts off',
    }),
  },
  { additionalProperties: false },
);
export type EmailAlertBody = Static<typeof EmailAlertBody>;

export const Alerts = Type.Object({
  email: EmailAlert,
  destinations: Type.Array(Webhook, { description: 'The Slack and Teams destinations, their URLs masked' }),
});
export type Alerts = Static<typeof Alerts>;

export const AlertsEnvelope = Type.Object({ alerts: Alerts });
