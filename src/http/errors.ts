/** One error model: services throw these; the error handler turns them into RFC 9457 problem+json. */

export interface FieldError {
  /** JSON pointer into the request, e.g. `/body/name` or `/query/limit`. */
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  constructor(message: string, errors?: FieldError[]) {
    super(400, 'validation_error', message, errors);
  }

  /** A 400 about one field. */
  static field(path: string, message: string): ValidationError {
    return new ValidationError(`${path.split('/').filter(Boolean).slice(1).join('.') || path}: ${message}`, [
      { path, message },
    ]);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'a valid API key is required: Authorization: Bearer <key>') {
    super(401, 'unauthorized', message, undefined, { 'WWW-Authenticate': 'Bearer' });
  }
}

/** Authenticated, but the key or person may not do this (a role too low, a missing CSRF token). */
export class ForbiddenError extends AppError {
  constructor(message: string, code = 'forbidden') {
    super(403, code, message);
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'not found') {
    super(404, 'not_found', message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, errors?: FieldError[]) {
    super(409, 'conflict', message, errors);
  }
}

/** One server's failed login check: what went wrong and the one thing to change (mail/errors.ts). */
export interface ConnectionFailure {
  side: 'imap' | 'smtp';
  problem: string;
  title: string;
  fix: string;
}

/** Mailbox credentials or hosts rejected by the IMAP or SMTP server. */
export class ConnectionFailedError extends AppError {
  constructor(
    message: string,
    readonly failures: ConnectionFailure[] = [],
  ) {
    super(422, 'connection_failed', message);
  }
}
