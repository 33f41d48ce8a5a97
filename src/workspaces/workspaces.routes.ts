import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../http/common.schemas.js';
import { NotFoundError } from '../http/errors.js';
import type { WorkspacesService } from './workspaces.service.js';

const Workspace = Type.Object({
  id: Type.String(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});

/** `GET /api/workspace`: which workspace the presented key belongs to (the dashboard's sign-in check). */
export function workspaceRoutes(workspaces: WorkspacesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '',
      {
        schema: {
          tags: ['workspace'],
          operationId: 'getWorkspace',
          summary: 'The workspace of the API key',
          description: 'The workspace the presented API key belongs to; the dashboard signs in with this call.',
          response: { 200: Type.Object({ workspace: Workspace }), ...errorResponses(401, 429) },
        },
      },
      async (request) => {
        const workspace = await workspaces.findWorkspace(request.workspaceId);
        if (!workspace) throw new NotFoundError('workspace not found');
        return { workspace };
      },
    );
  };
}
