import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { defaultAccess, hasRole, type Access, type Role } from './access.js';
import { AppError, ForbiddenError, UnauthorizedError } from './errors.js';
import { readCookie, SESSION_COOKIE } from './cookies.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every /api request; every repository query is scoped by it. */
    workspaceId: string;
    /** The id of the API key that authenticated the request (`current` in the key list); '' for a session. */
    apiKeyId: string;
    /** The role of the key or of the signed-in person in `workspaceId`; null without one. */
    role: Role | null;
    /** The signed-in person; '' when an API key authenticated the request. */
    userId: string;
    /** The browser session that authenticated the request; '' for an API key. */
    sessionId: string;
    /**
     * The person the request acts for: the signed-in person, or the person who made the API key
     * ('' for a key nobody made: bootstrap or CLI). What it makes is recorded as theirs.
     */
    personId: string;
  }
  interface FastifyContextConfig {
    /** Who may call the route; without it, `defaultAccess` of the method (GET: viewer, else member). */
    access?: Access;
    /** A person's session only, never an API key: what a key alone must not be able to do. */
    sessionOnly?: boolean;
  }
}

export interface AuthenticatedKey {
  workspaceId: string;
  keyId: string;
  role: Role;
  /** The person who made the key; null (or absent) for a key nobody made (bootstrap, CLI). */
  createdBy?: string | null;
}

/** Who a valid session cookie belongs to. */
export interface AuthenticatedSession {
  sessionId: string;
  userId: string;
  workspaceId: string | null;
  /** The user's role in `workspaceId`, null without a workspace. */
  role: Role | null;
  csrfToken: string;
}

/** Session and invite tokens are stored as SHA-256 hashes, hex. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export interface FailedAuthLimiter {
  /** Seconds until `address` may try again, or 0 when it may try now. */
  retryAfter(address: string): number;
  recordFailure(address: string): void;
}

// Enough for a busy installation; past it, the oldest windows are forgotten first so an attacker
// rotating addresses costs memory bounded by this, not by the number of addresses.
const MAX_TRACKED_ADDRESSES = 50_000;

/**
 * Failed authentications per client address in a fixed window, in this process: with several
 * replicas an address gets `maxFailures` per replica. It is checked before any key lookup, so
 * guessing keys costs the same whether a guess is right or wrong.
 */
