import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses, IdParams } from '../http/common.schemas.js';
import {
  CreateWebhookBody,
  WebhookDeliveryEnvelope,
  WebhookDeliveryList,
  WebhookDeliveryListQuery,
  WebhookEnvelope,
  WebhookList,
  WebhookPatch,
  WebhookWithSecret,
} from './webhooks.schemas.js';
import type { WebhooksService } from './webhooks.service.js';

const tags = ['webhooks'];

/** `/api/webhooks`: the workspace's endpoints, their delivery logs, and a test send. */
export function webhooksRoutes(webhooks: WebhooksService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'listWebhooks',
          summary: "List the workspace's webhook endpoints",
          description: 'Oldest first, at most 20. Never a signing secret.',
          response: { 200: WebhookList, ...errorResponses(401, 429) },
        },
      },
      async (request) => ({ webhooks: await webhooks.list(request.workspaceId) }),
    );

    app.post(
      '',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'createWebhook',
          summary: 'Register a webhook endpoint',
          description:
            'The answer holds the `whsec_…` signing secret this once. Events are signed per Standard Webhooks (headers `webhook-id`, `webhook-timestamp`, `webhook-signature`). A workspace holds at most 20 endpoints (409 `webhook_limit_reached`).',
          body: CreateWebhookBody,
          response: { 201: WebhookWithSecret, ...errorResponses(400, 401, 409, 413, 415, 429) },
        },
      },
      async (request, reply) => {
        const created = await webhooks.create(request.workspaceId, request.body);
        return reply.code(201).header('Location', `/api/webhooks/${created.webhook.id}`).send(created);
      },
    );

    app.get(
      '/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'getWebhook',
          summary: 'A webhook endpoint',
          description: 'Its URL, events, description and whether it is enabled; never its signing secret.',
          params: IdParams,
          response: { 200: WebhookEnvelope, ...errorResponses(401, 404, 429) },
        },
      },
      async (request) => ({ webhook: await webhooks.get(request.workspaceId, request.params.id) }),
    );

    app.patch(
      '/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'updateWebhook',
          summary: 'Change a webhook endpoint',
          description: 'URL, events, description or enabled. Deliveries already queued keep going to the endpoint.',
          params: IdParams,
          body: WebhookPatch,
          response: { 200: WebhookEnvelope, ...errorResponses(400, 401, 404, 413, 415, 429) },
        },
      },
      async (request) => ({ webhook: await webhooks.update(request.workspaceId, request.params.id, request.body) }),
    );

    app.delete(
      '/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'deleteWebhook',
          summary: 'Delete a webhook endpoint',
          description: 'Its pending deliveries and its delivery log go with it.',
          params: IdParams,
          response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 404, 429) },
        },
      },
      async (request, reply) => {
        await webhooks.remove(request.workspaceId, request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/:id/rotate-secret',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'rotateWebhookSecret',
          summary: "Replace a webhook endpoint's signing secret",
          description: 'The new secret is shown this once and signs every attempt from now on.',
          params: IdParams,
          response: { 200: WebhookWithSecret, ...errorResponses(401, 404, 429) },
        },
      },
      async (request) => webhooks.rotateSecret(request.workspaceId, request.params.id),
    );

    app.post(
      '/:id/test',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'testWebhook',
          summary: 'Send a test event to a webhook endpoint',
          description:
            'Queues a `webhook.test` event for this endpoint alone; it is delivered within seconds, with retries like any other. Follow it in the delivery log.',
          params: IdParams,
          response: { 202: WebhookDeliveryEnvelope, ...errorResponses(401, 404, 429) },
        },
      },
      async (request, reply) =>
        reply.code(202).send({ delivery: await webhooks.sendTest(request.workspaceId, request.params.id) }),
    );

    app.get(
      '/:id/deliveries',
      {
        config: { access: 'admin' },
        schema: {
          tags,
          operationId: 'listWebhookDeliveries',
          summary: "A webhook endpoint's delivery log",
          description:
            'Newest first, paginated; each delivery with its payload and every attempt (time, HTTP status or error, duration). Kept 30 days.',
          params: IdParams,
          querystring: WebhookDeliveryListQuery,
          response: { 200: WebhookDeliveryList, ...errorResponses(400, 401, 404, 429) },
        },
      },
      async (request) => webhooks.listDeliveries(request.workspaceId, request.params.id, request.query),
    );
  };
}
