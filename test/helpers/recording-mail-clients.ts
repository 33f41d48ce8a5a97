// The real mail clients, telling which login timeout each connection check was given.
import { REAL_MAIL_CLIENTS, type MailClients } from '../../src/mailboxes/mail-clients.js';

export function recordingMailClients(timeouts: Array<[string, number | undefined]>): MailClients {
  return {
    ...REAL_MAIL_CLIENTS,
    verifyImap: (settings, options) => {
      timeouts.push(['IMAP', options?.timeoutMs]);
      return REAL_MAIL_CLIENTS.verifyImap(settings, options);
    },
    verifySmtp: (settings, options) => {
      timeouts.push(['SMTP', options?.timeoutMs]);
      return REAL_MAIL_CLIENTS.verifySmtp(settings, options);
    },
  };
}
