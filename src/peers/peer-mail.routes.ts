import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { errorResponses } from '../http/common.schemas.js';
import { AppError } from '../http/errors.js';
import { AnnounceAnswer, AnnounceBody, EvidenceAnswer, EvidenceBody } from './peer-mail.schemas.js';
import type { PeerMail } from './peer-mail.js';
import { PEER_BODY_LIMIT } from './peers.routes.js';

/** The refusals that pause the calling peer: the operator's log hears of each, with the reason. */
const PAUSING = new Set(['peer_over_ceiling', 'junk_evidence']);

async function noting<T>(request: FastifyRequest, answer: () => Promise<T>): Promise<T> {
  try {
    return await answer();
  } catch (error) {
    if (error instanceof AppError && PAUSING.has(error.code))
      request.log.warn({ peerId: request.peer?.id, code: error.code }, error.message);
    throw error;
  }
}

/** The mail half of `/peer/v1`, registered inside peerProtocolRoutes: every request signed, checked first. */
export function peerMailRoutes(mail: PeerMail): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/messages',
      {
        bodyLimit: PEER_BODY_LIMIT,
        schema: {
          tags: ['peer protocol'],
          operationId: 'peerAnnounceMessages',
          summary: 'A peer announces mail it is about to send to addresses offered to it',
          description:
            'Signed by the caller. Each message from one of its offered addresses to one of ours offered to it, due between a day ago and two days ahead; a reply only in a thread of that pair. All are checked before any is kept (400 names the first at fault); announced again, a message counts once. Over the daily ceiling this installation gives the caller, the caller is paused (403 `peer_over_ceiling`) and nothing is kept.',
          security: [],
          body: AnnounceBody,
          response: { 200: AnnounceAnswer, ...errorResponses(400, 401, 403, 409, 413, 415, 429) },
        },
      },
      async (request) => noting(request, () => mail.acceptAnnouncements(request.peer!, request.body)),
    );

    app.post(
      '/evidence',
      {
        bodyLimit: PEER_BODY_LIMIT,
        schema: {
          tags: ['peer protocol'],
          operationId: 'peerReportEvidence',
          summary: 'A peer reports where it found the mail this installation sent it',
          description:
            'Signed by the caller. Each outcome is applied once, only to mail this installation sent the caller. A report on mail it was never sent, or found in the future or before it was sent, pauses the caller (422 `junk_evidence`) and nothing is applied.',
          security: [],
          body: EvidenceBody,
          response: { 200: EvidenceAnswer, ...errorResponses(400, 401, 403, 409, 413, 415, 422, 429) },
        },
      },
      async (request) => noting(request, () => mail.applyEvidence(request.peer!, request.body)),
    );
  };
}
