import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { bearerToken } from '../http/auth.js';
import { UnauthorizedError } from '../http/errors.js';
import { hashApiKey, sameHash } from '../workspaces/api-keys.js';
import { METRICS_CONTENT_TYPE, type Metrics } from './metrics.js';

/**
 * GET /metrics for Prometheus, behind its own bearer token (WARMUP_METRICS_TOKEN): the numbers
 * describe the whole installation, so no workspace's API key opens them. Without a token the
 * route does not exist.
 */
export function metricsRoutes(metrics: Metrics, token: string) {
  const tokenHash = hashApiKey(token);
  return async (app: FastifyInstance) => {
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      const given = bearerToken(request);
      // Hashes of equal length compared in constant time: the comparison tells nothing about the token.
      if (given === undefined || !sameHash(hashApiKey(given), tokenHash)) {
        throw new UnauthorizedError('a valid metrics token is required: Authorization: Bearer <WARMUP_METRICS_TOKEN>');
      }
      return reply.type(METRICS_CONTENT_TYPE).send(await metrics.render());
    });
  };
}

/** Times every answered request by its route pattern, so the series stay few whatever the URLs. */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  // synchronous: an async hook costs a promise on every request for no waiting
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime,
    );
    done();
  });
}

/**
 * GET /metrics of a `warmup worker` (which serves no API): a bare HTTP listener on its own port
 * (WARMUP_METRICS_PORT), behind the same token. Anything else is a 404.
 */
export async function listenForMetrics(
  metrics: Metrics,
  options: { token: string; port: number; host: string },
): Promise<http.Server> {
  const tokenHash = hashApiKey(options.token);
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const given = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
    if (given === undefined || !sameHash(hashApiKey(given), tokenHash)) {
      response.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('unauthorized\n');
      return;
    }
    metrics.render().then(
      (text) => response.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(text),
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return server;
}
