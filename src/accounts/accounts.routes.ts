import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errorResponses, IdParams } from '../http/common.schemas.js';
import { clearSessionCookie, readCookie, SESSION_COOKIE, setScopedCookie, setSessionCookie } from '../http/cookies.js';
import { Workspace } from '../workspaces/workspaces.schemas.js';
import {
  AcceptInviteBody,
  ChangePasswordBody,
  CreatedInvite,
  CreateInviteBody,
  CreateWorkspaceBody,
  InviteList,
  InvitePreview,
  InviteTokenParams,
  Member,
  MemberAccess,
  MemberList,
  SessionInfo,
  SetupBody,
  SetupStatus,
  SignInBody,
  SwitchWorkspaceBody,
  UpdateMemberBody,
  UserIdParams,
} from './accounts.schemas.js';
import type { AccountsService, Caller, NewSession } from './accounts.service.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE_S } from './known-devices.js';

/** Where a password check comes from: the client address and the browser's device cookie. */
function callerOf(request: FastifyRequest): Caller {
  return { address: request.ip, device: readCookie(request, DEVICE_COOKIE) };
}

const NoContent = Type.Null({ description: 'Done' });

/** Sets the cookie of a session just made and answers with what the dashboard needs of it. */
async function startSession(
  accounts: AccountsService,
  request: FastifyRequest,
  reply: FastifyReply,
  session: NewSession,
  status: number,
) {
  setSessionCookie(request, reply, session.token, session.expiresAt);
  if (session.device) {
    // sent only to /api (sign-in, invites, password change), where password checks read it
    setScopedCookie(request, reply, {
      name: DEVICE_COOKIE,
      value: session.device,
      maxAgeS: DEVICE_COOKIE_MAX_AGE_S,
      path: '/api',
    });
  }
  const found = await accounts.authenticateSession(session.token);
  if (!found) throw new Error('a session just made was not found');
  return reply.code(status).send(await accounts.describeSession(found, session.expiresAt));
}

/** `/api/setup`: the first-run page's two calls, public until the first owner exists. */
export function setupRoutes(accounts: AccountsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '',
      {
        config: { access: 'public' },
        schema: {
          tags: ['accounts'],
          operationId: 'getSetupStatus',
          summary: 'Whether the first-run setup is still to do',
          description: 'Public. True until the first owner exists (made here or by `warmup user create --owner`).',
          response: { 200: SetupStatus },
        },
      },
      async () => {
        const setupRequired = await accounts.setupRequired();
        return { setupRequired, setupTokenRequired: setupRequired && accounts.setupTokenRequired() };
      },
    );

    app.post(
      '',
      {
        config: { access: 'public' },
        schema: {
          tags: ['accounts'],
          operationId: 'setUp',
          summary: 'Create the owner and the first workspace (once)',
          description:
            'Works once per installation: afterwards, and for the loser of two racing calls, 409 `conflict`. On a server reachable from other machines it needs the setup token printed in the server log (403 `setup_token_invalid`). Signs the owner in (sets the session cookie).',
          body: SetupBody,
          response: { 201: SessionInfo, ...errorResponses(400, 403, 409, 413, 415, 429) },
        },
      },
      async (request, reply) =>
        startSession(accounts, request, reply, await accounts.setup(request.body, callerOf(request)), 201),
    );
  };
}

