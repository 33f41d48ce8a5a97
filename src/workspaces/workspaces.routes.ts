import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses, IdParams } from '../http/common.schemas.js';
import { NotFoundError } from '../http/errors.js';
import {
  ApiKeyList,
  CreateApiKeyBody,
  CreatedApiKey,
  OnboardingEnvelope,
  UpdateWorkspaceSettingsBody,
  Workspace,
  WorkspaceSettingsEnvelope,
} from './workspaces.schemas.js';
import type { WorkspacesService } from './workspaces.service.js';
import { RoleSchema as KeyOrPersonRole } from '../http/access.js';

/** `GET /api/workspace`: which workspace the presented key belongs to (the dashboard's sign-in check). */
export function workspaceRoutes(workspaces: WorkspacesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '',
      {
        schema: {
          tags: ['workspace'],
          operationId: 'getWorkspace',
          summary: 'The workspace of the API key or session',
          description:
            'The workspace the presented API key (or the session) works in, and the role the caller has there; the dashboard signs in with an API key through this call.',
          response: {
            200: Type.Object({ workspace: Workspace, role: KeyOrPersonRole }),
            ...errorResponses(401, 403, 429),
          },
        },
      },
      async (request) => {
        const workspace = await workspaces.findWorkspace(request.workspaceId);
        if (!workspace) throw new NotFoundError('workspace not found');
        return { workspace, role: request.role ?? 'viewer' };
      },
    );

    app.get(
      '/settings',
      {
        schema: {
          tags: ['workspace'],
          operationId: 'getWorkspaceSettings',
          summary: "The workspace's settings",
          description: 'How warmup treats the mail of every mailbox of this workspace.',
          response: { 200: WorkspaceSettingsEnvelope, ...errorResponses(401, 403, 429) },
        },
      },
      async (request) => {
        const settings = await workspaces.findSettings(request.workspaceId);
        if (!settings) throw new NotFoundError('workspace not found');
        return { settings };
      },
    );

    app.get(
      '/onboarding',
      {
        schema: {
          tags: ['workspace'],
          operationId: 'getWorkspaceOnboarding',
          summary: "The workspace's onboarding checklist",
          description:
            'Four steps, each ticked from what the workspace holds now: mailboxes on two or more domains, DNS and blocklists clean for every mailbox, a second member or a pending invite, an enabled alert. `dismissed` is the `onboardingDismissed` setting: an owner or admin puts the list away with `PATCH /api/workspace/settings`.',
          response: { 200: OnboardingEnvelope, ...errorResponses(401, 403, 429) },
        },
      },
      async (request) => {
        const onboarding = await workspaces.onboarding(request.workspaceId);
        if (!onboarding) throw new NotFoundError('workspace not found');
        return { onboarding };
      },
    );

    app.patch(
      '/settings',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['workspace'],
          operationId: 'updateWorkspaceSettings',
          summary: "Change the workspace's settings",
          description: 'Only the fields given change. The engine uses the new value from its next look at the mail.',
          body: UpdateWorkspaceSettingsBody,
          response: { 200: WorkspaceSettingsEnvelope, ...errorResponses(400, 401, 403, 413, 415, 429) },
        },
      },
      async (request) => {
        const settings = await workspaces.updateSettings(request.workspaceId, request.body);
        if (!settings) throw new NotFoundError('workspace not found');
        return { settings };
      },
    );
  };
}

const keyTags = ['keys'];

/** `/api/keys`: the workspace's API keys, listed without the keys themselves, created and revoked. */
export function apiKeysRoutes(workspaces: WorkspacesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '',
      {
        config: { access: 'admin' },
        schema: {
          tags: keyTags,
          operationId: 'listApiKeys',
          summary: "List the workspace's API keys",
          description:
            'Oldest first, at most 100. Name, prefix, who made it, creation and last use (to the minute); never a key.',
          response: { 200: ApiKeyList, ...errorResponses(401, 429) },
        },
      },
      async (request) => ({ keys: await workspaces.listApiKeys(request.workspaceId, request.apiKeyId) }),
    );

    app.post(
      '',
      {
        config: { access: 'admin' },
        schema: {
          tags: keyTags,
          operationId: 'createApiKey',
          summary: 'Create an API key',
          description:
            'The answer holds the key itself (`apiKey`) this once; only its hash is stored. A workspace holds at most 100 keys (409 `key_limit_reached`). The key is recorded as made by the signed-in person (or by the maker of the key making it): removing that person revokes it, demoting them caps its role.',
          body: CreateApiKeyBody,
          response: { 201: CreatedApiKey, ...errorResponses(400, 401, 409, 413, 415, 429) },
        },
      },
      async (request, reply) => {
        const created = await workspaces.createApiKey(
          request.workspaceId,
          request.body.name,
          request.body.role,
          request.personId || null,
        );
        return reply.code(201).header('Location', `/api/keys/${created.key.id}`).send(created);
      },
    );

    app.post(
      '/:id/reissue',
      {
        config: { access: 'admin' },
        schema: {
          tags: keyTags,
          operationId: 'reissueApiKey',
          summary: 'Re-issue an API key under your name',
          description:
            'Replaces the key with a new one of the same name and role, made by you: the old key stops working at once and the new one is in the answer this once. Keeps an integration whose key was made by someone about to be removed.',
          params: IdParams,
          response: { 201: CreatedApiKey, ...errorResponses(401, 404, 429) },
        },
      },
      async (request, reply) => {
        const created = await workspaces.reissueApiKey(
          request.workspaceId,
          request.params.id,
          request.personId || null,
        );
        return reply.code(201).header('Location', `/api/keys/${created.key.id}`).send(created);
      },
    );

    app.delete(
      '/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: keyTags,
          operationId: 'revokeApiKey',
          summary: 'Revoke an API key',
          description:
            'The key stops working at once on every replica. The last key of a workspace without members cannot be revoked (409 `conflict`): create another first.',
          params: IdParams,
          response: { 204: Type.Null({ description: 'Revoked' }), ...errorResponses(401, 404, 409, 429) },
        },
      },
      async (request, reply) => {
        await workspaces.revokeApiKey(request.workspaceId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
