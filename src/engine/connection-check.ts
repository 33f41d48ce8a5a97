/*
 * The connection check's message (mail/round-trip.ts) as ordinary mail of the mailbox: its mail
 * client's structure, Message-ID and boundary, its zone in Date, and a first message written for
 * it in its language, to itself. Nothing in it names the tool; the random token the check looks
 * for is the Message-ID itself, in the form the client gives every Message-ID.
 *
 * The words come from the conversation generator, in the mailbox's own writing region and language,
 * fresh for every token: a check that reads like every other installation's check would be a marker.
 */
import { validTimeZone } from '../calendar.js';
import type { CheckMailWriter } from '../mail/round-trip.js';
import { parseWarmupSettings } from '../mailboxes/warmup-settings.js';
import { clientMessageId, clientProfileOf, threadIndexFor, type MailboxClientFacts } from './client-profile.js';
import type { EngineDeps } from './engine-deps.js';
import { writeOpeningMessage, writingRegion } from '../conversations/conversation-writer.js';
import { composeMessage, displayName, firstName } from './message-content.js';
import { outgoingMail } from './outgoing-mail.js';

/**
 * The mailbox as the check needs it (a row's columns, before or after it is stored); its provider,
 * OAuth provider and SMTP settings say which mail programs fit it.
 */
export interface CheckedMailbox extends MailboxClientFacts {
  id: string;
  workspaceId: string;
  email: string;
  name: string | null;
  /** The row's `warmup` JSON. */
  warmup: string;
}

/** Writes the check message of this mailbox for a token. */
export function connectionCheckWriter(
  deps: Pick<EngineDeps, 'installationSeed'>,
  mailbox: CheckedMailbox,
): CheckMailWriter {
  const settings = parseWarmupSettings(mailbox.warmup);
  const profile = clientProfileOf(mailbox);
  const timeZone = validTimeZone(settings.timezone);
  const self = { email: mailbox.email, name: mailbox.name };
  const ownName = firstName(displayName(self));
  const region = writingRegion(deps.installationSeed, mailbox.workspaceId, mailbox.id);
  return (token, at) => {
    const messageId = clientMessageId(profile.name, mailbox.email, token, at);
    const template = writeOpeningMessage({
      language: settings.language,
      seed: `connection check\n${token}`,
      region,
      senderFirstName: ownName,
      recipientFirstName: ownName,
    });
    const content = composeMessage({
      template,
      kind: 'initial',
      sender: self,
      recipient: self,
      profile: profile.name,
      language: settings.language,
      timeZone,
      at,
      messageId,
      threadId: messageId,
    });
    return outgoingMail({
      sender: self,
      recipient: self,
      messageId,
      content,
      profile,
      date: at,
      timeZone,
      language: settings.language,
      ...(profile.name === 'outlook' ? { threadIndex: threadIndexFor(messageId, at, []) } : {}),
    });
  };
}