/** `/api/session`: signing in and out of the dashboard, and the workspace a session works in. */
export function sessionRoutes(accounts: AccountsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '',
      {
        config: { access: 'public' },
        schema: {
          tags: ['accounts'],
          operationId: 'signIn',
          summary: 'Sign in with email and password',
          description:
            'Sets the session cookie (HttpOnly, SameSite=Lax, Secure over HTTPS) and a device cookie that marks the browser as known. Failed sign-ins are limited per account and per client address, and a known browser has a limit of its own, so strangers cannot lock it out (429 with Retry-After); 429 also when the server is busy checking passwords.',
          body: SignInBody,
          response: { 201: SessionInfo, ...errorResponses(400, 401, 413, 415, 429) },
        },
      },
      async (request, reply) =>
        startSession(accounts, request, reply, await accounts.signIn({ ...request.body, ...callerOf(request) }), 201),
    );

    app.get(
      '',
      {
        config: { access: 'signed-in' },
        schema: {
          tags: ['accounts'],
          operationId: 'getSession',
          summary: 'The signed-in person, their workspaces and the CSRF token',
          description: 'For the session cookie only (an API key gets 403). The dashboard reads it on every load.',
          response: { 200: SessionInfo, ...errorResponses(401, 403) },
        },
      },
      async (request) => {
        const session = await accounts.authenticateSession(sessionToken(request));
        if (!session) throw new Error('the authenticated session disappeared');
        return accounts.describeSession(session);
      },
    );

    app.delete(
      '',
      {
        config: { access: 'signed-in' },
        schema: {
          tags: ['accounts'],
          operationId: 'signOut',
          summary: 'Sign out this browser',
          description: 'Ends this session and clears its cookie; other sessions of the person stay.',
          response: { 204: NoContent, ...errorResponses(401, 403) },
        },
      },
      async (request, reply) => {
        await accounts.signOut(request.sessionId);
        clearSessionCookie(request, reply);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/sign-out-everywhere',
      {
        config: { access: 'signed-in' },
        schema: {
          tags: ['accounts'],
          operationId: 'signOutEverywhere',
          summary: 'End every session of the signed-in person, this one included',
          description: 'Every browser signed in as this person must sign in again.',
          response: { 204: NoContent, ...errorResponses(401, 403) },
        },
      },
      async (request, reply) => {
        await accounts.signOutEverywhere(request.userId);
        clearSessionCookie(request, reply);
        return reply.code(204).send(null);
      },
    );

    app.put(
      '/workspace',
      {
        config: { access: 'signed-in' },
        schema: {
          tags: ['accounts'],
          operationId: 'switchWorkspace',
          summary: 'Work in another of your workspaces',
          description:
            'The session works in that workspace from now on, with your role there; 404 for a workspace you do not belong to.',
          body: SwitchWorkspaceBody,
          response: { 200: SessionInfo, ...errorResponses(400, 401, 403, 404, 413, 415) },
        },
      },
      async (request) => {
        await accounts.switchWorkspace(request.sessionId, request.userId, request.body.workspaceId);
        const session = await accounts.authenticateSession(sessionToken(request));
        if (!session) throw new Error('the authenticated session disappeared');
        return accounts.describeSession(session);
      },
    );
  };
}

/** The cookie's token: the auth hook authenticated this very cookie. */
function sessionToken(request: FastifyRequest): string {
  return readCookie(request, SESSION_COOKIE) ?? '';
}

/** `/api/account`: the signed-in person's own account. */
export function accountRoutes(accounts: AccountsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/password',
      {
        config: { access: 'signed-in' },
        schema: {
          tags: ['accounts'],
          operationId: 'changePassword',
          summary: 'Change your password',
          description:
            'Every other session of yours ends; this one stays signed in. A wrong current password counts against the same limit as a failed sign-in (429 with Retry-After).',
          body: ChangePasswordBody,
          response: { 204: NoContent, ...errorResponses(400, 401, 403, 413, 415, 429) },
        },
      },
      async (request, reply) => {
        await accounts.changePassword(
          request.userId,
          request.sessionId,
          request.body.currentPassword,
          request.body.newPassword,
          callerOf(request),
        );
        return reply.code(204).send(null);
      },
    );
  };
}

/** `POST /api/workspaces`: a signed-in person makes another workspace and owns it. */
export function workspacesRoutes(accounts: AccountsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '',
      {
        config: { access: 'signed-in' },
        schema: {
          tags: ['accounts'],
          operationId: 'createWorkspace',
          summary: 'Create a workspace you own',
          description:
            "The session switches to the new workspace. Only the installation's owner may (403 `workspace_creation_closed`) unless WARMUP_WORKSPACE_CREATION=everyone; each person makes at most WARMUP_MAX_WORKSPACES_PER_PERSON (409 `workspace_limit_reached`).",
          body: CreateWorkspaceBody,
          response: { 201: Type.Object({ workspace: Workspace }), ...errorResponses(400, 401, 403, 409, 413, 415) },
        },
      },
      async (request, reply) => {
        const workspace = await accounts.createWorkspace(request.userId, request.sessionId, request.body.name);
        return reply.code(201).send({ workspace });
      },
    );
  };
}

const teamTags = ['team'];

