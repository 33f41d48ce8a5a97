import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, UnauthorizedError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every /api request; every repository query is scoped by it. */
    workspaceId: string;
    /** The id of the API key that authenticated the request (`current` in the key list). */
    apiKeyId: string;
  }
}

export interface AuthenticatedKey {
  workspaceId: string;
  keyId: string;
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

/**
 * Requires a valid API key on every route registered inside `scope`. With a `failedAuthLimiter`, an
 * address that presented too many wrong keys gets 429 before its key is even looked up.
 */
export function requireApiKey(
  scope: FastifyInstance,
  authenticate: (key: string) => Promise<AuthenticatedKey | undefined>,
  options: { failedAuthLimiter?: FailedAuthLimiter } = {},
): void {
  const { failedAuthLimiter } = options;
  scope.decorateRequest('workspaceId', '');
  scope.decorateRequest('apiKeyId', '');
  scope.addHook('onRequest', async (request) => {
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
    if (!key) throw new UnauthorizedError();
    const found = await authenticate(key);
    if (!found) {
      failedAuthLimiter?.recordFailure(request.ip);
      throw new UnauthorizedError('the API key is not valid');
    }
    request.workspaceId = found.workspaceId;
    request.apiKeyId = found.keyId;
  });
}
