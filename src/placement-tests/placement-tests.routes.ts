import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, IdParams } from '../http/common.schemas.js';
import {
  CreatePlacementTestBody,
  PlacementTestEnvelope,
  PlacementTestList,
  PlacementTestListQuery,
} from './placement-tests.schemas.js';
import type { PlacementTestsService } from './placement-tests.service.js';

const tags = ['placement-tests'];

/** `/api/placement-tests`: where the user's own copy lands, per receiving provider. */
export function placementTestsRoutes(placementTests: PlacementTestsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '',
      {
        schema: {
          tags,
          operationId: 'createPlacementTest',
          summary: 'Test where a message of your own lands',
          description:
            "The sender mailbox sends the subject and body once to each of up to 10 seed mailboxes of the workspace's pool (active and connected, spread across providers), each copy with its own Message-ID. Each copy is a send of the sender's day: a test the day's budget has no room for is refused (409, naming the room left); a test made outside the sender's send window waits for it (`queued`). The engine then finds each copy in its seed (inbox, promotions, spam or another folder; `missing` when not found within 30 minutes), removes it from the seed without rescuing it from spam, and reports `completed` (webhook event `placement_test.completed`). Placement tests never count in the warmup statistics.",
          body: CreatePlacementTestBody,
          response: { 201: PlacementTestEnvelope, ...errorResponses(400, 401, 409, 413, 415, 429) },
        },
      },
      async (request, reply) => {
        const placementTest = await placementTests.create(request.workspaceId, request.body);
        return reply.code(201).header('Location', `/api/placement-tests/${placementTest.id}`).send({ placementTest });
      },
    );

    app.get(
      '',
      {
        schema: {
          tags,
          operationId: 'listPlacementTests',
          summary: "List the workspace's placement tests",
          description: 'Newest first, with their results.',
          querystring: PlacementTestListQuery,
          response: { 200: PlacementTestList, ...errorResponses(400, 401, 429) },
        },
      },
      async (request) => placementTests.list(request.workspaceId, request.query),
    );

    app.get(
      '/:id',
      {
        schema: {
          tags,
          operationId: 'getPlacementTest',
          summary: 'A placement test and where its copies landed',
          description: 'Totals, per receiving provider, and per seed mailbox.',
          params: IdParams,
          response: { 200: PlacementTestEnvelope, ...errorResponses(401, 404, 429) },
        },
      },
      async (request) => ({ placementTest: await placementTests.get(request.workspaceId, request.params.id) }),
    );
  };
}