/** `/api/workspace/members`: who belongs to the workspace, with which role (admins). */
export function membersRoutes(accounts: AccountsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '',
      {
        config: { access: 'admin' },
        schema: {
          tags: teamTags,
          operationId: 'listMembers',
          summary: "List the workspace's members",
          description: 'Everyone with access to the workspace, oldest member first, with their role.',
          response: { 200: MemberList, ...errorResponses(401, 403) },
        },
      },
      async (request) => ({ members: await accounts.listMembers(request.workspaceId) }),
    );

    app.get(
      '/:userId/access',
      {
        config: { access: 'admin' },
        schema: {
          tags: teamTags,
          operationId: 'getMemberAccess',
          summary: 'What removing a member revokes',
          description:
            'The API keys and open invites the member made in this workspace: removing them revokes all of these. Re-issue a key (`POST /api/keys/{id}/reissue`) first to keep it.',
          params: UserIdParams,
          response: { 200: MemberAccess, ...errorResponses(401, 403, 404) },
        },
      },
      async (request) => accounts.memberAccess(request.workspaceId, request.params.userId),
    );

    app.patch(
      '/:userId',
      {
        config: { access: 'admin' },
        schema: {
          tags: teamTags,
          operationId: 'updateMember',
          summary: "Change a member's role",
          description:
            'Only an owner grants, changes or takes away the owner role (403). The last owner keeps the role (409). The API keys and open invites the member made are capped at the new role.',
          params: UserIdParams,
          body: UpdateMemberBody,
          response: { 200: Member, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
        },
      },
      async (request) =>
        accounts.updateMemberRole(request.role!, request.workspaceId, request.params.userId, request.body.role),
    );

    app.delete(
      '/:userId',
      {
        config: { access: 'admin' },
        schema: {
          tags: teamTags,
          operationId: 'removeMember',
          summary: 'Remove a member',
          description:
            'Their sessions in this workspace end at once, and so do the API keys and open invites they made here (see `getMemberAccess`). Only an owner removes an owner (403); the last owner stays (409).',
          params: UserIdParams,
          response: { 204: NoContent, ...errorResponses(401, 403, 404, 409) },
        },
      },
      async (request, reply) => {
        await accounts.removeMember(request.role!, request.workspaceId, request.params.userId);
        return reply.code(204).send(null);
      },
    );
  };
}

/** `/api/workspace/invites`: invite links, expiring and single-use (admins). */
export function invitesRoutes(accounts: AccountsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '',
      {
        config: { access: 'admin' },
        schema: {
          tags: teamTags,
          operationId: 'createInvite',
          summary: 'Create an invite link',
          description:
            'The answer holds the link token this once (only its hash is stored); the link works once, until it expires (default 7 days). Inviting an owner takes an owner.',
          body: CreateInviteBody,
          response: { 201: CreatedInvite, ...errorResponses(400, 401, 403, 409, 413, 415) },
        },
      },
      async (request, reply) => {
        const created = await accounts.createInvite(
          { role: request.role!, userId: request.personId || null },
          request.workspaceId,
          request.body,
        );
        return reply.code(201).send(created);
      },
    );

    app.get(
      '',
      {
        config: { access: 'admin' },
        schema: {
          tags: teamTags,
          operationId: 'listInvites',
          summary: 'List open invites',
          description: 'Neither accepted nor expired, newest first, at most 100, with who made each; never a token.',
          response: { 200: InviteList, ...errorResponses(401, 403) },
        },
      },
      async (request) => ({ invites: await accounts.listInvites(request.workspaceId) }),
    );

    app.delete(
      '/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: teamTags,
          operationId: 'revokeInvite',
          summary: 'Revoke an open invite',
          description: 'The link stops working at once; an accepted invite cannot be revoked (404).',
          params: IdParams,
          response: { 204: NoContent, ...errorResponses(401, 403, 404) },
        },
      },
      async (request, reply) => {
        await accounts.revokeInvite(request.workspaceId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}

/** `/api/invites/:token`: the public side of an invite link. */
export function inviteLinkRoutes(accounts: AccountsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/:token',
      {
        config: { access: 'public' },
        schema: {
          tags: teamTags,
          operationId: 'getInvite',
          summary: 'What an invite link offers',
          description: '404 once the link was used, revoked or expired.',
          params: InviteTokenParams,
          response: { 200: InvitePreview, ...errorResponses(400, 404) },
        },
      },
      async (request) => accounts.previewInvite(request.params.token),
    );

    app.post(
      '/:token/accept',
      {
        config: { access: 'public' },
        schema: {
          tags: teamTags,
          operationId: 'acceptInvite',
          summary: 'Accept an invite',
          description:
            'An existing account signs in with its password (limited like sign-in); a new one is made with a name. An invite addressed to someone is accepted only as that address (`403 invite_email_mismatch` naming `/body/email` otherwise). Signs in to the invite’s workspace (sets the session cookie).',
          params: InviteTokenParams,
          body: AcceptInviteBody,
          response: { 201: SessionInfo, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429) },
        },
      },
      async (request, reply) =>
        startSession(
          accounts,
          request,
          reply,
          await accounts.acceptInvite(request.params.token, { ...request.body, ...callerOf(request) }),
          201,
        ),
    );
  };
}
