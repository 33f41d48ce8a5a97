import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { errorResponses, IdParams } from '../http/common.schemas.js';
import { AppError } from '../http/errors.js';
import type { PeerRow } from './peers.repository.js';
import {
  CreatePeerBody,
  HelloAnswer,
  HelloBody,
  OfferAnswer,
  PeerEnvelope,
  PeerIdentity,
  PeerList,
} from './peers.schemas.js';
import type { PeersService } from './peers.service.js';

const tags = ['peers'];

/** `/api/peers`: the installation's owner adds, pauses, resumes and removes peers. */
export function peersRoutes(peers: PeersService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/identity',
      {
        config: { access: 'installation-owner' },
        schema: {
          tags,
          operationId: 'getPeerIdentity',
          summary: "This installation's public key",
          description:
            'Give it to the operator of an installation you peer with, who adds it with your URL. Made on first use. Only the installation owner (403 `installation_owner_only`).',
          response: { 200: PeerIdentity, ...errorResponses(401, 403) },
        },
      },
      async () => peers.identity(),
    );

    app.get(
      '',
      {
        config: { access: 'installation-owner' },
        schema: {
          tags,
          operationId: 'listPeers',
          summary: 'List the peers',
          description: 'Every peer not removed, oldest first. Only the installation owner.',
          response: { 200: PeerList, ...errorResponses(401, 403) },
        },
      },
      async () => ({ peers: await peers.list() }),
    );

    app.post(
      '',
      {
        config: { access: 'installation-owner' },
        schema: {
          tags,
          operationId: 'addPeer',
          summary: 'Add a peer',
          description:
            "Stored `pending`, then greeted with a signed `POST /peer/v1/hello`: when the peer has added this installation too, both sides turn `active` at once; otherwise it stays `pending` with the reason in `lastError` until the peer adds us (its hello activates us). A removed peer's key added again revives it. 409 `peering_not_configured` without WARMUP_PUBLIC_URL; 409 `conflict` when the key is a peer already.",
          body: CreatePeerBody,
          response: { 201: PeerEnvelope, ...errorResponses(400, 401, 403, 409, 413, 415) },
        },
      },
      async (request, reply) => reply.code(201).send({ peer: await peers.add(request.body) }),
    );

    app.post(
      '/:id/pause',
      {
        config: { access: 'installation-owner' },
        schema: {
          tags,
          operationId: 'pausePeer',
          summary: 'Pause a peer',
          description:
            'Its signed requests are refused from now on (403 `peer_paused`). Pausing a paused peer changes nothing.',
          params: IdParams,
          response: { 200: PeerEnvelope, ...errorResponses(401, 403, 404) },
        },
      },
      async (request) => ({ peer: await peers.pause(request.params.id) }),
    );

    app.post(
      '/:id/resume',
      {
        config: { access: 'installation-owner' },
        schema: {
          tags,
          operationId: 'resumePeer',
          summary: 'Resume a paused peer',
          description: 'Back to `pending`, and greeted again: `active` when the peer still has this installation.',
          params: IdParams,
          response: { 200: PeerEnvelope, ...errorResponses(401, 403, 404) },
        },
      },
      async (request) => ({ peer: await peers.resume(request.params.id) }),
    );

    app.delete(
      '/:id',
      {
        config: { access: 'installation-owner' },
        schema: {
          tags,
          operationId: 'removePeer',
          summary: 'Remove a peer',
          description: 'Ends the peering at once: its requests are refused (403 `peer_removed`).',
          params: IdParams,
          response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
        },
      },
      async (request, reply) => {
        await peers.remove(request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}

/** Bodies of the peer protocol are small: a hello is under 200 bytes. */
export const PEER_BODY_LIMIT = 16 * 1024;
/** Requests a minute from one client address: a peer asks a few times an hour. */
export const PEER_REQUESTS_PER_MINUTE = 300;

declare module 'fastify' {
  interface FastifyRequest {
    /** The peer a signed /peer/v1 request comes from (set by the signature check). */
    peer: PeerRow | null;
  }
}

const rawBodies = new WeakMap<FastifyRequest, Buffer>();

/**
 * `/peer/v1`: what other installations call, every request signed (RFC 9421). The signature is
 * checked before the body's schema, so an unsigned request learns nothing about the bodies.
 */
export function peerProtocolRoutes(
  peers: PeersService,
  {
    perMinute = PEER_REQUESTS_PER_MINUTE,
    mail,
  }: {
    perMinute?: number;
    /** The mail half of the protocol (peer-mail.routes.ts), behind the same signature check. */
    mail?: FastifyPluginAsyncTypebox;
  } = {},
): FastifyPluginAsyncTypebox {
  return async (app) => {
    // before anything is parsed or looked up: the door is open to the internet
    await app.register(rateLimit, {
      max: perMinute,
      timeWindow: 60_000,
      hook: 'onRequest',
      keyGenerator: (request) => request.ip,
      errorResponseBuilder: (_request, context) =>
        new AppError(
          429,
          'rate_limited',
          `more than ${context.max} requests a minute from this address; retry in ${Math.ceil(context.ttl / 1000)} s`,
        ),
    });
    app.decorateRequest('peer', null);
    // what opens these routes, in the OpenAPI document as every /api route's access is
    app.addHook('onRoute', (route) => {
      if (route.schema) (route.schema as Record<string, unknown>)['x-required-access'] = 'peer-signature';
    });
    // The digest is over the bytes as sent: keep them, then parse them as the API does.
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const raw = body as Buffer;
      rawBodies.set(request, raw);
      if (raw.length === 0) return done(null, undefined);
      return parseJson(request, raw.toString('utf8'), done);
    });
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });
    app.addHook('preValidation', async (request) => {
      request.peer = await peers.authenticate({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: rawBodies.get(request) ?? Buffer.alloc(0),
      });
    });

    app.post(
      '/hello',
      {
        bodyLimit: PEER_BODY_LIMIT,
        schema: {
          tags: ['peer protocol'],
          operationId: 'peerHello',
          summary: 'A peer says it has added this installation',
          description:
            'Signed by the caller (RFC 9421, see the peer protocol reference). Turns the caller `active` here when this installation has added it.',
          security: [],
          body: HelloBody,
          response: { 200: HelloAnswer, ...errorResponses(400, 401, 403, 409, 413, 415, 429) },
        },
      },
      async (request) => peers.hello(request.peer!, request.body),
    );

    app.get(
      '/offer',
      {
        schema: {
          tags: ['peer protocol'],
          operationId: 'peerOffer',
          summary: 'What this installation offers the calling peer',
          description:
            'Signed by the caller. The participating addresses with their volumes and windows, and the daily ceiling of mail accepted from the caller.',
          security: [],
          response: { 200: OfferAnswer, ...errorResponses(401, 403, 409, 429) },
        },
      },
      async (request) => peers.offerFor(request.peer!),
    );

    if (mail) await app.register(mail);
  };
}
