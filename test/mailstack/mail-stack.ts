// Start and stop the project's throw-away mail stack (Postfix + Dovecot on 127.0.0.1)
// from TypeScript. The shell scripts beside this file do the work; this module passes
// them the settings and reads back the stack.json that start.sh writes.
import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MailUser } from './users.js';

export interface MailStack {
  name: string;
  /** Instance directory (config, logs, Maildirs), under /tmp. */
  dir: string;
  host: '127.0.0.1';
  /** IMAP with STARTTLS. */
  imapPort: number;
  /** IMAP over implicit TLS. */
  imapsPort: number;
  /** SMTP submission with STARTTLS and AUTH. */
  submissionPort: number;
  /** SMTP submission over implicit TLS with AUTH. */
  submissionsPort: number;
  /** Unauthenticated inbound SMTP ("MX"), only for the stack's own users. */
  smtpPort: number;
  /** The stack's self-signed certificate (PEM file), its own CA. */
  caCert: string;
  users: MailUser[];
  /** Senders whose mail is filed into Junk. */
  junkSenders: string[];
  /** With `learning`: the port of the learning filter's spamd on 127.0.0.1. */
  spamdPort?: number;
}

export interface StartMailStackOptions {
  /** Instance name, [A-Za-z0-9_-]+; the directory is /tmp/warmup-mailstack/<name>. */
  name: string;
  /** Ports are basePort + 143 (imap), 993 (imaps), 587 (submission), 465 (submissions), 25 (mx). */
  basePort: number;
  users: MailUser[];
  junkSenders?: string[];
  /** Users whose server files everything they receive into Junk. */
  junkRecipients?: string[];
  /** Users whose server drops everything they receive from anyone but themselves. */
  discardRecipients?: string[];
  /**
   * Also accept OAuth tokens (XOAUTH2, OAUTHBEARER) on IMAP and SMTP submission, checked at this
   * RFC 7662 introspection URL (credentials may ride in it: http://id:secret@host/...).
   */
  oauth2?: { introspectionUrl: string; usernameAttribute?: string };
  /** Users whose server answers every sender automatically (Sieve vacation, once a day per sender). */
  vacationRecipients?: string[];
  /** What IMAP announces after login instead of Dovecot's own list (e.g. without MOVE and UIDPLUS). */
  imapCapability?: string;
  /** Like Outlook.com: mail with a Message-ID on these domains is delivered with a new one, the original in X-Microsoft-Original-Message-ID. */
  rewriteMessageIdDomains?: string[];
  /** The same without keeping the original anywhere: only the thread headers name the thread. */
  replaceMessageIdDomains?: string[];
  /**
   * Every delivery gets the receiving domain's own Authentication-Results (authserv-id: the
   * recipient's domain; these senders' mail with dkim=fail and dmarc=fail) and an X-Spam-Status.
   */
  authResults?: { dkimFailSenders?: string[] };
  /**
   * A learning spam filter (learning-filter.sh): SpamAssassin scores every delivery with the
   * receiving mailbox's own Bayes and TxRep reputation and files spam into Junk; moving mail into
   * or out of Junk over IMAP teaches it. Off by default: spamd adds seconds to the start.
   */
  learning?: boolean;
  /** Seconds start.sh waits for every listener; default 20. */
  readyTimeoutSeconds?: number;
}

const SCRIPT_DIR = fileURLToPath(new URL('.', import.meta.url));
const START_SCRIPT = join(SCRIPT_DIR, 'start.sh');
const STOP_SCRIPT = join(SCRIPT_DIR, 'stop.sh');
const PORT_OFFSETS = [25, 143, 465, 587, 993] as const;

/** The five ports a stack with this base port listens on. */
export function mailStackPorts(basePort: number): number[] {
  return PORT_OFFSETS.map((offset) => basePort + offset);
}

/** True when none of the stack's ports is in use on 127.0.0.1. */
export async function mailStackPortsFree(basePort: number): Promise<boolean> {
  for (const port of mailStackPorts(basePort)) {
    if (!(await portFree(port))) return false;
  }
  return true;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}

// What start.sh runs, and the Debian package that brings it.
const REQUIRED: { file: string; inPath: boolean; pkg: string }[] = [
  { file: 'postfix', inPath: true, pkg: 'postfix' },
  { file: 'dovecot', inPath: true, pkg: 'dovecot-core' },
  { file: '/usr/lib/dovecot/imap', inPath: false, pkg: 'dovecot-imapd' },
  { file: '/usr/lib/dovecot/lmtp', inPath: false, pkg: 'dovecot-lmtpd' },
  { file: 'sievec', inPath: true, pkg: 'dovecot-sieve' },
  { file: '/usr/lib/dovecot/modules/lib90_sieve_plugin.so', inPath: false, pkg: 'dovecot-sieve' },
  { file: 'openssl', inPath: true, pkg: 'openssl' },
];

export interface MailStackAvailability {
  ok: boolean;
  /** Debian packages that are not installed. */
  missing: string[];
  /** A reason other than missing packages (e.g. not running as root), if any. */
  problem?: string;
}

// What the learning filter (the `learning` option) runs besides.
const LEARNING_REQUIRED: typeof REQUIRED = [
  { file: 'spamd', inPath: true, pkg: 'spamd' },
  { file: 'spamc', inPath: true, pkg: 'spamc' },
  { file: 'sa-learn', inPath: true, pkg: 'spamassassin' },
];

