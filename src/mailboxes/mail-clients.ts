import { openImapSession, verifyImap } from '../mail/imap.js';
import type { RoundTripClients } from '../mail/round-trip.js';
import { createSmtpSender, verifySmtp } from '../mail/smtp.js';

/** How the mailboxes service reaches mail servers: the real clients, or a simulated mail world's in tests. */
export interface MailClients extends RoundTripClients {
  verifyImap: typeof verifyImap;
  verifySmtp: typeof verifySmtp;
  smtp: typeof createSmtpSender;
  imap: typeof openImapSession;
}

export const REAL_MAIL_CLIENTS: MailClients = {
  verifyImap,
  verifySmtp,
  smtp: createSmtpSender,
  imap: openImapSession,
};
