import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ConnectionFailedError, type ConnectionFailure, type FieldError } from './errors.js';
import { problemBody } from './problem.js';

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
    let message = issue.message ?? 'is invalid';
    if (issue.keyword === 'additionalProperties') {
      path = `${path}/${String(issue.params.additionalProperty)}`;
      message = 'is not a known field';
    } else if (issue.keyword === 'required') {
      path = `${path}/${String(issue.params.missingProperty)}`;
      message = 'is required';
    } else if (issue.keyword === 'enum' && Array.isArray(issue.params.allowedValues)) {
      message = `must be one of ${issue.params.allowedValues.join(', ')}`;
    }
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