/** Whether this machine can run the stack: the packages are installed and we are root. */
export function mailStackAvailable(opts: { learning?: boolean } = {}): MailStackAvailability {
  const searchPath = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin'].filter(Boolean);
  const executable = (file: string): boolean => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  const readable = (file: string): boolean => {
    try {
      accessSync(file, constants.R_OK);
      return true;
    } catch {
      return false;
    }
  };
  const missing = new Set<string>();
  for (const req of opts.learning ? [...REQUIRED, ...LEARNING_REQUIRED] : REQUIRED) {
    const found = req.inPath
      ? searchPath.some((dir) => executable(join(dir, req.file)))
      : req.file.endsWith('.so')
        ? readable(req.file)
        : executable(req.file);
    if (!found) missing.add(req.pkg);
  }
  const notRoot = typeof process.getuid === 'function' && process.getuid() !== 0;
  const result: MailStackAvailability = { ok: missing.size === 0 && !notRoot, missing: [...missing] };
  if (notRoot) result.problem = 'the Postfix and Dovecot masters must be started as root';
  return result;
}

function runScript(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', args, { env, timeout: timeoutMs, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) {
        const detail = String(stderr).trim() || String(stdout).trim() || error.message;
        reject(new Error(`${args[0]} ${args.slice(1).join(' ')} failed: ${detail}`));
        return;
      }
      resolve(String(stdout));
    });
  });
}

/** Starts an instance with start.sh and resolves once every listener answers. */
export async function startMailStack(opts: StartMailStackOptions): Promise<MailStack> {
  if (!/^[A-Za-z0-9_-]+$/.test(opts.name)) throw new Error(`bad mail stack name '${opts.name}'`);
  // spamd compiles SpamAssassin's rules before it listens: seconds, many on a busy machine
  const readyTimeout = opts.readyTimeoutSeconds ?? (opts.learning ? 90 : 20);
  // The users go in a file: thousands of them overflow one environment variable (128 KiB on Linux).
  const usersDir = mkdtempSync(join(tmpdir(), 'warmup-mailstack-users-'));
  const usersFile = join(usersDir, 'users');
  writeFileSync(usersFile, opts.users.map((u) => `${u.email}:${u.password}\n`).join(''), { mode: 0o600 });
  const env: NodeJS.ProcessEnv = {
    MAILSTACK_BASE_PORT: String(opts.basePort),
    MAILSTACK_USERS: '',
    MAILSTACK_USERS_FILE: usersFile,
    MAILSTACK_JUNK_SENDERS: (opts.junkSenders ?? []).join(' '),
    MAILSTACK_JUNK_RECIPIENTS: (opts.junkRecipients ?? []).join(' '),
    MAILSTACK_DISCARD_RECIPIENTS: (opts.discardRecipients ?? []).join(' '),
    MAILSTACK_VACATION_RECIPIENTS: (opts.vacationRecipients ?? []).join(' '),
    MAILSTACK_IMAP_CAPABILITY: opts.imapCapability ?? '',
    MAILSTACK_READY_TIMEOUT: String(readyTimeout),
    MAILSTACK_REWRITE_MESSAGE_ID_DOMAINS: (opts.rewriteMessageIdDomains ?? []).join(' '),
    MAILSTACK_REPLACE_MESSAGE_ID_DOMAINS: (opts.replaceMessageIdDomains ?? []).join(' '),
    MAILSTACK_AUTH_RESULTS: opts.authResults ? '1' : '',
    MAILSTACK_DKIM_FAIL_SENDERS: (opts.authResults?.dkimFailSenders ?? []).join(' '),
    MAILSTACK_LEARNING: opts.learning ? '1' : '',
    ...(opts.oauth2
      ? {
          MAILSTACK_OAUTH2_INTROSPECTION_URL: opts.oauth2.introspectionUrl,
          MAILSTACK_OAUTH2_USERNAME_ATTRIBUTE: opts.oauth2.usernameAttribute ?? 'username',
        }
      : {}),
  };
  // an inherited MAILSTACK_DIR would point every instance at one directory
  const inherited = { ...process.env };
  delete inherited.MAILSTACK_DIR;
  let out: string;
  try {
    out = await runScript([START_SCRIPT, opts.name], { ...inherited, ...env }, (readyTimeout + 30) * 1000);
  } finally {
    rmSync(usersDir, { recursive: true, force: true });
  }
  const dir = /^MAILSTACK_DIR=(.*)$/m.exec(out)?.[1];
  if (!dir) throw new Error(`start.sh printed no MAILSTACK_DIR:\n${out}`);
  return JSON.parse(readFileSync(join(dir, 'stack.json'), 'utf8')) as MailStack;
}

/** Stops the instance (and by default deletes its directory). */
export async function stopMailStack(
  stack: Pick<MailStack, 'name' | 'dir'>,
  opts: { clean?: boolean; timeoutMs?: number } = {},
): Promise<void> {
  const args = [STOP_SCRIPT, stack.name];
  if (opts.clean ?? true) args.push('--clean');
  // deleting 10,000 users' mail takes longer than 30 s on a busy machine: a benchmark passes more
  await runScript(args, { ...process.env, MAILSTACK_DIR: stack.dir }, opts.timeoutMs ?? 30_000);
}

/**
 * Synchronous stop, for a process 'exit' handler (a run interrupted with Ctrl-C exits
 * without calling the global teardown, and would leave the daemons running).
 */
export function stopMailStackSync(stack: Pick<MailStack, 'name' | 'dir'>): void {
  execFileSync('bash', [STOP_SCRIPT, stack.name, '--clean'], {
    env: { ...process.env, MAILSTACK_DIR: stack.dir },
    stdio: 'ignore',
    timeout: 30_000,
  });
}
