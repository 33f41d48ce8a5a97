import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ConnectionFailedError, type ConnectionFailure, type FieldError } from './errors.js';
import { problemBody } from './problem.js';
import { SECURITY_HEADERS } from './security-headers.js';
import { plainMessage } from './validation.js';

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Ajv's issues as request pointers: `/body/warmup/dailyLimit`, `/query/limit`. */
function fieldErrors(context: string, issues: AjvIssue[]): FieldError[] {
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const issue of issues) {
    let path = `/${context}${issue.instancePath}`;
    const message = plainMessage(issue);
    if (issue.keyword === 'additionalProperties') path = `${path}/${String(issue.params.additionalProperty)}`;
    else if (issue.keyword === 'required') path = `${path}/${String(issue.params.missingProperty)}`;
    const key = `${path} ${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      errors.push({ path, message });
    }
  }
  // anyOf/union noise ("must match a schema in anyOf") says nothing a user can act on when a
  // more precise issue exists for the same path.
  const precise = errors.filter((e) => !/schema in anyOf|must match exactly one/.test(e.message));
  return precise.length > 0 ? precise : errors;
}

function describe(errors: FieldError[]): string {
  const first = errors[0];
  if (!first) return 'the request is invalid';
  const where = first.path.split('/').filter(Boolean).slice(1).join('.') || first.path.split('/')[1] || 'request';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return `${where} ${first.message}${more}`;
}

function sendProblem(
  reply: FastifyReply,
  status: number,
  code: string,
  detail: string,
  errors?: FieldError[],
  failures?: ConnectionFailure[],
) {
  return reply
    .code(status)
    .type('application/problem+json; charset=utf-8')
    .send(problemBody(status, code, detail, errors, failures));
}

/** 404 for a route that does not exist; set per scope so that scope's hooks (auth) run first. */
export function registerNotFound(scope: FastifyInstance): void {
  scope.setNotFoundHandler((request, reply) =>
    sendProblem(reply, 404, 'not_found', `no route for ${request.method} ${request.url.split('?')[0]}`),
  );
}

/**
 * Fastify's `frameworkErrors`: a URL that is not valid percent-encoding, or a path segment longer
 * than the router takes, found before routing, so before the hooks that set the usual headers.
 */
export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.headers(SECURITY_HEADERS);
  reply.header('x-request-id', request.id);
  reply.header('cache-control', 'no-store');
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void sendProblem(reply, 414, 'uri_too_long', 'a segment of the path is longer than 100 characters');
    return;
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    void sendProblem(reply, 400, 'bad_url', 'the URL is not valid percent-encoding', [
      { path: '/url', message: 'is not valid percent-encoding' },
    ]);
    return;
  }
  void sendProblem(reply, 400, 'bad_request', 'the request could not be routed');
}

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses (a malformed request line, headers
 * over the size limit, a request that took too long to arrive) never becomes a request; its answer
 * is written to the socket, as problem+json like every other answer.
 */
export function writeClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, detail] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'request_timeout', 'the request did not arrive in time']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers_too_large', 'the request headers are larger than the server accepts']
        : [400, 'bad_request', 'the request is not valid HTTP'];
  if (socket.writable) {
    const body = JSON.stringify(problemBody(status, code, detail));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

export function registerErrorHandling(app: FastifyInstance): void {
  registerNotFound(app);

  app.setErrorHandler(
    (
      error: FastifyError & { validation?: AjvIssue[]; validationContext?: string },
      request: FastifyRequest,
      reply: FastifyReply,
    ) => {
      if (error instanceof AppError) {
        if (error.headers) reply.headers(error.headers);
        const failures = error instanceof ConnectionFailedError ? error.failures : undefined;
        return sendProblem(reply, error.status, error.code, error.message, error.errors, failures);
      }
      if (error.validation) {
        // Fastify names the query string `querystring`; the contract's pointers say `/query/...`.
        const context = error.validationContext === 'querystring' ? 'query' : (error.validationContext ?? 'body');
        const errors = fieldErrors(context, error.validation);
        return sendProblem(reply, 400, 'validation_error', describe(errors), errors);
      }
      switch (error.code) {
        case 'FST_ERR_CTP_INVALID_JSON_BODY':
        case 'FST_ERR_CTP_EMPTY_JSON_BODY':
          return sendProblem(reply, 400, 'validation_error', `the body is not valid JSON: ${error.message}`, [
            { path: '/body', message: 'is not valid JSON' },
          ]);
        case 'FST_ERR_CTP_BODY_TOO_LARGE':
          return sendProblem(reply, 413, 'payload_too_large', 'the request body is larger than this route accepts');
        case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
          return sendProblem(reply, 415, 'unsupported_media_type', 'the request body must be application/json');
        default:
          break;
      }
      if (error instanceof SyntaxError && error.statusCode === 400) {
        return sendProblem(reply, 400, 'validation_error', 'the body is not valid JSON', [
          { path: '/body', message: 'is not valid JSON' },
        ]);
      }
      if (error.statusCode === 429) {
        return sendProblem(reply, 429, 'rate_limited', error.message || 'too many requests');
      }
      if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
        return sendProblem(reply, error.statusCode, 'bad_request', error.message);
      }
      request.log.error({ err: error }, 'unhandled error');
      return sendProblem(
        reply,
        500,
        'internal_error',
        `an internal error occurred; quote request id ${request.id} when reporting it`,
      );
    },
  );
}
