/*
 * The mail program a mailbox's owner seems to use: one per mailbox, the same in every worker and
 * every run (drawn from its id, like its habits), so that two mailboxes do not share one client's
 * fingerprint. So far it decides what the engine's IMAP login says about itself (the IMAP `ID`):
 * the client's own name and version, or nothing where the client sends no ID — never the IMAP
 * library's name, which would mark every warmup login alike.
 */
import { seedFrom } from './message-content.js';

export type ClientProfileName = 'thunderbird' | 'apple-mail' | 'outlook' | 'gmail-app';

export interface ClientProfile {
  name: ClientProfileName;
  /** The fields of the IMAP ID command; null: the client sends `ID NIL`. */
  imapId: Record<string, string> | null;
}

const PROFILES: ClientProfile[] = [
  { name: 'thunderbird', imapId: { name: 'Thunderbird', version: '128.5.2' } },
  {
    name: 'apple-mail',
    imapId: {
      name: 'Mac OS X Mail',
      version: '16.0 (3826.300.87.2.22)',
      os: 'Mac OS X',
      'os-version': '14.7.1 (23H222)',
    },
  },
  // Outlook and the Gmail app say nothing about themselves over IMAP
  { name: 'outlook', imapId: null },
  { name: 'gmail-app', imapId: null },
];

/** The mailbox's client, stable for its id. */
export function clientProfileOf(mailboxId: string): ClientProfile {
  return PROFILES[seedFrom(`client:${mailboxId}`) % PROFILES.length];
}
