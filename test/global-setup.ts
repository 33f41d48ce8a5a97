// Vitest global setup: one real mail stack (Postfix + Dovecot on 127.0.0.1) for the
// whole run, shared by every suite through `inject('mailStack')`. Suites keep apart
// by using only their own users (test/mailstack/users.ts).
//
// Without the Debian packages the stack tests are skipped with one line of
// explanation, except under CI (CI=true), where that fails the run instead: CI must
// never go green by skipping the end-to-end tests.
// WARMUP_TEST_MAILSTACK=off skips starting the stack on purpose (e.g. a quick unit run).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import {
  mailStackAvailable,
  mailStackPortsFree,
  startMailStack,
  stopMailStack,
  stopMailStackSync,
  type MailStack,
} from './mailstack/mail-stack.js';
import { ALL_MAIL_USERS, DISCARD_RECIPIENTS, JUNK_RECIPIENTS, JUNK_SENDERS } from './mailstack/users.js';

declare module 'vitest' {
  export interface ProvidedContext {
    mailStack: MailStack | null;
  }
}

const INSTALL_HINT =
  'install with: apt-get install postfix dovecot-imapd dovecot-lmtpd dovecot-sieve (or run test/mailstack/install.sh)';

// Ports are base + 25 … base + 993, so bases stay within 20000–49000. The first
// candidate comes from the pid, so parallel runs on one machine start apart; a
// busy candidate moves on by a prime stride.
async function pickBasePort(): Promise<number> {
  const span = 29_000;
  let offset = (process.pid * 7_919) % span;
  for (let attempt = 0; attempt < 20; attempt++) {
    const base = 20_000 + offset;
    if (await mailStackPortsFree(base)) return base;
    offset = (offset + 1_009) % span;
  }
  throw new Error('mail stack: no free port range found between 20000 and 50000');
}

async function startWithRetry(): Promise<MailStack> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startMailStack({
        name: `vitest-${process.pid}`,
        basePort: await pickBasePort(),
        users: [...ALL_MAIL_USERS],
        junkSenders: [...JUNK_SENDERS],
        junkRecipients: [...JUNK_RECIPIENTS],
        discardRecipients: [...DISCARD_RECIPIENTS],
      });
    } catch (err) {
      // another run may have taken a port between our check and start.sh's own
      if (attempt >= 3 || !/already in use/.test(String(err))) throw err;
    }
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The run's migrated template database is built here on first use and copied for each test file
  // (test/helpers/template-database.ts); the test processes inherit this variable.
  const templates = fs.mkdtempSync(path.join(os.tmpdir(), 'warmup-test-templates-'));
  process.env.WARMUP_TEST_TEMPLATE_DIR = templates;
  const stopTheMailStack = await setupMailStack(project);
  return async () => {
    await stopTheMailStack?.();
    fs.rmSync(templates, { recursive: true, force: true });
  };
}

async function setupMailStack(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const inCi = process.env.CI === 'true';
  if (process.env.WARMUP_TEST_MAILSTACK === 'off') {
    if (inCi) throw new Error('mail stack required under CI: unset WARMUP_TEST_MAILSTACK');
    console.warn('mail stack tests skipped: WARMUP_TEST_MAILSTACK=off');
    project.provide('mailStack', null);
    return undefined;
  }
  const available = mailStackAvailable();
  if (!available.ok) {
    const reason = available.missing.length
      ? `missing ${available.missing.join(', ')}; ${INSTALL_HINT}`
      : (available.problem ?? 'unavailable');
    if (inCi) throw new Error(`mail stack required under CI: ${reason}`);
    console.warn(`mail stack tests skipped: ${reason}`);
    project.provide('mailStack', null);
    return undefined;
  }

  const started = Date.now();
  const stack = await startWithRetry();
  if (process.env.WARMUP_TEST_MAILSTACK_VERBOSE) {
    console.info(
      `mail stack ${stack.name} up in ${Date.now() - started} ms (imap ${stack.imapPort}, submission ${stack.submissionPort})`,
    );
  }
  let stopped = false;
  // Ctrl-C makes vitest exit without running the teardown below.
  const onExit = (): void => {
    if (!stopped) {
      stopped = true;
      stopMailStackSync(stack);
    }
  };
  process.once('exit', onExit);
  project.provide('mailStack', stack);

  return async () => {
    process.off('exit', onExit);
    if (stopped) return;
    stopped = true;
    await stopMailStack(stack, { clean: true });
  };
}
