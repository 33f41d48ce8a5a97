/*
 * The round trip that admits a mailbox to the pool: one message from the mailbox's SMTP server,
 * from its address to its address, carrying a random token in its Message-ID, looked for over its
 * IMAP server until a deadline. Seeing it proves what a login alone cannot: that this SMTP server
 * sends as the address, and that this IMAP server receives the address's mail. Without it, a
 * workspace could connect any address with servers of its own and collect or score the pool's mail.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMailConnectionError, type MailServerConfig } from './errors.js';
import { openImapSession, WARMUP_FOLDER, type ImapSession } from './imap.js';
import { createSmtpSender, type OutgoingMail, type SmtpSender } from './smtp.js';

/**
 * The mail clients the round trip uses: the real ones, the engine's (which it can drop when it
 * stops), or a simulated mail world's in tests.
 */
export interface RoundTripClients {
  smtp: (config: MailServerConfig, opts: { timeoutMs: number }) => Pick<SmtpSender, 'send' | 'close'>;
  imap: (config: MailServerConfig, opts: { timeoutMs: number }) => Promise<ImapSession>;
}

/**
 * Writes the check message for a random token (at least 32 bytes) sent at `at`: the mailbox's
 * ordinary mail, whose Message-ID carries the token in the form its client gives every Message-ID
 * (engine/connection-check.ts), so nothing a person reads holds it.
 */
export type CheckMailWriter = (token: Buffer, at: Date) => OutgoingMail;

export interface RoundTripOptions {
  /** The mailbox's own check message; default: a short plain note from the address to itself. */
  writeMail?: CheckMailWriter;
  /** How long the message may take to show up over IMAP (default 20 s). */
  waitMs?: number;
  /** Deadline of each SMTP and IMAP step (default 10 s). */
  timeoutMs?: number;
  /** Default: the real SMTP and IMAP clients. */
  clients?: RoundTripClients;
  /** The moment the message is written at (its Date, and Outlook's time-derived IDs); default: now. */
  at?: Date;
}

export type RoundTripResult = { proven: true } | { proven: false; reason: string };

export const DEFAULT_ROUND_TRIP_WAIT_MS = 20_000;
const DEFAULT_STEP_TIMEOUT_MS = 10_000;
/** First look after this long, then twice as long each time, at most MAX_POLL_MS apart. */
const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 2_000;

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/** Without the mailbox's own writer: a short note to oneself, a UUID Message-ID as most clients make. */
function plainNote(email: string): CheckMailWriter {
  return (token, at) => {
    const hex = token.subarray(0, 16).toString('hex');
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${((parseInt(hex[16], 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
    return {
      from: { address: email },
      to: { address: email },
      subject: 'Test',
      text: 'Test\n',
      html: '<p>Test</p>',
      messageId: `<${id}@${domainOf(email)}>`,
      date: at,
    };
  };
}

function failure(error: unknown): string {
  return isMailConnectionError(error) ? error.message : error instanceof Error ? error.message : String(error);
}

/** Out of the owner's inbox; the proof stands even when the server refuses the move. */
async function fileAway(session: ImapSession, folder: string, uid: number): Promise<void> {
  try {
    await session.move(folder, uid, await session.ensureFolder(WARMUP_FOLDER));
  } catch (error) {
    if (!isMailConnectionError(error)) throw error;
  }
}

/**
 * Sends the check message and waits for it; the copy found is filed into the Warmup folder (the
 * only message it touches). Never throws for a mail failure: the reason says what went wrong, in
 * words for the mailbox's owner, and never holds the password (the mail layer scrubs it).
 */
export async function proveRoundTrip(
  email: string,
  servers: { imap: MailServerConfig; smtp: MailServerConfig },
  options: RoundTripOptions = {},
): Promise<RoundTripResult> {
  const waitMs = options.waitMs ?? DEFAULT_ROUND_TRIP_WAIT_MS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
  const mail = (options.writeMail ?? plainNote(email))(randomBytes(32), options.at ?? new Date());
  const messageId = mail.messageId;

  const clients = options.clients ?? { smtp: createSmtpSender, imap: openImapSession };
  const sender = clients.smtp(servers.smtp, { timeoutMs });
  try {
    await sender.send(mail);
  } catch (error) {
    return { proven: false, reason: `its SMTP server did not send a test message as ${email}: ${failure(error)}` };
  } finally {
    sender.close();
  }

  let session: ImapSession | null = null;
  try {
    session = await clients.imap(servers.imap, { timeoutMs });
    const deadline = Date.now() + waitMs;
    let pause = FIRST_POLL_MS;
    for (;;) {
      await sleep(Math.min(pause, Math.max(0, deadline - Date.now())));
      const [found] = await session.findMessages([messageId]);
      if (found) {
        await fileAway(session, found.folder, found.uid);
        return { proven: true };
      }
      if (Date.now() >= deadline) break;
      pause = Math.min(MAX_POLL_MS, pause * 2);
    }
  } catch (error) {
    return { proven: false, reason: `its IMAP server could not be searched for the test message: ${failure(error)}` };
  } finally {
    await session?.close();
  }
  return {
    proven: false,
    reason: `a test message sent to ${email} over its SMTP server did not arrive over its IMAP server within ${Math.round(waitMs / 1000)} s`,
  };
}
