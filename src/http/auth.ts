import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UnauthorizedError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every /api request; every repository query is scoped by it. */
    workspaceId: string;
  }
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** Requires a valid API key on every route registered inside `scope`. */
export function requireApiKey(
  scope: FastifyInstance,
  authenticate: (key: string) => Promise<string | undefined>,
): void {
  scope.decorateRequest('workspaceId', '');
  scope.addHook('onRequest', async (request) => {
    const key = bearerToken(request);
    if (!key) throw new UnauthorizedError();
    const workspaceId = await authenticate(key);
    if (!workspaceId) throw new UnauthorizedError('the API key is not valid');
    request.workspaceId = workspaceId;
  });
}
