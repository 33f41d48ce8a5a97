import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { bearerToken, createFailedAuthLimiter, hashToken, requireAccess } from './http/auth.js';
import { readCookie, SESSION_COOKIE } from './http/cookies.js';
import { changesKeyAccess, createAuthenticationCache } from './http/auth-cache.js';
import { AppError } from './http/errors.js';
import { frameworkError, registerErrorHandling, registerNotFound, writeClientError } from './http/error-handler.js';
import { ProblemSchema } from './http/problem.js';
import { rejectControlCharacters, validatorCompiler } from './http/validation.js';
import { BODY_LIMIT } from './http/limits.js';
import { SECURITY_HEADERS } from './http/security-headers.js';
import { hashApiKey } from './workspaces/api-keys.js';
import type { Services } from './services.js';
import { dashboardRoutes } from './dashboard/dashboard.routes.js';
import { apiKeysRoutes, workspaceRoutes } from './workspaces/workspaces.routes.js';
import { templatesRoutes } from './templates/templates.routes.js';
import { mailboxesRoutes } from './mailboxes/mailboxes.routes.js';
import { mailboxStatsRoutes, statsRoutes } from './stats/stats.routes.js';
import { oauthCallbackRoutes, oauthRoutes } from './oauth/oauth.routes.js';
import type { Metrics } from './metrics/metrics.js';
import { alertsRoutes } from './alerts/alerts.routes.js';
import { dmarcRoutes } from './dmarc/dmarc.routes.js';
import { feedsRoutes } from './feeds/feeds.routes.js';
import { peerMailRoutes } from './peers/peer-mail.routes.js';
import { peerProtocolRoutes, peersRoutes } from './peers/peers.routes.js';
import { webhooksRoutes } from './webhooks/webhooks.routes.js';
import { mailboxChecksRoutes } from './checks/checks.routes.js';
import { mailboxVerdictsRoutes } from './verdicts/verdicts.routes.js';
import { placementTestsRoutes } from './placement-tests/placement-tests.routes.js';
import { metricsRoutes, registerRequestMetrics } from './metrics/metrics.routes.js';
import {
  accountRoutes,
  inviteLinkRoutes,
  invitesRoutes,
  membersRoutes,
  sessionRoutes,
  setupRoutes,
  workspacesRoutes,
} from './accounts/accounts.routes.js';
import { oidcSignInRoutes } from './oidc/oidc.routes.js';
import { OIDC_CALLBACK_PATH, OIDC_START_PATH } from './oidc/oidc.config.js';

export interface AppOptions {
  services: Services;
  /** Requests per minute per API key; 0 turns the limit off. */
  rateLimit: number;
  /** Requests with a wrong API key per minute per client address (per process); 0 turns the limit off. */
  authFailureLimit?: number;
  /** Take the client address from X-Forwarded-For: only behind a proxy that sets it. */
  trustProxy?: boolean;
  /** The process logger (pino); without one the app logs nothing. */
  logger?: FastifyBaseLogger;
  /** Checks the database for GET /health. */
  healthCheck: () => Promise<void>;
  /** A request that takes longer is logged at `info` (default 1 s); every other one at `debug`. */
  slowRequestMs?: number;
  /** Prometheus metrics of this process; GET /metrics is served only with `metricsToken` set. */
  metrics?: Metrics;
  /** The bearer token GET /metrics requires (WARMUP_METRICS_TOKEN). */
  metricsToken?: string;
  /**
   * How long a valid API key is remembered (WARMUP_AUTH_CACHE_MS): a key revoked on another
   * replica works here for at most this long. 0 (the default here) looks every key up.
   */
  authCacheMs?: number;
  /** Requests a minute to /peer/v1 from one client address (default PEER_REQUESTS_PER_MINUTE). */
  peerRequestsPerMinute?: number;
}

export const SLOW_REQUEST_MS = 1_000;

/**
 * Fastify's own two lines per request at `info` are gigabytes an hour under load: one line per
 * request instead, at `debug` unless it failed (5xx) or was slow. Errors keep their own line.
 */
class RequestLogController extends LogController {
  private readonly slowRequestMs: number;

  constructor(slowRequestMs: number, options: { disableRequestLogging: boolean }) {
    super(options);
    this.slowRequestMs = slowRequestMs;
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const responseTime = Math.round(reply.elapsedTime);
    const level = error || reply.statusCode >= 500 || responseTime >= this.slowRequestMs ? 'info' : 'debug';
    // At `info` (the default) nearly every request is a `debug` line pino would drop: skip building it.
    const log = reply.log as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };
    if (log.isLevelEnabled?.(level) === false) return;
    // queries that hold a secret (an authorization code, an invite token): never in a log line
    const callback = SECRET_QUERY_PATHS.find((path) => request.url.startsWith(`${path}?`));
    const req = callback
      ? { method: request.method, url: `${callback}?[redacted]`, host: request.host, ip: request.ip, headers: {} }
      : request;
    log[level](
      { req, res: { statusCode: reply.statusCode }, responseTime },
      `${request.method} ${request.url.split('?')[0]} ${reply.statusCode} in ${responseTime} ms`,
    );
  }
}

