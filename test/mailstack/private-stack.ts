// A mail stack of a test file's own, for tests that crash, hang or restart its Dovecot: the
// run's shared stack (test/global-setup.ts) must never be disturbed. Only the processes this
// stack started are signalled, by the PIDs in its own directory.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  mailStackPortsFree,
  startMailStack,
  stopMailStack,
  type MailStack,
  type StartMailStackOptions,
} from './mail-stack.js';
import type { MailUser } from './users.js';

const run = promisify(execFile);
const SBIN_PATH = `${process.env.PATH ?? ''}:/usr/sbin:/sbin`;

export interface PrivateMailStack extends MailStack {
  /** Kills Dovecot (master and every child) at once, like a crash. */
  crashDovecot(): Promise<void>;
  /** Starts Dovecot again on the same configuration and mail (nothing when it runs). */
  restartDovecot(): Promise<void>;
  /** SIGSTOP / SIGCONT to all of Dovecot: it accepts connections and never answers. */
  freezeDovecot(): void;
  thawDovecot(): void;
  /** Asks Postfix to deliver its deferred mail now instead of at its next queue run. */
  flushQueue(): Promise<void>;
  stop(): Promise<void>;
}

function dovecotGroup(stack: MailStack): number {
  // the master leads its own process group; its children (auth, imap, lmtp…) are in it
  return Number(readFileSync(join(stack.dir, 'run/dovecot/master.pid'), 'utf8').trim());
}

function dovecotRunning(stack: MailStack): boolean {
  try {
    process.kill(dovecotGroup(stack), 0);
    return true;
  } catch {
    return false;
  }
}

async function freeBasePort(): Promise<number> {
  for (let attempt = 0; attempt < 30; attempt += 1) {
    const base = 20_000 + ((process.pid * 4_999 + attempt * 1_013 + Math.floor(Math.random() * 997)) % 29_000);
    if (await mailStackPortsFree(base)) return base;
  }
  throw new Error('private mail stack: no free port range');
}

export async function startPrivateMailStack(
  name: string,
  users: MailUser[],
  options: Pick<
    StartMailStackOptions,
    | 'oauth2'
    | 'vacationRecipients'
    | 'imapCapability'
    | 'junkSenders'
    | 'rewriteMessageIdDomains'
    | 'replaceMessageIdDomains'
    | 'authResults'
    | 'learning'
  > = {},
): Promise<PrivateMailStack> {
  let stack: MailStack | undefined;
  for (let attempt = 1; !stack; attempt += 1) {
    try {
      stack = await startMailStack({
        ...options,
        name: `${name}-${process.pid}`,
        basePort: await freeBasePort(),
        users,
      });
    } catch (err) {
      if (attempt >= 3 || !/already in use/.test(String(err))) throw err;
    }
  }
  const self = stack;
  const config = join(self.dir, 'etc/dovecot.conf');
  return {
    ...self,
    async crashDovecot() {
      const group = dovecotGroup(self);
      process.kill(-group, 'SIGKILL');
      // wait until the listeners are gone, so the next connection is refused
      for (let i = 0; i < 50; i += 1) {
        try {
          process.kill(group, 0);
        } catch {
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async restartDovecot() {
      if (dovecotRunning(self)) return;
      await run('dovecot', ['-c', config], { env: { ...process.env, PATH: SBIN_PATH }, timeout: 20_000 });
      // ready once IMAP greets again
      for (let i = 0; i < 100; i += 1) {
        try {
          await run('bash', ['-c', `exec 3<>/dev/tcp/127.0.0.1/${self.imapPort} && IFS= read -r -t 2 line <&3`], {
            timeout: 3_000,
          });
          return;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      throw new Error('Dovecot did not come back');
    },
    freezeDovecot() {
      process.kill(-dovecotGroup(self), 'SIGSTOP');
    },
    thawDovecot() {
      if (dovecotRunning(self)) process.kill(-dovecotGroup(self), 'SIGCONT');
    },
    async flushQueue() {
      await run('postqueue', ['-c', join(self.dir, 'etc/postfix'), '-f'], {
        env: { ...process.env, PATH: SBIN_PATH },
        timeout: 20_000,
      });
    },
    async stop() {
      try {
        process.kill(-dovecotGroup(self), 'SIGCONT');
      } catch {
        // not running
      }
      await stopMailStack(self, { clean: true });
    },
  };
}