export function createFailedAuthLimiter({
  maxFailures,
  windowMs = 60_000,
  now = Date.now,
}: {
  maxFailures: number;
  windowMs?: number;
  now?: () => number;
}): FailedAuthLimiter {
  const windows = new Map<string, { failures: number; resetAt: number }>();

  function current(address: string): { failures: number; resetAt: number } | undefined {
    const window = windows.get(address);
    if (window && window.resetAt <= now()) {
      windows.delete(address);
      return undefined;
    }
    return window;
  }

  function makeRoom(): void {
    const at = now();
    for (const [address, window] of windows) if (window.resetAt <= at) windows.delete(address);
    for (const address of windows.keys()) {
      if (windows.size < MAX_TRACKED_ADDRESSES) break;
      windows.delete(address);
    }
  }

  return {
    retryAfter(address) {
      const window = current(address);
      if (!window || window.failures < maxFailures) return 0;
      return Math.max(1, Math.ceil((window.resetAt - now()) / 1000));
    },
    recordFailure(address) {
      const window = current(address);
      if (window) {
        window.failures += 1;
        return;
      }
      if (windows.size >= MAX_TRACKED_ADDRESSES) makeRoom();
      windows.set(address, { failures: 1, resetAt: now() + windowMs });
    },
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What a route requires, as declared in its config or by the documented default of its method. */
export function routeAccess(request: FastifyRequest): Access {
  return request.routeOptions.config?.access ?? defaultAccess(request.method);
}

export interface Authenticators {
  key: (key: string) => Promise<AuthenticatedKey | undefined>;
  session: (token: string) => Promise<AuthenticatedSession | undefined>;
  /** The person who set the installation up (null: nobody yet), for `installation-owner` routes. */
  installationOwner?: () => Promise<string | null>;
}

/**
 * Authenticates and authorizes every route registered inside `scope`: a bearer API key, or the
 * session cookie (with the X-CSRF-Token bound to that session on every state-changing request),
 * then the route's access (its `config.access`, else GET: viewer, other methods: member). Public
 * routes skip both. With a `failedAuthLimiter`, an address that presented too many wrong keys gets
 * 429 before its key is even looked up. Each route's access is written into its OpenAPI entry.
 */
export function requireAccess(
  scope: FastifyInstance,
  authenticate: Authenticators,
  options: { failedAuthLimiter?: FailedAuthLimiter } = {},
): void {
  const { failedAuthLimiter } = options;
  scope.decorateRequest('workspaceId', '');
  scope.decorateRequest('apiKeyId', '');
  scope.decorateRequest('role', null);
  scope.decorateRequest('userId', '');
  scope.decorateRequest('sessionId', '');
  scope.decorateRequest('personId', '');

  scope.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const access = route.config?.access ?? defaultAccess(methods[0] ?? 'GET');
    if (!route.schema || route.schema.hide) return;
    const schema = route.schema as Record<string, unknown>;
    schema['x-required-access'] = access;
    if (access === 'public') schema.security = [];
    else if (access === 'signed-in' || access === 'installation-owner' || route.config?.sessionOnly)
      schema.security = [{ session: [] }];
    else schema.security = [{ bearer: [] }, { session: [] }];
  });

  scope.addHook('onRequest', async (request) => {
    const access = routeAccess(request);
    if (access === 'public') return;

    const wait = failedAuthLimiter?.retryAfter(request.ip) ?? 0;
    if (wait > 0) {
      throw new AppError(
        429,
        'rate_limited',
        `too many requests with a wrong API key from this address; retry in ${wait} s`,
        undefined,
        { 'Retry-After': String(wait) },
      );
    }
    const key = bearerToken(request);
    if (key) {
      const found = await authenticate.key(key);
      if (!found) {
        failedAuthLimiter?.recordFailure(request.ip);
        throw new UnauthorizedError('the API key is not valid');
      }
      request.workspaceId = found.workspaceId;
      request.apiKeyId = found.keyId;
      request.role = found.role;
      request.personId = found.createdBy ?? '';
      if (access === 'signed-in' || access === 'installation-owner' || request.routeOptions.config?.sessionOnly) {
        throw new ForbiddenError('this route is for a signed-in person; an API key cannot use it');
      }
    } else {
      const token = readCookie(request, SESSION_COOKIE);
      if (!token) throw new UnauthorizedError('sign in, or send an API key: Authorization: Bearer <key>');
      const session = await authenticate.session(token);
      if (!session) throw new UnauthorizedError('the session has ended; sign in again');
      if (!SAFE_METHODS.has(request.method)) {
        const sent = request.headers['x-csrf-token'];
        if (typeof sent !== 'string' || !sameToken(sent, session.csrfToken)) {
          throw new ForbiddenError('the X-CSRF-Token header is missing or does not match the session', 'csrf_failed');
        }
      }
      request.sessionId = session.sessionId;
      request.userId = session.userId;
      request.personId = session.userId;
      request.workspaceId = session.workspaceId ?? '';
      request.role = session.role;
    }
    if (access === 'signed-in') return;
    if (access === 'installation-owner') {
      const owner = (await authenticate.installationOwner?.()) ?? null;
      if (owner === null || owner !== request.userId)
        throw new ForbiddenError("only the installation's owner may do this", 'installation_owner_only');
      return;
    }
    if (!request.role || !request.workspaceId) {
      throw new ForbiddenError('you belong to no workspace yet: accept an invite or create a workspace');
    }
    if (!hasRole(request.role, access)) {
      throw new ForbiddenError(`this needs the ${access} role or higher; yours is ${request.role}`);
    }
  });
}