const SECRET_QUERY_PATHS = ['/oauth/callback', OIDC_CALLBACK_PATH, OIDC_START_PATH];

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Secrets that must never reach a log line, whatever logs them. */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'password',
  '*.password',
  '*.*.password',
  'apiKey',
  '*.apiKey',
  'secretKey',
  '*.secretKey',
  'accessToken',
  '*.accessToken',
  'refreshToken',
  '*.refreshToken',
];

/** The HTTP application; it never listens (main.ts does), so tests inject requests into it. */
export async function buildApp({
  services,
  rateLimit: perMinute,
  authFailureLimit = 20,
  trustProxy = false,
  logger,
  healthCheck,
  slowRequestMs = SLOW_REQUEST_MS,
  metrics,
  metricsToken,
  authCacheMs = 0,
  peerRequestsPerMinute,
}: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    // without a logger there is nothing to log: no line is built
    logController: new RequestLogController(slowRequestMs, { disableRequestLogging: !logger }),
    bodyLimit: BODY_LIMIT,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ajv: { customOptions: { removeAdditional: false } },
    return503OnClosing: true,
    trustProxy,
    // A URL that is not valid percent-encoding, or a path segment over the router's 100 characters,
    // is answered before any route or hook: problem+json like every other error.
    frameworkErrors: frameworkError,
    // A request Node's HTTP parser refuses (a header too large, a malformed request line)
    clientErrorHandler: writeClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.addSchema(ProblemSchema);
  registerErrorHandling(app);
  app.addHook('preValidation', rejectControlCharacters);
  // One synchronous hook for what every response carries: a hook per header, or an async one,
  // costs more than the headers themselves.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(SECURITY_HEADERS);
    reply.header('x-request-id', request.id);
    done();
  });

  // A stop waits for the requests in flight, and for nothing else. A connection kept alive after its
  // answer, or opened and never used (a load balancer's spare, a port check), would hold it up until
  // the client lets go or Node's header timeout (a minute): each is closed as soon as it is so.
  // (Node's closeIdleConnections counts a connection that has sent nothing yet as busy.)
  const connections = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  let idleSweep: NodeJS.Timeout | undefined;
  const closeUnused = (): void => {
    app.server.closeIdleConnections();
    for (const socket of connections) if (socket.bytesRead === 0) socket.destroy();
  };
  app.addHook('preClose', (done) => {
    closeUnused();
    idleSweep = setInterval(closeUnused, 100).unref();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(idleSweep);
    done();
  });

  // An empty body with a JSON content type is "no body", so optional bodies may be omitted.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // JSON only: any other body (text/plain included) is a 415.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    return parseJson(request, text, done);
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Warmup API',
        version: '1.0.0',
        description:
          'Self-hosted email warmup. Scripts authenticate with `Authorization: Bearer <api key>`; the dashboard with the session cookie (plus `X-CSRF-Token` on every state-changing request). Each operation names the least role it needs in `x-required-access` (`viewer` < `member` < `admin` < `owner`, or `signed-in`, or `public`); a lower role gets 403. Errors are RFC 9457 problem+json with a `code` and per-field `errors`.',
        contact: { name: 'Warmup maintainers' },
      },
      // Self-hosted: the address is wherever it runs; the default is what `npm start` serves.
      servers: [
        {
          url: '{scheme}://{host}',
          description: 'Your Warmup service',
          variables: {
            scheme: { default: 'http', enum: ['http', 'https'] },
            host: { default: '127.0.0.1:3000', description: 'Host and port the service listens on' },
          },
        },
      ],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE },
        },
      },
      security: [{ bearer: [] }],
      tags: [
        { name: 'templates', description: 'Warmup email templates' },
        { name: 'mailboxes', description: 'Connected mailboxes and their warmup' },
        { name: 'stats', description: 'Deliverability statistics and reports' },
        { name: 'accounts', description: 'First-run setup, sign-in, sessions and your own account' },
        { name: 'team', description: "The workspace's members and invites" },
        { name: 'workspace', description: 'The workspace a key or session works in' },
        { name: 'keys', description: "The workspace's API keys" },
        { name: 'webhooks', description: 'Webhook endpoints, their delivery logs and test sends' },
        { name: 'alerts', description: 'Email alerts to owners and admins, and Slack and Teams destinations' },
        { name: 'dmarc', description: 'DMARC aggregate reports: where they arrive, and what they say per domain' },
        {
          name: 'feeds',
          description: "The providers' own feeds (Microsoft SNDS, Gmail Postmaster Tools) and what they say per domain",
        },
        { name: 'placement-tests', description: 'Where a message of your own lands, per receiving provider' },
        { name: 'peers', description: "Installations this one warms mailboxes with (the installation owner's)" },
        { name: 'peer protocol', description: 'What peer installations call, every request signed (RFC 9421)' },
      ],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });

  app.get('/health', { schema: { hide: true } }, async () => {
    await healthCheck();
    return { status: 'ok' };
  });
  if (metrics) {
    registerRequestMetrics(app, metrics);
    if (metricsToken) await app.register(metricsRoutes(metrics, metricsToken));
  }
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(dashboardRoutes());
  await app.register(
    oauthCallbackRoutes(services.oauth, async (request) => {
      const token = readCookie(request, SESSION_COOKIE);
      return token ? (await services.accounts.authenticateSession(token))?.sessionId : undefined;
    }),
  );

  // Other installations call these, not users: each request is signed with the peer's key.
  await app.register(
    peerProtocolRoutes(services.peers, {
      mail: peerMailRoutes(services.peerMail),
      ...(peerRequestsPerMinute ? { perMinute: peerRequestsPerMinute } : {}),
    }),
    { prefix: '/peer/v1' },
  );

  await app.register(
    async (api) => {
      // An API answer is one workspace's data, and some carry a secret (a new key, the session's
      // CSRF token): no cache keeps any of them, the 401 and 404 answers included.
      api.addHook('onRequest', (_request, reply, done) => {
        reply.header('cache-control', 'no-store');
        done();
      });
      // Order matters: the per-address limit on wrong keys runs before any key lookup, the per-key
      // limit after authentication.
      const authCache =
        authCacheMs > 0
          ? createAuthenticationCache(services.workspaces.authenticate, { ttlMs: authCacheMs })
          : undefined;
      if (authCache) {
        // a key revoked or capped through this process changes here at once: before the answer
        // leaves, so the caller's next request already sees it
        api.addHook('onSend', async (request, reply, payload) => {
          if (reply.statusCode < 300 && changesKeyAccess(request.method, request.url)) authCache.clear();
          return payload;
        });
      }
      requireAccess(
        api,
        {
          key: authCache?.authenticate ?? services.workspaces.authenticate,
          session: services.accounts.authenticateSession,
          installationOwner: services.accounts.installationOwner,
        },
        {
          failedAuthLimiter:
            authFailureLimit > 0 ? createFailedAuthLimiter({ maxFailures: authFailureLimit }) : undefined,
        },
      );
      if (perMinute > 0) {
        await api.register(rateLimit, {
          max: perMinute,
          timeWindow: 60_000,
          hook: 'onRequest',
          keyGenerator: (request) => {
            const key = bearerToken(request);
            if (key) return hashApiKey(key);
            const session = readCookie(request, SESSION_COOKIE);
            return session ? hashToken(session) : request.ip;
          },
          errorResponseBuilder: (_request, context) =>
            new AppError(
              429,
              'rate_limited',
              `rate limit of ${context.max} requests a minute exceeded; retry in ${Math.ceil(context.ttl / 1000)} s`,
            ),
        });
      }
      registerNotFound(api);
      // Route modules are registered here, each under its own prefix.
      await api.register(setupRoutes(services.accounts), { prefix: '/setup' });
      await api.register(sessionRoutes(services.accounts), { prefix: '/session' });
      await api.register(oidcSignInRoutes(services.oidcSignIn), { prefix: '/session/oidc' });
      await api.register(accountRoutes(services.accounts), { prefix: '/account' });
      await api.register(workspacesRoutes(services.accounts), { prefix: '/workspaces' });
      await api.register(membersRoutes(services.accounts), { prefix: '/workspace/members' });
      await api.register(invitesRoutes(services.accounts), { prefix: '/workspace/invites' });
      await api.register(inviteLinkRoutes(services.accounts), { prefix: '/invites' });
      await api.register(workspaceRoutes(services.workspaces), { prefix: '/workspace' });
      await api.register(apiKeysRoutes(services.workspaces), { prefix: '/keys' });
      await api.register(templatesRoutes(services.templates), { prefix: '/templates' });
      await api.register(mailboxesRoutes(services.mailboxes), { prefix: '/mailboxes' });
      await api.register(mailboxStatsRoutes(services.stats), { prefix: '/mailboxes' });
      await api.register(mailboxChecksRoutes(services.checks), { prefix: '/mailboxes' });
      await api.register(mailboxVerdictsRoutes(services.verdicts), { prefix: '/mailboxes' });
      await api.register(statsRoutes(services.stats), { prefix: '/stats' });
      await api.register(oauthRoutes(services.oauth), { prefix: '/oauth' });
      await api.register(webhooksRoutes(services.webhooks), { prefix: '/webhooks' });
      await api.register(alertsRoutes(services.alerts), { prefix: '/alerts' });
      await api.register(dmarcRoutes(services.dmarc), { prefix: '/dmarc' });
      await api.register(feedsRoutes(services.feeds, services.oauth), { prefix: '/feeds' });
      await api.register(placementTestsRoutes(services.placementTests), { prefix: '/placement-tests' });
      await api.register(peersRoutes(services.peers), { prefix: '/peers' });
    },
    { prefix: '/api' },
  );

  return app;
}
