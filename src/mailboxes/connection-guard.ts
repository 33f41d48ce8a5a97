// The API's connection checks (adding, testing, reconnecting or importing a mailbox) connect to
// hosts a tenant names. Two things keep that from becoming a network scanner or a way to make
// this server open connections by the thousand:
// - A failure to reach a server on the operator's network (a closed port, no route, a host the
//   policy refuses, a server that accepts and never speaks) is answered with one message, and only
//   once `failureFloorMs` has passed since the check began (plus a little jitter): the answer's
//   words and time say nothing about why. The cause goes to the server log. A public host's
//   failure says what happened (no such host name, refused, no answer, not a mail server: nothing
//   anyone on the internet could not see), still after the floor, so the check is no fast scanner.
//   A server that answered (a refused login, a TLS mismatch it showed) keeps its own message.
// - At most `maxChecks` checks run at once in this process, across all tenants; a check that finds
//   no free place waits up to `queueMs` for one, then is answered 503 with Retry-After.
// The engine's own syncs do not pass through here: they connect to servers already proven.
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_MAIL_CHECK_FAILURE_MS, DEFAULT_MAIL_CHECKS_AT_ONCE } from '../config.js';
import { AppError } from '../http/errors.js';
import { isMailConnectionError, MailConnectionError, unreachableError } from '../mail/errors.js';

export interface ConnectionGuardSettings {
  /** How long a check that could not reach a server takes to answer, at least (0: answer at once). */
  failureFloorMs: number;
  /** Connection checks running at once in this process, across all workspaces. */
  maxChecks: number;
  /** How long a check waits for a free place before it is answered 503. */
  queueMs: number;
}

export const DEFAULT_CONNECTION_CHECKS: ConnectionGuardSettings = {
  failureFloorMs: DEFAULT_MAIL_CHECK_FAILURE_MS,
  maxChecks: DEFAULT_MAIL_CHECKS_AT_ONCE,
  queueMs: 2_000,
};

/** Added to the floor at random, so that answers do not line up on one exact instant either. */
const JITTER_MS = 100;

/** Every place of the cap is taken, and none came free within the queue wait. */
export class ConnectionChecksBusyError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(
      503,
      'connection_checks_busy',
      'too many mailbox connection checks are running on this server; try again shortly',
      undefined,
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}

/**
 * True for a failure that happened before any server answered: the tenant must not learn which.
 * A TLS failure the diagnosis names (not_tls, an untrusted certificate, no STARTTLS offered) and an
 * OAuth token failure are answers, not silence.
 */
export function isUnreached(error: unknown): error is MailConnectionError {
  return (
    isMailConnectionError(error) &&
    error.kind === 'connection' &&
    error.tlsFailure === undefined &&
    !/TLS/.test(error.message) &&
    !(error.code ?? '').startsWith('OAUTH')
  );
}

export interface ConnectionGuard {
  /**
   * Runs the login checks of one mailbox (IMAP and SMTP, in parallel) under the cap, and settles
   * them: a failure to reach a server comes back as the one generic error of its side, after the floor.
   */
  settle<T>(checks: ReadonlyArray<() => Promise<T>>): Promise<PromiseSettledResult<T>[]>;
}

export function createConnectionGuard(
  settings: Partial<ConnectionGuardSettings> = {},
  logger?: { debug(details: object, message: string): void },
): ConnectionGuard {
  const { failureFloorMs, maxChecks, queueMs } = { ...DEFAULT_CONNECTION_CHECKS, ...settings };
  let free = maxChecks;
  const waiting: Array<(granted: boolean) => void> = [];

  async function acquire(): Promise<void> {
    if (free > 0) {
      free -= 1;
      return;
    }
    const granted = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        const at = waiting.indexOf(wake);
        if (at >= 0) waiting.splice(at, 1);
        resolve(false);
      }, queueMs);
      const wake = (ok: boolean) => {
        clearTimeout(timer);
        resolve(ok);
      };
      waiting.push(wake);
    });
    if (!granted) throw new ConnectionChecksBusyError(Math.max(1, Math.ceil(failureFloorMs / 1000)));
  }

  function release(): void {
    // the place passes straight to the first waiter, so a newcomer cannot jump the queue
    const next = waiting.shift();
    if (next) next(true);
    else free += 1;
  }

  function conceal(error: MailConnectionError): MailConnectionError {
    logger?.debug(
      { side: error.side, host: error.host, port: error.port, code: error.code, reason: error.reason ?? error.message },
      'connection check could not reach the server',
    );
    // a public host's cause is told in fixed words around what the tenant typed (errors.ts)
    if (error.unreached !== undefined) {
      return new MailConnectionError({
        side: error.side,
        kind: 'connection',
        message: error.message,
        host: error.host,
        port: error.port,
        unreached: error.unreached,
        ...(error.secure !== undefined ? { secure: error.secure } : {}),
      });
    }
    // built again from what the tenant typed only: no code, no cause-specific words
    return unreachableError(
      error.side,
      {
        host: error.host,
        port: error.port,
        password: '',
        username: '',
        ...(error.secure !== undefined ? { secure: error.secure } : {}),
      },
      'not reached',
    );
  }

  return {
    async settle(checks) {
      await acquire();
      const started = performance.now();
      let unreached = false;
      let results: PromiseSettledResult<Awaited<ReturnType<(typeof checks)[number]>>>[];
      try {
        results = await Promise.allSettled(
          checks.map(async (check) => {
            try {
              return await check();
            } catch (error) {
              if (!isUnreached(error)) throw error;
              unreached = true;
              throw conceal(error);
            }
          }),
        );
      } finally {
        // the hold below costs a timer, not a connection: the place is given back first
        release();
      }
      if (unreached) {
        const wait = failureFloorMs - (performance.now() - started);
        if (failureFloorMs > 0) await sleep(Math.max(0, wait) + randomInt(JITTER_MS + 1));
      }
      return results;
    },
  };
}
