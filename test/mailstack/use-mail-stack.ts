// What a test file uses to reach the run's mail stack (started by test/global-setup.ts).
//
//   import { describeWithMailStack, requireMailStack, mailServerConfigs } from '../../test/mailstack/use-mail-stack.js';
//   import { MAIL_USERS } from '../../test/mailstack/users.js';
//
//   describeWithMailStack('sync against a real server', () => {
//     const stack = requireMailStack();
//     const [alice, bob] = MAIL_USERS.engine;
//     const { imap, smtp } = mailServerConfigs(stack, alice);
//     ...
//   });
//
// Under CI the global setup fails the run when the stack cannot start, so the skip
// below only ever happens on a developer machine without Postfix/Dovecot.
import { readFileSync } from 'node:fs';
import { describe, inject } from 'vitest';
import type { MailServerConfig } from '../../src/mail/errors.js';
import type { MailPolicy } from '../../src/mail/policy.js';
import type { MailStack } from './mail-stack.js';
import type { MailUser } from './users.js';

export type { MailStack } from './mail-stack.js';

/** The run's stack, or null when it could not be started (packages missing, outside CI). */
export function getMailStack(): MailStack | null {
  // Benchmarks import the test helpers outside vitest, where there is no run (and no stack) to ask.
  if (!process.env.VITEST) return null;
  return inject('mailStack') ?? null;
}

/** The run's stack; throws when there is none (use inside describeWithMailStack). */
export function requireMailStack(): MailStack {
  const stack = getMailStack();
  if (!stack) {
    throw new Error(
      'no mail stack in this run (see the "mail stack tests skipped" line); wrap the suite in describeWithMailStack',
    );
  }
  return stack;
}

/** `describe` that is skipped when the run has no mail stack. */
export const describeWithMailStack = describe.skipIf(getMailStack() === null);

/**
 * What an operator would configure for a mail server on its own network: the stack's
 * loopback address allowed (WARMUP_MAIL_ALLOWED_HOSTS) and its self-signed certificate
 * trusted as a CA (WARMUP_MAIL_CA_FILE). TLS stays required and checked.
 */
export function stackMailPolicy(stack: MailStack): MailPolicy {
  return { allowedHosts: [stack.host], plaintextHosts: [], ca: readFileSync(stack.caCert, 'utf8') };
}

/** The environment that gives a `warmup` process the same policy. */
export function stackMailEnv(stack: MailStack): Record<string, string> {
  return { WARMUP_MAIL_ALLOWED_HOSTS: stack.host, WARMUP_MAIL_CA_FILE: stack.caCert };
}

/**
 * Connection settings of one stack user: IMAP (STARTTLS on the plain port) and SMTP
 * submission (STARTTLS), or the implicit-TLS ports with `implicitTls`, under
 * stackMailPolicy.
 */
export function mailServerConfigs(
  stack: MailStack,
  user: MailUser,
  opts: { implicitTls?: boolean } = {},
): { imap: MailServerConfig; smtp: MailServerConfig } {
  const common = {
    host: stack.host,
    username: user.email,
    password: user.password,
    policy: stackMailPolicy(stack),
  };
  return opts.implicitTls
    ? {
        imap: { ...common, port: stack.imapsPort, secure: true },
        smtp: { ...common, port: stack.submissionsPort, secure: true },
      }
    : {
        imap: { ...common, port: stack.imapPort, secure: false },
        smtp: { ...common, port: stack.submissionPort, secure: false },
      };
}
