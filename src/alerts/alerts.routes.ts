import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses } from '../http/common.schemas.js';
import { AlertsEnvelope, EmailAlertBody } from '../webhooks/webhooks.schemas.js';
import type { AlertsService } from './alerts.service.js';

const tags = ['alerts'];

/** `/api/alerts`: email alerts to the owners and admins, and the Slack and Teams destinations. */
export function alertsRoutes(alerts: AlertsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '',
      {
        config: { access: 'viewer' },
        schema: {
          tags,
          operationId: 'getAlerts',
          summary: "The workspace's alerts",
          description:
            'Which events are emailed to the owners and admins (or why email alerts are unavailable), and the Slack and Teams destinations with their URLs masked. Every member may read it; owners and admins change it (`PUT /api/alerts/email`; destinations through `/api/webhooks` with `kind`).',
          response: { 200: AlertsEnvelope, ...errorResponses(401, 429) },
        },
      },
      async (request) => ({ alerts: await alerts.get(request.workspaceId) }),
    );

    app.put(
      '/email',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'setEmailAlerts',
          summary: 'Choose the events emailed to the owners and admins',
          description:
            'An empty list turns email alerts off. Without an SMTP server for alerts, a non-empty list is a 409 `email_alerts_unavailable` naming `/body/events`.',
          body: EmailAlertBody,
          response: { 200: AlertsEnvelope, ...errorResponses(400, 401, 403, 409, 413, 415, 429) },
        },
      },
      async (request) => ({ alerts: await alerts.setEmail(request.workspaceId, request.body) }),
    );

    app.post(
      '/email/test',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'testEmailAlerts',
          summary: 'Email a test alert to the owners and admins',
          description: 'Queued at once and mailed within seconds, with retries like any alert.',
          response: {
            202: Type.Object({ delivery: Type.Object({ id: Type.String(), status: Type.String() }) }),
            ...errorResponses(401, 403, 409, 429),
          },
        },
      },
      async (request, reply) => reply.code(202).send({ delivery: await alerts.testEmail(request.workspaceId) }),
    );
  };
}
